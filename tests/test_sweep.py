"""End-to-end sweeps through the CLI: outputs, caching, resume after SIGKILL, failing configurations, ``ask``.

All sweeps share one cache directory (``shared_cache``); the reference sweep (``base_run``: demo dataset,
2 splitters x {bm25, vector, fusion} x top_k {3, 5}, first 12 questions) runs once per session and the
others build on what it cached, so only the first pays for loading models.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import shutil
import sqlite3
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import BASE_LIMIT, BERTSCORE_RAW, BERTSCORE_RESCALED, MINILM, RETRIEVAL_METRICS, SENTENCE256, describe

MINILM_KEY = "st|sentence-transformers/all-MiniLM-L6-v2|q=|t=|unpadded"


# --------------------------------------------------------------------------- helpers
def demo_questions() -> list[dict]:
    from ragsweep.datasets.demo import DEMO_QUESTIONS

    return [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def demo_doc_ids() -> set[str]:
    from ragsweep.datasets.demo import DEMO_CORPUS

    return {json.loads(line)["id"] for line in DEMO_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()}


def config_ids(manifest: dict) -> list[str]:
    return [c["config_id"] for c in manifest["configurations"]]


def table_config_cells(stdout: str) -> list[str]:
    """The 'configuration' cells of the rich summary table, re-joined when a cell wraps over lines."""
    rows: list[list[str]] = []
    for line in stdout.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) < 2:
            continue
        if cells[1]:  # the 'n' column is filled on the first line of each row
            rows.append([cells[0]])
        elif rows:
            rows[-1].append(cells[0])
    return ["".join(r) for r in rows]


def comparable(records, columns=None):
    """Records keyed by (config_id, qid), without latencies, with sources reduced to deterministic fields."""
    cols = columns or (["answer", "error"] + RETRIEVAL_METRICS + BERTSCORE_RAW + BERTSCORE_RESCALED)
    out = {}
    for row in records.to_dict("records"):
        srcs = [(s["node_id"], s["doc_id"], s["start"], s["end"], round(float(s["score"]), 5)) for s in row["sources"]]
        out[(row["config_id"], row["qid"])] = ({c: row[c] for c in cols}, srcs)
    return out


def assert_same_values(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        (va, sa), (vb, sb) = a[key], b[key]
        assert sa == sb, f"{key}: sources differ"
        for col in va:
            x, y = va[col], vb[col]
            if isinstance(x, float) and isinstance(y, float):
                assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-9), f"{key} {col}: {x} != {y}"
            else:
                assert x == y, f"{key} {col}: {x!r} != {y!r}"


def journal_rows(path: Path) -> tuple[int, int]:
    """(answer rows, ok answer rows) of a journal, read-only; (-1, -1) while it cannot be read yet."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
    except sqlite3.Error:
        return -1, -1
    try:
        n, ok = db.execute("SELECT COUNT(*), COALESCE(SUM(ok), 0) FROM answer").fetchone()
        return int(n), int(ok)
    except sqlite3.Error:  # not created yet, or 'database is locked'
        return -1, -1
    finally:
        db.close()


