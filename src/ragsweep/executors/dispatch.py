"""The answering stage on a Ray cluster, driven from the ``ragsweep run`` process.

Per splitter: a chunking task (unless its chunks are cached), then one index task per embedding
and one graph task, then answering tasks over slices of the questions, each running all the
splitter's configurations so that every index is still searched once per question. Splitters
proceed independently, so one splitter's questions are answered while another is embedded.

The driver keeps the journal (it writes every row as its task finishes: a killed sweep resumes
like a local one), every cache, and every LLM call: configurations that call an LLM while
retrieving (fusion query rewrites, LLM graph extraction) run on the driver, and LLM-written
answers are generated there from the sources the workers retrieved. One process holds the run's
rate limiter and budget, so they bound the whole cluster by construction.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from ragsweep.errors import RagsweepError, short_reason


class ClusterLost(RagsweepError):
    """Ray stopped answering mid-sweep; what finished is journaled and a rerun goes on from there."""


@dataclass
class _Group:
    configs: list
    chunks: list | None = None
    chunks_ref: object = None
    waiting: int = 0
    started: bool = False
    failed_embeddings: set = field(default_factory=set)
    graph_files: dict = field(default_factory=dict)


def on_driver(config) -> bool:
    """Configurations whose retrieval calls an LLM (``rewrite_llm``) stay with the run's LLM client."""
    return config.rewrite_llm is not None


def _cause(exc: BaseException) -> BaseException:
    return getattr(exc, "cause", None) or exc


def merge_stats(stats, part) -> None:
    """Add a task's counters and timings to the run's."""
    for name in ("answered", "failed", "embeddings_computed", "query_embeddings_computed", "embeddings_from_cache",
                 "indexes_built", "indexes_reused"):
        setattr(stats, name, getattr(stats, name) + getattr(part, name))
    for k, v in part.timings.items():
        stats.timings[k] += v
    stats.chunks.update(part.chunks)
    stats.unique_chunk_texts.update(part.unique_chunk_texts)
    for label, info in part.graphs.items():
        stats.graphs.setdefault(label, {}).update(info)


def questions_per_task(spec, n_questions: int, n_groups: int, cpus: int) -> int:
    """About four answering tasks per CPU over the whole sweep, at least five questions each."""
    if spec.ray.questions_per_task:
        return spec.ray.questions_per_task
    return max(5, math.ceil(n_questions * n_groups / (4 * cpus)))


