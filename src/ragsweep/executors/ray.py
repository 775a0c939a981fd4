"""The Ray executor: the plan's units as Ray tasks, driven from the ``ragsweep run`` process.

Per splitter: a chunk task (unless its chunks are cached), then one index task per embedding
and one graph task, then answer tasks over slices of the questions, each running all the
splitter's configurations so that every index is still searched once per question; one queries
task per model. Splitters proceed independently, so one splitter's questions are answered while
another is embedded. Tasks run ``ray_tasks``, which call the same stages the local executor calls.

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

from ragsweep.errors import ClusterLost, RagsweepError, short_reason
from ragsweep.pipelines.plan import Group, SweepPlan
from ragsweep.pipelines.stages import answer, chunk, graph


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
    """Configurations whose retrieval calls an LLM (``rewrite_llm``) stay with the run's LLM client;
    tuned fusion weights and abstention thresholds are chosen once, on the run's validation questions, here."""
    from ragsweep.pipelines.stages.abstain import tunes_abstention

    return (config.rewrite_llm is not None or getattr(config.retriever, "tuned", False) or tunes_abstention(config)
            or config.adaptive is not None)  # an adaptive configuration's classifier is trained once, here


def _cause(exc: BaseException) -> BaseException:
    return getattr(exc, "cause", None) or exc


def questions_per_task(spec, n_questions: int, n_groups: int, cpus: int) -> int:
    """About four answering tasks per CPU over the whole sweep, at least five questions each."""
    if spec.ray.questions_per_task:
        return spec.ray.questions_per_task
    return max(5, math.ceil(n_questions * n_groups / (4 * cpus)))


class RayExecutor:
    """Runs a ``SweepPlan`` on the Ray cluster of a ``cluster.RaySession``; what needs the run's LLM while
    retrieving, and LLM generation, runs here with the local executor."""

    kind = "ray"

    def __init__(self, session) -> None:
        self.session = session
        self.lost = False  # the cluster stopped answering: what is left runs here

    def describe(self) -> dict:
        return self.session.cluster.describe()

    def answer(self, plan: SweepPlan, ctx, sink, bar, clients=None) -> RagsweepError | None:
        from dataclasses import replace

        from ragsweep.executors.cluster import with_absolute_models
        from ragsweep.executors.local import LocalExecutor

        ctx = replace(ctx, spec=self.session.worker_spec)  # an embedded Chroma is served: the driver uses it too
        left: list[Group] = []
        work: dict[str, _Group] = {}
        for key, g in plan.groups.items():
            here = [c for c in g.configs if on_driver(c)]
            if here:
                left.append(Group(key, here))
            remote = [with_absolute_models(c) for c in g.configs if not on_driver(c)]
            if remote:
                work[key] = _Group(remote)
        gen_items: list = []
        try:
            failed = self._llm_contexts(plan, ctx, sink, bar)
        except RagsweepError as exc:  # the budget ran out, or the endpoint refused the key
            sink.flush()
            return exc
        work = {k: g for k, g in work.items() if k not in failed}
        left = [g for g in left if g.chunk_key not in failed]
        if work:
            try:
                _Dispatch(plan, ctx, work, sink, bar, gen_items, self.session.cluster).run()
            except ClusterLost as exc:
                sink.flush()
                self.lost = True
                return exc
        return LocalExecutor().answer_groups(plan, ctx, sink, bar, left, clients, gen_items)

    @staticmethod
    def _llm_contexts(plan: SweepPlan, ctx, sink, bar) -> set[str]:
        """Chunk here the splitters whose contexts an LLM writes (every LLM call stays on the driver); the
        chunk tasks then find them cached. A splitter that fails here fails all its configurations, those
        answered on the workers and here alike (its calls are not sent twice); returns their group keys."""
        from ragsweep.config import uses_llm
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError

        failed = set()
        for key, g in plan.groups.items():
            first = g.configs[0]
            if uses_llm(first.splitter.context) and chunk.cached_chunks(ctx, first) is None:
                try:
                    chunk.chunk(ctx, first)
                except (BudgetExhausted, LLMFatalError):
                    raise
                except Exception as exc:  # noqa: BLE001 - one splitter failing must not lose the others
                    answer.record_failures(g.configs, plan.pending, sink, ctx.stats, bar,
                                           f"chunking failed: {short_reason(exc)}")
                    failed.add(key)
        return failed

    def score(self, ctx, questions, todo: list, journal, scorer_key: str) -> None:
        """The score unit as Ray tasks: blocks of uncached pairs scored on the workers (each loads the
        BERTScore encoder once), stored by the driver as each block returns. After a lost cluster the
        journaled answers are scored here instead."""
        from ragsweep.pipelines.stages import score

        if self.lost:
            from ragsweep.executors.local import LocalExecutor

            return LocalExecutor().score(ctx, questions, todo, journal, scorer_key)
        cpus = self.session.cluster.cpus
        n_pairs = len(todo)
        block = max(64, min(2048, math.ceil(n_pairs / (4 * cpus)))) if n_pairs else 2048
        score.score_answers(ctx, questions, todo, journal, scorer_key, run_blocks=self._run_blocks(ctx), block=block)

    def _run_blocks(self, ctx):
        import ray

        from ragsweep.executors import ray_tasks
        from ragsweep.executors.cluster import with_absolute_model

        remote = ray.remote(num_cpus=1, num_gpus=1 if self.session.cluster.gpus else 0, max_retries=1)(
            ray_tasks.score_task)
        bertscore = with_absolute_model(ctx.spec.scoring.bertscore)
        root = ctx.cache.root.resolve()

        def failed(exc: BaseException) -> RagsweepError:
            return RagsweepError(f"ray: scoring failed ({short_reason(_cause(exc))}); the answers are journaled: "
                                 "run the same command again to score them")

        def run(blocks):
            try:
                spec_ref = ray.put(bertscore)
                refs = {remote.remote(spec_ref, root, b): i for i, b in enumerate(blocks)}
            except Exception as exc:  # noqa: BLE001 - a cluster lost before the blocks went out
                raise failed(exc) from None
            while refs:
                try:
                    ready, _ = ray.wait(list(refs), num_returns=1)
                    scores = ray.get(ready[0])
                except Exception as exc:  # noqa: BLE001 - a lost cluster or a failing block stops scoring alike
                    raise failed(exc) from None
                yield refs.pop(ready[0]), scores

        return run


