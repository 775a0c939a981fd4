"""``manifest.json``: the spec, resolved configurations, versions, dataset, LLMs and usage, and one entry per
invocation (stage timings, what was computed and what came from caches)."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragsweep.redact import redact
from ragsweep.run_dir import RunDir
from ragsweep.run_records import FORMAT_VERSION, Invocation, Manifest

if TYPE_CHECKING:
    from ragsweep.pipelines.run_state import RunState

__all__ = ["FORMAT_VERSION", "build_manifest", "read_previous", "write_manifest", "write_started"]

_PACKAGES = [
    "ragsweep",
    "llama-index-core",
    "llama-index-retrievers-bm25",
    "llama-index-vector-stores-chroma",
    "chromadb",
    "langchain-text-splitters",
    "langchain-experimental",
    "bert-score",
    "sentence-transformers",
    "transformers",
    "torch",
    "onnxruntime",
    "bm25s",
    "scikit-learn",
    "pandas",
    "pyarrow",
    "numpy",
    "pydantic",
]


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def write_started(st: RunState, judge_keys: dict | None = None) -> None:
    """Before any work: ``questions.parquet`` and a manifest with status ``running``, so that a
    killed sweep's directory still says what it was and ``load_run`` can rebuild its records
    from the journal. ``judge_keys``: stage 2's, when the spec judges."""
    import hashlib

    from ragsweep.pipelines.outputs.records import question_rows

    spec, questions, run_dir = st.spec, st.questions, st.run_dir
    cache_dir, scorer_key, split = st.cache.root, st.scorer_key, st.split

    run_dir.mkdir(parents=True, exist_ok=True)
    previous = read_previous(run_dir)
    rows = question_rows(questions, split)
    questions_key = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:24]
    if previous.get("questions_key") != questions_key or not RunDir(run_dir).questions.is_file():
        import pandas as pd

        atomic(RunDir(run_dir).questions, lambda p: pd.DataFrame(rows).to_parquet(p, index=False))
    manifest = build_manifest(st, "running", None, finished=False)
    manifest["questions_key"] = questions_key
    if previous.get("outputs"):  # kept while running: the files it describes are still those of that key
        manifest["outputs"] = previous["outputs"]
    manifest.update(run_context(spec, questions, cache_dir, scorer_key, split))
    if judge_keys is not None:
        manifest["stage2"] = {"judge_keys": judge_keys, "selected": [], "skipped": "running"}
    manifest["running"] = {
        "pid": os.getpid(),
        "host": platform.node(),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_manifest(run_dir, manifest)


def run_context(spec, questions, cache_dir: Path | None, scorer_key: str | None, split: dict | None) -> Manifest:
    """Where the run's shared state lives and which scores and split its records use."""
    out: Manifest = {
        "cache_dir": str(Path(cache_dir).resolve()) if cache_dir is not None else None,
        "bertscore_key": scorer_key,
    }
    if split is not None:
        from ragsweep.evaluation.split import split_counts

        used = {q.qid for q in questions}
        out["split"] = {
            "validation_fraction": spec.split.validation_fraction,
            "seed": spec.seed,
            "stratify": spec.split.stratify,
            "counts": split_counts({k: v for k, v in split.items() if k in used}, questions),
        }
    return out


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Written with every URL's credentials redacted (``ragsweep.redact``): an ``llm.base_url`` may carry a key."""
    text = json.dumps(redact(manifest), indent=2, ensure_ascii=False, default=str)
    atomic(RunDir(run_dir).manifest, lambda p: Path(p).write_text(text, encoding="utf-8"))


def forget_outputs(run_dir: Path) -> None:
    """Drop the outputs key from the manifest on disk before the files it describes are rewritten."""
    previous = read_previous(run_dir)
    if previous.pop("outputs", None) is not None:
        write_manifest(run_dir, previous)


def usage_summary(spending: list[dict]) -> dict:
    """Calls, tokens and dollars this run paid for, in total and by stage, judge and configuration."""

    def add(bucket: dict, row: dict) -> None:
        b = bucket.setdefault("calls", 0)
        bucket["calls"] = b + row["calls"]
        for k in ("prompt_tokens", "completion_tokens"):
            bucket[k] = bucket.get(k, 0) + row[k]
        if row["cost_usd"] is None:
            bucket["unpriced_calls"] = bucket.get("unpriced_calls", 0) + row["calls"]
        else:
            bucket["cost_usd"] = bucket.get("cost_usd", 0.0) + row["cost_usd"]

    total: dict = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    by_stage: dict = {}
    by_judge: dict = {}
    by_config: dict = {}
    for row in spending:
        add(total, row)
        add(by_stage.setdefault(row["stage"] or "other", {}), row)
        if row.get("judge"):
            add(by_judge.setdefault(row["judge"], {}), row)
        add(by_config.setdefault(row["config_id"] or "(shared)", {}), row)
    if total["calls"] and total.get("unpriced_calls") == total["calls"]:
        total["cost_usd"] = None  # no model had a price: tokens only
    return {**total, "by_stage": by_stage, "by_judge": by_judge, "by_configuration": by_config}


def read_previous(run_dir: Path) -> Manifest:
    """The manifest an earlier invocation wrote, or {} (none, or unreadable)."""
    old = RunDir(run_dir).manifest
    if old.is_file():
        try:
            return cast(Manifest, json.loads(old.read_text(encoding="utf-8")))
        except ValueError:
            return {}
    return {}


def build_manifest(st: RunState, status: str, n_records: int | None, finished: bool = True) -> Manifest:
    """The manifest of the run ``st``; ``finished`` False (at start-up) adds no invocation."""
    from ragsweep import __version__

    spec, dataset, questions, configs, run_dir = st.spec, st.dataset, st.questions, st.configs, st.run_dir
    stats, limit = (st.stats if finished else None), st.limit

    old = read_previous(run_dir)
    previous = old.get("invocations", [])
    invocation = None if stats is None else _invocation(stats)
    from ragsweep.config import backend_default
    from ragsweep.evaluation.bertscore import MINILM_ID

    bs = spec.scoring.bertscore
    return {
        "format_version": FORMAT_VERSION,
        "ragsweep_version": __version__,
        "status": status,
        "records": n_records,
        "expected_records": len(configs) * len(questions),
        "spec": redact(spec.model_dump(mode="json")),  # a URL's credentials (base_url) are never written
        "seed": spec.seed,
        "question_limit": limit,
        "dataset": _dataset_info(dataset, questions),
        "generator": generator_info(spec),
        "llm": llm_info(spec),
        "usage": usage_summary(stats.llm.get("spending", [])) if stats is not None and stats.llm else None,
        "bertscore": {
            "backbone": MINILM_ID if bs.model == "minilm" else bs.model,
            "num_layers": bs.num_layers or (6 if bs.model == "minilm" else None),
            "baseline": bs.baseline,
            "backend": bs.backend,
        },
        "backends": backend_default.record(spec),  # what the models run on; an unset backend's value and why
        "configurations": [
            redact({"config_id": c.config_id, "config_hash": c.config_hash, **c.resolved(), "labels": c.labels()})
            for c in configs
        ],
        "versions": package_versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "cpus": os.cpu_count()},
        "invocations": previous + ([invocation] if invocation else []),
        "written_at": time.time(),
    }


