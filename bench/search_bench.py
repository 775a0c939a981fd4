"""Benchmark: search instead of enumeration, on a 216-configuration grid over LegalBench-RAG subsets.

Per subset, one cold ``ragsweep run`` of the whole grid (``legalbench_spec.search_grid_spec``: 3 splitters x {bm25,
vector, RRF fusion, weighted relative-score fusion} x MiniLM on torch and ONNX int8 x {none, rm3} x
{none, maxsim} x top_k {3, 5, 10}) is the ground truth: every configuration's per-question MRR on the
validation and test questions, its median latency, and what each shared unit took (the manifest's
``unit_seconds``: chunking per splitter, embedding and indexing per (splitter, embedding)).

The strategies are then replayed on it with ragsweep's own search loop, strategies and racing
(``ragsweep.search``): a trial's values are its validation figures from the grid run, and its compute
is what the plan would add given what earlier trials computed: its splitter's chunks and its index
when new, plus its answers (retrieval ms per question from the records, and BERTScore at the grid's
seconds per pair). The grid's compute is all of that for every configuration on the validation
questions (what the grid spends to choose); each strategy gets ``--fraction`` (20 %) of it, 10 seeds.

Figures, per subset:
  - per strategy: median [IQR] test regret = test MRR of the grid's choice (best validation MRR of
    all 216) - test MRR of the search's choice (best validation MRR among its trials); the regret
    against the best test MRR of any configuration (oracle); trials; compute used;
  - racing (the raced grid): (configuration, question) pairs answered against the grid's, and whether
    the final choice is the grid's, over 10 question orders;
  - multi-objective (MRR x median latency, 25 % of the compute): hypervolume of the search's front
    against the grid's front, both on validation figures normalised to the grid's ranges;
  - a plot of the median best-so-far test regret against compute, per strategy (``--plot``).

Usage: python bench/search_bench.py [--data ../shared/datasets/legalbench-rag]
       [--subsets privacy_qa,contractnli] [--limit contractnli=300] [--seeds 10] [--fraction 0.2]
       [--work DIR] [--json FILE] [--plot FILE.png]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from legalbench_args import DEFAULT_DATA
from legalbench_spec import search_grid_spec

ROOT = Path(__file__).resolve().parents[1]
STRATEGIES = [  # (label, search settings)
    ("random", {"strategy": "random"}),
    ("random, cost-aware", {"strategy": "random", "cost_aware": True}),
    ("greedy", {"strategy": "greedy"}),
    ("greedy, models first", {"strategy": "greedy", "order": "models_first"}),
    ("tpe", {"strategy": "tpe"}),
    ("tpe, cost-aware", {"strategy": "tpe", "cost_aware": True}),
]
MULTI = [("nsga2", {"strategy": "nsga2"}), ("tpe (MOTPE)", {"strategy": "tpe"}), ("random", {"strategy": "random"})]


def run_grid(data: str, subset: str, limit: int | None, work: Path) -> Path:
    """The whole grid, cold (a run already complete in ``work`` is reused)."""
    d = work / subset
    d.mkdir(parents=True, exist_ok=True)
    spec = d / "grid.yaml"
    spec.write_text(search_grid_spec(data, subset, d / "runs"), encoding="utf-8")
    cmd = [str(ROOT / ".venv" / "bin" / "ragsweep"), "run", str(spec), "--cache", str(d / "cache"), "--no-progress"]
    if limit:
        cmd += ["--limit", str(limit)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{subset}: the grid run failed: {proc.stderr[-1500:]}")
    print(f"{subset}: grid run {time.perf_counter() - t0:.0f} s (0 when reused)", flush=True)
    return spec


class Ground:
    """The grid run as a table: per configuration its validation values (in question order), test mean,
    latency and answer cost; per shared unit its seconds."""

    def __init__(self, spec_path: Path) -> None:
        import numpy as np
        import pandas as pd

        from ragsweep.config import load_spec
        from ragsweep.pipelines.grid import expand

        self.spec = load_spec(spec_path)
        run_dir = self.spec.default_run_dir()
        manifest = json.loads((run_dir / "manifest.json").read_text())
        first = manifest["invocations"][0]
        self.units = first["unit_seconds"]
        pairs = max(1, first.get("bertscore_pairs_computed") or 1)
        per_pair = float(first["timings_s"].get("scoring", 0.0)) / pairs
        rec = pd.read_parquet(run_dir / "records.parquet")
        self.configs = expand(self.spec)
        by_id = {c.config_id: c for c in self.configs}
        self.configs = [c for c in self.configs if c.config_id in set(rec["config_id"])]
        val = rec[rec["split"] == "validation"]
        self.val_qids = sorted(set(val["qid"]))
        self.values, self.test, self.latency, self.answer_s, self.retrieval_s = {}, {}, {}, {}, {}
        for cid, g in val.groupby("config_id"):
            h = by_id[cid].config_hash
            m = g.set_index("qid")["mrr"]
            self.values[h] = np.array([float(m.get(q, np.nan)) for q in self.val_qids])
            self.latency[h] = float(g["retrieval_ms"].median())
            self.retrieval_s[h] = float(g["retrieval_ms"].sum()) / 1000  # memoised ones replay the first's time
            self.answer_s[h] = float(g["generation_ms"].fillna(0).sum()) / 1000 + per_pair * len(g)
        for cid, g in rec[rec["split"] == "test"].groupby("config_id"):
            self.test[by_id[cid].config_hash] = float(g["mrr"].mean())
        self.val_mean = {h: float(np.nanmean(v)) for h, v in self.values.items()}
        self.grid_choice = max(self.configs, key=lambda c: (self.val_mean[c.config_hash], -self.configs.index(c)))
        self.oracle = max(self.test.values())
        self.compute = Replay(self).cost(self.configs)

    def unit_seconds(self, unit: tuple[str, ...], config) -> float:
        """A shared unit's seconds: chunks and index from the manifest, a retrieval from the records."""
        if unit[0] == "retrieval":
            return self.retrieval_s[config.config_hash]
        key = f"{unit[0]}:{unit[1]}" + (f"@{unit[2]}" if len(unit) > 2 else "")
        return float(self.units.get(key, 0.0))

    def regret(self, h: str) -> float:
        return self.test[self.grid_choice.config_hash] - self.test[h]


