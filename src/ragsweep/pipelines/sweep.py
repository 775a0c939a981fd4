"""Run a sweep: chunk, index, answer and score every configuration, computing nothing twice.

Work is shared along the grid: each splitter runs once per corpus (and its chunks are cached on
disk), each (splitter, embedding) pair is embedded and indexed once, each index is queried once
per question at the largest top_k (smaller top_k and fusion reuse that result), and each
distinct (answer, reference) pair is BERTScored once. Every (configuration, question) result is
journaled as it completes, so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import shutil
import time
import traceback
from collections import defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset, Question
from ragsweep.errors import RagsweepError, short_reason
from ragsweep.pipelines.cache_dir import DEFAULT_CACHE, CacheDir, load_chunks, save_chunks
from ragsweep.pipelines.grid import Configuration, expand
from ragsweep.pipelines.journal import Journal


@dataclass
class SweepStats:
    """Counters and timings of one invocation (written to the manifest)."""

    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    embeddings_computed: int = 0
    query_embeddings_computed: int = 0
    embeddings_from_cache: int = 0
    chunks: dict[str, int] = field(default_factory=dict)
    unique_chunk_texts: dict[str, int] = field(default_factory=dict)
    indexes_built: int = 0
    indexes_reused: int = 0
    answered: int = 0
    failed: int = 0
    skipped_done: int = 0
    bertscore_pairs_computed: int = 0
    bertscore_pairs_total: int = 0
    judged: int = 0
    judge_failed: int = 0
    llm: dict = field(default_factory=dict)
    graphs: dict = field(default_factory=dict)
    executor: dict = field(default_factory=lambda: {"kind": "local"})
    stopped: str | None = None


class _Timer:
    def __init__(self, stats: SweepStats, name: str) -> None:
        self.stats, self.name = stats, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.stats.timings[self.name] += time.perf_counter() - self.t0


def run_dir_for(spec: SweepSpec) -> Path:
    return spec.output_dir / spec.name


def run_sweep(
    spec: SweepSpec,
    *,
    run_dir: Path | None = None,
    cache_dir: Path | None = None,
    fresh: bool = False,
    limit: int | None = None,
    progress: bool = True,
    console=None,
    dataset: Dataset | None = None,
    budget: float | None = None,
) -> Path:
    """Run (or resume) ``spec``; return the run directory holding manifest, records and summary.

    Stage 1 answers every (configuration, question) and scores it (BERTScore, retrieval metrics);
    stage 2, when the spec has one, runs the LLM judges on the configurations stage 1 selects on
    the validation questions, over the test questions. ``budget`` (USD) bounds this invocation's
    LLM spending: the run stops cleanly before passing it, keeping what is done.
    """
    t_start = time.perf_counter()
    stats = SweepStats()
    run_dir = Path(run_dir or run_dir_for(spec))
    cache = CacheDir(Path(cache_dir or spec.cache_dir or DEFAULT_CACHE))
    with writer_locks(spec, run_dir, cache.root, console):
        if fresh:
            _clear_run_dir(run_dir)
        return _run_locked(spec, run_dir, cache, stats, t_start, limit=limit, progress=progress, console=console,
                           dataset=dataset, budget=budget)


@contextmanager
def writer_locks(spec: SweepSpec, run_dir: Path | None, cache_root: Path, console=None):
    """Hold the run directory, the cache and an embedded Chroma directory of the spec's for this process."""
    from ragsweep.pipelines.lock import DirLock

    dirs = [] if run_dir is None else [(run_dir, "run directory", "wait for it to finish, or give this sweep "
                                                                 "another name (spec name or --out)")]
    dirs.append((cache_root, "cache", "wait for it to finish, or pass another --cache"))
    if spec.vector_store.path is not None and spec.vector_store.url is None:
        dirs.append((spec.vector_store.path, "vector_store.path", "wait for it to finish, or use another path"))
    with ExitStack() as stack:
        for directory, what, fix in dirs:
            lock = stack.enter_context(DirLock(directory, what, fix))
            if lock.previous and console is not None:
                console.print(f"note: {what} {directory}: took over the lock left by a run that stopped "
                              f"({lock.previous})", soft_wrap=True)
        yield