def journal_payloads(path: Path) -> dict[tuple[str, str], str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {(h, q): p for h, q, p in db.execute("SELECT config_hash, qid, payload FROM answer")}
    finally:
        db.close()


def embedding_keys(cache: Path, model: str = MINILM_KEY) -> set[bytes]:
    db = sqlite3.connect(f"file:{cache / 'embeddings.sqlite'}?mode=ro", uri=True)
    try:
        return {bytes(k) for (k,) in db.execute("SELECT key FROM embedding WHERE model = ?", [model])}
    finally:
        db.close()


def cached_chunk_texts(cache: Path, chunk_key: str) -> set[str]:
    """Texts of the cached chunks of one splitter (chunk files hold [node_id, doc_id, start, end, text] rows)."""
    texts: set[str] = set()
    for f in (cache / "chunks").glob("*.json"):
        rows = json.loads(f.read_text(encoding="utf-8"))
        if rows and rows[0][0].startswith(chunk_key + ":"):
            texts |= {r[4] for r in rows}
    return texts


def text_key(text: str, role: str = "text") -> bytes:
    from ragsweep.embeddings.cache import text_key as key

    return key(text, role)


# --------------------------------------------------------------------------- end to end
def test_end_to_end_run_writes_consistent_outputs(base_run):
    m, rec, summ = base_run.manifest, base_run.records, base_run.summary
    ids = config_ids(m)
    # 2 splitters x (bm25 + vector + fusion) x 2 top_k
    assert len(ids) == 12 == len(set(ids))

    # manifest
    assert m["status"] == "complete"
    assert m["records"] == m["expected_records"] == 12 * BASE_LIMIT
    assert m["seed"] == 7 and m["question_limit"] == BASE_LIMIT
    ds = m["dataset"]
    assert ds["name"] and isinstance(ds["fingerprint"], str) and len(ds["fingerprint"]) >= 8
    assert ds["questions_used"] == BASE_LIMIT and ds["questions"] == 107 and ds["documents"] == 28
    for c in m["configurations"]:
        assert c["config_id"] and len(c["config_hash"]) == 12
        assert c["retriever"]["kind"] in ("bm25", "vector", "fusion") and c["top_k"] in (3, 5)
    assert len({c["config_hash"] for c in m["configurations"]}) == 12
    versions = m["versions"]
    for pkg in ("python", "ragsweep", "llama-index-core", "chromadb", "torch", "bert-score"):
        assert versions.get(pkg) and versions[pkg] != "not installed", pkg
    inv = base_run.invocation
    assert inv["answered"] == 12 * BASE_LIMIT and inv["failed"] == 0 and inv["skipped_already_done"] == 0
    assert inv["chunks"].keys() == {"sentence256", "pattern"}

    # records: one row per configuration x question, nothing else
    qs = demo_questions()[:BASE_LIMIT]
    assert len(rec) == 12 * BASE_LIMIT
    assert not rec.duplicated(["config_id", "qid"]).any()
    assert set(rec["config_id"]) == set(ids)
    assert set(rec["qid"]) == {q["id"] for q in qs}
    assert (rec.groupby("config_id").size() == BASE_LIMIT).all()
    assert rec["error"].isna().all()
    by_hash = {c["config_hash"]: c["config_id"] for c in m["configurations"]}
    assert all(by_hash[h] == c for h, c in zip(rec["config_hash"], rec["config_id"]))

    # metrics: in [0, 1] or NaN; NaN exactly for questions without gold evidence (out of scope)
    for col in RETRIEVAL_METRICS + BERTSCORE_RAW:
        vals = rec[col].dropna()
        assert ((vals >= 0) & (vals <= 1)).all(), col
    in_scope = rec["n_gold_spans"] > 0
    assert rec.loc[in_scope, RETRIEVAL_METRICS].notna().all().all()
    assert rec.loc[~in_scope, RETRIEVAL_METRICS].isna().all().all()
    assert (rec["mrr"] <= rec["hit"]).all() and ((rec["mrr"] > 0) == (rec["hit"] == 1)).all()
    # BERTScore: filled for every answered question with a reference; rescaled values are finite and <= 1
    answered = rec["answer"].fillna("").str.strip().astype(bool) & rec["reference_answer"].fillna(
        ""
    ).str.strip().astype(bool)
    assert answered.sum() > 0.9 * len(rec)
    assert rec.loc[answered, BERTSCORE_RAW + BERTSCORE_RESCALED].notna().all().all()
    assert (rec.loc[answered, BERTSCORE_RESCALED] <= 1).all().all()
    assert rec["generator"].eq("extractive-baseline").all()

    # sources
    docs = demo_doc_ids()
    for row in rec.to_dict("records"):
        srcs = list(row["sources"])
        assert 1 <= len(srcs) <= row["top_k"]
        assert [s["rank"] for s in srcs] == list(range(1, len(srcs) + 1))
        assert len({s["node_id"] for s in srcs}) == len(srcs)
        for s in srcs:
            assert s["doc_id"] in docs
            assert 0 <= s["start"] < s["end"]
            assert s["score"] is not None and math.isfinite(s["score"])
            assert s["node_id"].startswith(row["splitter"] + ":")
            if row["retriever"] != "fusion":
                assert s["rank_vector"] is None and s["rank_bm25"] is None
    fusion = rec[rec["retriever"] == "fusion"]
    fsrcs = [s for srcs in fusion["sources"] for s in srcs]
    assert any(s["rank_vector"] is not None for s in fsrcs) and any(s["rank_bm25"] is not None for s in fsrcs)
    assert any(s["rank_vector"] is not None and s["rank_bm25"] is not None for s in fsrcs)
    for s in fsrcs:  # a fused source comes from at least one sub-retriever's top k
        assert s["rank_vector"] is not None or s["rank_bm25"] is not None

    # memoised top_k: for bm25 and vector, the top 3 are the first 3 of the top 5 (same index, same query)
    single = rec[rec["retriever"].isin(["bm25", "vector"])]
    k3 = {
        (r["splitter"], r["retriever"], r["qid"]): [s["node_id"] for s in r["sources"]]
        for r in single[single["top_k"] == 3].to_dict("records")
    }
    for r in single[single["top_k"] == 5].to_dict("records"):
        assert [s["node_id"] for s in r["sources"]][:3] == k3[(r["splitter"], r["retriever"], r["qid"])]

    # summary.csv: one row per configuration, mean inside its bootstrap interval
    assert set(summ["config_id"]) == set(ids) and len(summ) == 12
    assert (summ["n_questions"] == BASE_LIMIT).all() and (summ["n_errors"] == 0).all()
    checked = 0
    for metric in RETRIEVAL_METRICS + BERTSCORE_RAW + BERTSCORE_RESCALED:
        for col in (metric, f"{metric}_lo", f"{metric}_hi"):
            assert col in summ.columns, col
        ok = summ[[metric, f"{metric}_lo", f"{metric}_hi"]].dropna()
        assert ((ok[f"{metric}_lo"] <= ok[metric] + 1e-12) & (ok[metric] <= ok[f"{metric}_hi"] + 1e-12)).all(), metric
        checked += len(ok)
    assert checked >= 12 * 9
    means = rec.groupby("config_id")["hit"].mean()
    assert summ.set_index("config_id")["hit"].sort_index().tolist() == pytest.approx(means.sort_index().tolist())

    # the printed table names every configuration
    assert sorted(table_config_cells(base_run.stdout)) == sorted(ids), base_run.stdout[-4000:]
    assert f"results: {base_run.run_dir}" in " ".join(base_run.stdout.split())


def test_records_metrics_match_their_sources(base_run):
    """The stored metrics are the metrics of the stored sources against the question's gold spans (as the
    loader resolves them: evidence given as text located, copies of gold text in other documents included)."""
    from ragsweep.config.dataset import DatasetSpec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.metrics import all_retrieval_metrics

    gold = {q.qid: list(q.evidence) for q in load_dataset(DatasetSpec()).questions}
    for row in base_run.records.to_dict("records"):
        retrieved = [(s["doc_id"], s["start"], s["end"]) for s in row["sources"]]
        expected = all_retrieval_metrics(retrieved, gold[row["qid"]], row["top_k"])
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, nan_ok=True), (row["config_id"], row["qid"], name)


