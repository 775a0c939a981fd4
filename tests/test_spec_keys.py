"""The spec's keys in ``validate --help`` and the union tags of one-line errors come from the schema itself."""

from __future__ import annotations

import re

from ragsweep.config import SweepSpec
from ragsweep.config.tags import union_tags
from ragsweep.spec_keys import spec_keys_text


def test_every_section_and_kind_is_listed():
    text = spec_keys_text()
    for name in SweepSpec.model_fields:
        assert re.search(rf"^  {name}\b", text, re.M), name
    words = set(re.findall(r"[A-Za-z0-9_\-]+", text))
    # "preset" tags the plain-string alternative of a splitter's context (context: title): no spec writes it
    assert union_tags() - {"preset"} <= words, sorted(union_tags() - words)


def test_union_tags_are_the_kinds_and_formats_of_the_schema():
    tags = union_tags()
    # one of each way a union is told apart: a kind field, a format field, a callable discriminator's Tag
    assert {"bm25", "hybrid_kg", "late_interaction", "rm3", "auto_merging"} <= tags
    assert {"legalbench", "labelled_rag", "csv"} <= tags
    assert {"sentence_transformers", "openai", "extractive", "preset"} <= tags
    assert "chunk_size" not in tags and "none" in tags


def test_validate_help_shows_them(run_cli):
    proc = run_cli("validate", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Spec keys" in proc.stdout and "late_interaction" in proc.stdout and "postprocessors" in proc.stdout