def _clear_run_dir(run_dir: Path) -> None:
    """``--fresh``: remove what the run directory holds, but not the lock this process holds on it."""
    from ragsweep.pipelines.lock import LOCK_NAME

    for child in run_dir.iterdir() if run_dir.is_dir() else ():
        if child.name == LOCK_NAME:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _run_locked(spec, run_dir: Path, cache: CacheDir, stats: SweepStats, t_start: float, *, limit, progress, console,
                dataset, budget) -> Path:
    from ragsweep.pipelines.outputs import write_outputs, write_started
    from ragsweep.pipelines.progress import Progress

    with _Timer(stats, "load_dataset"):
        if dataset is None:
            from ragsweep.datasets.load import load_dataset

            dataset = load_dataset(spec.dataset)
    questions = dataset.questions[:limit] if limit else list(dataset.questions)
    if console is not None:
        console.print(f"dataset {dataset.name}: {len(dataset.documents)} documents, {len(questions)} questions "
                      f"(fingerprint {dataset.fingerprint()})")
        for note in dataset.notes:
            console.print(f"  note: {note}")
    configs = expand(spec)
    scorer_key = _preflight(spec, configs, budget)
    from ragsweep.llm.clients import llms_in_use, secret_values

    journal = Journal(run_dir / "journal.sqlite", secrets=_secret_values(spec, configs) + secret_values(spec))
    error: RagsweepError | None = None
    bars = Progress(enabled=progress, console=console)
    clients = None
    stage2_info: dict | None = None
    stack = ExitStack()
    try:
        _check_dataset(journal, run_dir, dataset)
        run_id = _run_id(journal)
        if llms_in_use(spec):
            from ragsweep.llm.clients import LLMClients

            clients = LLMClients(spec, cache.llm_calls, run_id=run_id, budget_usd=budget)
        split = question_split(spec, dataset)
        done = journal.done()
        pending = {c.config_hash: [q for q in questions if (c.config_hash, q.qid) not in done] for c in configs}
        stats.skipped_done = sum(len(questions) - len(v) for v in pending.values())
        total = sum(len(v) for v in pending.values())
        session = None
        if total and spec.executor == "ray":  # joined (and checked) before the run is marked as started
            from ragsweep.executors.cluster import ray_session

            session = stack.enter_context(ray_session(spec, configs, cache, console))
            stats.executor = session.cluster.describe()
        write_started(spec, dataset, questions, configs, run_dir, limit, cache.root, scorer_key, split)
        with bars:
            if total:
                error = _answer_all(spec, dataset, configs, pending, journal, cache, stats, bars, total, clients,
                                    session)
                stack.close()  # Ray and a Chroma server it needed are not needed for scoring
            with _Timer(stats, "scoring"):
                try:
                    _score_all(spec, dataset, questions, configs, journal, cache, stats, bars, scorer_key)
                except RagsweepError as exc:  # answers are kept and written; the scores are missing
                    error = error or exc
            if spec.stage2 is not None and error is None:
                from ragsweep.pipelines.stage2 import run_stage2

                with _Timer(stats, "stage2"):
                    stage2_info, error = run_stage2(spec, dataset, questions, configs, journal, clients, stats, bars,
                                                    split, scorer_key)
        if spec.stage2 is not None and stage2_info is None:  # stage 2 did not run now: keep what it did before
            from ragsweep.pipelines.stage2 import judge_keys

            stage2_info = {"judge_keys": judge_keys(spec), "selected": [], "skipped": "stage 1 did not finish"}
        if error is not None:
            from ragsweep.llm.budget import BudgetExhausted

            stats.stopped = "budget" if isinstance(error, BudgetExhausted) else "error"
        if clients is not None:
            stats.llm = clients.counters()
            stats.llm["spending"] = _spending(cache, run_id)
        stats.timings["total"] = time.perf_counter() - t_start
        write_outputs(spec, dataset, questions, configs, journal, run_dir, stats, limit, console, cache.root,
                      scorer_key, split=split, stage2=stage2_info)
    finally:
        stack.close()
        if clients is not None:
            clients.close()
        journal.close()
    if error is not None:
        raise error
    return run_dir


def _run_id(journal: Journal) -> str:
    """A random id of this run directory, tagging the LLM calls it paid for (in the shared cache)."""
    import uuid

    rid = journal.meta("run_id")
    if rid is None:
        rid = uuid.uuid4().hex
        journal.set_meta("run_id", rid)
    return rid


def _spending(cache: CacheDir, run_id: str) -> list[dict]:
    from ragsweep.llm.cache import LLMCallCache

    db = LLMCallCache(cache.llm_calls)
    try:
        return db.spending(run_id)
    finally:
        db.close()


def question_split(spec: SweepSpec, dataset: Dataset) -> dict[str, str]:
    """qid -> validation | test, over the whole question set (so ``--limit`` does not reshuffle it)."""
    from ragsweep.evaluation.split import split_questions

    return split_questions(dataset.questions, spec.split.validation_fraction, spec.seed, spec.split.stratify)