def run_in_terminal(cmd: list[str], env: dict, cwd: Path, columns: int = 80, timeout: float = 120) -> str:
    """Run ``cmd`` with stdout/stderr on a pseudo-terminal of ``columns`` columns; return its output sans ANSI codes."""
    import fcntl
    import re
    import select
    import subprocess
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**env, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1.0)[0]:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    text = b"".join(chunks).decode("utf-8", errors="replace").replace("\r", "")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def test_printed_table_names_configurations_in_an_80_column_terminal(base_run, shared_cache, cli_workdir):
    import sys

    from conftest import _cli_env

    # A re-run answers nothing (all journaled) but prints the same table.
    spec = base_run.extra["spec"]
    cmd = [
        sys.executable,
        "-m",
        "ragsweep.cli",
        "run",
        str(spec.path),
        "--cache",
        str(shared_cache),
        "--limit",
        str(BASE_LIMIT),
    ]
    out = run_in_terminal(cmd, _cli_env(), cli_workdir, columns=80)
    assert "results:" in out, out
    missing = [cid for cid in config_ids(base_run.manifest) if cid not in out]
    assert not missing, f"configuration ids not shown in full: {missing}\n{out[-4000:]}"


# --------------------------------------------------------------------------- caching
def test_fresh_rerun_reuses_every_cache_and_plain_rerun_answers_nothing(
    base_run, run_cli, read_run, shared_cache, tmp_path
):
    spec = base_run.extra["spec"]
    out = tmp_path / "copy"
    shutil.copytree(base_run.run_dir, out)
    total = 12 * BASE_LIMIT

    # --fresh discards the copied results (and their invocation history) but keeps the shared cache
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT, "--fresh", "--out", out)
    assert proc.returncode == 0, describe(proc)
    fresh = read_run(out, proc)
    assert fresh.manifest["status"] == "complete"
    assert len(fresh.manifest["invocations"]) == 1
    inv = fresh.invocation
    assert inv["answered"] == total and inv["skipped_already_done"] == 0 and inv["failed"] == 0
    assert inv["embeddings_computed"] == 0
    assert inv["indexes_built"] == 0 and inv["indexes_reused"] == 2
    assert inv["bertscore_pairs_computed"] == 0 and inv["bertscore_pairs_unique"] > 0
    assert inv["embeddings_from_cache"] > 0
    assert fresh.manifest["dataset"]["fingerprint"] == base_run.manifest["dataset"]["fingerprint"]
    assert [c["config_hash"] for c in fresh.manifest["configurations"]] == [
        c["config_hash"] for c in base_run.manifest["configurations"]
    ]
    assert_same_values(comparable(fresh.records), comparable(base_run.records))
    files = {f: (out / f).stat().st_mtime_ns for f in ("records.parquet", "summary.csv", "comparisons.csv")}

    # a plain re-run finds everything journaled: it answers and scores nothing, and writes the same records
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT, "--out", out)
    assert proc.returncode == 0, describe(proc)
    again = read_run(out, proc)
    assert len(again.manifest["invocations"]) == 2
    inv = again.invocation
    assert inv["answered"] == 0 and inv["failed"] == 0 and inv["skipped_already_done"] == total
    assert inv["embeddings_computed"] == 0 and inv["indexes_built"] == 0 and inv["bertscore_pairs_computed"] == 0
    assert again.manifest["status"] == "complete"
    assert_same_values(comparable(again.records), comparable(base_run.records))
    # ... and, the journal unchanged, keeps the outputs as they were instead of bootstrapping them again
    assert fresh.manifest["outputs"]["reused"] is False and again.manifest["outputs"]["reused"] is True
    assert again.manifest["outputs"]["key"] == fresh.manifest["outputs"]["key"]
    assert files == {f: (out / f).stat().st_mtime_ns for f in files}  # the very files, not rewritten
    assert "test questions" in proc.stdout  # the table is still printed, from summary.csv

    # a setting the summary depends on rebuilds it (no journal change needed)
    import yaml

    data = yaml.safe_load(spec.path.read_text(encoding="utf-8"))
    data["scoring"] = {**data["scoring"], "bootstrap_samples": 300}
    changed = tmp_path / "boot300.yaml"
    changed.write_text(yaml.safe_dump(data), encoding="utf-8")
    proc = run_cli("run", changed, "--cache", shared_cache, "--limit", BASE_LIMIT, "--out", out)
    assert proc.returncode == 0, describe(proc)
    rebuilt = read_run(out, proc)
    assert rebuilt.manifest["outputs"]["reused"] is False and rebuilt.invocation["answered"] == 0
    assert (out / "summary.csv").stat().st_mtime_ns > files["summary.csv"]