def _invocation(stats) -> Invocation:
    """What one invocation did and how long each stage took, as the manifest lists it."""
    entry: Invocation = {
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
        "timings_s": {k: round(v, 3) for k, v in stats.timings.items()},
        "answered": stats.answered,
        "failed": stats.failed,
        "failed_for_good": stats.failed_for_good,
        "skipped_already_done": stats.skipped_done,
        "documents_split": stats.documents_split,
        "embeddings_computed": stats.embeddings_computed,
        "query_embeddings_computed": stats.query_embeddings_computed,
        "embeddings_from_cache": stats.embeddings_from_cache,
        "indexes_built": stats.indexes_built,
        "indexes_reused": stats.indexes_reused,
        "bertscore_pairs_computed": stats.bertscore_pairs_computed,
        "bertscore_pairs_unique": stats.bertscore_pairs_total,
        "chunks": stats.chunks,
        "unique_chunk_texts": stats.unique_chunk_texts,
        "graphs": stats.graphs,
        "unit_seconds": {k: round(v, 3) for k, v in sorted(stats.units.items())},
        **({"chunk_contexts": stats.chunk_contexts} if stats.chunk_contexts else {}),
        "executor": stats.executor,
        "invocation": stats.invocation,
        "judgements_made": stats.judged,
        "judgements_failed": stats.judge_failed,
    }
    entry.update({k: v for k, v in stats.llm.items() if k != "spending"})  # type: ignore[typeddict-item]
    entry["stopped"] = stats.stopped  # last, as it always was
    return entry


def _dataset_info(dataset, questions) -> dict:
    """The dataset's name, fingerprints, sizes and where its evidence was located."""
    return {
        "name": dataset.name,
        "fingerprint": dataset.fingerprint(),
        "corpus_fingerprint": dataset.corpus_fingerprint(),
        "documents": len(dataset.documents),
        "questions": len(dataset.questions),
        "questions_used": len(questions),
        "notes": list(dataset.notes),
        "evidence_location": dataset.evidence.get("location"),
        "evidence_copies": dataset.evidence.get("copies"),
        "unlocated_evidence": len(dataset.evidence.get("unlocated") or []),
    }


def generator_info(spec) -> dict:
    if spec.generator.calls_llm:
        return {
            "label": f"llm:{spec.llm.model}",
            "llm": spec.llm.model,
            "response_mode": spec.generator.response_mode,
            "prompt_file": str(spec.generator.prompt_file) if spec.generator.prompt_file else None,
            **({"prompt_files": [str(p) for p in spec.generator.prompt_files]} if spec.generator.prompt_files else {}),
            **({"refusal": spec.generator.refusal} if spec.generator.refusal else {}),
        }
    return {
        "label": "extractive-baseline",
        "llm": None,
        "note": "offline baseline: answers are retrieved sentences, not generated text",
        **({"abstain_below": spec.generator.abstain_below} if spec.generator.abstain_below is not None else {}),
    }


def llm_info(spec) -> dict:
    """The LLMs in use: model, endpoint and the *name* of the key's variable (never the key)."""
    from ragsweep.llm.clients import llms_in_use
    from ragsweep.llm.pricing import price_for

    out = {}
    for role, llm in llms_in_use(spec):
        price = price_for(llm.model, spec.prices)
        dump = redact(llm.model_dump(mode="json"))  # its base_url without credentials
        out[role] = {**dump, "price_usd_per_million": price.model_dump() if price else None}
    return out


def atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)
