"""Every shipped spec under specs/ is valid (what ``ragsweep validate`` and ``run``'s checks refuse, it does not),
and together they show every kind of every axis the schema has and every key of the spec, so each feature has an
example a user can start from. Kinds and keys are read from the schema: a new one needs an example."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import yaml

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*.yaml"))
AXES = (
    "splitters",
    "embeddings",
    "retrievers",
    "query_transforms",
    "rerankers",
    "postprocessors",
    "history",
    "generator",
)


def _kinds(annotation) -> set[str]:
    """The ``kind`` literals of the spec classes an annotation admits (through lists, unions, Annotated)."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        kind = annotation.model_fields.get("kind")
        return set(typing.get_args(kind.annotation)) if kind else set()
    return set().union(*(_kinds(a) for a in typing.get_args(annotation)))


def _used(spec: dict, axis: str) -> set[str]:
    value = spec.get(axis)
    items = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    return {i["kind"] for i in items if isinstance(i, dict) and "kind" in i}


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_shipped_spec_is_valid(path, tmp_path):
    from ragsweep.config import load_spec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.preflight import check_llm_settings

    spec = load_spec(path)
    check_llm_settings(spec)
    assert expand(spec)
    dataset = load_dataset(spec.dataset, report_dir=tmp_path)
    if spec.adaptive:
        from ragsweep.pipelines.stages.adaptive import check_classifiers

        check_classifiers(spec, dataset)


def test_shipped_specs_show_every_kind_and_section():
    from ragsweep.config import SweepSpec

    specs = [yaml.safe_load(p.read_text()) for p in SPECS]
    for axis in AXES:
        kinds = _kinds(SweepSpec.model_fields[axis].annotation)
        shown = set().union(*(_used(s, axis) for s in specs)) | {"none"}  # none: every axis's default
        assert kinds and kinds <= shown, f"{axis}: no shipped spec shows {sorted(kinds - shown)}"
    for key in SweepSpec.model_fields:  # every key of the schema, sections included
        assert any(key in s for s in specs), f"no shipped spec sets {key}"
    generators = [s.get("generator", {}) for s in specs]
    assert any("abstain_below" in g for g in generators), "no shipped spec shows abstention"