def test_other_spec_sharing_a_splitter_reuses_its_embeddings(base_run, make_spec, run_cli, read_run, shared_cache):
    # sentence256 is in the reference sweep; token128 is used by no other test
    spec = make_spec(
        "shared-splitter",
        splitters=[SENTENCE256, {"kind": "token", "chunk_size": 128, "chunk_overlap": 16}],
        retrievers=[{"kind": "vector"}],
        top_k=[3],
    )
    before = embedding_keys(shared_cache)
    sentence_texts = cached_chunk_texts(shared_cache, "sentence256")
    assert sentence_texts and {text_key(t) for t in sentence_texts} <= before

    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    inv = run.invocation
    assert run.manifest["status"] == "complete" and len(run.records) == 2 * BASE_LIMIT

    token_keys = {text_key(t) for t in cached_chunk_texts(shared_cache, "token128")}
    assert len(token_keys) == inv["unique_chunk_texts"]["token128"] > 0
    new_keys = embedding_keys(shared_cache) - before
    # exactly the token128 chunks that were not cached already were embedded: no sentence256 chunk, no query
    assert new_keys == token_keys - before
    assert inv["embeddings_computed"] == len(new_keys) > 0
    assert inv["indexes_built"] == 1 and inv["indexes_reused"] == 1
    # the shared configuration gives the same results as in the reference sweep
    ref = base_run.records[base_run.records["config_id"] == "sentence256-minilm-vector-k3"]
    mine = run.records[run.records["config_id"] == "sentence256-minilm-vector-k3"]
    assert_same_values(comparable(mine), comparable(ref))