class _Dispatch:
    """The driver's side of one Ray answering stage: submit tasks, handle each result as it arrives.

    Every handler records failures with the local executor's reasons, stores what the task computed,
    and starts what the result makes possible (a splitter's answering tasks once its chunks, indexes,
    graphs and question vectors exist)."""

    def __init__(self, plan: SweepPlan, ctx, work: dict[str, _Group], sink, bar, gen_items: list, cluster) -> None:
        import ray

        from ragsweep.executors import ray_tasks as tasks

        self.plan, self.ctx, self.work, self.pending, self.journal = plan, ctx, work, plan.pending, sink
        self.spec, self.dataset, self.stats, self.bars, self.answer_bar = (ctx.spec, ctx.dataset, ctx.stats,
                                                                           ctx.bars, bar)
        self.emb_cache = ctx.models.cache
        self.gen_items, self.cluster = gen_items, cluster
        # tasks that may run the embedding model get a GPU when the cluster has them (Ray hides GPUs from
        # tasks that do not ask); answering tasks only read question vectors the driver sends
        gpu = 1 if cluster.gpus else 0
        self.remote = {fn.__name__: ray.remote(num_cpus=1, num_gpus=gpu if fn is not tasks.answer_task else 0,
                                               max_retries=1)(fn)
                       for fn in (tasks.chunk_task, tasks.index_task, tasks.query_task, tasks.graph_task,
                                  tasks.answer_task)}
        self.spec_ref, self.dataset_ref = ray.put(self.spec), ray.put(self.dataset)
        self.root = ctx.cache.root.resolve()
        n_questions = len({q.qid for q in plan.questions_of([c for g in work.values() for c in g.configs])})
        self.per_task = questions_per_task(self.spec, n_questions, len(work), cluster.cpus)
        self.outstanding: dict = {}  # ObjectRef -> (handler, group key, what the handler needs)
        self.queries_waiting: set[str] = set()  # embedding labels whose question vectors are not stored yet

    # ------------------------------------------------------------------ helpers
    def submit(self, task: str, args: tuple, handler, key, what=None) -> None:
        self.outstanding[self.remote[task].remote(*args)] = (handler, key, what)

    def fail(self, configs, pending, reason: str) -> None:
        answer.record_failures(configs, pending, self.journal, self.stats, self.answer_bar, reason)

    def store(self, result) -> None:
        """Keep what a task computed: its vectors (in the SQLite cache) and its counters."""
        for mkey, items in result.vectors.items():
            self.emb_cache.put_computed(mkey, items)
        self.stats.merge(result.stats)

    def vectors_for(self, emb, *batches: tuple[list[str], str]) -> dict:
        """The cached vectors (and query latencies) of (texts, role) batches, for a task's memory cache."""
        from ragsweep.embeddings.cache import text_key
        from ragsweep.embeddings.factory import model_key

        mkey = model_key(emb)
        return {mkey: self.emb_cache.arrays(mkey, [text_key(t, role) for texts, role in batches for t in texts])}

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        import ray

        groups = [Group(key, g.configs) for key, g in self.work.items()]
        models = self.plan.query_embeddings(groups)
        for label, (emb, texts) in models.items():  # the queries unit: each question embedded once per model
            vecs = self.vectors_for(emb, (texts, "query"))
            self.submit("query_task", (self.spec_ref, self.dataset_ref, emb, texts, vecs, self.root), self.queried,
                        None, label)
            self.queries_waiting.add(label)
        for g in self.work.values():
            g.chunks = chunk.cached_chunks(self.ctx, g.configs[0])
        # one bar for the units before answering: chunk, index, queries and graph tasks
        prep_bar = self.bars.add("ray: chunk, index, graph tasks", len(models) + sum(
            (g.chunks is None) + len({c.embedding.label() for c in g.configs if c.embedding is not None})
            + any(c.retriever.kind in graph.USES_GRAPH for c in g.configs) for g in self.work.values()))
        for key, g in self.work.items():
            if g.chunks is None:
                self.submit("chunk_task", (self.spec_ref, self.dataset_ref, g.configs[0], self.root), self.chunked, key)
            else:
                self.chunked(key, None)
        while self.outstanding:
            try:
                ready, _ = ray.wait(list(self.outstanding), num_returns=1)
            except Exception as exc:  # noqa: BLE001 - the cluster failed: stop cleanly, keep what is journaled
                raise ClusterLost(f"ray: the cluster at {self.cluster.address} stopped answering "
                                  f"({short_reason(exc)}); finished answers are journaled: run the same command "
                                  "again to go on") from None
            handler, key, what = self.outstanding.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except Exception as exc:  # noqa: BLE001 - a task's failure loses only its own work
                result = _cause(exc)
            handler(key, result, what)
            if handler != self.answered:
                self.bars.advance(prep_bar, 1)
        self.bars.complete(prep_bar)

    # ------------------------------------------------------------------ handlers
    def chunked(self, key: str, result, _what=None) -> None:
        """Chunks exist (cached, or computed by a task): start the splitter's index and graph tasks."""
        import ray

        g = self.work[key]
        if isinstance(result, BaseException):
            left_over = [c for c in g.configs if c.embedding is None or c.embedding.label() not in g.failed_embeddings]
            self.fail(left_over, self.pending, f"chunking failed: {short_reason(result)}")
            g.started = True  # nothing more to do for this splitter
            return
        if result is not None:  # computed by a task: keep it for later runs
            self.store(result)
            chunk.store_chunks(self.ctx, g.configs[0], result.chunks)
            g.chunks = result.chunks
        chunk.count(self.ctx, g.configs[0], g.chunks)
        g.chunks_ref = ray.put(g.chunks)
        by_emb: dict[str, list] = defaultdict(list)
        for c in g.configs:
            if c.embedding is not None:
                by_emb[c.embedding.label()].append(c)
        for label, cfgs in by_emb.items():
            vecs = self.vectors_for(cfgs[0].embedding, ([c.index_text for c in g.chunks], "text"))
            self.submit("index_task", (self.spec_ref, self.dataset_ref, cfgs[0], g.chunks_ref, vecs, self.root),
                        self.indexed, key, label)
            g.waiting += 1
        graph_cfgs = [c for c in g.configs if c.retriever.kind in graph.USES_GRAPH]
        if graph_cfgs:
            for gkey in graph.graph_file_keys(self.ctx, graph_cfgs, g.chunks):  # cached graphs: the task serves them
                path = self.ctx.cache.root / "graphs" / f"{gkey}.json"
                if path.is_file():
                    g.graph_files[gkey] = path.read_text(encoding="utf-8")
            self.submit("graph_task", (self.spec_ref, self.dataset_ref, graph_cfgs, g.chunks_ref, g.graph_files),
                        self.graphed, key)
            g.waiting += 1
        self.maybe_answer(key)

    def indexed(self, key: str, result, label: str) -> None:
        if isinstance(result, BaseException):
            self.fail_embedding(self.work[key], label, result)
        else:
            self.store(result)
        self.work[key].waiting -= 1
        self.maybe_answer(key)

    def fail_embedding(self, g: _Group, label: str, exc: BaseException) -> None:
        if g.started or label in g.failed_embeddings:  # already recorded (chunking or the other task failed)
            return
        cfgs = [c for c in g.configs if c.embedding is not None and c.embedding.label() == label]
        self.fail(cfgs, self.pending, f"indexing failed: {short_reason(exc)}")
        g.failed_embeddings.add(label)

    def queried(self, _key, result, label: str) -> None:
        self.queries_waiting.discard(label)
        if isinstance(result, BaseException):
            for g in self.work.values():
                self.fail_embedding(g, label, result)
        else:
            self.store(result)
        for key in self.work:
            self.maybe_answer(key)

    def graphed(self, key: str, result, _what=None) -> None:
        g = self.work[key]
        if not isinstance(result, BaseException):  # a dead task: the answering tasks retry the graphs
            self.store(result)
            for failed_spec, reason in result.graph_failures.items():  # recorded once, as a local run does
                cfgs = [c for c in g.configs if c.retriever.model_dump_json() == failed_spec
                        and (c.embedding is None or c.embedding.label() not in g.failed_embeddings)]
                self.fail(cfgs, self.pending, reason)
                g.configs = [c for c in g.configs if c not in cfgs]
            for gkey, text in result.graph_files.items():
                path = self.ctx.cache.root / "graphs" / f"{gkey}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(path)
                g.graph_files[gkey] = text
        g.waiting -= 1
        self.maybe_answer(key)

    def maybe_answer(self, key: str) -> None:
        """Answer a splitter's questions once its chunks, indexes, graphs and question vectors exist."""
        import ray

        g = self.work[key]
        if g.started or g.chunks_ref is None or g.waiting or self.queries_waiting & {
                c.embedding.label() for c in g.configs if c.embedding is not None}:
            return
        g.started = True
        configs = [c for c in g.configs if c.embedding is None or c.embedding.label() not in g.failed_embeddings]
        questions = self.plan.questions_of(configs)
        graph_ref = ray.put(g.graph_files)
        for i in range(0, len(questions), self.per_task):
            qids = {q.qid for q in questions[i:i + self.per_task]}
            part = {c.config_hash: [q for q in self.pending[c.config_hash] if q.qid in qids] for c in configs}
            cfgs = [c for c in configs if part[c.config_hash]]
            texts = sorted({q.question for c in cfgs for q in part[c.config_hash]})
            vecs = {}
            for emb in {c.embedding.label(): c.embedding for c in cfgs if c.embedding is not None}.values():
                vecs.update(self.vectors_for(emb, (texts, "query")))
            self.submit("answer_task", (self.spec_ref, self.dataset_ref, cfgs, g.chunks_ref, part, vecs, graph_ref,
                                        self.root), self.answered, key, (cfgs, part))

    def answered(self, key: str, result, batch) -> None:
        cfgs, part = batch
        if isinstance(result, BaseException):
            self.fail(cfgs, part, f"ray task failed: {short_reason(result)}")
            return
        for config_hash, qid, config_id, payload in result.rows:
            self.journal.add_answer(config_hash, qid, config_id, payload)
        self.journal.flush()
        self.store(result)
        self.gen_items.extend(result.gen_items)
        self.bars.advance(self.answer_bar, len(result.rows))
