"""Search strategies, the search space, the study's resumption and the Pareto functions, on grids expanded
from real specs and evaluated by a replay (no model is loaded); the sweep-level search is in
test_search_sweep.py."""

from __future__ import annotations

import hashlib
import itertools
import random

import pytest

from ragsweep.config import parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.search.loop import Asking, Limits, run_search
from ragsweep.search.pareto import dominates, front, hypervolume
from ragsweep.search.space import SearchSpace, axis_values
from ragsweep.search.strategies.registry import strategy_class
from ragsweep.search.study import SearchStudy
from ragsweep.search.trials import Outcome, directions

SPEC = {
    "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
    "splitters": [
        {"kind": "token", "chunk_size": 128, "chunk_overlap": 16},
        {"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32},
        {"kind": "sentence", "chunk_size": 512, "chunk_overlap": 32},
    ],
    "embeddings": [
        {"kind": "sentence_transformers", "model": "minilm"},
        {"kind": "sentence_transformers", "model": "minilm", "backend": "onnx", "name": "minilm-onnx"},
    ],
    "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}],
    "rerankers": [{"kind": "none"}, {"kind": "late_interaction", "apply_to": ["vector"]}],
    "top_k": [3, 5, 10],
}


def grid(**search):
    spec = parse_spec({**SPEC, **({"search": search} if search else {})})
    return spec, expand(spec)


def quality(config) -> float:
    """A made-up quality with structure on the axes (so greedy and TPE have something to find) and noise."""
    v = axis_values(config)
    base = {"token128": 0.0, "sentence256": 0.1, "sentence512": 0.05}[v["splitter"]]
    base += {"bm25": 0.0, "vector": 0.15, "fusion": 0.2}[v["retriever"]] + 0.03 * (v["reranker"] != "none")
    base += {"3": 0.0, "5": 0.04, "10": 0.02}[v["top_k"]]
    noise = int(hashlib.sha256(config.config_hash.encode()).hexdigest()[:6], 16) / 16**6
    return base + 0.02 * noise


class Replay:
    """Evaluates configurations from a table, counting what each evaluation is asked."""

    def __init__(self, objectives=("quality",), seconds=1.0):
        self.calls: list[str] = []
        self.objectives, self.seconds = list(objectives), seconds

    def __call__(self, configs):
        out = {}
        for c in configs:
            self.calls.append(c.config_hash)
            values = {
                "quality": quality(c),
                "latency": 10.0 + 7 * (c.top_k == 10) + 5 * (c.reranker is not None),
                "cost": 0.0,
            }
            out[c.config_hash] = Outcome({o: values[o] for o in self.objectives}, self.seconds, 0.0, 10)
        return out


def run(tmp_path, spec, configs, limit, evaluate=None, seed=0, name="s"):
    s = spec.search
    space = SearchSpace(configs, s.order)
    strategy = strategy_class(s.strategy)(s, seed, limit, False)
    study = SearchStudy(
        tmp_path / f"{name}.sqlite", f"k{seed}", s.objectives, directions(s.objectives, False), strategy.sampler()
    )
    evaluate = evaluate or Replay(s.objectives)
    stopped = run_search(
        study, space, strategy, Limits(limit, s.budget.seconds, s.budget.usd), evaluate, Asking(s.batch)
    )
    return study, evaluate, stopped


def test_every_configuration_is_one_path_of_the_space():
    _, configs = grid()
    space = SearchSpace(configs)
    assert len(configs) == 3 * (4 + 2 + 1) * 3  # bm25 + vector x 2 embeddings x 2 rerankers + fusion x 2
    seen = set()
    for c in configs:
        params = space.params(c)
        reached = space.walk(lambda name, options: params[name])
        assert reached.config_hash == c.config_hash
        seen.add(tuple(sorted(params.items())))
    assert len(seen) == len(configs)
    bm25 = next(c for c in configs if c.retriever.kind == "bm25")
    assert not any(name.startswith("embedding") or name.startswith("reranker") for name in space.params(bm25))
    assert "reranker[none|maxsim]" not in space.params(bm25)


def test_random_visits_distinct_configurations_in_a_seeded_order(tmp_path):
    spec, configs = grid(strategy="random", budget={"trials": 12})
    study, replay, stopped = run(tmp_path, spec, configs, 12)
    assert stopped == "budget: 12 trials" and len(set(replay.calls)) == 12 == len(replay.calls)
    _, again, _ = run(tmp_path, spec, list(reversed(configs)), 12, name="again")
    assert again.calls == replay.calls  # the order of the spec's lists does not change the draw
    _, other, _ = run(tmp_path, spec, configs, 12, seed=1, name="other")
    assert other.calls != replay.calls


def test_greedy_decides_axis_by_axis_and_finds_the_separable_best(tmp_path):
    spec, configs = grid(strategy="greedy", budget={"trials": 60})
    study, replay, stopped = run(tmp_path, spec, configs, 60)
    assert stopped == "the strategy has nothing more to try"
    assert len(replay.calls) == len(set(replay.calls)) < 20
    best = max(configs, key=quality)
    found = max((c for c in configs if c.config_hash in replay.calls), key=quality)
    assert axis_values(found)["retriever"] == axis_values(best)["retriever"] == "fusion"
    assert axis_values(found)["top_k"] == "5"


def test_models_first_decides_the_embedding_before_the_splitter(tmp_path):
    spec, configs = grid(strategy="greedy", order="models_first")
    space = SearchSpace(configs, "models_first")
    assert space.axes[0] == "embedding" and space.axes.index("splitter") > space.axes.index("reranker")
    _, replay, _ = run(tmp_path, spec, configs, 60)
    first_two = [next(c for c in configs if c.config_hash == h) for h in replay.calls[:2]]
    assert {axis_values(c)["embedding"] for c in first_two} == {"none", "minilm"}


def test_tpe_spends_its_budget_on_distinct_configurations_and_finds_a_good_one(tmp_path):
    spec, configs = grid(strategy="tpe", budget={"fraction": 0.3})
    limit = spec.search.budget.trial_limit(len(configs))
    study, replay, stopped = run(tmp_path, spec, configs, limit)
    trials = study.trials()
    assert stopped == f"budget: {limit} trials"
    assert len(replay.calls) == len(set(replay.calls)) == limit
    assert all(t.state in ("complete", "repeat") for t in trials)
    for t in trials:
        if t.state == "repeat":
            assert trials[t.repeat_of].config_hash == t.config_hash and trials[t.repeat_of].values == t.values
    ranks = sorted((quality(c) for c in configs), reverse=True)
    assert max(quality(c) for c in configs if c.config_hash in replay.calls) >= ranks[len(ranks) // 10]


def test_budget_in_seconds_counts_the_compute_each_trial_took(tmp_path):
    spec, configs = grid(strategy="random", budget={"seconds": 5})
    study, replay, stopped = run(tmp_path, spec, configs, None, evaluate=Replay(seconds=2.0))
    assert stopped == "budget: 5 s" and len(replay.calls) == 3  # 2 + 2 < 5 <= 2 + 2 + 2


def test_batches_ask_several_trials_and_every_configuration_once(tmp_path):
    spec, configs = grid(strategy="tpe", budget={"trials": 9}, batch=4)
    sizes = []

    def evaluate(batch):
        sizes.append(len(batch))
        return Replay()(batch)

    study, _, stopped = run(tmp_path, spec, configs, 9, evaluate=evaluate)
    assert sum(sizes) == 9 and max(sizes) <= 4 and sizes[-1] == 1  # the last batch only fills the budget
    evaluated = [t.config_hash for t in study.trials() if t.evaluated]
    assert len(evaluated) == len(set(evaluated)) == 9


class Killed(Exception):
    pass


@pytest.mark.parametrize("strategy", ["random", "tpe", "greedy"])
def test_a_killed_search_resumes_its_running_trial_and_repeats_none(tmp_path, strategy):
    spec, configs = grid(strategy=strategy, budget={"trials": 10})
    replay = Replay()

    def dies_on_the_fifth(batch):
        if len(replay.calls) == 4:
            raise Killed  # as a kill -9 would: the trial was asked and never told
        return replay(batch)

    with pytest.raises(Killed):
        run(tmp_path, spec, configs, 10, evaluate=dies_on_the_fifth)
    study, _, stopped = run(tmp_path, spec, configs, 10, evaluate=replay)
    trials = study.trials()
    assert stopped == ("the strategy has nothing more to try" if strategy == "greedy" else "budget: 10 trials")
    assert [t.number for t in trials] == list(range(len(trials)))
    assert not [t for t in trials if t.state == "running"]
    assert len(replay.calls) == len(set(replay.calls)) == sum(t.evaluated for t in trials) >= 8
    killed = next(t for t in trials if t.evaluated and t.config_hash == replay.calls[4])
    assert killed.number == 4 or strategy == "tpe"  # tpe's repeats take numbers too; the trial keeps its own


def test_a_study_with_other_settings_is_refused(tmp_path):
    spec, configs = grid(strategy="random", budget={"trials": 2})
    run(tmp_path, spec, configs, 2)
    with pytest.raises(RagsweepError, match="other settings.*--fresh"):
        SearchStudy(tmp_path / "s.sqlite", "another", ["quality"], ["maximize"], None)


def test_nsga2_and_multi_objective_tpe_record_a_front(tmp_path):
    for strategy in ("nsga2", "tpe"):
        spec, configs = grid(strategy=strategy, objectives=["quality", "latency"], budget={"trials": 16})
        study, replay, _ = run(tmp_path, spec, configs, 16, name=strategy)
        from ragsweep.search.summary import finalists, pareto

        trials = study.trials()
        on_front = pareto(trials, ["quality", "latency"], ["maximize", "minimize"])
        assert on_front
        for t in trials:
            if t.state == "complete":
                assert (
                    not any(
                        dominates(
                            (-f.values["quality"], f.values["latency"]), (-t.values["quality"], t.values["latency"])
                        )
                        for f in on_front
                        if f is not t
                    )
                    or t not in on_front
                )
        chosen = finalists(trials, 3, ["quality", "latency"], ["maximize", "minimize"])
        assert {t.config_hash for t in on_front} <= set(chosen) or len(chosen) == 6


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"strategy": "grid", "budget": {"trials": 3}}, "grid evaluates every configuration"),
        ({"strategy": "greedy", "objectives": ["quality", "latency"]}, "greedy optimises quality alone"),
        ({"strategy": "nsga2"}, "nsga2 is multi-objective"),
        ({"strategy": "tpe", "objectives": ["latency"]}, "must include quality"),
        ({"strategy": "anneal"}, "search.strategy"),
    ],
)
def test_search_settings_errors_name_the_field(bad, match):
    with pytest.raises(RagsweepError, match=match):
        parse_spec({**SPEC, "search": bad})


