"""The Ray executor's driver loop: a plan's units up to the answers as Ray tasks, each started once its ``needs``
are finished (``plan.Schedule``), each result handled as it arrives (``executors.ray`` says what runs where)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ragsweep.errors import ClusterLost, short_reason
from ragsweep.pipelines.answer_record import Retrieved
from ragsweep.pipelines.plan import SPLITTER_STAGES, Schedule, SweepPlan, Unit, with_embedding
from ragsweep.pipelines.stages import answer, chunk, graph


@dataclass
class Group:
    """What the driver holds of one splitter while its units run."""

    configs: list
    chunks: list | None = None
    chunks_ref: object = None
    dead: bool = False  # its chunks could not be made: its other units do nothing
    failed_embeddings: set = field(default_factory=set)
    graph_files: dict = field(default_factory=dict)


def task_cause(exc: BaseException) -> BaseException:
    return getattr(exc, "cause", None) or exc


def questions_per_task(spec, n_questions: int, n_groups: int, cpus: int) -> int:
    """About four answering tasks per CPU over the whole sweep, at least five questions each."""
    if spec.ray.questions_per_task:
        return spec.ray.questions_per_task
    return max(5, math.ceil(n_questions * n_groups / (4 * cpus)))


class Dispatch:
    """The driver's side of one Ray answering stage: the plan's units as tasks, each started once its ``needs``
    are finished (``plan.Schedule``), each result handled as it arrives.

    Every handler records failures with the local executor's reasons and stores what the task computed; a unit
    finishes when its last task returns (an answer unit is split into slices of the questions)."""

    def __init__(self, plan: SweepPlan, ctx, sink, bar, gen_items: list[Retrieved], cluster) -> None:
        import ray

        from ragsweep.executors import ray_tasks as tasks

        self.plan, self.ctx, self.pending, self.journal = plan, ctx, plan.pending, sink
        self.work = {key: Group(g.configs) for key, g in plan.groups.items()}
        self.spec, self.dataset, self.stats, self.bars, self.answer_bar = (
            ctx.spec,
            ctx.dataset,
            ctx.stats,
            ctx.bars,
            bar,
        )
        self.emb_cache = ctx.models.cache
        self.gen_items, self.cluster = gen_items, cluster
        # tasks that may run the embedding model get a GPU when the cluster has them (Ray hides GPUs from
        # tasks that do not ask); answering tasks only read question vectors the driver sends
        gpu = 1 if cluster.gpus else 0
        self.remote = {
            fn.__name__: ray.remote(num_cpus=1, num_gpus=gpu if fn is not tasks.answer_task else 0, max_retries=1)(fn)
            for fn in (tasks.chunk_task, tasks.index_task, tasks.query_task, tasks.graph_task, tasks.answer_task)
        }
        self.spec_ref, self.dataset_ref = ray.put(self.spec), ray.put(self.dataset)
        self.root = ctx.cache.root.resolve()
        self.per_task = questions_per_task(
            self.spec, len({q.qid for q in plan.questions_of(plan.configs)}), len(self.work), cluster.cpus
        )
        self.models = plan.query_embeddings()  # embedding label -> (model, the question texts it embeds)
        self.outstanding: dict = {}  # ObjectRef -> (unit, handler, what the handler needs)
        self.tasks_left: dict = {}  # unit key -> its tasks not returned yet

    # ------------------------------------------------------------------ helpers
    def submit(self, unit: Unit, task: str, args: tuple, handler, what=None) -> None:
        self.outstanding[self.remote[task].remote(*args)] = (unit, handler, what)
        self.tasks_left[unit.key] = self.tasks_left.get(unit.key, 0) + 1

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

        units = self.plan.units(SPLITTER_STAGES)
        for key, g in self.work.items():
            g.chunks = chunk.cached_chunks(self.ctx, g.configs[0])
        # one bar for the units before answering: chunk (unless cached), index, queries and graph tasks
        prep_bar = self.bars.add(
            "ray: chunk, index, graph tasks",
            sum(
                u.stage != "answer" and not (u.stage == "chunk" and self.work[u.chunk_key].chunks is not None)
                for u in units
            ),
        )
        schedule = Schedule(units)
        self.start(schedule)
        while self.outstanding:
            try:
                ready, _ = ray.wait(list(self.outstanding), num_returns=1)
            except Exception as exc:  # noqa: BLE001 - the cluster failed: stop cleanly, keep what is journaled
                raise ClusterLost(
                    f"ray: the cluster at {self.cluster.address} stopped answering "
                    f"({short_reason(exc)}); finished answers are journaled: run the same command "
                    "again to go on"
                ) from None
            unit, handler, what = self.outstanding.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except Exception as exc:  # noqa: BLE001 - a task's failure loses only its own work
                result = task_cause(exc)
            handler(unit, result, what)
            if unit.stage != "answer":
                self.bars.advance(prep_bar, 1)
            self.tasks_left[unit.key] -= 1
            if not self.tasks_left[unit.key]:
                schedule.finish(unit)
                self.start(schedule)
        self.bars.complete(prep_bar)

    def start(self, schedule: Schedule) -> None:
        """Start every unit whose needs are finished; one that needs no task (cached chunks, a failed splitter)
        finishes at once and may make others ready."""
        ready = schedule.ready()
        while ready:
            for unit in ready:
                getattr(self, f"start_{unit.stage}")(unit)
                if not self.tasks_left.get(unit.key):
                    schedule.finish(unit)
            ready = schedule.ready()

    def _configs(self, unit: Unit) -> list:
        """A unit's splitter's configurations still to answer (none when its chunks failed)."""
        g = self.work[unit.chunk_key]
        if g.dead:
            return []
        return [c for c in g.configs if c.embedding is None or c.embedding.label() not in g.failed_embeddings]

    # ------------------------------------------------------------------ chunk
    def start_chunk(self, unit: Unit) -> None:
        g = self.work[unit.chunk_key]
        if g.chunks is None:
            self.submit(unit, "chunk_task", (self.spec_ref, self.dataset_ref, g.configs[0], self.root), self.chunked)
        else:
            self.chunked(unit, None)

    def chunked(self, unit: Unit, result, _what=None) -> None:
        """Chunks exist (cached, or computed by a task): kept for later runs, sent to the cluster once."""
        import ray

        g = self.work[unit.chunk_key]
        if isinstance(result, BaseException):  # (a failed model's configurations are recorded already)
            self.fail(self._configs(unit), self.pending, f"chunking failed: {short_reason(result)}")
            g.dead = True  # nothing more to do for this splitter
            return
        if result is not None:  # computed by a task: keep it for later runs
            self.store(result)
            chunk.store_chunks(self.ctx, g.configs[0], result.chunks)
            g.chunks = result.chunks
        assert g.chunks is not None
        chunk.count(self.ctx, g.configs[0], g.chunks)
        g.chunks_ref = ray.put(g.chunks)

    # ------------------------------------------------------------------ index and queries
    def start_index(self, unit: Unit) -> None:
        g = self.work[unit.chunk_key]
        configs = with_embedding(self._configs(unit), unit.label)
        if configs:
            vecs = self.vectors_for(configs[0].embedding, ([c.index_text for c in g.chunks or []], "text"))
            self.submit(
                unit,
                "index_task",
                (self.spec_ref, self.dataset_ref, configs[0], g.chunks_ref, vecs, self.root),
                self.indexed,
            )

    def indexed(self, unit: Unit, result, _what=None) -> None:
        if isinstance(result, BaseException):
            self.fail_embedding(self.work[unit.chunk_key], unit.label, result)
        else:
            self.store(result)

    def fail_embedding(self, g: Group, label: str, exc: BaseException) -> None:
        if g.dead or label in g.failed_embeddings:  # already recorded (chunking or the other task failed)
            return
        cfgs = with_embedding(g.configs, label)
        self.fail(cfgs, self.pending, f"indexing failed: {short_reason(exc)}")
        g.failed_embeddings.add(label)

    def start_queries(self, unit: Unit) -> None:
        emb, texts = self.models[unit.label]
        self.submit(
            unit,
            "query_task",
            (self.spec_ref, self.dataset_ref, emb, texts, self.vectors_for(emb, (texts, "query")), self.root),
            self.queried,
        )

    def queried(self, unit: Unit, result, _what=None) -> None:
        if isinstance(result, BaseException):
            for g in self.work.values():
                self.fail_embedding(g, unit.label, result)
        else:
            self.store(result)

    # ------------------------------------------------------------------ graph
    def start_graph(self, unit: Unit) -> None:
        g = self.work[unit.chunk_key]
        graph_cfgs = [c for c in self._configs(unit) if c.retriever.uses_graph]
        if not graph_cfgs:
            return
        for gkey in graph.graph_file_keys(self.ctx, graph_cfgs, g.chunks):  # cached graphs: the task serves them
            path = self.ctx.cache.graph(gkey)
            if path.is_file():
                g.graph_files[gkey] = path.read_text(encoding="utf-8")
        self.submit(
            unit, "graph_task", (self.spec_ref, self.dataset_ref, graph_cfgs, g.chunks_ref, g.graph_files), self.graphed
        )

    def graphed(self, unit: Unit, result, _what=None) -> None:
        g = self.work[unit.chunk_key]
        if isinstance(result, BaseException):  # a dead task: the answering tasks retry the graphs
            return
        self.store(result)
        for failed_spec, reason in result.graph_failures.items():  # recorded once, as a local run does
            cfgs = [
                c
                for c in g.configs
                if c.retriever.model_dump_json() == failed_spec
                and (c.embedding is None or c.embedding.label() not in g.failed_embeddings)
            ]
            self.fail(cfgs, self.pending, reason)
            g.configs = [c for c in g.configs if c not in cfgs]
        for gkey, text in result.graph_files.items():
            path = self.ctx.cache.graph(gkey)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
            g.graph_files[gkey] = text

    # ------------------------------------------------------------------ answer
    def start_answer(self, unit: Unit) -> None:
        """Answer tasks over slices of the unit's questions, each running all the unit's configurations (so
        that every index is searched once per question)."""
        import ray

        from ragsweep.executors.ray_tasks import AnswerSlice
        from ragsweep.history.base import query_texts

        g = self.work[unit.chunk_key]
        mine = {c.config_hash for c in self.plan.groups[unit.chunk_key].answered_by(unit)}
        configs = [c for c in self._configs(unit) if c.config_hash in mine]
        questions = self.plan.questions_of(configs)
        graph_ref = ray.put(g.graph_files) if unit.for_graphs else ray.put({})
        for i in range(0, len(questions), self.per_task):
            qids = {q.qid for q in questions[i : i + self.per_task]}
            part = {c.config_hash: [q for q in self.pending[c.config_hash] if q.qid in qids] for c in configs}
            cfgs = [c for c in configs if part[c.config_hash]]
            texts = sorted({t for c in cfgs for q in part[c.config_hash] for t in query_texts(c.history, q)})
            vecs = {}
            for emb in {c.embedding.label(): c.embedding for c in cfgs if c.embedding is not None}.values():
                vecs.update(self.vectors_for(emb, (texts, "query")))
            self.submit(
                unit,
                "answer_task",
                (self.spec_ref, self.dataset_ref, g.chunks_ref, graph_ref, self.root, AnswerSlice(cfgs, part, vecs)),
                self.answered,
                (cfgs, part),
            )

    def answered(self, _unit: Unit, result, batch) -> None:
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