# --------------------------------------------------------------------------- resume
def test_resume_after_sigkill(base_run, make_spec, popen_cli, run_cli, read_run, shared_cache, tmp_path, kill_midway):
    # 2 splitters x (bm25 + vector + fusion) x 2 top_k = 12 configurations x all 107 questions = 1284 answers.
    # Chunks and indexes are cached by the reference sweep, so the run is almost only answering.
    top_k = [1, 3]
    spec = make_spec("resume", top_k=top_k)
    n_configs, n_questions = 2 * 3 * len(top_k), len(demo_questions())
    total = n_configs * n_questions
    journal = spec.run_dir / "journal.sqlite"

    query_keys = {text_key(q["question"], "query") for q in demo_questions()}
    assert len(query_keys & embedding_keys(shared_cache)) == BASE_LIMIT  # the reference sweep embedded 12 queries

    proc = popen_cli("run", spec.path, "--cache", shared_cache, log_dir=tmp_path)
    kill_midway(
        proc,
        lambda: journal_rows(journal)[0],
        100,
        timeout=180,
        what="answers journaled",
        stderr_path=tmp_path / "stderr.txt",
    )

    rows, ok_rows = journal_rows(journal)
    assert 100 <= rows < total, f"{rows} of {total} answers journaled: the kill must land mid-sweep"
    assert ok_rows == rows  # nothing failed
    # results are written at the end; until then the start-up manifest says "running", and a killed run is
    # read from its journal: status "killed", the rows it has, a summary of them (load_run, show, report)
    assert not (spec.run_dir / "records.parquet").exists()
    from ragsweep.results import load_run as load_partial

    killed = load_partial(spec.run_dir)
    assert killed.status == "killed" and not killed.complete
    assert len(killed.records) == rows and killed.records["error"].isna().all()
    assert set(killed.summary.query("split == 'all'")["config_id"]) == set(killed.records["config_id"])
    assert any("killed" in n for n in killed.notes) and any(f"{rows} of {total}" in n for n in killed.notes)
    shown = run_cli("show", spec.run_dir)
    assert shown.returncode == 0 and "killed" in shown.stdout and f"({rows}/{total} records)" in shown.stdout, describe(
        shown
    )
    reported = run_cli("report", spec.run_dir, "--out", tmp_path / "killed.html")
    assert reported.returncode == 0, describe(reported)
    page = (tmp_path / "killed.html").read_text(encoding="utf-8")
    assert 'id="status-banner"' in page and "killed" in page and f"{rows} of {total}" in page
    before = journal_payloads(journal)
    queries_missing = len(query_keys - embedding_keys(shared_cache))  # 87, or 0 if the kill came after embedding them

    t0 = time.monotonic()
    done = run_cli("run", spec.path, "--cache", shared_cache, timeout=400)
    assert done.returncode == 0, describe(done)
    assert f"took over the lock left by a run that stopped (pid {proc.pid} on" in done.stdout, describe(done)
    run = read_run(spec.run_dir, done)
    m, inv, rec = run.manifest, run.invocation, run.records
    assert m["status"] == "complete" and m["records"] == m["expected_records"] == total
    assert len(m["invocations"]) == 1  # the killed invocation never wrote a manifest
    assert inv["skipped_already_done"] == ok_rows
    assert inv["answered"] == total - ok_rows and inv["failed"] == 0
    # no chunk is embedded again: only the queries the killed run had not embedded yet
    assert inv["indexes_built"] == 0 and inv["indexes_reused"] == 2
    assert inv["embeddings_computed"] == queries_missing
    # answers journaled before the kill were kept as they were, not recomputed
    after = journal_payloads(journal)
    assert all(after[k] == v for k, v in before.items())

    assert len(rec) == total and not rec.duplicated(["config_id", "qid"]).any()
    assert set(rec["config_id"]) == set(config_ids(m)) and len(set(rec["config_id"])) == n_configs
    assert set(rec["qid"]) == {q["id"] for q in demo_questions()}
    assert rec["error"].isna().all()
    # the full question set includes out-of-scope and negative questions: NaN retrieval metrics; the
    # out-of-scope ones have a reference answer and are BERTScored, the negative ones have none
    oos = rec["n_gold_spans"] == 0
    assert oos.sum() == sum(not q["evidence"] for q in demo_questions()) * n_configs
    assert set(rec.loc[oos, "qtype"]) == {
        "out_of_scope",
        "negative-irrelevant",
        "negative-jailbreak",
        "negative-unsafe",
    }
    assert rec.loc[oos, RETRIEVAL_METRICS].isna().all().all()
    assert rec.loc[~oos, RETRIEVAL_METRICS].notna().all().all()
    nonempty = rec["answer"].fillna("").str.strip().astype(bool) & rec["reference_answer"].notna()
    assert rec.loc[nonempty, BERTSCORE_RAW + BERTSCORE_RESCALED].notna().all().all()
    assert rec.loc[rec["reference_answer"].isna(), BERTSCORE_RAW].isna().all().all()
    summ = run.summary
    assert len(summ) == n_configs and (summ["n_questions"] == n_questions).all()
    # NaN retrieval metrics are left out of the means, not counted as 0
    hits = rec[~oos].groupby("config_id")["hit"].mean()
    assert summ.set_index("config_id")["hit"].sort_index().tolist() == pytest.approx(hits.sort_index().tolist())
    assert time.monotonic() - t0 < 400