def test_search_shorthand_is_a_strategy_and_auto_picks_the_benchmarks_choice():
    from ragsweep.config.search import AUTO

    assert parse_spec({**SPEC, "search": "tpe"}).search.strategy == "tpe"
    assert parse_spec(SPEC).search.strategy == "grid"
    auto = parse_spec({**SPEC, "search": "auto"}).search
    assert (auto.strategy, auto.chosen_by) == (AUTO["single"], "auto")
    multi = parse_spec({**SPEC, "search": {"strategy": "auto", "objectives": ["quality", "latency"]}}).search
    assert multi.strategy == AUTO["multi"] and multi.multi_objective


def test_front_and_hypervolume_match_brute_force():
    rng = random.Random(3)
    for _ in range(30):
        pts = [(rng.random(), rng.random(), rng.random()) for _ in range(rng.randint(1, 12))]
        dirs = ["maximize", "minimize", "minimize"]
        idx = front(pts, dirs)
        for i, p in enumerate(pts):
            dominated = any(dominates((-q[0], q[1], q[2]), (-p[0], p[1], p[2])) for q in pts)
            assert (i in idx) == (not dominated)
        ref = (0.0, 1.0, 1.0)
        # Monte-Carlo-free check on a grid: the volume of cells (centres) dominated by some point
        n = 20
        cells = 0
        for a, b, c in itertools.product(range(n), repeat=3):
            x, y, z = (a + 0.5) / n, (b + 0.5) / n, (c + 0.5) / n
            cells += any(p[0] >= x and p[1] <= y and p[2] <= z for p in pts)
        assert hypervolume(pts, dirs, ref) == pytest.approx(cells / n**3, abs=0.08)
    assert hypervolume([(1.0, 1.0)], ["maximize", "minimize"], (0.0, 2.0)) == pytest.approx(1.0)
    assert hypervolume([(1.0, 1.0), (0.5, 0.5)], ["maximize", "minimize"], (0.0, 2.0)) == pytest.approx(1.25)


