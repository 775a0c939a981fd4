"""What a run directory's ``manifest.json`` holds, declared once: the manifest, each invocation's entry, stage 2's
and a search's records. Written (``pipelines.outputs.manifest``, ``stages.judge``, ``search.summary``) and read
(``results``, ``cli``, ``export``) through these types, so a key is spelled in one place and a type checker
finds a misspelled one. They are JSON objects (``TypedDict``): ``manifest.json`` is read back as it is written.

``Manifest.format_version`` (``FORMAT_VERSION``) versions all of them; a change to what a key means is a new
version. Every invocation's entry is kept (``invocations``), so what a resumed run computed in an earlier
invocation is still there.
"""

from __future__ import annotations

from typing import Any, TypedDict

# 3: questions.parquet, status 'running' at start-up, configuration labels; 4: answer metrics, verdict.json
FORMAT_VERSION = 4

JSON = Any  # a JSON value whose shape its writer documents (a spec dump, a ranking row, a trial's values)


class Invocation(TypedDict, total=False):
    """What one ``ragsweep run`` invocation did and how long each stage took."""

    finished_at: str
    argv: list[str]
    timings_s: dict[str, float]
    answered: int
    failed: int
    failed_for_good: int
    skipped_already_done: int
    documents_split: int
    embeddings_computed: int
    query_embeddings_computed: int
    embeddings_from_cache: int
    indexes_built: int
    indexes_reused: int
    bertscore_pairs_computed: int
    bertscore_pairs_unique: int
    chunks: dict[str, int]  # splitter label -> its chunks (``config_costs.chunks_by_config``)
    unique_chunk_texts: dict[str, int]
    graphs: dict[str, dict[str, JSON]]
    unit_seconds: dict[str, float]
    chunk_contexts: dict[str, JSON]
    executor: dict[str, JSON]
    invocation: int
    judgements_made: int
    judgements_failed: int
    stopped: str | None
    # the LLM clients' counters (``llm.clients.LLMClients.counters``), when the run calls an LLM
    llm_calls_made: int
    llm_cache_hits: int
    llm_retries: int
    llm_failed_calls: int
    llm_max_in_flight: int
    llm_timeouts: int
    llm_truncated: int
    llm_endpoints: list[dict[str, JSON]]
    budget_usd: float | None
    spent_usd: float | None


class Stage2Record(TypedDict, total=False):
    """Stage 2: what was selected on the validation questions, how, and what is judged; ``skipped`` says why it
    did not run (``running`` at start-up, ``stage 1 did not finish``), ``error`` why the selection failed."""

    judge_keys: dict[str, str]  # judge name -> the key its judgements are journaled under
    selected: list[str]
    skipped: str
    error: str
    metric: str
    rule: str
    ranking: list[dict[str, JSON]]
    judges: list[str]
    references: list[str]
    questions: dict[str, int]  # split -> judged questions
    repeats: int
    judgements_todo: int
    self_agreement: dict[str, JSON]


class SearchTrial(TypedDict, total=False):
    number: int
    config_id: str | None
    state: str
    values: dict[str, float]
    seconds: float
    usd: float
    questions: int
    predicted_seconds: float
    adds: dict[str, JSON]  # the shared units it added (a cost-aware search's features)
    dropped: JSON
    repeat_of: int
    reason: str


class SearchRecord(TypedDict, total=False):
    """A search (``search.summary.search_record``): its settings, the budget it used, every trial, the finalists
    (the configurations answered on the test questions), the Pareto front and best-so-far against compute."""

    strategy: str
    seed: int
    objectives: list[str]
    directions: list[str]
    metric: str
    order: str
    batch: int
    budget: dict[str, JSON]
    trial_limit: int | None
    space: int
    validation_questions: int
    test_questions: int
    stopped: str
    racing: dict[str, JSON] | None
    used: dict[str, JSON]
    not_evaluated: int
    cost_aware: bool
    trials: list[SearchTrial]
    finalists: list[str]
    best_so_far: list[dict[str, JSON]]
    pareto: list[str]


class Outputs(TypedDict):
    """The files the manifest describes: the key they were built under (``outputs.write.outputs_key``)."""

    key: str
    status: str
    records: int | None
    reused: bool


class Manifest(TypedDict, total=False):
    """``manifest.json``: the spec, resolved configurations, versions, dataset, LLMs and usage, every invocation,
    and what the outputs were built from."""

    format_version: int
    ragsweep_version: str
    status: str  # running, complete, incomplete, stopped_budget
    records: int | None
    expected_records: int
    spec: dict[str, JSON]
    seed: int
    question_limit: int | None
    dataset: dict[str, JSON]
    generator: dict[str, JSON]
    llm: dict[str, JSON]
    usage: dict[str, JSON] | None
    bertscore: dict[str, JSON]
    backends: dict[str, JSON]
    configurations: list[dict[str, JSON]]
    versions: dict[str, str]
    platform: dict[str, JSON]
    invocations: list[Invocation]
    written_at: float
    running: dict[str, JSON]  # pid, host, started_at of the invocation that is running (at start-up)
    questions_key: str | None
    outputs: Outputs
    cache_dir: str | None
    bertscore_key: str | None
    split: dict[str, JSON]
    stage2: Stage2Record | None
    search: SearchRecord
    verdict_metric: dict[str, str]
    run_id: str | None
    tuned_weights: dict[str, JSON]
    abstain_thresholds: dict[str, JSON]
    adaptive: dict[str, JSON]