def _preflight(spec: SweepSpec, configs: list[Configuration], budget: float | None = None) -> str:
    """Fail at start-up, not mid-sweep: an API key not set, a Chroma server that does not answer,
    a BERTScore backbone without a layer, a model without a price under ``--budget``, a judge
    template without its placeholders. Returns the BERTScore settings key scores are stored under."""
    from ragsweep.embeddings.factory import require_api_key
    from ragsweep.evaluation.bertscore import scorer_settings
    from ragsweep.llm.clients import check_llms

    check_llms(spec, budget)
    check_llm_settings(spec)

    for emb in _embeddings_in_use(configs):
        require_api_key(emb)
    if spec.vector_store.url and any(c.embedding is not None for c in configs):
        from ragsweep.retrievers.chroma import client_for

        client_for(None, spec.vector_store.url)
    if _uses_neo4j(configs):
        from ragsweep.graphs.neo4j_store import preflight

        preflight(spec.neo4j)
    return scorer_settings(spec.scoring.bertscore, spec.seed).key


def check_llm_settings(spec: SweepSpec) -> None:
    """The LLM parts of a spec that need files or metric names: prompt placeholders, select_metric
    (also run by ``--dry-run``, which must refuse what the run would refuse)."""
    if spec.stage2 is not None:
        from ragsweep.evaluation.judges import check_prompt_files
        from ragsweep.pipelines.outputs import SELECTABLE_METRICS

        check_prompt_files(spec.stage2.prompts)
        if spec.stage2.select_metric not in SELECTABLE_METRICS:
            raise RagsweepError(f"stage2.select_metric: unknown metric {spec.stage2.select_metric!r}; "
                                f"choose one of {', '.join(SELECTABLE_METRICS)}")
    if spec.generator.kind == "llm" and spec.generator.prompt_file is not None:
        text = Path(spec.generator.prompt_file).read_text(encoding="utf-8")
        if "{context_str}" not in text or "{query_str}" not in text:
            raise RagsweepError(f"generator.prompt_file: {spec.generator.prompt_file} needs the placeholders "
                                "{context_str} and {query_str}")


def _embeddings_in_use(configs: list[Configuration]) -> list:
    used = {}
    for c in configs:
        for emb in (c.embedding, c.chunk_embedding):
            if emb is not None:
                used[emb.label()] = emb
    return list(used.values())


def _secret_values(spec: SweepSpec, configs: list[Configuration]) -> tuple[str, ...]:
    """The API keys (and the Neo4j password) in use, read from the environment, so they can be
    scrubbed from stored errors."""
    import os

    names = sorted({e.api_key_env for e in _embeddings_in_use(configs) if getattr(e, "api_key_env", None)})
    if _uses_neo4j(configs):
        names.append(spec.neo4j.password_env)
    return tuple(v for v in (os.environ.get(name, "") for name in names) if len(v) >= 4)


def _check_dataset(journal: Journal, run_dir: Path, dataset: Dataset) -> None:
    """Refuse to mix results of different datasets in one run directory (checked in the journal,
    which exists from the first answer on, so a killed first run is covered too)."""
    fp = dataset.fingerprint()
    old = journal.meta("dataset_fingerprint")
    if old is None:
        journal.set_meta("dataset_fingerprint", fp)
    elif old != fp:
        raise RagsweepError(
            f"{run_dir}: holds a run over another dataset (fingerprint {old}, now {fp}); "
            "pass --fresh to start over or change the spec's name"
        )


