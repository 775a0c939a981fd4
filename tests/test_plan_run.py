"""The driver runs the whole plan through the executor (``pipelines.plan_run``): a stage added to ``RUN_STAGES``
runs in its place with no other change (the Ray executor's run of it: test_ray.py)."""

from __future__ import annotations

from added_stages import add_stages, check_order
from conftest import SENTENCE256, describe
from fake_openai import FakeOpenAI

KEY = "sk-plan-SECRET-5d2a"


def added_stage_spec(make_spec, name: str, fake: FakeOpenAI):
    """bm25 and the closed-book baseline, answered by the LLM and judged: every run stage is planned."""
    return make_spec(
        name,
        splitters=[SENTENCE256],
        retrievers=[{"kind": "bm25"}],
        top_k=[3],
        generator={"kind": "llm"},
        baselines=["no_retrieval"],
        llm={"model": f"{name}-model", "base_url": fake.base_url, "api_key_env": "PLAN_KEY"},
        stage2={"top_n": 1, "max_configs": 1},
    )


def test_a_stage_added_to_the_plan_runs_in_its_place_locally(monkeypatch, make_spec, run_cli, read_run, tmp_path):
    log = add_stages(monkeypatch)
    fake = FakeOpenAI(api_key=KEY).start()
    try:
        spec = added_stage_spec(make_spec, "plan-added-local", fake)
        out = run_cli("run", spec.path, "--cache", tmp_path / "cache", "--limit", 6, env={"PLAN_KEY": KEY})
        assert out.returncode == 0, describe(out)
    finally:
        fake.stop()
    check_order(log, answers=12)
    assert not any(e[1] is True for e in log if e[0] in ("generate", "score")), log  # no trial in a sweep
    assert read_run(spec.run_dir).records["bertscore_f1"].notna().all()
