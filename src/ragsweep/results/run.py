"""Read a run directory into pandas: ``load_run(path)`` for notebooks, the report, plots and compare.

A finished run is read from the files the sweep wrote (``records.parquet``, ``summary.csv``,
``comparisons.csv``, ``manifest.json``, ``questions.parquet``). A sweep that is still running, or
was killed, has only its start-up manifest (status ``running``) and its journal: then the
records are rebuilt from the journal by the same code the sweep uses, and the summary is
recomputed from them, so a partial run can be looked at with what it has.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ragsweep.errors import RagsweepError
from ragsweep.results.manifest_file import read_manifest
from ragsweep.run_dir import RunDir
from ragsweep.run_records import Manifest, Stage2Record

if TYPE_CHECKING:
    import pandas as pd

STATUSES = ("complete", "incomplete", "stopped_budget", "running", "killed", "unfinished")


@dataclass
class RunData:
    """One run directory as DataFrames.

    ``records``: one row per (configuration, question); ``summary``: per configuration and split,
    means with ``_lo``/``_hi`` CIs; ``manifest``: one row per configuration (its labels and resolved
    settings, flattened); ``questions``: qid, question, type, reference answer, split and gold
    evidence spans; ``comparisons``: best configuration vs each other one (empty when not written);
    ``meta``: ``manifest.json`` as written. ``status`` is the manifest's, or ``running`` /
    ``killed`` for a sweep that has not written its results; ``notes`` say what is partial.
    """

    path: Path
    status: str
    records: pd.DataFrame
    summary: pd.DataFrame
    manifest: pd.DataFrame
    questions: pd.DataFrame
    comparisons: pd.DataFrame
    meta: Manifest
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.meta.get("spec", {}).get("name") or self.path.name)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def invocations(self) -> pd.DataFrame:
        """One row per ``ragsweep run`` that wrote this directory: timings (seconds) and counters."""
        import pandas as pd

        return pd.json_normalize(self.meta.get("invocations") or [], sep=".")

    @property
    def judges(self) -> list[str]:
        """Stage-2 judge metrics present in the records (correctness, correctness_pass, ...)."""
        from ragsweep.pipelines.outputs.columns import JUDGE_METRICS

        return [m for m in JUDGE_METRICS if m in self.records.columns and self.records[m].notna().any()]

    @property
    def verdict(self) -> dict | None:
        """``verdict.json``: the configuration chosen on validation (``chosen``), its test mean with CI, the
        configurations tied with it, costs; None before the run has written one."""
        path = RunDir(self.path).verdict
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def pipeline(self, config_id: str | None = None, cache: str | os.PathLike | None = None):
        """One configuration (default: the verdict's pick) opened over the run's cache, as ``load_pipeline`` does:
        ``engine``, ``retriever``, ``ask``; close it (or use ``with``) to release its models."""
        from ragsweep.results.configuration import open_pipeline

        return open_pipeline(self.path, config_id, Path(cache) if cache is not None else None)

    def engine(self, config_id: str | None = None):
        """The LlamaIndex ``RetrieverQueryEngine`` of one configuration (default: the verdict's pick)."""
        return self.pipeline(config_id).engine

    def split(self, name: str = "test") -> pd.DataFrame:
        """The summary rows of one split (``test``, ``validation`` or ``all``)."""
        if self.summary.empty:
            return self.summary
        return self.summary[self.summary["split"] == name].reset_index(drop=True)

    def configurations(self, name: str = "test") -> pd.DataFrame:
        """``split(name)`` without the reference baselines: the rows a figure ranks and compares."""
        from ragsweep.baselines.rows import configurations

        return configurations(self.split(name)).reset_index(drop=True)

    def references(self, name: str = "test") -> pd.DataFrame:
        """The reference baselines' summary rows of one split (no_retrieval, oracle, full_document; empty in a run
        without ``baselines``): shown as reference lines, never ranked."""
        from ragsweep.baselines.rows import references

        return references(self.split(name)).reset_index(drop=True)

    def sources(self) -> pd.DataFrame:
        """One row per retrieved source (config_id, qid, rank, doc_id, start, end, score, per-retriever
        ranks, triplets), with ``gold``: whether it overlaps a gold evidence span of its question."""
        import pandas as pd

        gold = {r.qid: list(r.evidence) for r in self.questions.itertuples()} if not self.questions.empty else {}
        rows = []
        for rec in self.records[["config_id", "qid", "sources"]].itertuples(index=False):
            spans = gold.get(rec.qid) or []
            for s in as_list(rec.sources):
                rows.append({"config_id": rec.config_id, "qid": rec.qid, **s, "gold": overlaps_gold(s, spans)})
        return pd.DataFrame(rows)

    @property
    def ci_label(self) -> str:
        """The level of the run's confidence intervals (``scoring.confidence``), e.g. "95%"."""
        level = (self.meta.get("spec", {}).get("scoring") or {}).get("confidence", 0.95)
        return f"{100 * float(level):g}%"

    def describe(self) -> str:
        """One line: name, status, records and what is partial."""
        m = self.meta
        line = f"{self.path}: {self.name}, {self.status} ({len(self.records)}/{m.get('expected_records')} records)"
        return line + "".join(f"; {n}" for n in self.notes)


def load_run(path: str | os.PathLike) -> RunData:
    """Load a run directory (``runs/NAME``); a missing, foreign, old-format or unreadable one
    raises ``RagsweepError`` with one line saying what to do."""
    import pandas as pd

    run_dir = Path(path)
    meta = read_manifest(run_dir)
    notes: list[str] = []
    status = cast(str, meta.get("status"))  # every manifest ragsweep writes has one
    questions = _read_questions(run_dir)
    configs = pd.DataFrame([_config_row(c) for c in meta.get("configurations", [])])
    if status == "running":
        status, note = _running_state(meta)
        notes.append(note)
        records, summary = _from_journal(run_dir, meta, questions)
        comparisons = pd.DataFrame()
    else:
        records = _read_table(RunDir(run_dir).records, pd.read_parquet)
        summary = _read_table(RunDir(run_dir).summary, pd.read_csv)
        comparisons = _read_table(RunDir(run_dir).comparisons, pd.read_csv, required=False)
    if status != "complete":
        notes.append(_what_it_has(records, meta, status))
    return RunData(run_dir, status, records, summary, configs, questions, comparisons, meta, notes)


def _what_it_has(records: pd.DataFrame, meta: Manifest, status: str) -> str:
    """What an unfinished run holds: rows answered and failed, answers not scored, judgements missing."""
    expected = meta.get("expected_records")
    if records.empty:
        return f"0 of {expected} (configuration, question) rows answered yet"
    parts = [
        f"{len(records)} of {expected} (configuration, question) rows present",
        f"{int(records['error'].notna().sum())} failed",
    ]
    has_ref = records["reference_answer"].fillna("").astype(str).str.strip().ne("")
    unscored = int((records["error"].isna() & has_ref & records["bertscore_f1"].isna()).sum())
    if unscored:
        parts.append(f"{unscored} answers not scored yet")
    stage2: Stage2Record = meta.get("stage2") or {}
    if stage2.get("selected"):
        from ragsweep.pipelines.stages.judge import judged_ids

        judged = records[records["config_id"].isin(judged_ids(stage2)) & records["split"].eq("test")]
        for judge in stage2.get("judges") or []:
            col = f"{judge}_status"
            missing = int((~judged[col].isin(["ok", "unmeasured"])).sum()) if col in judged.columns else len(judged)
            if missing:
                parts.append(f"{missing} {judge} judgements missing")
    elif stage2.get("skipped") or stage2.get("error"):
        parts.append(f"stage 2 not run ({stage2.get('error') or stage2.get('skipped')})")
    stopped = ((meta.get("invocations") or [{}])[-1] or {}).get("stopped")
    if status == "stopped_budget":
        parts.append("stopped by --budget")
    elif stopped:
        parts.append(f"last run stopped: {stopped}")
    return ", ".join(parts)


def _running_state(meta: Manifest) -> tuple[str, str]:
    """``running`` when the sweep's process is alive on this host, ``killed`` when it is not, and
    ``unfinished`` when it ran on another host (this one cannot tell)."""
    info = meta.get("running") or {}
    pid, host = info.get("pid"), info.get("host")
    started = info.get("started_at", "?")
    if host not in (None, platform.node()):
        return "unfinished", (
            f"the sweep started {started} on {host} has not written its results (still running "
            "there, or killed); results so far, from its journal"
        )
    if isinstance(pid, int) and _is_sweep(pid):
        return "running", f"a sweep is still running (pid {pid}, started {started}); results so far"
    return "killed", (
        f"the sweep started {started} stopped before writing its results (killed?); results so far, "
        "from its journal; run `ragsweep run SPEC` again to finish it"
    )


def _is_sweep(pid: int) -> bool:
    """Whether ``pid`` is alive and (where /proc tells) a ragsweep process: a pid reused by another
    program after the sweep was killed does not count."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    cmdline = Path(f"/proc/{pid}/cmdline")
    try:
        return b"ragsweep" in cmdline.read_bytes()
    except OSError:
        return not cmdline.parent.parent.is_dir()  # no /proc (macOS): alive is all we know


def _from_journal(run_dir: Path, meta: Manifest, questions: pd.DataFrame):
    import pandas as pd

    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.outputs.records import Judgements, build_records
    from ragsweep.pipelines.outputs.summary import build_summary

    jpath = RunDir(run_dir).journal
    if not jpath.is_file() or questions.empty:  # killed before its first answer was committed
        return pd.DataFrame(), pd.DataFrame()
    labels = [c["labels"] for c in meta.get("configurations", [])]
    try:
        journal = Journal(jpath, read_only=True)
        try:
            s2 = meta.get("stage2") or {}
            keys, repeats = s2.get("judge_keys"), int(s2.get("repeats") or 1)
            judgements = Judgements(keys, repeats) if keys else None
            records = build_records(
                questions.to_dict("records"), labels, journal, meta.get("bertscore_key"), judgements
            )
        finally:
            journal.close()
    except sqlite3.Error as exc:
        raise RagsweepError(
            f"{jpath}: unreadable ({exc}); run `ragsweep run SPEC` again (with --fresh if the journal is damaged)"
        ) from None
    spec = meta.get("spec", {})
    summary = build_summary(
        records, labels, spec.get("scoring", {"bootstrap_samples": 1000, "confidence": 0.95}), meta.get("seed", 0)
    )
    return records, summary


def _read_questions(run_dir: Path) -> pd.DataFrame:
    import pandas as pd

    q = _read_table(RunDir(run_dir).questions, pd.read_parquet)
    if not q.empty:
        q["evidence"] = q["evidence"].map(as_list)
    return q


def _read_table(path: Path, reader, required: bool = True) -> pd.DataFrame:
    import pandas as pd

    if not path.is_file():
        if required:
            raise RagsweepError(f"{path}: missing; run `ragsweep run SPEC` again to rewrite the run's files")
        return pd.DataFrame()
    try:
        return reader(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except Exception as exc:  # noqa: BLE001 - a damaged file of any kind: say which one
        raise RagsweepError(
            f"{path}: unreadable ({type(exc).__name__}); run `ragsweep run SPEC` again to rewrite it"
        ) from None


def _config_row(c: dict) -> dict:
    """A manifest configuration flattened: labels first, then resolved settings as ``retriever.kind``..."""
    import pandas as pd

    resolved = {k: v for k, v in c.items() if k not in ("labels", "config_id", "config_hash")}
    flat = pd.json_normalize(resolved, sep=".").iloc[0].to_dict() if resolved else {}
    labels = c.get("labels") or {}
    return {**labels, **{k: v for k, v in flat.items() if k not in labels}}


def as_list(value) -> list:
    """Parquet gives nested lists back as numpy arrays (and a missing one as None or NaN); make
    them lists (of dicts)."""
    if value is None or isinstance(value, float):
        return []
    return [dict(v) if isinstance(v, dict) else v for v in list(value)]


def clean(value):
    """None for a missing value: pandas gives NaN (or NA, with its string dtype) for a missing cell."""
    import pandas as pd

    if value is None or (not isinstance(value, (list, dict, tuple)) and pd.isna(value)):
        return None
    return value


def overlaps_gold(source: dict, spans: list[dict]) -> bool:
    """Whether a retrieved source overlaps a gold evidence span by at least one character (the
    relevance rule of the retrieval metrics)."""
    start, end = source.get("start"), source.get("end")
    return (
        start is not None
        and end is not None
        and any(g["doc_id"] == source.get("doc_id") and start < g["end"] and g["start"] < end for g in spans)
    )