def answer_on_ray(spec, dataset, groups: dict, pending, journal, cache, emb_cache, stats, bars, answer_bar,
                  gen_items: list, cluster) -> dict:
    """Answer the configurations of ``groups`` (chunk key -> configurations) that need no LLM while
    retrieving; return the groups left for the driver."""
    import ray

    from ragsweep.embeddings.cache import text_key
    from ragsweep.embeddings.factory import model_key
    from ragsweep.executors import tasks
    from ragsweep.executors.cluster import with_absolute_models
    from ragsweep.graphs.build import graph_key
    from ragsweep.graphs.index import extractor_identity
    from ragsweep.pipelines.cache_dir import load_chunks, save_chunks
    from ragsweep.pipelines.sweep import _USES_GRAPH, _chunk_digest, _chunks_key, _fail_group

    # tasks that may run the embedding model get a GPU when the cluster has them (Ray hides GPUs from
    # tasks that do not ask); answering tasks only read question vectors the driver sends
    gpu = 1 if cluster.gpus else 0
    remote = {fn.__name__: ray.remote(num_cpus=1, num_gpus=gpu if fn is not tasks.answer_task else 0,
                                      max_retries=1)(fn)
              for fn in (tasks.chunk_task, tasks.index_task, tasks.query_task, tasks.graph_task, tasks.answer_task)}
    left: dict[str, list] = defaultdict(list)
    work: dict[str, _Group] = {}
    for key, configs in groups.items():
        for c in configs:
            if on_driver(c):
                left[key].append(c)
            else:
                work.setdefault(key, _Group([])).configs.append(with_absolute_models(c))
    if not work:
        return dict(left)
    spec_ref, dataset_ref = ray.put(spec), ray.put(dataset)
    root = cache.root.resolve()
    n_questions = len({q.qid for g in work.values() for c in g.configs for q in pending[c.config_hash]})
    per_task = questions_per_task(spec, n_questions, len(work), cluster.cpus)
    outstanding: dict = {}  # ObjectRef -> (handler, group key, what)

    def store_vectors(result) -> None:
        for mkey, items in result.vectors.items():
            emb_cache.put_computed(mkey, items)

    def vectors_for(emb, *batches: tuple[list[str], str]) -> dict:
        """The cached vectors (and query latencies) of (texts, role) batches, for a task's memory cache."""
        mkey = model_key(emb)
        return {mkey: emb_cache.arrays(mkey, [text_key(t, role) for texts, role in batches for t in texts])}

    def pending_of(configs) -> list:
        seen: dict[str, object] = {}
        for c in configs:
            for q in pending[c.config_hash]:
                seen.setdefault(q.qid, q)
        return list(seen.values())

    def chunked(key: str, result) -> None:
        g = work[key]
        if isinstance(result, BaseException):
            left_over = [c for c in g.configs if c.embedding is None or c.embedding.label() not in g.failed_embeddings]
            _fail_group(left_over, pending, journal, stats, answer_bar, f"chunking failed: {short_reason(result)}")
            g.started = True  # nothing more to do for this splitter
            return
        if result is not None:  # computed by a task: keep it for later runs
            store_vectors(result)
            merge_stats(stats, result.stats)
            save_chunks(cache.chunks_path(_chunks_key(g.configs[0], dataset)), result.chunks)
            g.chunks = result.chunks
        stats.chunks[key] = len(g.chunks)
        stats.unique_chunk_texts[key] = len({c.text for c in g.chunks})
        g.chunks_ref = ray.put(g.chunks)
        by_emb: dict[str, list] = defaultdict(list)
        for c in g.configs:
            if c.embedding is not None:
                by_emb[c.embedding.label()].append(c)
        for label, cfgs in by_emb.items():
            vecs = vectors_for(cfgs[0].embedding, ([c.text for c in g.chunks], "text"))
            ref = remote["index_task"].remote(spec_ref, dataset_ref, cfgs[0], g.chunks_ref, vecs, root)
            outstanding[ref] = (indexed, key, label)
            g.waiting += 1
        graph_cfgs = [c for c in g.configs if c.retriever.kind in _USES_GRAPH]
        if graph_cfgs:
            digest = _chunk_digest(g.chunks)
            for c in graph_cfgs:
                gkey = graph_key(dataset.corpus_fingerprint(), digest, extractor_identity(c.retriever, spec.llm))
                path = cache.root / "graphs" / f"{gkey}.json"
                if path.is_file():
                    g.graph_files[gkey] = path.read_text(encoding="utf-8")
            ref = remote["graph_task"].remote(spec_ref, dataset_ref, graph_cfgs, g.chunks_ref, g.graph_files)
            outstanding[ref] = (graphed, key, None)
            g.waiting += 1
        maybe_answer(key)

    def indexed(key: str, result, label: str) -> None:
        if isinstance(result, BaseException):
            fail_embedding(work[key], label, result)
        else:
            store_vectors(result)
            merge_stats(stats, result.stats)
        work[key].waiting -= 1
        maybe_answer(key)

    def fail_embedding(g: _Group, label: str, exc: BaseException) -> None:
        if g.started or label in g.failed_embeddings:  # chunking failed: its configurations are recorded already
            return
        cfgs = [c for c in g.configs if c.embedding is not None and c.embedding.label() == label]
        _fail_group(cfgs, pending, journal, stats, answer_bar, f"indexing failed: {short_reason(exc)}")
        g.failed_embeddings.add(label)

    def queried(_key, result, label: str) -> None:
        queries_waiting.discard(label)
        if isinstance(result, BaseException):
            for g in work.values():
                fail_embedding(g, label, result)
        else:
            store_vectors(result)
            merge_stats(stats, result.stats)
        for key in work:
            maybe_answer(key)

    def graphed(key: str, result, _what) -> None:
        g = work[key]
        if isinstance(result, BaseException):  # the task itself died: the answering tasks retry the graphs
            g.waiting -= 1
            maybe_answer(key)
            return
        merge_stats(stats, result.stats)
        for failed_spec, reason in result.graph_failures.items():
            cfgs = [c for c in g.configs if c.retriever.model_dump_json() == failed_spec]
            _fail_group(cfgs, pending, journal, stats, answer_bar, reason)
            g.configs = [c for c in g.configs if c not in cfgs]
        for gkey, text in result.graph_files.items():
            path = cache.root / "graphs" / f"{gkey}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
            g.graph_files[gkey] = text
        g.waiting -= 1
        maybe_answer(key)

    def maybe_answer(key: str) -> None:
        """Answer a splitter's questions once its chunks, indexes, graphs and question vectors exist."""
        g = work[key]
        if g.started or g.chunks_ref is None or g.waiting or queries_waiting & {
                c.embedding.label() for c in g.configs if c.embedding is not None}:
            return
        g.started = True
        configs = [c for c in g.configs if c.embedding is None or c.embedding.label() not in g.failed_embeddings]
        questions = pending_of(configs)
        graph_ref = ray.put(g.graph_files)
        for i in range(0, len(questions), per_task):
            qids = {q.qid for q in questions[i:i + per_task]}
            part = {c.config_hash: [q for q in pending[c.config_hash] if q.qid in qids] for c in configs}
            cfgs = [c for c in configs if part[c.config_hash]]
            texts = sorted({q.question for c in cfgs for q in part[c.config_hash]})
            vecs = {}
            for emb in {c.embedding.label(): c.embedding for c in cfgs if c.embedding is not None}.values():
                vecs.update(vectors_for(emb, (texts, "query")))
            ref = remote["answer_task"].remote(spec_ref, dataset_ref, cfgs, g.chunks_ref, part, vecs, graph_ref,
                                               root)
            outstanding[ref] = (answered, key, (cfgs, part))

    def answered(key: str, result, batch) -> None:
        cfgs, part = batch
        if isinstance(result, BaseException):
            _fail_group(cfgs, part, journal, stats, answer_bar, f"ray task failed: {short_reason(result)}")
            return
        for config_hash, qid, config_id, payload in result.rows:
            journal.add_answer(config_hash, qid, config_id, payload)
        journal.flush()
        store_vectors(result)
        merge_stats(stats, result.stats)
        gen_items.extend(result.gen_items)
        bars.advance(answer_bar, len(result.rows))

    queries_waiting: set[str] = set()
    by_model: dict[str, list] = defaultdict(list)
    for g in work.values():
        for c in g.configs:
            if c.embedding is not None:
                by_model[c.embedding.label()].append(c)
    for label, cfgs in by_model.items():  # each question is embedded once per model, as locally
        queries = sorted({q.question for q in pending_of(cfgs)})
        ref = remote["query_task"].remote(cfgs[0].embedding, queries, vectors_for(cfgs[0].embedding, (queries, "query")),
                                          root)
        outstanding[ref] = (queried, None, label)
        queries_waiting.add(label)
    for g in work.values():
        g.chunks = load_chunks(cache.chunks_path(_chunks_key(g.configs[0], dataset)))
    # one bar for the tasks before answering: chunking, index, question-embedding and graph tasks
    prep_bar = bars.add("ray: chunk, index, graph tasks", len(by_model) + sum(
        (g.chunks is None) + len({c.embedding.label() for c in g.configs if c.embedding is not None})
        + any(c.retriever.kind in _USES_GRAPH for c in g.configs) for g in work.values()))
    for key, g in work.items():
        if g.chunks is None:
            ref = remote["chunk_task"].remote(spec_ref, dataset_ref, g.configs[0], root)
            outstanding[ref] = (lambda k, r, _w: chunked(k, r), key, None)
        else:
            chunked(key, None)
    while outstanding:
        try:
            ready, _ = ray.wait(list(outstanding), num_returns=1)
        except Exception as exc:  # noqa: BLE001 - the cluster itself failed: stop cleanly, keep what is journaled
            raise ClusterLost(f"ray: the cluster at {cluster.address} stopped answering ({short_reason(exc)}); "
                              "finished answers are journaled: run the same command again to go on") from None
        handler, key, what = outstanding.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:  # noqa: BLE001 - a task's failure loses only its own work
            result = _cause(exc)
        handler(key, result, what)
        if handler is not answered:
            bars.advance(prep_bar, 1)
    bars.complete(prep_bar)
    return dict(left)