# ---------------------------------------------------------------------------- answering
def _answer_all(spec, dataset, configs, pending, journal, cache: CacheDir, stats, bars, total,
                clients=None, session=None) -> RagsweepError | None:
    """Retrieve for every pending (configuration, question), then generate; returns the error that
    stopped the stage (budget reached, endpoint refusing every call), if any.

    With a Ray ``session``, Ray tasks answer what needs no LLM while retrieving; the rest runs here,
    as with the local executor; a lost cluster stops the stage like a spent budget."""
    from ragsweep.embeddings.cache import EmbeddingCache
    from ragsweep.errors import ClusterLost
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError

    emb_cache = EmbeddingCache(cache.embeddings)
    models: dict[str, object] = {}

    def model_for(emb):
        from ragsweep.embeddings.factory import cached_model

        if emb.label() not in models:
            models[emb.label()] = cached_model(emb, emb_cache)
        return models[emb.label()]

    answer_bar = bars.add("answering", total)
    by_chunk: dict[str, list[Configuration]] = defaultdict(list)
    for c in configs:
        if pending[c.config_hash]:
            by_chunk[c.chunk_key].append(c)
    gen_items: list = []
    llm = clients.get(spec.llm) if clients is not None and spec.llm is not None else None
    neo4j = _neo4j_connection(spec, configs)
    try:
        if session is not None:
            from ragsweep.executors.dispatch import answer_on_ray

            spec = session.worker_spec  # an embedded Chroma directory is served for the run: the driver uses it too
            by_chunk = answer_on_ray(spec, dataset, by_chunk, pending, journal, cache, emb_cache, stats, bars,
                                     answer_bar, gen_items, session.cluster)
        if llm is not None:
            _prefetch_rewrites([c for group in by_chunk.values() for c in group], pending, llm, stats)
        for chunk_key, group in by_chunk.items():
            try:
                chunks = _chunks_for(spec, dataset, group[0], cache, model_for, stats, bars)
            except Exception as exc:  # noqa: BLE001 - one splitter failing must not lose the others
                _fail_group(group, pending, journal, stats, answer_bar, f"chunking failed: {short_reason(exc)}")
                continue
            _answer_chunk_group(spec, dataset, group, chunks, pending, journal, cache, model_for, stats, bars,
                                answer_bar, llm, gen_items, neo4j)
        if gen_items:
            with _Timer(stats, "generation"):
                return _generate_all(spec, gen_items, journal, clients, stats, bars, answer_bar)
        return None
    except (BudgetExhausted, LLMFatalError, ClusterLost) as exc:
        return exc
    finally:
        for m in models.values():
            stats.embeddings_computed += getattr(m, "computed", 0)
            stats.query_embeddings_computed += getattr(m, "computed_queries", 0)
            stats.embeddings_from_cache += getattr(m, "from_cache", 0)
        emb_cache.close()
        if neo4j is not None:
            neo4j.close()
        journal.flush()


def _uses_neo4j(configs) -> bool:
    return any(getattr(c.retriever, "store", None) == "neo4j" for c in configs)


def _neo4j_connection(spec, configs):
    """The run's Neo4j connection when a configuration serves its graph from Neo4j."""
    if not _uses_neo4j(configs):
        return None
    from ragsweep.graphs.index import Neo4jConnection

    return Neo4jConnection(spec.neo4j)


def _chunks_for(spec, dataset, config: Configuration, cache: CacheDir, model_for, stats, bars):
    """Chunks of the corpus for the configuration's splitter: from the cache, else computed once."""
    path = cache.chunks_path(_chunks_key(config, dataset))
    chunks = load_chunks(path)
    if chunks is None:
        from ragsweep.splitters.build import make_parser, split_corpus

        with _Timer(stats, "chunking"):
            lc_emb = None
            if config.chunk_embedding is not None:
                from ragsweep.embeddings.cached import LangChainEmbeddingAdapter

                lc_emb = LangChainEmbeddingAdapter(model_for(config.chunk_embedding))
            parser = make_parser(config.splitter, lc_emb)
            bar = bars.add(f"chunking {config.chunk_key}", len(dataset.documents))
            chunks = split_corpus(dataset.documents, parser, config.chunk_key, progress=lambda n: bars.advance(bar, n))
            if not chunks:
                raise RagsweepError(f"splitter {config.chunk_key}: produced no chunks; is the corpus empty?")
            save_chunks(path, chunks)
    stats.chunks[config.chunk_key] = len(chunks)
    stats.unique_chunk_texts[config.chunk_key] = len({c.text for c in chunks})
    return chunks


def _chunks_key(config: Configuration, dataset) -> str:
    """What the cached chunks of a splitter depend on: its settings, the corpus, the splitter libraries."""
    import json

    from ragsweep import __version__

    return json.dumps([config.chunk_identity(), dataset.corpus_fingerprint(), _splitter_versions(), __version__],
                      sort_keys=True)


def _splitter_versions() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for pkg in ("llama-index-core", "langchain-text-splitters", "langchain-experimental"):
        try:
            out.append(f"{pkg}=={version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg}==?")
    return out


_USES_BM25 = ("bm25", "fusion", "hybrid_kg")
_USES_GRAPH = ("knowledge_graph", "hybrid_kg")