class Replay:
    """A trial's outcome from the ground truth, charged what the plan would compute for it: the shared units
    it adds (chunks, index, its retrieval when no evaluated configuration shares it) and its answers."""

    def __init__(self, g: Ground) -> None:
        self.g, self.done = g, set()

    def cost(self, configs) -> float:
        """What evaluating ``configs`` in order adds (and marks them computed)."""
        from ragsweep.search.cost import shared_units

        total = 0.0
        for c in configs:
            new = shared_units(c) - self.done
            self.done |= new
            total += sum(self.g.unit_seconds(u, c) for u in new) + self.g.answer_s[c.config_hash]
        return total

    def __call__(self, configs):
        from ragsweep.search.trials import Outcome

        out = {}
        for c in configs:
            h = c.config_hash
            secs = self.cost([c])
            out[h] = Outcome(
                {"quality": self.g.val_mean[h], "latency": self.g.latency[h], "cost": 0.0},
                secs,
                0.0,
                len(self.g.val_qids),
            )
        return out


def replay_search(g: Ground, settings: dict, seed: int, fraction: float, objectives=("quality",)):
    """One search on the ground truth: its trials (in order) and why it stopped."""
    from ragsweep.config.search import SearchSpec
    from ragsweep.search.loop import Asking, Limits, run_search
    from ragsweep.search.space import SearchSpace
    from ragsweep.search.strategies.registry import strategy_class
    from ragsweep.search.study import SearchStudy
    from ragsweep.search.trials import directions

    s = SearchSpec(**settings, objectives=list(objectives))
    space = SearchSpace(g.configs, s.order)
    strategy = strategy_class(s.strategy)(s, seed, None, False)
    study = SearchStudy(None, "bench", s.objectives, directions(s.objectives, False), strategy.sampler())
    stopped = run_search(
        study,
        space,
        strategy,
        Limits(None, fraction * g.compute),
        Replay(g),
        Asking(s.batch, questions=len(g.val_qids), pool=4 if s.cost_aware else 1),
    )
    return study.trials(), stopped


