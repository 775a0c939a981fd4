"""``ragsweep export`` and ``load_pipeline``: an exported configuration, loaded without the run or its cache,
retrieves for every question what the run recorded (documents, offsets, scores, in order), for every retriever
kind, reranked, expanded, windowed and merged."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import REPORT_KEY, describe

import ragsweep
from ragsweep.export.digests import write_sums

KEYS = ("rank", "node_id", "doc_id", "start", "end", "score")


def _sources(sources) -> list[tuple]:
    return [tuple(s[k] for k in KEYS) for s in sources]


def _check_every_question(pipeline, records, questions, *, answers: bool) -> int:
    """Every recorded question of the pipeline's configuration asked again: the same sources (and answers)."""
    mine = records[records["config_id"] == pipeline.config_id]
    assert len(mine) > 0
    outs = pipeline.ask_many([questions[qid] for qid in mine["qid"]], answer=answers)
    for row, out in zip(mine.itertuples(), outs):
        assert _sources(out["sources"]) == _sources(row.sources), (pipeline.config_id, row.qid)
        if answers:
            assert out["answer"] == row.answer, (pipeline.config_id, row.qid)
    return len(mine)


@pytest.fixture
def hidden_cache():
    """``hide(path)`` moves a directory away until the test ends: a folder that still read it would fail."""
    moved: list[tuple[Path, Path]] = []

    def hide(path: Path) -> None:
        away = path.with_name(path.name + "-hidden")
        path.rename(away)
        moved.append((away, path))

    yield hide
    for away, path in moved:
        away.rename(path)


def test_exported_retriever_kinds_retrieve_every_question_as_the_run_did(
    report_run, run_cli, tmp_path, monkeypatch, hidden_cache
):
    """The report run: all 107 demo questions through bm25, vector, fusion, knowledge_graph and hybrid_kg."""
    monkeypatch.setenv("REPORT_KEY", REPORT_KEY)  # its LLM generator is named, never called here
    questions = dict(zip(report_run.records["qid"], report_run.records["question"]))
    folders = {}
    for cid in sorted(report_run.records["config_id"].unique()):
        out = tmp_path / cid
        proc = run_cli("export", report_run.run_dir, cid, "--out", out)
        assert proc.returncode == 0, describe(proc)
        folders[cid] = out
    hidden_cache(Path(report_run.manifest["cache_dir"]))
    # the folders carry the run's question vectors; the vector one forgets them, so it embeds every question anew
    vector = next(f for cid, f in folders.items() if "-vector-" in cid)
    with sqlite3.connect(vector / "index" / "embeddings.sqlite") as db:
        assert db.execute("DELETE FROM embedding WHERE ms IS NOT NULL").rowcount == 107
    db.close()
    write_sums(vector)  # a change made on purpose: listed again, as a new export would list it
    checked = 0
    for cid, folder in folders.items():
        with ragsweep.load_pipeline(folder) as pipeline:
            assert pipeline.config_id == cid
            checked += _check_every_question(pipeline, report_run.records, questions, answers=False)
            fresh = pipeline.ask("Which notice applies to a question nobody asked before?", answer=False)
            assert 1 <= len(fresh["sources"]) <= 4  # BM25 finds only what shares a term
    assert checked == 5 * 107


def test_exported_folder_holds_its_configuration_and_names_its_model(report_run, run_cli, tmp_path):
    run_dir = report_run.run_dir
    pick = json.loads((run_dir / "verdict.json").read_text())["chosen"]
    proc = run_cli("export", run_dir, "--out", tmp_path / "pick")
    assert proc.returncode == 0, describe(proc)
    assert f"exported {pick} of" in proc.stdout
    record = json.loads((tmp_path / "pick" / "pipeline.json").read_text())
    assert record["config_id"] == pick and record["spec"]["dataset"]["corpus"]["path"] == "corpus.jsonl"
    assert REPORT_KEY not in (tmp_path / "pick" / "pipeline.json").read_text()
    readme = (tmp_path / "pick" / "README.md").read_text()
    assert "Needs: the bundled all-MiniLM-L6-v2" in readme and "load_pipeline" in readme
    assert len((tmp_path / "pick" / "corpus.jsonl").read_text().splitlines()) == 28
    again = run_cli("export", run_dir, "--out", tmp_path / "pick")
    assert again.returncode == 2 and "exists and is not an empty folder" in again.stderr
    wrong = run_cli("export", run_dir, "no-such-config", "--out", tmp_path / "x")
    assert wrong.returncode == 2 and "'no-such-config' is not a configuration of" in wrong.stderr