def _answer_chunk_group(spec, dataset, group, chunks, pending, journal, cache, model_for, stats, bars, answer_bar,
                        llm=None, gen_items=None, neo4j=None):
    from ragsweep.retrievers.factory import IndexRetrievers, bm25_retriever
    from ragsweep.retrievers.memo import SharedResults

    k_max = max(spec.top_k)
    bm25_shared = None
    graphs = None
    if any(c.retriever.kind in _USES_GRAPH for c in group):
        graphs = _chunk_graphs(spec, dataset, group[0], chunks, cache, k_max, stats, bars, llm, neo4j)
    if any(c.retriever.kind in _USES_BM25 for c in group):
        with _Timer(stats, "indexing_bm25"):
            try:
                bm25_shared = SharedResults(bm25_retriever(chunks, k_max), k_max)
            except Exception as exc:  # noqa: BLE001
                bm25_shared = exc  # type: ignore[assignment]
    by_emb: dict[str | None, list[Configuration]] = defaultdict(list)
    for c in group:
        by_emb[c.embedding.label() if c.embedding is not None else None].append(c)
    chroma_client = None
    for emb_label, cfgs in by_emb.items():
        vector_shared = None
        query_ms: dict[str, float] = {}
        if emb_label is not None:
            emb = cfgs[0].embedding
            try:
                if chroma_client is None:
                    from ragsweep.retrievers.chroma import client_for

                    chroma_client = client_for(spec.vector_store.path or cache.chroma, spec.vector_store.url)
                vector_shared = _vector_index(spec, dataset, cfgs[0], chunks, chroma_client, model_for(emb), stats,
                                              bars, k_max)
                qs = sorted({q.question for c in cfgs for q in pending[c.config_hash]})
                with _Timer(stats, "embedding_queries"):
                    query_ms = model_for(emb).timed_query_embeddings(qs)
            except Exception as exc:  # noqa: BLE001 - an embedding/index failure loses only its configurations
                _fail_group(cfgs, pending, journal, stats, answer_bar, f"indexing failed: {short_reason(exc)}")
                continue
        if isinstance(bm25_shared, Exception):
            bad = [c for c in cfgs if c.retriever.kind in _USES_BM25]
            _fail_group(bad, pending, journal, stats, answer_bar, f"BM25 index failed: {short_reason(bm25_shared)}")
            cfgs = [c for c in cfgs if c not in bad]
        retrievers = IndexRetrievers(bm25_shared if not isinstance(bm25_shared, Exception) else None, vector_shared,
                                     llm=llm, graphs=graphs)
        for config in cfgs:
            _answer_config(spec, config, retrievers, pending[config.config_hash], journal, stats, bars, answer_bar,
                           query_ms, gen_items)


def _chunk_graphs(spec, dataset, config, chunks, cache: CacheDir, k_max: int, stats, bars, llm, neo4j):
    from ragsweep.graphs.index import ChunkGraphs

    return ChunkGraphs(spec=spec, chunk_key=config.chunk_key, chunks=chunks,
                       corpus_fingerprint=dataset.corpus_fingerprint(), chunk_digest=_chunk_digest(chunks),
                       cache_root=cache.root, k_max=k_max, stats=stats, bars=bars, llm=llm, neo4j=neo4j)


def _vector_index(spec, dataset, config, chunks, client, embed_model, stats, bars, k_max):
    import json

    from llama_index.core.retrievers import VectorIndexRetriever

    from ragsweep.embeddings.factory import model_key
    from ragsweep.retrievers.chroma import open_or_build
    from ragsweep.retrievers.memo import SharedResults

    index_key = json.dumps([dataset.corpus_fingerprint(), config.chunk_key, _chunk_digest(chunks),
                            model_key(config.embedding)])
    bar = bars.add(f"embedding {config.chunk_key} x {config.embedding.label()}", len(chunks))
    embed_model.set_progress(lambda n: bars.advance(bar, n))
    with _Timer(stats, "embedding_and_indexing"):
        index, built = open_or_build(client, index_key, chunks, embed_model)
    embed_model.set_progress(None)
    bars.complete(bar)
    if built:
        stats.indexes_built += 1
    else:
        stats.indexes_reused += 1
    retriever = VectorIndexRetriever(index, similarity_top_k=max(1, min(k_max, len(chunks))),
                                     embed_model=embed_model)
    return SharedResults(retriever, k_max)


def _chunk_digest(chunks) -> str:
    import hashlib

    h = hashlib.sha256()
    for c in chunks:
        h.update(f"{c.node_id}\0{c.start}\0{c.end}\0".encode())
        h.update(c.text.encode())
    return h.hexdigest()[:16]