def curve(g: Ground, trials) -> list[tuple[float, float]]:
    """(compute fraction, test regret of the best-so-far choice) after each evaluated trial."""
    out, spent, best = [], 0.0, None
    for t in (t for t in trials if t.evaluated):
        spent += t.seconds
        if best is None or t.values["quality"] > g.val_mean[best]:
            best = t.config_hash
        out.append((spent / g.compute, g.regret(best)))
    return out


def strategies(g: Ground, seeds: int, fraction: float) -> dict:
    out = {}
    for label, settings in STRATEGIES:
        rows = []
        for seed in range(seeds if settings["strategy"] != "greedy" else 1):  # greedy has no randomness
            trials, stopped = replay_search(g, settings, seed, fraction)
            done = [t for t in trials if t.evaluated]
            best = max(done, key=lambda t: (t.values["quality"], -t.number))
            rows.append(
                {
                    "seed": seed,
                    "trials": len(done),
                    "compute": sum(t.seconds for t in done) / g.compute,
                    "chosen": best.config_id,
                    "regret": g.regret(best.config_hash),
                    "oracle_regret": g.oracle - g.test[best.config_hash],
                    "stopped": stopped,
                    "curve": curve(g, trials),
                }
            )
        out[label] = rows
        print(
            f"  {label}: median regret {statistics.median(r['regret'] for r in rows):+.3f}, "
            f"trials {statistics.median(r['trials'] for r in rows):.0f}",
            flush=True,
        )
    return out


def racing(g: Ground, seeds: int, family: bool = True) -> list[dict]:
    from ragsweep.search.racing import RaceRule, looks, question_order, race

    index = {q: i for i, q in enumerate(g.val_qids)}
    rows = []
    for seed in range(seeds):
        order = question_order(g.val_qids, seed)
        pos = [index[q] for q in order]

        def values_at(hashes, n):
            return {h: g.values[h][pos[:n]] for h in hashes}

        sizes = looks(len(order), 0.2, 2.0)
        t0 = time.perf_counter()
        rule = RaceRule(True, 0.05, seed=seed, family=family)
        result = race([c.config_hash for c in g.configs], sizes, values_at, rule)
        final = max(result.survivors, key=lambda h: (g.val_mean[h], -[c.config_hash for c in g.configs].index(h)))
        pairs = sum(result.pairs.values())
        rows.append(
            {
                "seed": seed,
                "pairs": pairs,
                "grid_pairs": len(g.configs) * len(order),
                "regret": g.regret(final),
                "saved": 1 - pairs / (len(g.configs) * len(order)),
                "dropped": len(result.dropped),
                "same_choice": final == g.grid_choice.config_hash,
                "looks": sizes,
                "seconds": time.perf_counter() - t0,
            }
        )
    return rows


def multi_objective(g: Ground, seeds: int, fraction: float) -> dict:
    from ragsweep.search.pareto import hypervolume

    qs, ls = [g.val_mean[c.config_hash] for c in g.configs], [g.latency[c.config_hash] for c in g.configs]
    q0, q1, l0, l1 = min(qs), max(qs), min(ls), max(ls)

    def norm(points):
        return [((q - q0) / (q1 - q0), (lat - l0) / (l1 - l0)) for q, lat in points]

    dirs, ref = ["maximize", "minimize"], (-0.1, 1.1)
    full = hypervolume(norm(zip(qs, ls)), dirs, ref)
    out = {"grid_hypervolume": full}
    for label, settings in MULTI:
        rows = []
        for seed in range(seeds):
            trials, _ = replay_search(g, settings, seed, fraction, objectives=("quality", "latency"))
            done = [t for t in trials if t.state == "complete"]
            hv = hypervolume(norm([(t.values["quality"], t.values["latency"]) for t in done]), dirs, ref)
            rows.append(
                {
                    "seed": seed,
                    "trials": len(done),
                    "coverage": hv / full,
                    "compute": sum(t.seconds for t in done) / g.compute,
                }
            )
        out[label] = rows
        print(
            f"  multi-objective {label}: median coverage {statistics.median(r['coverage'] for r in rows):.3f}",
            flush=True,
        )
    return out