def test_tuned_reranked_expanded_windowed_and_merged_configurations_export_exactly(
    make_spec, run_cli, read_run, seeded_cache, tmp_path, hidden_cache
):
    """Weights tuned on validation, a late-interaction reranker and RM3 (on the reference splitter, whose vectors
    the seeded cache holds), sentence windows and auto-merging with a tuned abstention threshold (over BM25): the
    folder carries what the run chose, so answers and sources are the run's."""
    tuned = make_spec(
        "exported",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "bm25"}, {"kind": "fusion", "weights": "tune", "name": "tuned"}],
        rerankers=[{"kind": "none"}, {"kind": "late_interaction", "candidates": 8, "apply_to": ["bm25"]}],
        query_transforms=[{"kind": "none"}, {"kind": "rm3", "apply_to": ["bm25"]}],
        top_k=[3],
    )
    shaped = make_spec(
        "exported-shaped",
        splitters=[{"kind": "sentence_window", "window_size": 1}, {"kind": "hierarchical", "chunk_sizes": [512, 128]}],
        retrievers=[{"kind": "bm25"}],
        postprocessors=[{"kind": "sentence_window"}, {"kind": "auto_merging"}],
        embeddings=[],
        generator={"kind": "extractive", "abstain_below": "tune"},
        top_k=[3],
    )
    wanted = {"tuned": tuned, "maxsim-c8": tuned, "rm3": tuned, "window": shaped, "merge": shaped}
    runs = {}
    for spec in (tuned, shaped):
        proc = run_cli("run", spec.path, "--limit", "6", "--cache", seeded_cache, "--no-progress")
        runs[spec.name] = read_run(spec.run_dir, proc)
    folders = {}
    for part, spec in sorted(wanted.items()):
        run = runs[spec.name]
        cid = next(c for c in sorted(run.records["config_id"].unique()) if part in c.split("-") or f"-{part}" in c)
        proc = run_cli("export", spec.run_dir, cid, "--out", tmp_path / part)
        assert proc.returncode == 0, describe(proc)
        folders[cid] = (tmp_path / part, run)
    hidden_cache(Path(seeded_cache))
    for cid, (folder, run) in sorted(folders.items()):
        questions = dict(zip(run.records["qid"], run.records["question"]))
        with ragsweep.load_pipeline(folder) as pipeline:
            assert _check_every_question(pipeline, run.records, questions, answers=True) == 6
            # nothing kept per question once answered (a served pipeline's memory stays flat), and asked again
            # the same answers: the memos only ever saved work
            assert pipeline.retrievers.memoised() == 0
            assert _check_every_question(pipeline, run.records, questions, answers=True) == 6
            if "tuned" in cid:
                assert pipeline.built.tuning == run.manifest["tuned_weights"][cid]
            if run is runs["exported-shaped"]:  # the run's threshold, not one tuned again (no questions here)
                assert pipeline.built.abstain.threshold == run.manifest["abstain_thresholds"][cid]["threshold"]
            response = pipeline.engine.query(questions[run.records["qid"].iloc[0]])
            assert response.source_nodes  # a LlamaIndex engine over the same retriever


def test_load_pipeline_opens_a_run_configuration_and_refuses_what_it_is_not(report_run, tmp_path, monkeypatch):
    from ragsweep.errors import RagsweepError

    monkeypatch.setenv("REPORT_KEY", REPORT_KEY)
    questions = dict(zip(report_run.records["qid"], report_run.records["question"]))
    cid = sorted(report_run.records["config_id"].unique())[0]
    with ragsweep.load_pipeline(report_run.run_dir, cid) as pipeline:
        row = report_run.records[report_run.records["config_id"] == cid].iloc[0]
        out = pipeline.ask(questions[row["qid"]], answer=False)
        assert _sources(out["sources"]) == _sources(row["sources"])
    with pytest.raises(RagsweepError, match="neither an exported pipeline"):
        ragsweep.load_pipeline(tmp_path)
    shutil.copytree(report_run.run_dir, tmp_path / "run")
    with pytest.raises(RagsweepError, match="is not a configuration of"):
        ragsweep.load_pipeline(tmp_path / "run", "nope")


def test_what_a_folder_cannot_hold_is_refused_in_one_line():
    """Adaptive configurations (their router is trained on the run's validation questions), graphs in Neo4j and
    vectors in a Chroma server are not exported: each refusal names the configuration and the way out."""
    from ragsweep.config import load_spec
    from ragsweep.errors import RagsweepError
    from ragsweep.export.write import refuse_unexportable
    from ragsweep.pipelines.grid import expand

    root = Path(__file__).resolve().parents[1] / "specs"
    adaptive = load_spec(root / "demo-adaptive.yaml", questions_needed=False)
    neo4j = load_spec(root / "demo-neo4j.yaml", questions_needed=False)
    served = adaptive.model_copy(
        update={"vector_store": adaptive.vector_store.model_copy(update={"url": "http://h:8000"})}
    )
    cases = [
        (adaptive, lambda c: c.adaptive is not None, "trained on the run's validation questions"),
        (neo4j, lambda c: getattr(c.retriever, "store", None) == "neo4j", "store: simple"),
        (served, lambda c: c.embedding is not None and c.adaptive is None, "vector_store: {}"),
    ]
    for spec, pick, fix in cases:
        configs = expand(spec)
        chosen = next(c for c in configs if pick(c))
        with pytest.raises(RagsweepError, match=re.escape(fix)) as err:
            refuse_unexportable(chosen, spec)
        assert str(err.value).startswith(chosen.config_id) and "\n" not in str(err.value)
    fixed = next(c for c in expand(adaptive) if c.adaptive is None and c.embedding is not None)
    refuse_unexportable(fixed, adaptive)  # a fixed configuration of the same sweep is exported
