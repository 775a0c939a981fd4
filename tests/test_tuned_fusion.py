"""Fusion weights tuned on the validation questions: the grid, the choice, the hashes, and a sweep
whose choice is recorded, reused by ``ask`` and blind to the test questions."""

from __future__ import annotations

import pytest

from ragsweep.config import parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.pipelines.stages.tune import choose, simplex_grid


def test_simplex_grid_is_fixed_and_sums_to_one():
    assert simplex_grid(2, 5) == [(1.0, 0.0), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.0, 1.0)]
    three = simplex_grid(3, 3)
    assert len(three) == 6 and all(abs(sum(w) - 1) < 1e-12 for w in three)
    assert three[0] == (1.0, 0.0, 0.0) and three[-1] == (0.0, 0.0, 1.0)


def test_choose_prefers_the_best_then_the_most_even():
    assert choose([((1.0, 0.0), 0.5), ((0.5, 0.5), 0.4)]) == (1.0, 0.0)
    assert choose([((1.0, 0.0), 0.5), ((0.75, 0.25), 0.5), ((0.0, 1.0), 0.5)]) == (0.75, 0.25)


def _spec(**over):
    base = {"splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "fusion"}, {"kind": "hybrid_kg"}]}
    base.update(over)
    return parse_spec(base)


def test_tuned_labels_metric_and_untouched_hashes():
    before = [c.config_hash for c in expand(_spec())]
    assert [
        c.config_hash for c in expand(_spec(retrievers=[{"kind": "fusion", "tune_steps": 9}, {"kind": "hybrid_kg"}]))
    ] == before
    spec = _spec(
        retrievers=[{"kind": "fusion", "weights": "tune"}, {"kind": "hybrid_kg", "weights": "tune", "tune_steps": 3}],
        scoring={"metric": "mrr"},
    )
    fusion, hybrid = expand(spec)
    assert fusion.config_id == "sentence512-minilm-fusion-wtune-k5"
    assert hybrid.config_id == "sentence512-minilm-hybrid-kg-wtune3-k5"
    assert fusion.identity()["retriever"]["tune_metric"] == "mrr"  # the verdict's metric, a retrieval one
    bert = expand(_spec(retrievers=[{"kind": "fusion", "weights": "tune"}]))[0]
    assert bert.tune_metric == "ndcg"  # BERTScore is not seen by tuning: nDCG instead
    assert bert.config_hash != fusion.config_hash
    with pytest.raises(RagsweepError, match=r"retrievers\[0\]\.tune_metric"):
        _spec(retrievers=[{"kind": "fusion", "weights": "tune", "tune_metric": "bertscore_f1"}])


def test_sweep_records_tuned_weights_that_a_resume_and_ask_reuse(make_spec, run_cli, read_run, seeded_cache):
    """The weights and their table reach the manifest and records; they are tuned on every validation
    question of the dataset, so a run resumed with another --limit answers with the same weights;
    ``ragsweep ask`` answers with the recorded ones. Its own cache (seeded): tuning embeds every validation
    question, which the session's shared cache must not hold (test_sweep counts its query vectors)."""
    from ragsweep.results.ask_view import ask_run

    own_cache = seeded_cache
    spec = make_spec(
        "tuned",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "fusion", "mode": "relative_score", "weights": "tune"}],
        top_k=[3],
        scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
    )
    cid = "sentence256-minilm-fusion-rel-wtune-k3"
    first = read_run(
        spec.run_dir, run_cli("run", str(spec.path), "--limit", "8", "--cache", str(own_cache), "--no-progress")
    )
    tuned = first.manifest["tuned_weights"][cid]
    assert tuned["metric"] == "mrr" and len(tuned["candidates"]) == 5
    assert tuned["n_validation"] > 8  # the dataset's validation questions with evidence, not the first 8
    best = max(c[-1] for c in tuned["candidates"])
    assert [c[-1] for c in tuned["candidates"] if c[:2] == tuned["weights"]] == [best]
    resumed = read_run(
        spec.run_dir, run_cli("run", str(spec.path), "--limit", "20", "--cache", str(own_cache), "--no-progress")
    )
    assert resumed.manifest["tuned_weights"][cid] == tuned
    assert len(resumed.records) == 20
    assert all(list(w) == tuned["weights"] for w in resumed.records["fusion_weights"])
    asked = ask_run(spec.run_dir, cid, "What is the notice period?", cache=own_cache)
    assert asked.out["fusion_weights"] == tuned["weights"]
    assert asked.out["tuning"] == tuned  # the run's record, not a new tuning


def test_tuning_reads_only_validation_questions_and_the_split_is_in_the_hash():
    from types import SimpleNamespace

    from ragsweep.datasets.load import load_dataset
    from ragsweep.evaluation.split import question_split
    from ragsweep.pipelines.stages.tune import tune_weights, validation_questions

    spec = parse_spec(
        {
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "sentence"}],
            "retrievers": [{"kind": "fusion", "weights": "tune"}],
        }
    )
    dataset = load_dataset(spec.dataset)
    split = question_split(spec, dataset)
    ctx = SimpleNamespace(spec=spec, dataset=dataset, tuned_weights={})
    chosen = validation_questions(ctx)
    assert chosen and all(split[q.qid] == "validation" and q.evidence for q in chosen)
    no_evidence = [q for q in dataset.questions if split[q.qid] == "validation" and not q.evidence]
    assert no_evidence and not {q.qid for q in no_evidence} & {q.qid for q in chosen}
    # another seed or fraction makes other validation questions: part of a tuned configuration's hash
    other = parse_spec({**spec.model_dump(mode="json", exclude_none=True), "seed": 1})
    assert expand(other)[0].config_hash != expand(spec)[0].config_hash
    frac = parse_spec({**spec.model_dump(mode="json", exclude_none=True), "split": {"validation_fraction": 0.3}})
    assert expand(frac)[0].config_hash != expand(spec)[0].config_hash
    untuned = {"splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "fusion"}]}
    assert (
        expand(parse_spec({**untuned, "seed": 1}))[0].config_hash == expand(parse_spec(untuned))[0].config_hash
    )  # untuned fusions: the split changes no answer
    config = expand(spec)[0]
    ctx.tuned_weights[config.config_hash] = {"weights": [0.25, 0.75], "metric": "ndcg"}
    tuned_spec, info = tune_weights(ctx, config, retrievers=None)  # recorded: no retrieval at all
    assert tuned_spec.weights == (0.25, 0.75) and info["weights"] == [0.25, 0.75]


def test_a_misspelt_tune_names_both_forms():
    with pytest.raises(
        RagsweepError,
        match=r"retrievers\[0\]\.weights: Input should be a valid tuple; or "
        r"Input should be 'tune'$",
    ):
        _spec(retrievers=[{"kind": "fusion", "weights": "tuned"}])