# --------------------------------------------------------------------------- failing configurations
class _FakeOpenAI(BaseHTTPRequestHandler):
    """A loopback OpenAI-compatible embeddings endpoint: 401 for a bad key, or deterministic vectors."""

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.server.requests.append((self.path, self.headers.get("Authorization"), body))
        if self.server.mode == "deny":
            self._send(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided: sk-itest.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "invalid_api_key",
                    }
                },
            )
            return
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        data = []
        for i, text in enumerate(inputs):
            digest = hashlib.sha256(str(text).encode()).digest()
            vec = [b / 255.0 - 0.5 for b in digest[:16]]
            emb = (
                base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode()
                if body.get("encoding_format") == "base64"
                else vec
            )
            data.append({"object": "embedding", "index": i, "embedding": emb})
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    def _send(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args) -> None:
        return None


@pytest.fixture()
def fake_openai():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    server.mode = "deny"
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_failing_configuration_does_not_lose_the_run(base_run, make_spec, run_cli, read_run, shared_cache, fake_openai):
    """An OpenAI-compatible embedding whose server rejects the key fails only its own configurations.

    (A closed port is not used: llama-index's OpenAIEmbedding retries connection errors 10 times with 4-10 s
    waits on top of the client's own retries, i.e. minutes; a 401 is not retried.)
    """
    port = fake_openai.server_address[1]
    openai_emb = {
        "kind": "openai",
        "model": "text-embedding-3-small",
        "base_url": f"http://127.0.0.1:{port}/v1",
        "api_key_env": "RAGSWEEP_ITEST_KEY",
        "timeout": 5,
    }
    spec = make_spec(
        "failing",
        splitters=[SENTENCE256],
        embeddings=[MINILM, openai_emb],
        retrievers=[{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}],
        top_k=[3],
    )
    env = {"RAGSWEEP_ITEST_KEY": "sk-itest"}
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT, env=env, timeout=120)
    assert proc.returncode == 3, describe(proc)  # finished, but with failures: a distinct exit code
    assert "incomplete:" in proc.stderr and "run the same command again" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert fake_openai.requests, "the OpenAI-compatible server was never called"
    assert fake_openai.requests[0][0] == "/v1/embeddings" and fake_openai.requests[0][1] == "Bearer sk-itest"

    run = read_run(spec.run_dir, proc)
    m, rec, inv = run.manifest, run.records, run.invocation
    # the key is used on the wire, but never written to the output, the manifest, the records or the journal
    for blob in (
        proc.stdout,
        proc.stderr,
        (spec.run_dir / "manifest.json").read_text(),
        (spec.run_dir / "records.parquet").read_bytes().decode("latin-1"),
        (spec.run_dir / "journal.sqlite").read_bytes().decode("latin-1"),
    ):
        assert "sk-itest" not in blob
    bad = {"sentence256-textembedding3small-vector-k3", "sentence256-textembedding3small-fusion-k3"}
    good = {"sentence256-bm25-k3", "sentence256-minilm-vector-k3", "sentence256-minilm-fusion-k3"}
    assert set(config_ids(m)) == bad | good
    assert m["status"] == "incomplete"
    assert m["records"] == m["expected_records"] == 5 * BASE_LIMIT
    assert inv["answered"] == 3 * BASE_LIMIT and inv["failed"] == 2 * BASE_LIMIT

    ok = rec[rec["config_id"].isin(good)]
    assert len(ok) == 3 * BASE_LIMIT and ok["error"].isna().all()
    assert ok[RETRIEVAL_METRICS].notna().all().all() and ok["bertscore_f1"].notna().all()
    failed = rec[rec["config_id"].isin(bad)]
    assert len(failed) == 2 * BASE_LIMIT
    for err in failed["error"]:
        assert isinstance(err, str) and "\n" not in err
        assert err.startswith("indexing failed: AuthenticationError") and "401" in err
    assert failed[RETRIEVAL_METRICS + ["bertscore_f1"]].isna().all().all()
    assert failed["sources"].map(len).eq(0).all()
    summ = run.summary.set_index("config_id")
    assert (summ.loc[sorted(bad), "n_errors"] == BASE_LIMIT).all()
    assert (summ.loc[sorted(good), "n_errors"] == 0).all()
    # the good configurations match the reference sweep's
    for cid in ("sentence256-minilm-vector-k3", "sentence256-bm25-k3"):
        assert_same_values(
            comparable(rec[rec["config_id"] == cid]), comparable(base_run.records[base_run.records["config_id"] == cid])
        )

    # failed answers are retried by the next run: once the server accepts the key, the run completes
    fake_openai.mode = "serve"
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT, env=env, timeout=120)
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    inv = run.invocation
    assert inv["skipped_already_done"] == 3 * BASE_LIMIT
    assert inv["answered"] == 2 * BASE_LIMIT and inv["failed"] == 0
    assert run.manifest["status"] == "complete"
    assert len(run.records) == 5 * BASE_LIMIT and run.records["error"].isna().all()


