"""``ragsweep.sweep`` from Python: a spec mapping in, the run's ``RunData`` out, with its verdict and the chosen
configuration's LlamaIndex engine; a bad spec raises the command line's one-line error."""

from __future__ import annotations

import copy

import pytest
from conftest import BASE_SPEC, SENTENCE256

import ragsweep
from ragsweep.errors import RagsweepError


def test_sweep_from_python_gives_the_run_its_verdict_and_the_picks_engine(seeded_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the mapping's relative output_dir is the working directory's
    spec = copy.deepcopy(BASE_SPEC)
    spec.update(name="api", splitters=[SENTENCE256], retrievers=[{"kind": "bm25"}, {"kind": "vector"}], top_k=[3])
    spec["output_dir"] = "runs"
    run = ragsweep.sweep(spec, cache=seeded_cache, limit=6, progress=False)
    assert run.complete and run.path.resolve() == tmp_path / "runs" / "api" and len(run.records) == 12
    verdict = run.verdict
    assert verdict is not None and verdict["chosen"] in set(run.records["config_id"])
    row = run.records[run.records["config_id"] == verdict["chosen"]].iloc[0]
    with run.pipeline() as pipeline:  # the verdict's pick
        assert pipeline.config_id == verdict["chosen"]
        assert pipeline.ask(row["question"])["answer"] == row["answer"]
    response = run.engine(verdict["chosen"]).query(row["question"])
    assert str(response) == row["answer"]  # the extractive engine over the same retriever
    assert [n.node.node_id for n in response.source_nodes] == [s["node_id"] for s in row["sources"]]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({"splitters": "sentence"}, "<spec>: splitters"),
        (
            {
                "dataset": {"corpus": {"format": "folder", "path": "no/such/folder"}},
                "splitters": [SENTENCE256],
                "retrievers": [{"kind": "bm25"}],
            },
            "dataset.corpus.path",
        ),
        (42, "give a mapping, the path of a YAML spec or a SweepSpec, not int"),
    ],
)
def test_a_bad_spec_raises_the_command_lines_one_line_error(spec, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RagsweepError) as caught:
        ragsweep.sweep(spec, progress=False)
    assert says in str(caught.value) and "\n" not in str(caught.value)
