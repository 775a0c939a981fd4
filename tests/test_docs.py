"""The documentation: a short README whose links resolve, a site that builds strictly, a spec reference that
names every section and field of the schema."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ragsweep.config import SweepSpec
from ragsweep.spec_reference import models, spec_reference, type_name

ROOT = Path(__file__).resolve().parents[1]


def test_readme_is_the_short_entry_and_its_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert "make test" in text  # CI runs the README's test command
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).is_file(), target


def test_spec_reference_names_every_section_and_field():
    text = spec_reference()
    found = models(SweepSpec)
    assert len(found) > 40
    for model in found:
        assert f"\n## {model.__name__}\n" in text, model.__name__
        section = text.split(f"\n## {model.__name__}\n", 1)[1].split("\n## ", 1)[0]
        for name in model.model_fields:
            assert f"| `{name}` |" in section, (model.__name__, name)
    assert "| `postprocessors` |" in text and "[MMRSpec](#mmrspec)" in text


def test_component_catalogue_lists_every_kind_with_what_it_is():
    """Each family's kinds come from the schema's unions: a new kind's spec class puts it in the catalogue."""
    from ragsweep.component_reference import FAMILIES, alternatives, component_reference, kind_of

    text = component_reference()
    for family in FAMILIES:
        section = text.split(f"\n## `{family}:`\n", 1)[1].split("\n## ", 1)[0]
        kinds = alternatives(SweepSpec.model_fields[family].annotation)
        assert len(kinds) >= 2, family
        for model in kinds:
            row = next(line for line in section.splitlines() if f"(spec.md#{model.__name__.lower()})" in line)
            assert f"[`{kind_of(model)}`]" in row and row.split(" | ")[1].strip(), (family, model.__name__)
    assert "[`mmr`](spec.md#mmrspec)" in text and "`ragsweep.postprocessors.mmr`" in text
    assert "[`hybrid_kg`](spec.md#hybridkgspec)" in text and "from its vector + bm25 + graph results" in text


def test_every_field_says_what_it_means():
    """A field without a description would show an empty cell in the reference (kind, format and name have one
    meaning everywhere, written once)."""
    from ragsweep.spec_reference import field_meaning

    silent = [
        f"{m.__name__}.{name}"
        for m in models(SweepSpec)
        for name, info in m.model_fields.items()
        if not field_meaning(m, name, info)
    ]
    assert not silent, silent


def test_type_names_read_as_a_spec_is_written():
    from typing import Literal, Optional

    assert type_name(Optional[int]) == "int | null"
    assert type_name(list[Literal["a", "b"]]) == 'list["a" | "b"]'


def test_site_builds_strictly(tmp_path):
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "site" / "reference" / "spec" / "index.html").read_text(encoding="utf-8")
    assert "SweepSpec" in page and "chunk_overlap" in page
    assert (tmp_path / "site" / "benchmarks" / "index.html").is_file()
    catalogue = (tmp_path / "site" / "reference" / "components" / "index.html").read_text(encoding="utf-8")
    assert "sentence_window" in catalogue and "late_interaction" in catalogue