def _answer_config(spec, config: Configuration, retrievers, questions: list[Question], journal, stats, bars,
                   answer_bar, query_ms: dict[str, float], gen_items: list | None = None) -> None:
    """Answer ``questions`` with one configuration and journal each result.

    ``retrieval_ms`` is the index search (and fusion) time plus the question's embedding latency,
    measured once per (model, question) when it was embedded (``query_ms``), since the vector was
    computed ahead of the search and served from the cache. With an LLM generator, the retrieved
    nodes go to ``gen_items`` and are answered concurrently afterwards (``_generate_all``).
    """
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import Trace, llm_scope
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.schema import QueryBundle

    from ragsweep.evaluation.metrics import all_retrieval_metrics
    from ragsweep.pipelines.extractive import GENERATOR_LABEL, ExtractiveSynthesizer
    from ragsweep.retrievers.knowledge_graph import TRIPLETS_KEY
    from ragsweep.retrievers.memo import REPLAY

    llm_generated = spec.generator.kind == "llm"
    try:
        retriever = retrievers.make(config.retriever, config.top_k)  # builds a knowledge graph on first use
        synth = None if llm_generated else ExtractiveSynthesizer(spec.generator.max_sentences)
        engine = RetrieverQueryEngine(retriever=retriever, response_synthesizer=synth) if synth else None
    except (BudgetExhausted, LLMFatalError):
        raise
    except Exception as exc:  # noqa: BLE001
        _fail_group([config], {config.config_hash: questions}, journal, stats, answer_bar,
                    f"building the query engine failed: {short_reason(exc)}")
        return
    with _Timer(stats, "answering"):
        for q in questions:
            try:
                bundle = QueryBundle(q.question)
                REPLAY.take()
                rewrites = Trace()
                t0 = time.perf_counter()
                with llm_scope(rewrites, stage="query_rewrite", config_id=None):
                    nodes = retriever.retrieve(bundle)
                # LLM rewrites count at their original call time, also when served from the cache
                # (fresh calls are inside the measured wall time already)
                search_ms = (time.perf_counter() - t0) * 1000 + REPLAY.take() + rewrites.cached_ms
                embed_ms = query_ms.get(q.question) if config.embedding is not None else None
                retrieval_ms = search_ms + (embed_ms or 0.0)
                if engine is not None:
                    t1 = time.perf_counter()
                    answer = str(engine.synthesize(bundle, nodes)) if nodes else ""
                    generation_ms = (time.perf_counter() - t1) * 1000
                ranks = retrievers.source_ranks(config.retriever, config.top_k, q.question)
                sources = []
                for rank, nws in enumerate(nodes, start=1):
                    node = nws.node
                    sr = ranks.get(node.node_id, {})
                    sources.append({
                        "rank": rank, "node_id": node.node_id, "doc_id": node.metadata.get("doc_id"),
                        "start": node.start_char_idx, "end": node.end_char_idx,
                        "score": float(nws.score) if nws.score is not None else None,
                        "rank_vector": sr.get("vector"), "rank_bm25": sr.get("bm25"), "rank_graph": sr.get("graph"),
                        **({"triplets": node.metadata[TRIPLETS_KEY]} if TRIPLETS_KEY in node.metadata else {}),
                    })
                retrieved = [(s["doc_id"], s["start"], s["end"]) for s in sources]
                metrics = all_retrieval_metrics(retrieved, q.evidence, config.top_k)
                payload = {"sources": sources, "retrieval_ms": retrieval_ms, "query_embedding_ms": embed_ms,
                           **metrics, "error": None}
                if rewrites.calls:
                    payload["rewrite_llm"] = rewrites.as_dict()
                if engine is None:
                    gen_items.append((config, q, nodes, payload))
                    continue
                journal.add_answer(config.config_hash, q.qid, config.config_id, {
                    **payload, "answer": answer, "answer_empty": not answer.strip(), "generator": GENERATOR_LABEL,
                    "generation_ms": generation_ms,
                })
                stats.answered += 1
            except (BudgetExhausted, LLMFatalError):
                raise
            except Exception as exc:  # noqa: BLE001 - one question failing must not lose the rest
                journal.add_answer(config.config_hash, q.qid, config.config_id,
                                   {"error": short_reason(exc), "traceback": traceback.format_exc(limit=5)})
                stats.failed += 1
            bars.advance(answer_bar, 1)


def _prefetch_rewrites(configs, pending, llm, stats) -> None:
    """Ask for every fusion query rewrite at once (concurrently), so that retrieval, which asks one
    question at a time, finds them in the LLM cache. Same prompt text as QueryFusionRetriever's."""
    import asyncio

    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import llm_scope

    prompts = sorted({QUERY_GEN_PROMPT.format(num_queries=c.retriever.num_queries - 1, query=q.question)
                      for c in configs if getattr(c.retriever, "num_queries", 1) > 1
                      for q in pending[c.config_hash]})
    if not prompts:
        return

    async def one(prompt: str) -> None:
        try:
            with llm_scope(None, stage="query_rewrite", config_id=None):
                await llm.acomplete(prompt)
        except (BudgetExhausted, LLMFatalError):
            raise
        except Exception:  # noqa: BLE001 - the retrieval step retries it and records the failure
            pass

    async def main() -> None:
        # return_exceptions: a stop (budget, refused key) must not cancel calls already sent and paid
        results = await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    with _Timer(stats, "query_rewrites"):
        asyncio.run(main())