def test_the_cost_model_learns_seconds_per_unit_and_predicts_what_a_candidate_adds():
    from ragsweep.search.cost import CostModel, features, shared_units

    _, configs = grid()
    truth = {
        "chunk": 3.0,
        "index": 5.0,
        "answer": 0.002,
        "retrieval:bm25/none/none": 0.01,
        "retrieval:vector/none/none": 0.02,
        "retrieval:vector/late_interaction/none": 0.2,
        "retrieval:fusion/none/none": 0.03,
    }
    done, observed = set(), []
    for c in random.Random(0).sample(configs, len(configs)):  # in grid order chunks and BM25 always come together
        f = features(c, done, 50)
        observed.append((f, sum(truth[k] * n for k, n in f.items())))
        done |= shared_units(c)
    model = CostModel(observed)
    for kind, w in model.weights.items():
        assert w == pytest.approx(truth[kind], rel=1e-6, abs=1e-9)
    vector = next(c for c in configs if c.retriever.kind == "vector" and c.reranker is None)
    assert model.predict(features(vector, set(), 50)) == pytest.approx(3 + 5 + 50 * 0.02 + 50 * 0.002)
    assert model.predict(features(vector, shared_units(vector), 50)) == pytest.approx(50 * 0.002)  # another top_k
    assert CostModel([]).predict({"chunk": 1}) is None