def test_openai_embedding_without_its_key_is_a_clear_error(base_run, make_spec, run_cli, shared_cache, get_free_port):
    """An unset ``api_key_env``: one line naming the variable, exit 2, no traceback; work done so far is kept."""
    openai_emb = {
        "kind": "openai",
        "model": "text-embedding-3-small",
        "base_url": f"http://127.0.0.1:{get_free_port()}/v1",
        "api_key_env": "RAGSWEEP_ITEST_UNSET_KEY",
    }
    spec = make_spec(
        "nokey", splitters=[SENTENCE256], embeddings=[MINILM, openai_emb], retrievers=[{"kind": "vector"}], top_k=[3]
    )
    proc = run_cli(
        "run", spec.path, "--cache", shared_cache, "--limit", 4, unset=("RAGSWEEP_ITEST_UNSET_KEY",), timeout=120
    )
    assert proc.returncode == 2, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and "RAGSWEEP_ITEST_UNSET_KEY" in lines[0] and "not set" in lines[0]
    # Today the key is first needed when the OpenAI index is built, after the MiniLM configuration was answered,
    # and that work is journaled, not lost; a check at start-up would leave no answers. Never partial or failed rows.
    rows, ok_rows = journal_rows(spec.run_dir / "journal.sqlite")
    assert rows == ok_rows and rows in (0, 4, -1), (rows, ok_rows)


# --------------------------------------------------------------------------- ask
def test_ask_answers_with_one_configuration(base_run, run_cli, shared_cache):
    """``ragsweep ask`` on a question of the run reproduces the run's answer and sources for that configuration."""
    q = demo_questions()[0]
    cid = "sentence256-minilm-fusion-k3"  # k3 < the run's largest top_k: ask must rebuild the same top 3
    proc = run_cli("ask", base_run.run_dir, cid, q["question"], "--cache", shared_cache, timeout=120)
    assert proc.returncode == 0, describe(proc)
    row = base_run.records[(base_run.records["config_id"] == cid) & (base_run.records["qid"] == q["id"])].iloc[0]
    flat = " ".join(proc.stdout.split())
    assert row["answer"]
    assert f"answer (extractive-baseline): {' '.join(row['answer'].split())}" in flat
    assert "sources" in proc.stdout
    table = [line for line in proc.stdout.splitlines() if line.startswith("│")]
    assert len(table) >= len(row["sources"])
    for s in row["sources"]:
        line = next((ln for ln in table if f" {s['start']}-{s['end']} " in ln), None)
        assert line is not None, f"source {s['node_id']} missing from\n{proc.stdout}"
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        assert cells[0] == str(s["rank"]) and cells[2] == s["doc_id"]
        assert cells[4] == (str(int(s["rank_vector"])) if s["rank_vector"] is not None else "-")
        assert cells[5] == (str(int(s["rank_bm25"])) if s["rank_bm25"] is not None else "-")