def _generate_all(spec, items, journal, clients, stats, bars, answer_bar) -> RagsweepError | None:
    """Write the answers with the LLM, many at once (the engine bounds concurrency and rate)."""
    import asyncio

    return asyncio.run(_agenerate(spec, items, journal, clients, stats, bars, answer_bar))


def generator_label(spec) -> str:
    from ragsweep.pipelines.extractive import GENERATOR_LABEL

    return f"llm:{spec.llm.model}" if spec.generator.kind == "llm" else GENERATOR_LABEL


def make_llm_synthesizer(spec, llm):
    from llama_index.core import get_response_synthesizer
    from llama_index.core.prompts import PromptTemplate

    template = None
    if spec.generator.prompt_file is not None:
        template = PromptTemplate(Path(spec.generator.prompt_file).read_text(encoding="utf-8"))
    kwargs = {"text_qa_template": template} if template is not None else {}
    return get_response_synthesizer(llm=llm, response_mode=spec.generator.response_mode, **kwargs)


async def _agenerate(spec, items, journal, clients, stats, bars, answer_bar) -> RagsweepError | None:
    from llama_index.core.schema import QueryBundle

    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import Trace, llm_scope
    from ragsweep.pipelines.workpool import drain

    synth = make_llm_synthesizer(spec, clients.get(spec.llm))
    label = generator_label(spec)

    async def answer(item) -> None:
        config, q, nodes, payload = item
        trace = Trace()
        response, error = None, None
        try:
            with llm_scope(trace, stage="generation", config_id=config.config_id):
                response = await synth.asynthesize(QueryBundle(q.question), nodes) if nodes else None
        except (BudgetExhausted, LLMFatalError):
            raise  # stops the pool; this item stays pending
        except Exception as exc:  # noqa: BLE001 - one question failing must not lose the rest
            error = exc
        if error is not None:
            journal.add_answer(config.config_hash, q.qid, config.config_id,
                               {"error": f"generation failed: {short_reason(error)}", "llm": trace.as_dict()})
            stats.failed += 1
        else:
            text = (response.response or "") if response is not None else ""
            journal.add_answer(config.config_hash, q.qid, config.config_id, {
                **payload, "answer": text, "answer_empty": not text.strip(), "generator": label,
                "generation_ms": trace.ms, "llm": trace.as_dict(),
            })
            stats.answered += 1
        bars.advance(answer_bar, 1)

    stop = await drain(items, answer, 2 * spec.llm.concurrency)
    journal.flush()
    return stop


def _fail_group(configs, pending, journal, stats, answer_bar, reason: str) -> None:
    for c in configs:
        for q in pending[c.config_hash]:
            journal.add_answer(c.config_hash, q.qid, c.config_id, {"error": reason})
            stats.failed += 1
        answer_bar.advance(len(pending[c.config_hash]))
    journal.flush()


# ---------------------------------------------------------------------------- scoring
def _score_all(spec, dataset, questions, configs, journal, cache: CacheDir, stats, bars, scorer_key: str) -> None:
    """BERTScore every journaled answer without a score under the current settings; identical pairs
    are scored once. A score made with other settings (backbone, layer, baseline) is redone."""
    hashes = {c.config_hash for c in configs}
    qs = {q.qid: q for q in questions}
    scored = {k for k, v in journal.scores().items() if v.get("scorer") == scorer_key}
    todo = [(h, qid, p) for h, qid, _, p in journal.answers(hashes)
            if qid in qs and not p.get("error") and (h, qid) not in scored]
    if not todo:
        return
    from ragsweep.evaluation.bertscore import BERTScoreRunner, score_fields
    from ragsweep.pipelines.extractive import sentences

    runner = BERTScoreRunner(spec.scoring.bertscore, cache.bertscore)
    try:
        pairs, index = [], []
        for h, qid, p in todo:
            ref = qs[qid].reference_answer or ""
            if p.get("answer", "").strip() and ref.strip():
                index.append(len(pairs))
                pairs.append((p["answer"], ref))
            else:
                index.append(None)
        n_unique = len(set(pairs))
        bar = bars.add("scoring (BERTScore)", n_unique)
        raw = runner.score(pairs, progress=lambda n, _total: bars.advance(bar, n))
        stats.bertscore_pairs_computed += runner.computed
        stats.bertscore_pairs_total += n_unique
        base = runner.baseline(lambda: [s for d in dataset.documents for s in sentences(d.text)],
                               dataset.corpus_fingerprint(), seed=spec.seed)
        for (h, qid, p), i in zip(todo, index):
            ref = qs[qid].reference_answer or ""
            if i is not None:
                fields = score_fields(raw[i], base)
            elif ref.strip():  # empty answer against a real reference: bert-score's convention is 0
                fields = score_fields((0.0, 0.0, 0.0), base)
            else:  # no reference answer: BERTScore is undefined for this question
                fields = score_fields(None, base)
            journal.add_score(h, qid, {**fields, "baseline": [base.p, base.r, base.f], "baseline_source": base.source,
                                       "backbone": runner.model_id, "layer": runner.num_layers, "scorer": scorer_key})
        journal.flush()
    finally:
        runner.close()