def describe(name: str, g: Ground) -> dict:
    return {
        "subset": name,
        "configurations": len(g.configs),
        "validation": len(g.val_qids),
        "test_questions": None,
        "grid_choice": g.grid_choice.config_id,
        "grid_choice_test": g.test[g.grid_choice.config_hash],
        "oracle_test": g.oracle,
        "grid_compute_s": g.compute,
        "units": g.units,
    }


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4.2), squeeze=False)
    grid_x = np.linspace(0.0, max(0.2, max(r["fraction"] for r in results)), 60)
    for ax, res in zip(axes[0], results):
        for label, rows in res["strategies"].items():
            ys = []
            for r in rows:
                xs = [x for x, _ in r["curve"]]
                vals = [y for _, y in r["curve"]]
                ys.append([next((vals[i] for i in range(len(xs) - 1, -1, -1) if xs[i] <= x), np.nan) for x in grid_x])
            with np.errstate(all="ignore"), warnings.catch_warnings():  # before a strategy's first trial: no value
                warnings.simplefilter("ignore", RuntimeWarning)
                ax.plot(grid_x * 100, np.nanmedian(np.array(ys, dtype=float), axis=0), label=label)
        ax.axhline(0.01, color="grey", ls=":", lw=1)
        ax.set_title(f"{res['subset']} ({res['configurations']} configurations)")
        ax.set_xlabel("compute spent (% of the grid's)")
        ax.set_ylabel("test regret of the choice so far (MRR)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("median over seeds; below 0: a better test MRR than the grid's own choice", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--subsets", default="privacy_qa,contractnli")
    ap.add_argument("--limit", action="append", default=["contractnli=300"], metavar="SUBSET=N")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--fraction", type=float, default=0.2)
    ap.add_argument("--mo-fraction", type=float, default=0.25)
    ap.add_argument("--work", help="keep the grid runs here (a complete one is reused)")
    ap.add_argument("--json")
    ap.add_argument("--plot", help="PNG of best-so-far regret against compute")
    args = ap.parse_args()
    limits = dict(item.split("=") for item in args.limit)
    work = Path(args.work or tempfile.mkdtemp(prefix="search-bench-"))
    results = []
    for subset in [s for s in args.subsets.split(",") if s]:
        if not Path(args.data, "benchmarks", f"{subset}.json").is_file():
            sys.exit(f"{args.data}: LegalBench-RAG subset {subset} not found; pass --data")
        spec = run_grid(args.data, subset, int(limits[subset]) if subset in limits else None, work)
        g = Ground(spec)
        res = describe(subset, g)
        print(
            f"{subset}: {len(g.configs)} configurations, {len(g.val_qids)} validation questions, grid choice "
            f"{g.grid_choice.config_id} (test MRR {res['grid_choice_test']:.3f}, oracle {g.oracle:.3f}), "
            f"grid compute {g.compute:.0f} s",
            flush=True,
        )
        t0 = time.perf_counter()
        res["fraction"] = args.fraction
        res["strategies"] = strategies(g, args.seeds, args.fraction)
        res["racing"] = racing(g, args.seeds)
        res["racing_per_comparison"] = racing(g, args.seeds, family=False)
        for label, rr in (("racing", res["racing"]), ("racing, alpha per comparison", res["racing_per_comparison"])):
            print(
                f"  {label}: saved {statistics.median(r['saved'] for r in rr):.1%} of pairs (median), same choice "
                f"in {sum(r['same_choice'] for r in rr)}/{len(rr)}; saved >= 60 % and same choice in "
                f"{sum(r['same_choice'] and r['saved'] >= 0.6 for r in rr)}/{len(rr)}; test regret of the raced "
                f"choice {statistics.median(r['regret'] for r in rr):+.3f}",
                flush=True,
            )
        res["multi_objective"] = multi_objective(g, args.seeds, args.mo_fraction)
        res["replay_seconds"] = time.perf_counter() - t0
        results.append(res)
    if args.plot:
        plot(results, Path(args.plot))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