def test_a_cost_aware_search_fits_more_trials_in_the_same_seconds(tmp_path):
    from ragsweep.search.cost import features, shared_units

    class Charged(Replay):
        """Charges what a configuration adds, as the plan would compute it."""

        def __init__(self):
            super().__init__()
            self.done = set()

        def __call__(self, configs):
            out = super().__call__(configs)
            for c in configs:
                f = features(c, self.done, 50)
                self.done |= shared_units(c)
                secs = (
                    3.0 * f.get("chunk", 0)
                    + 5.0 * f.get("index", 0)
                    + 0.01 * 50
                    + 0.5 * any(k.startswith("retrieval:") for k in f)
                )
                out[c.config_hash] = Outcome(out[c.config_hash].values, secs, 0.0, 50)
            return out

    # over several seeds: one draw of a random search can fit as many trials either way (the configurations'
    # hashes, which change with their identity, decide the draw)
    counts = {False: 0, True: 0}
    for seed in range(4):
        for aware in (False, True):
            spec, configs = grid(strategy="random", cost_aware=aware, budget={"seconds": 40})
            s = spec.search
            space = SearchSpace(configs)
            study = SearchStudy(tmp_path / f"{aware}-{seed}.sqlite", "k", ["quality"], ["maximize"], None)
            replay = Charged()
            run_search(
                study,
                space,
                strategy_class("random")(s, seed, None, False),
                Limits(None, 40.0),
                replay,
                Asking(questions=50, pool=4 if aware else 1),
            )
            counts[aware] += len(replay.calls)
            trials = study.trials()
            if aware:
                skipped = [t for t in trials if t.state == "skipped"]
                assert skipped and not any(t.evaluated for t in skipped)
                assert any(t.predicted is not None for t in trials if t.evaluated), counts
    assert counts[True] > counts[False], counts


def test_a_killed_cost_aware_search_evaluates_only_proposals_it_had_chosen(tmp_path):
    """Killed while gathering a pool (asked, none chosen yet) and while evaluating the chosen one: on resume the
    chosen one is finished under its number, the unchosen proposals are skipped, nothing is evaluated twice."""
    spec, configs = grid(strategy="random", cost_aware=True, budget={"trials": 6})
    space = SearchSpace(configs)
    replay = Replay()

    class DiesProposing(strategy_class("random")):
        proposals = 0

        def propose(self, space, trials, pending):
            DiesProposing.proposals += 1
            if DiesProposing.proposals == 11:  # the third pool: 2 asked, the kill comes before the choice
                raise Killed
            return super().propose(space, trials, pending)

    def search(strategy, evaluate):
        study = SearchStudy(tmp_path / "pool.sqlite", "k", ["quality"], ["maximize"], None)
        stopped = run_search(
            study, space, strategy(spec.search, 0, 6, False), Limits(6), evaluate, Asking(questions=10, pool=4)
        )
        return study, stopped

    with pytest.raises(Killed):
        search(DiesProposing, replay)
    left = [
        t
        for t in SearchStudy(tmp_path / "pool.sqlite", "k", ["quality"], ["maximize"], None).trials()
        if t.state == "running"
    ]
    assert len(left) == 2 and all(t.features is None for t in left) and len(replay.calls) == 2
    study, stopped = search(strategy_class("random"), replay)
    trials = study.trials()
    assert stopped == "budget: 6 trials" and len(replay.calls) == len(set(replay.calls)) == 6
    assert all(trials[t.number].state == "skipped" for t in left)
    assert sum(t.evaluated for t in trials) == 6