# ---------------------------------------------------------------------------- one configuration
def answer_question(spec: SweepSpec, config: Configuration, dataset: Dataset, question: str,
                    cache_dir: Path | None = None) -> dict:
    """Answer one free-form question with one configuration (for ``ragsweep ask``), reusing the caches."""
    cache = CacheDir(Path(cache_dir or spec.cache_dir or DEFAULT_CACHE))
    with writer_locks(spec, None, cache.root):  # it may build an index in the cache
        return _answer_question_locked(spec, config, dataset, question, cache)


def _answer_question_locked(spec: SweepSpec, config: Configuration, dataset: Dataset, question: str,
                            cache: CacheDir) -> dict:
    from ragsweep.embeddings.cache import EmbeddingCache
    from ragsweep.embeddings.factory import cached_model
    from ragsweep.pipelines.progress import Progress
    from ragsweep.retrievers.factory import IndexRetrievers, bm25_retriever
    from ragsweep.retrievers.memo import SharedResults

    stats = SweepStats()
    bars = Progress(enabled=False)
    emb_cache = EmbeddingCache(cache.embeddings)
    clients = neo4j = None
    try:
        models: dict[str, object] = {}

        def model_for(emb):
            return models.setdefault(emb.label(), cached_model(emb, emb_cache))

        from ragsweep.llm.clients import LLMClients, check_llms, llms_in_use

        llm = None
        if llms_in_use(spec, with_stage2=False):
            check_llms(spec, None)
            clients = LLMClients(spec, cache.llm_calls, run_id="ask")
            llm = clients.get(spec.llm)

        chunks = _chunks_for(spec, dataset, config, cache, model_for, stats, bars)
        k = config.top_k
        bm25 = SharedResults(bm25_retriever(chunks, k), k) if config.retriever.kind in _USES_BM25 else None
        graphs = None
        if config.retriever.kind in _USES_GRAPH:
            neo4j = _neo4j_connection(spec, [config])
            graphs = _chunk_graphs(spec, dataset, config, chunks, cache, k, stats, bars, llm, neo4j)
        vector = None
        if config.embedding is not None:
            from ragsweep.retrievers.chroma import client_for

            client = client_for(spec.vector_store.path or cache.chroma, spec.vector_store.url)
            vector = _vector_index(spec, dataset, config, chunks, client, model_for(config.embedding), stats, bars, k)
        query_ms = model_for(config.embedding).timed_query_embeddings([question]) if config.embedding else {}
        journal = _MemoryJournal()
        q = Question(qid="ask", question=question)
        gen_items: list = []
        bar = bars.add("", 1)
        _answer_config(spec, config, IndexRetrievers(bm25, vector, llm=llm, graphs=graphs), [q], journal, stats, bars,
                       bar, query_ms, gen_items)
        if gen_items:
            stop = _generate_all(spec, gen_items, journal, clients, stats, bars, bar)
            if stop is not None:
                raise stop
        payload = journal.rows[0]
        if payload.get("error"):
            raise RagsweepError(f"{config.config_id}: {payload['error']}")
        texts = {c.node_id: c.text for c in chunks}
        for s in payload["sources"]:
            s["text"] = texts.get(s["node_id"], "")
        return payload
    finally:
        if clients is not None:
            clients.close()
        if neo4j is not None:
            neo4j.close()
        emb_cache.close()


class _MemoryJournal:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add_answer(self, config_hash, qid, config_id, payload) -> None:
        self.rows.append(payload)

    def flush(self) -> None:
        return None