def test_ask_unknown_configuration_is_a_clear_error(base_run, run_cli, shared_cache):
    proc = run_cli("ask", base_run.run_dir, "no-such-config-k3", "anything?", "--cache", shared_cache, timeout=120)
    assert proc.returncode == 2, describe(proc)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no-such-config-k3" in lines[0]
    assert any(cid in lines[0] for cid in config_ids(base_run.manifest))  # it suggests real configuration ids


def test_ask_prints_corpus_text_verbatim(base_run, monkeypatch):
    """Corpus text with square brackets must be shown as is, not read as rich markup."""
    from typer.testing import CliRunner

    import ragsweep.pipelines.ask as sweep
    from ragsweep.cli import app

    for var in (
        "TOKENIZERS_PARALLELISM",
        "TRANSFORMERS_VERBOSITY",
        "HF_HUB_DISABLE_PROGRESS_BARS",
        "ANONYMIZED_TELEMETRY",
    ):
        monkeypatch.setenv(var, os.environ.get(var, "x"))  # ask() calls os.environ.setdefault; undo it after

    def fake_answer(spec, config, dataset, question, cache_dir=None, chosen=None):
        return {
            "answer": "The Tenant [sic] must pay rent.",
            "generator": "extractive-baseline",
            "retrieval_ms": 1.0,
            "generation_ms": 1.0,
            "sources": [
                {
                    "rank": 1,
                    "score": 0.5,
                    "doc_id": "lease",
                    "start": 0,
                    "end": 40,
                    "rank_vector": None,
                    "rank_bm25": None,
                    "node_id": "x",
                    "text": "Rent is due [/b] monthly, see [note].",
                }
            ],
        }

    monkeypatch.setattr(sweep, "answer_question", fake_answer)
    result = CliRunner().invoke(app, ["ask", str(base_run.run_dir), "sentence256-bm25-k3", "When is rent due?"])
    assert result.exit_code == 0, result.output
    assert "The Tenant [sic] must pay rent." in result.output
    assert "Rent is due [/b] monthly, see [note]." in result.output


def test_changing_bertscore_settings_rescores_without_reanswering(base_run, run_cli, read_run, shared_cache, tmp_path):
    """Scores are stored with the settings that made them: a new layer rescoring, not a silent reuse."""
    import yaml

    spec = base_run.extra["spec"]
    data = yaml.safe_load(spec.path.read_text(encoding="utf-8"))
    data["scoring"] = {"bertscore": {"num_layers": 3}}
    path = tmp_path / "layer3.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "run"
    shutil.copytree(base_run.run_dir, out)
    proc = run_cli("run", path, "--cache", shared_cache, "--limit", BASE_LIMIT, "--out", out)
    assert proc.returncode == 0, describe(proc)
    run = read_run(out, proc)
    inv = run.invocation
    assert inv["answered"] == 0 and inv["skipped_already_done"] == 12 * BASE_LIMIT  # answers reused
    assert inv["bertscore_pairs_computed"] > 0  # ...but every pair rescored at layer 3
    assert run.manifest["bertscore"]["num_layers"] == 3
    merged = run.records.merge(base_run.records, on=["config_id", "qid"], suffixes=("", "_l6"))
    scored = merged["bertscore_f1"].notna()
    assert scored.any() and (merged.loc[scored, "bertscore_f1"] != merged.loc[scored, "bertscore_f1_l6"]).any()


def test_a_run_directory_refuses_another_dataset_even_before_its_manifest(tmp_path):
    """The dataset guard lives in the journal, so a first run killed before writing outputs is covered."""
    from ragsweep.datasets.types import Dataset, Document, Question
    from ragsweep.errors import RagsweepError
    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.journal_meta import check_dataset

    one = Dataset("d", [Document("a", "text one")], [Question("q1", "what?")])
    two = Dataset("d", [Document("a", "text two")], [Question("q1", "what?")])
    journal = Journal(tmp_path / "journal.sqlite")
    check_dataset(journal, tmp_path, one)
    check_dataset(journal, tmp_path, one)  # same dataset: fine
    journal.close()
    assert not (tmp_path / "manifest.json").exists()
    journal = Journal(tmp_path / "journal.sqlite")
    with pytest.raises(RagsweepError, match=r"holds a run over another dataset .* pass --fresh"):
        check_dataset(journal, tmp_path, two)
    journal.close()
