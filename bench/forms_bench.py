"""Benchmark: judges and ``generate`` on real local servers, replies in free text against replies held to a schema.

For each server of ``scripts/llm-server.sh`` given (SmolLM2-135M-Instruct, Gemma 3 270M) and each way of asking:

- ``before``: another checkout's ragsweep (``--before-src``, e.g. a worktree of 81b8b23): free text, parsed;
- ``text``: this ragsweep with ``llm.structured_output: text``: free text, parsed, one repair re-ask;
- ``auto``: this ragsweep as shipped: the server probed, replies held to the schema (llama-cpp-python: a grammar);

it runs ``ragsweep judges evaluate LABELS --detectors ...`` (the demo's 96 labelled answers by default) and
``ragsweep generate`` (``--questions`` simple questions, one round), each from an empty LLM cache, the servers
side by side, and prints per judge macro-F1, kappa, AUROC (95 % bootstrap CIs on the test half), unmeasured
items and re-asks, and for ``generate`` the replies read. The models are far too small to judge: the point is
whether a reply can be read, not what it is worth.

Usage:
  scripts/llm-server.sh start; LLM_SERVER_MODEL=gemma3 scripts/llm-server.sh start
  git worktree add /tmp/before 81b8b23
  python bench/forms_bench.py --before-src /tmp/before/src --work /tmp/forms --json forms.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

UNREAD = ("unparseable reply", "empty reply", "reply echoes the prompt")
SERVERS = {
    "smollm2": ("http://127.0.0.1:8089/v1", "smollm2-135m-instruct"),
    "gemma3": ("http://127.0.0.1:8090/v1", "gemma-3-270m"),
}


def spec_for(model: str, mode: str, questions: int, max_tokens: int = 512) -> dict:
    base_url, alias = SERVERS[model]
    llm = {"model": alias, "base_url": base_url, "api_key_env": None, "context_window": 2048, "max_tokens": max_tokens}
    llm["timeout"] = 180
    if mode == "text":
        llm["structured_output"] = "text"
    return {
        "name": f"forms-{model}-{mode}",
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
        "splitters": [{"kind": "sentence"}],
        "retrievers": [{"kind": "bm25"}],
        "llm": llm,
        "prices": {alias: {"input": 0.0, "output": 0.0}},
        "generate": {
            "generator": "llm",
            "questions": questions,
            "rounds": 1,
            "oversample": 1.0,
            "passage_tokens": 160,
            "mix": {"simple": 1.0},
        },
    }


def cli(args: list, src: str | None, log: Path) -> tuple[int, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        rc = subprocess.run(
            [sys.executable, "-m", "ragsweep.cli", *map(str, args)], env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode
    return rc, time.perf_counter() - t0


def one(model: str, mode: str, args, work: Path) -> dict:
    """Every command of one (model, mode), in order (the server computes one request at a time)."""
    d = work / f"{model}-{mode}"
    d.mkdir(parents=True, exist_ok=True)
    spec = d / "spec.yaml"
    spec.write_text(
        yaml.safe_dump(spec_for(model, mode, args.questions, args.max_tokens), sort_keys=False), encoding="utf-8"
    )
    src = args.before_src if mode == "before" else None
    out: dict = {"model": model, "mode": mode}
    rc, secs = cli(
        ["judges", "evaluate", args.labels, "--spec", spec, "--detectors", args.detectors, "--cache", d / "cache"]
        + ["--out", d / "meta.json"],
        src,
        d / "judges.log",
    )
    out["judges"] = {"rc": rc, "seconds": round(secs, 1)}
    if (d / "meta.json").is_file():
        meta = json.loads((d / "meta.json").read_text())
        out["judges"]["rows"] = meta["rows"]
        out["judges"]["endpoints"] = meta.get("llm_endpoints")
    rc, secs = cli(["generate", spec, "--out", d / "gen.jsonl", "--cache", d / "cache"], src, d / "generate.log")
    out["generate"] = {"rc": rc, "seconds": round(secs, 1)}
    summary = d / "gen.generation.json"
    if summary.is_file():
        s = json.loads(summary.read_text())
        out["generate"].update({k: s.get(k) for k in ("wanted", "written", "rejected", "llm_endpoints", "llm")})
    return out


def ci(m: dict | None) -> str:
    if not m or m.get("value") is None:
        return "-"
    return f"{m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"


def report(results: list[dict]) -> None:
    print("\n| model | asked | judge | macro-F1 | Cohen's kappa | AUROC | unmeasured | re-asks | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        st = ((r["judges"].get("endpoints") or [{}])[0] or {}).get("structured") or {}
        for row in r["judges"].get("rows") or []:
            flag = " (!)" if row.get("no_better_than_chance") else ""
            print(
                f"| {r['model']} | {r['mode']} | {row['detector']} | {ci(row.get('macro_f1'))}{flag} | "
                f"{ci(row.get('kappa'))} | {ci(row.get('auroc'))} | {row['unscored']} / {row['n_items']} | "
                f"{st.get('reasks', '-')} | {r['judges']['seconds']} |"
            )
    print("\n| model | asked | replies | read | re-asks | rejected | written | s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        g = r["generate"]
        st = ((g.get("llm_endpoints") or [{}])[0] or {}).get("structured") or {}
        rejected = g.get("rejected") or {}
        unread = sum(
            v for k, v in rejected.items() if k in ("unparseable reply", "empty reply", "reply echoes the prompt")
        )
        asked = st.get("asked") or (g.get("llm") or {}).get("llm_calls") or g.get("wanted")
        print(
            f"| {r['model']} | {r['mode']} | {asked} | {asked - unread if asked else '-'} | {st.get('reasks', '-')} | "
            f"{', '.join(f'{k} {v}' for k, v in rejected.items()) or '-'} | {g.get('written')} / {g.get('wanted')} | "
            f"{g['seconds']} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", default="demo")
    ap.add_argument("--detectors", default="llm_correctness,llm_faithfulness")
    ap.add_argument("--questions", type=int, default=24)
    ap.add_argument("--max-tokens", type=int, default=512, help="llm.max_tokens (a base model writes to it)")
    ap.add_argument("--models", default="smollm2,gemma3")
    ap.add_argument("--modes", default="before,text,auto")
    ap.add_argument("--before-src", help="another checkout's src/ for the 'before' mode")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m != "before" or args.before_src]
    models = args.models.split(",")

    def model_runs(model: str) -> list[dict]:
        return [one(model, mode, args, args.work) for mode in modes]

    with ThreadPoolExecutor(len(models)) as pool:  # the servers side by side, one thread each
        results = [r for rs in pool.map(model_runs, models) for r in rs]
    report(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
