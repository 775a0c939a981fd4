"""Stage 2 on validation and test questions, with repeated judgements, against the scripted server over HTTP.

A judge scripted to answer consistently (its reply a function of the prompt alone) and one that answers at random
(its reply a function of the request, the repeat's seed included): the first's self-agreement is perfect and the
verdict is decided by it, chosen on the judged validation questions and reported on the judged test ones; the
second's alpha CI reaches 0, and the verdict falls back to the stage-1 metric and says why. The CIs carry the
repeats (resample questions, then repeats).
"""

from __future__ import annotations

import json

import pytest
from conftest import BASE_LIMIT, SENTENCE256, describe
from fake_openai import FakeOpenAI

LIMIT = BASE_LIMIT  # 12 questions: 6 validation, 6 test
REPEATS = 3
CONSISTENT = {"kind": "correctness", "choices": ["1\nWrong.", "3\nPartly.", "5\nRight."], "choose_by": "prompt"}
RANDOM = {"kind": "correctness", "choices": ["1\nWrong.", "5\nRight."], "choose_by": "request"}


def _run(make_spec, shared_cache, run_cli, name: str, rule: dict, **stage2):
    fake = FakeOpenAI(rules=[rule]).start()
    try:
        spec = make_spec(
            name,
            splitters=[SENTENCE256],
            retrievers=[{"kind": "bm25"}, {"kind": "vector"}],
            top_k=[3],
            generator={"kind": "llm"},
            llm={"model": f"{name}-model", "base_url": fake.base_url, "api_key_env": None, "concurrency": 4},
            prices={f"{name}-model": {"input": 0.0, "output": 0.0}},
            stage2={"judges": ["correctness"], "top_n": 2, "repeats": REPEATS, **stage2},
        )
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT)
        calls = [c for c in fake.calls() if c["endpoint"] == "chat" and c["kind"] == "correctness"]
    finally:
        fake.stop()
    assert proc.returncode == 0, describe(proc)
    manifest = json.loads((spec.run_dir / "manifest.json").read_text())
    verdict = json.loads((spec.run_dir / "verdict.json").read_text())
    return proc, manifest, verdict, calls


@pytest.fixture(scope="module")
def consistent(make_spec, shared_cache, run_cli):
    return _run(make_spec, shared_cache, run_cli, "rep-consistent", CONSISTENT)


def test_a_consistent_judge_is_judged_on_validation_and_test_repeatedly_and_decides(consistent):
    proc, manifest, verdict, calls = consistent
    s2 = manifest["stage2"]
    n_judged = len(s2["selected"])
    assert s2["questions"] == {"validation": 6, "test": 6} and s2["repeats"] == REPEATS
    # every judged question, each judgement three times with its own seed (two configurations that wrote the same
    # answer share a judgement's prompt: the cache's), none sent twice
    assert len({c["key"] for c in calls}) == len(calls) and len(calls) % REPEATS == 0
    assert 12 * REPEATS <= len(calls) <= n_judged * 12 * REPEATS
    agreement = s2["self_agreement"]["correctness"]
    assert agreement["alpha"] == 1.0 and agreement["flips"] == 0.0 and not agreement["no_better_than_chance"]
    # the verdict by the judge: chosen on the judged validation questions, reported on the judged test ones
    assert verdict["metric"] == "correctness" and manifest["verdict_metric"]["metric"] == "correctness"
    assert verdict["chosen_on"] == "validation" and verdict["reported_on"] == "test"
    assert verdict["n_validation"] == 6 and verdict["n_test"] == 6 and verdict["optimism"] is not None
    assert "stage 2 judges validation and test questions" in verdict["metric_why"]
    said = " ".join(proc.stdout.split())
    assert "correctness: self-agreement over 3 repeats: Krippendorff's alpha 1.00" in said
    assert "verdict by correctness (1-5): chosen on 6 validation questions, reported on 6 test questions" in said


def test_a_random_judge_never_decides_and_the_verdict_says_why(make_spec, shared_cache, run_cli):
    proc, manifest, verdict, calls = _run(make_spec, shared_cache, run_cli, "rep-random", RANDOM)
    agreement = manifest["stage2"]["self_agreement"]["correctness"]
    assert agreement["no_better_than_chance"] and agreement["lo"] <= 0.0 and agreement["flips"] > 0.3
    assert verdict["metric"] == "bertscore_f1_rescaled"  # an LLM generator's stage-1 metric
    assert verdict["metric_why"].startswith("the correctness judge cannot decide it (its self-agreement")
    said = " ".join(proc.stdout.split())
    assert "(!) no better than chance: it does not decide the verdict" in said
    assert "by BERTScore F1 (rescaled) because the correctness judge cannot decide it" in said


def test_repeats_widen_the_ci_of_a_noisy_judge():
    """The two-stage bootstrap: the same per-question means, but repeats that disagree widen the interval."""
    from ragsweep.evaluation.bootstrap import bootstrap_ci, nested_bootstrap_ci

    steady = [[q % 5 + 1.0] * 3 for q in range(40)]
    noisy = [[q % 5 + 1.0 - 1, q % 5 + 1.0, q % 5 + 1.0 + 1] for q in range(40)]
    plain = bootstrap_ci([sum(r) / 3 for r in noisy], 500, 0.95, 0)
    a, b = nested_bootstrap_ci(steady, 500, 0.95, 0), nested_bootstrap_ci(noisy, 500, 0.95, 0)
    assert a[0] == b[0] == plain[0]
    assert (b[2] - b[1]) > (plain[2] - plain[1]) and a[2] - a[1] == pytest.approx(plain[2] - plain[1], rel=0.2)
