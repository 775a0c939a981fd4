"""The sweep spec: one pydantic schema that every stage reads.

Unknown keys are refused (``extra="forbid"``) so a typo fails at start-up, not after an hour of
embedding. ``load_spec`` turns pydantic's errors into one line naming the file and field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from ragsweep.errors import RagsweepError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- dataset
class DemoCorpus(_Strict):
    """The corpus shipped with ragsweep (original legal/policy-style documents)."""

    format: Literal["demo"]


class FolderCorpus(_Strict):
    """A folder of .txt/.md/.html/.pdf files read with LlamaIndex's SimpleDirectoryReader."""

    format: Literal["folder"]
    path: Path
    extensions: list[str] = [".txt", ".md", ".html", ".htm", ".pdf"]
    recursive: bool = True


class JsonlCorpus(_Strict):
    """One JSON object per line with an id field and a text field."""

    format: Literal["jsonl"]
    path: Path
    id_field: str = "id"
    text_field: str = "text"


class LegalBenchCorpus(_Strict):
    """LegalBench-RAG: ``<root>/corpus/<subset>/*.txt``."""

    format: Literal["legalbench"]
    path: Path
    subset: str


class SquadCorpus(_Strict):
    """SQuAD-style JSON: every distinct context becomes a document."""

    format: Literal["squad"]
    path: Path


CorpusSpec = Annotated[
    Union[DemoCorpus, FolderCorpus, JsonlCorpus, LegalBenchCorpus, SquadCorpus], Field(discriminator="format")
]


class DemoQuestions(_Strict):
    format: Literal["demo"]


class TableQuestions(_Strict):
    """JSONL or CSV questions; evidence as spans or as text to locate in the corpus."""

    format: Literal["jsonl", "csv"]
    path: Path


class LabelledRagQuestions(_Strict):
    """A LlamaIndex ``LabelledRagDataset`` JSON file; reference contexts are located in the corpus."""

    format: Literal["labelled_rag"]
    path: Path


class LegalBenchQuestions(_Strict):
    """LegalBench-RAG: ``<root>/benchmarks/<subset>.json``; the gold span text is the reference answer."""

    format: Literal["legalbench"]
    path: Path
    subset: str


class SquadQuestions(_Strict):
    format: Literal["squad"]
    path: Path


QuestionsSpec = Annotated[
    Union[DemoQuestions, TableQuestions, LabelledRagQuestions, LegalBenchQuestions, SquadQuestions],
    Field(discriminator="format"),
]


class DatasetSpec(_Strict):
    name: str | None = None
    corpus: CorpusSpec = DemoCorpus(format="demo")
    questions: QuestionsSpec = DemoQuestions(format="demo")
    unlocated_evidence: Literal["error", "drop_question", "keep_question"] = Field(
        "error",
        description="evidence given as text that cannot be found in the corpus: stop (error), drop the "
        "question, or keep it without that evidence",
    )


# --------------------------------------------------------------------------- splitters
class _Splitter(_Strict):
    name: str | None = Field(default=None, description="label used in configuration ids")


class TokenSplitterSpec(_Splitter):
    kind: Literal["token"]
    chunk_size: int = Field(256, gt=0, description="tokens (tiktoken cl100k)")
    chunk_overlap: int = Field(32, ge=0)

    def label(self) -> str:
        return self.name or f"token{self.chunk_size}"


class SentenceSplitterSpec(_Splitter):
    kind: Literal["sentence"]
    chunk_size: int = Field(512, gt=0, description="tokens")
    chunk_overlap: int = Field(64, ge=0)

    def label(self) -> str:
        return self.name or f"sentence{self.chunk_size}"


class RecursiveSplitterSpec(_Splitter):
    kind: Literal["recursive"]
    chunk_size: int = Field(1500, gt=0, description="characters")
    chunk_overlap: int = Field(150, ge=0)
    separators: list[str] | None = None

    def label(self) -> str:
        return self.name or f"recursive{self.chunk_size}"


class SemanticSplitterSpec(_Splitter):
    kind: Literal["semantic"]
    breakpoint_threshold_type: Literal["percentile", "standard_deviation", "interquartile", "gradient"] = "percentile"
    breakpoint_threshold_amount: float | None = None
    buffer_size: int = Field(1, ge=0)
    embedding: str | None = Field(
        default=None, description="embedding name to chunk with; default: the configuration's embedding"
    )

    def label(self) -> str:
        return self.name or "semantic"


class PatternSplitterSpec(_Splitter):
    kind: Literal["pattern"]
    pattern: str = Field(r"\n(?=§)", description="regex; a chunk starts at each match")
    max_chunk_chars: int | None = Field(4000, gt=0, description="longer pieces are split again by sentences")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v

    def label(self) -> str:
        return self.name or "pattern"


SplitterSpec = Annotated[
    Union[TokenSplitterSpec, SentenceSplitterSpec, RecursiveSplitterSpec, SemanticSplitterSpec, PatternSplitterSpec],
    Field(discriminator="kind"),
]


# --------------------------------------------------------------------------- embeddings
EMBEDDING_BACKENDS = ("torch", "onnx", "onnx-int8")


class HFEmbeddingSpec(_Strict):
    """A sentence-transformers model: ``minilm`` (bundled, offline), a hub id, or a local path."""

    kind: Literal["sentence_transformers"] = "sentence_transformers"
    name: str | None = None
    model: str = "minilm"
    backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        "torch", description="torch (PyTorch), onnx (ONNX Runtime, exported once into the cache) or onnx-int8 "
        "(ONNX Runtime, int8 weights: faster, vectors within cosine 0.98)")
    batch_size: int = Field(32, gt=0)
    device: str | None = Field(None, description="cpu, cuda, cuda:1, ...; default: the GPU when torch sees one")
    query_prefix: str = ""
    text_prefix: str = ""

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, v: object) -> object:
        if v not in EMBEDDING_BACKENDS:
            raise ValueError(f"unknown backend {v!r}; use torch (PyTorch), onnx (ONNX Runtime) or onnx-int8 "
                             "(ONNX Runtime with int8 weights)")
        return v

    def label(self) -> str:
        if self.name:
            return self.name
        base = re.sub(r"[^A-Za-z0-9]+", "", self.model.rstrip("/").split("/")[-1]).lower() or "hf"
        return base if self.backend == "torch" else f"{base}-{self.backend}"


def _env_var_name(v: str | None) -> str | None:
    """``api_key_env`` must name a variable; the value is never echoed (it may be a pasted key)."""
    if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
        raise ValueError("must be the NAME of an environment variable (letters, digits, _), not a key; "
                         "export the key and give its variable's name, e.g. OPENAI_API_KEY")
    return v


class OpenAIEmbeddingSpec(_Strict):
    """OpenAI or any OpenAI-compatible embeddings endpoint; the key is read from ``api_key_env``."""

    kind: Literal["openai"]
    name: str | None = None
    model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    dimensions: int | None = None
    batch_size: int = Field(64, gt=0)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)

    _env_name = field_validator("api_key_env")(classmethod(lambda cls, v: _env_var_name(v)))

    def label(self) -> str:
        return self.name or re.sub(r"[^A-Za-z0-9]+", "", self.model).lower()


def _embedding_kind(v: object) -> str | None:
    """``kind`` may be left out of an embedding entry: it then means sentence_transformers."""
    if isinstance(v, dict):
        return v.get("kind", "sentence_transformers")
    return getattr(v, "kind", None)


EmbeddingSpec = Annotated[
    Union[Annotated[HFEmbeddingSpec, Tag("sentence_transformers")], Annotated[OpenAIEmbeddingSpec, Tag("openai")]],
    Discriminator(_embedding_kind),
]


# --------------------------------------------------------------------------- retrievers
class BM25Spec(_Strict):
    kind: Literal["bm25"]
    name: str | None = None

    def label(self) -> str:
        return self.name or "bm25"

    @property
    def needs_embedding(self) -> bool:
        return False


class VectorSpec(_Strict):
    kind: Literal["vector"]
    name: str | None = None

    def label(self) -> str:
        return self.name or "vector"

    @property
    def needs_embedding(self) -> bool:
        return True


def _check_weights(v: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if v is not None and (min(v) < 0 or sum(v) <= 0):
        raise ValueError("weights must be non-negative with a positive sum, e.g. [0.5, 0.5]")
    return v


_FUSION_LABELS = {"reciprocal_rerank": "fusion", "relative_score": "fusion-rel", "dist_based_score": "fusion-dist"}


class FusionSpec(_Strict):
    """QueryFusionRetriever over vector + BM25; one query by default, ``num_queries > 1`` adds
    LLM-written rewrites of the question (needs the spec's ``llm``)."""

    kind: Literal["fusion"]
    name: str | None = None
    mode: Literal["reciprocal_rerank", "relative_score", "dist_based_score"] = "reciprocal_rerank"
    weights: tuple[float, float] | None = Field(default=None, description="[vector, bm25]")
    num_queries: int = Field(1, ge=1, le=10, description="queries per question, the original included")

    _non_negative = field_validator("weights")(classmethod(lambda cls, v: _check_weights(v)))

    def label(self) -> str:
        if self.name:
            return self.name
        base = _FUSION_LABELS[self.mode]
        if self.weights is not None:
            base += "-w" + "-".join(f"{w:g}" for w in self.weights)
        if self.num_queries > 1:
            base += f"-q{self.num_queries}"
        return base

    @property
    def needs_embedding(self) -> bool:
        return True


_EXTRACTOR_LABELS = {"legal_patterns": "", "llm_simple": "-llm", "llm_dynamic": "-llmdyn"}


class _GraphParams(_Strict):
    """A property graph per splitter (cached per corpus, splitter and extractor) and HyPA-RAG's
    retrieval parameters (Kalra et al. 2024, arXiv:2409.09046): keywords per query, path depth and
    knowledge sequence length."""

    name: str | None = None
    store: Literal["simple", "neo4j"] = Field(
        "simple", description="simple: LlamaIndex SimplePropertyGraphStore in the cache; neo4j: the spec's neo4j server")
    extractor: Literal["legal_patterns", "llm_simple", "llm_dynamic"] = Field(
        "legal_patterns", description="legal_patterns: offline heuristic baseline; llm_simple/llm_dynamic: "
        "LlamaIndex's Simple/DynamicLLMPathExtractor with the spec's llm")
    max_triplets_per_chunk: int = Field(20, gt=0, le=200, description="extraction limit per chunk")
    max_keywords: int = Field(10, gt=0, le=100, description="query entities used as graph entry points")
    path_depth: int = Field(1, gt=0, le=4, description="hops followed from a query entity")
    max_triplets: int = Field(30, gt=0, le=1000, description="knowledge sequence length: triplets kept per query")

    def _graph_suffix(self) -> str:
        return ((f"-neo4j" if self.store == "neo4j" else "") + _EXTRACTOR_LABELS[self.extractor]
                + (f"-d{self.path_depth}" if self.path_depth != 1 else ""))

    @property
    def uses_llm(self) -> bool:
        """An LLM path extractor builds this graph."""
        return self.extractor != "legal_patterns"

    def graph_identity(self) -> dict:
        """What determines the extracted graph (not the store it is served from, nor retrieval)."""
        return {"extractor": self.extractor, "max_triplets_per_chunk": self.max_triplets_per_chunk}


class KnowledgeGraphSpec(_GraphParams):
    """Knowledge-graph retrieval: query entities -> paths -> the chunks the triplets came from."""

    kind: Literal["knowledge_graph"]

    def label(self) -> str:
        return self.name or "kg" + self._graph_suffix()

    @property
    def needs_embedding(self) -> bool:
        return False


class HybridKGSpec(_GraphParams):
    """HyPA-RAG's hybrid: vector + BM25 + knowledge graph fused by reciprocal rank."""

    kind: Literal["hybrid_kg"]
    weights: tuple[float, float, float] | None = Field(default=None, description="[vector, bm25, graph]")

    _non_negative = field_validator("weights")(classmethod(lambda cls, v: _check_weights(v)))

    def label(self) -> str:
        if self.name:
            return self.name
        base = "hybrid-kg" + self._graph_suffix()
        if self.weights is not None:
            base += "-w" + "-".join(f"{w:g}" for w in self.weights)
        return base

    @property
    def needs_embedding(self) -> bool:
        return True


GraphRetrieverSpec = Union[KnowledgeGraphSpec, HybridKGSpec]

RetrieverSpec = Annotated[Union[BM25Spec, VectorSpec, FusionSpec, KnowledgeGraphSpec, HybridKGSpec],
                          Field(discriminator="kind")]


# --------------------------------------------------------------------------- the rest
class VectorStoreSpec(_Strict):
    """Chroma, embedded in ``path`` (default: inside the cache) or a server at ``url``."""

    kind: Literal["chroma"] = "chroma"
    path: Path | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _one_location(self) -> "VectorStoreSpec":
        if self.path is not None and self.url is not None:
            raise ValueError("give either path (embedded Chroma) or url (Chroma server), not both")
        if self.url is not None and not re.match(r"^https?://[^/:]+(:\d+)?/?$", self.url):
            raise ValueError(f"url {self.url!r} is not of the form http://host:port")
        return self


class Neo4jSpec(_Strict):
    """A Neo4j 5.x server with the APOC core plugin, by Bolt URL; credentials are read from the
    environment variables named here (``scripts/neo4j.sh`` runs one on loopback)."""

    url: str = "bolt://127.0.0.1:7687"
    username_env: str = "NEO4J_USER"
    password_env: str = "NEO4J_PASSWORD"
    database: str = "neo4j"
    timeout: float = Field(30.0, gt=0, description="seconds per query")

    _env_names = field_validator("username_env", "password_env")(classmethod(lambda cls, v: _env_var_name(v)))

    @field_validator("url")
    @classmethod
    def _bolt(cls, v: str) -> str:
        if not re.match(r"^(bolt|neo4j)(\+s|\+ssc)?://[^/:]+(:\d+)?/?$", v):
            raise ValueError(f"url {v!r} is not of the form bolt://host:port (or neo4j://, bolt+s://)")
        return v


class RaySpec(_Strict):
    """Where and how a sweep runs with ``executor: ray``."""

    address: str | None = Field(None, description="a running cluster ('auto', 'host:port', 'ray://host:port'); "
                                                    "default: start Ray on this machine for the run")
    questions_per_task: int | None = Field(None, gt=0, description="questions per answering task; default: about "
                                                                   "four tasks per CPU of the cluster")
    num_cpus: int | None = Field(None, gt=0, description="CPUs of a Ray started for the run (default: all)")


class ExtractiveGeneratorSpec(_Strict):
    """Offline baseline: answers with the retrieved sentences that best match the question."""

    kind: Literal["extractive"] = "extractive"
    max_sentences: int = Field(2, gt=0)

    def label(self) -> str:
        return "extractive-baseline"


class LLMGeneratorSpec(_Strict):
    """Answers written by the spec's ``llm`` from the retrieved chunks (a LlamaIndex response synthesizer)."""

    kind: Literal["llm"]
    response_mode: Literal["compact", "refine", "simple_summarize", "tree_summarize"] = "compact"
    prompt_file: Path | None = Field(
        None, description="text-QA prompt template file with {context_str} and {query_str}")

    def label(self) -> str:
        return "llm"


GeneratorSpec = Annotated[
    Union[Annotated[ExtractiveGeneratorSpec, Tag("extractive")], Annotated[LLMGeneratorSpec, Tag("llm")]],
    Discriminator(lambda v: v.get("kind", "extractive") if isinstance(v, dict) else getattr(v, "kind", None)),
]


# --------------------------------------------------------------------------- LLM, stage 2
class LLMSpec(_Strict):
    """OpenAI or any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, LM Studio).

    Only the *name* of the environment variable holding the key is stored; ``api_key_env: null``
    for a local server that needs none.
    """

    model: str
    base_url: str | None = Field(None, description="default: https://api.openai.com/v1")
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0, le=2)
    seed: int | None = Field(0, description="sent to the endpoint for reproducibility; null: not sent")
    max_tokens: int = Field(512, gt=0)
    timeout: float = Field(60.0, gt=0, description="seconds per request")
    context_window: int = Field(8192, gt=0)
    concurrency: int = Field(8, gt=0, description="requests in flight at once")
    requests_per_minute: float | None = Field(None, gt=0)
    tokens_per_minute: float | None = Field(None, gt=0)
    max_retries: int = Field(6, ge=0, description="retries on 429, 5xx, timeouts and dropped connections")
    max_backoff: float = Field(60.0, gt=0, description="seconds; the longest wait between retries")

    _env_name = field_validator("api_key_env")(classmethod(lambda cls, v: _env_var_name(v)))

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://", v):
            raise ValueError(f"base_url {v!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
        return v

    def label(self) -> str:
        return self.model


class PriceSpec(_Strict):
    """US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(0.0, ge=0)


class SplitSpec(_Strict):
    """Deterministic validation/test split: stage 1 selects on validation, final figures use test."""

    validation_fraction: float = Field(0.5, gt=0, lt=1)
    stratify: bool = Field(True, description="by question type, when the dataset has types")


JudgeName = Literal["correctness", "faithfulness", "relevancy"]


class JudgePrompts(_Strict):
    """Template files replacing LlamaIndex's default judge prompts (same placeholders)."""

    correctness: Path | None = Field(None, description="placeholders {query} {reference_answer} {generated_answer}")
    faithfulness: Path | None = Field(None, description="placeholders {query_str} {context_str}")
    faithfulness_refine: Path | None = None
    relevancy: Path | None = Field(None, description="placeholders {query_str} {context_str}")
    relevancy_refine: Path | None = None


class Stage2Spec(_Strict):
    """LLM judges on the configurations stage 1 selects, on the test questions."""

    judges: list[JudgeName] = Field(["correctness", "faithfulness", "relevancy"], min_length=1)
    llm: LLMSpec | None = Field(None, description="judge model; default: the spec's llm")
    select_metric: str = "bertscore_f1_rescaled"
    top_n: int = Field(3, gt=0)
    max_configs: int = Field(10, gt=0)
    alpha: float = Field(0.05, gt=0, lt=1)
    correctness_threshold: float = Field(4.0, ge=1, le=5, description="passing score (1-5 scale)")
    prompts: JudgePrompts = JudgePrompts()

    @field_validator("judges")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("judges must be distinct")
        return v


class BERTScoreSpec(_Strict):
    model: str = Field("minilm", description="'minilm' (bundled), an HF model id or a local path")
    num_layers: int | None = Field(None, gt=0, description="default: bert-score's tuned layer, or 6 for minilm")
    batch_size: int = Field(64, gt=0)
    baseline: Literal["auto", "none"] = "auto"
    baseline_pairs: int = Field(500, gt=0, description="random sentence pairs for a corpus baseline")
    idf: Literal[False] = False
    device: str | None = Field(None, description="cpu, cuda, ...; default: the GPU when torch sees one")


class ScoringSpec(_Strict):
    bertscore: BERTScoreSpec = BERTScoreSpec()
    bootstrap_samples: int = Field(1000, ge=100)
    confidence: float = Field(0.95, gt=0, lt=1)


class SweepSpec(_Strict):
    name: str = "sweep"
    seed: int = 0
    dataset: DatasetSpec = DatasetSpec()
    splitters: list[SplitterSpec] = Field(min_length=1)
    embeddings: list[EmbeddingSpec] = [HFEmbeddingSpec()]
    retrievers: list[RetrieverSpec] = Field(min_length=1)
    top_k: list[int] = Field([5], min_length=1)
    vector_store: VectorStoreSpec = VectorStoreSpec()
    executor: Literal["local", "ray"] = "local"
    ray: RaySpec = RaySpec()
    neo4j: Neo4jSpec | None = Field(None, description="the Neo4j server for retrievers with store: neo4j")
    generator: GeneratorSpec = ExtractiveGeneratorSpec()
    llm: LLMSpec | None = Field(None, description="the LLM for generation, query rewrites and (default) judges")
    prices: dict[str, PriceSpec] = Field(default_factory=dict, description="USD per million tokens, by model")
    split: SplitSpec = SplitSpec()
    stage2: Stage2Spec | None = None
    scoring: ScoringSpec = ScoringSpec()
    cache_dir: Path | None = Field(default=None, description="default: .ragsweep/cache")
    output_dir: Path = Path("runs")

    @field_validator("top_k")
    @classmethod
    def _positive_unique(cls, v: list[int]) -> list[int]:
        if any(k <= 0 for k in v):
            raise ValueError("every top_k must be a positive integer")
        if len(set(v)) != len(v):
            raise ValueError("top_k values must be distinct")
        return sorted(v)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v):
            raise ValueError("name must be letters, digits, '.', '_' or '-' (it names the run directory)")
        return v

    @property
    def uses_neo4j(self) -> bool:
        return any(getattr(r, "store", None) == "neo4j" for r in self.retrievers)

    @model_validator(mode="after")
    def _unique_labels(self) -> "SweepSpec":
        for field_name, items in (("splitters", self.splitters), ("embeddings", self.embeddings),
                                  ("retrievers", self.retrievers)):
            labels = [i.label() for i in items]
            dupes = sorted({x for x in labels if labels.count(x) > 1})
            if dupes:
                raise ValueError(
                    f"{field_name}: two entries share the label {dupes[0]!r}; give one of them a distinct 'name'"
                )
            if any(not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", x) for x in labels):
                raise ValueError(f"{field_name}: names must be letters, digits, '.', '_' or '-'")
        emb_labels = {e.label() for e in self.embeddings}
        for s in self.splitters:
            if isinstance(s, SemanticSplitterSpec) and s.embedding is not None and s.embedding not in emb_labels:
                raise ValueError(
                    f"splitters: semantic splitter names embedding {s.embedding!r}, which is not among "
                    f"embeddings {sorted(emb_labels)}"
                )
        needs_emb = any(r.needs_embedding for r in self.retrievers) or any(
            isinstance(s, SemanticSplitterSpec) for s in self.splitters
        )
        if needs_emb and not self.embeddings:
            raise ValueError("embeddings: a vector, fusion or hybrid_kg retriever or a semantic splitter needs at "
                             "least one embedding")
        graph_specs = [r for r in self.retrievers if isinstance(r, _GraphParams)]
        if self.uses_neo4j and self.neo4j is None:
            raise ValueError("retrievers: store neo4j needs a 'neo4j' section (url, username_env, password_env); "
                             "scripts/neo4j.sh start runs one on loopback")
        if self.llm is None:
            if any(r.uses_llm for r in graph_specs):
                raise ValueError("retrievers: an LLM path extractor needs an 'llm' section; "
                                 "or use extractor: legal_patterns (offline)")
            if self.generator.kind == "llm":
                raise ValueError("generator: kind llm needs an 'llm' section (model, base_url, api_key_env)")
            if any(getattr(r, "num_queries", 1) > 1 for r in self.retrievers):
                raise ValueError("retrievers: fusion with num_queries > 1 writes query rewrites with an LLM; "
                                 "add an 'llm' section or set num_queries: 1")
            if self.stage2 is not None and self.stage2.llm is None:
                raise ValueError("stage2: the judges need an LLM; add an 'llm' section or stage2.llm")
        return self


# --------------------------------------------------------------------------- loading
def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _clean_loc(loc: tuple) -> tuple:
    """Drop the union tags pydantic inserts after a discriminated field (``splitters.0.pattern.x``)."""
    out: list = []
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i else None
        if isinstance(part, str) and part in _TAGS and (isinstance(prev, int) or prev in ("corpus", "questions",
                                                                                             "generator")):
            continue
        out.append(part)
    return tuple(out)


def _model_at(loc: tuple):
    """The pydantic model class at a (raw) error location, for listing its keys; None if unknown."""
    import typing

    current: object = SweepSpec
    for part in loc:
        origin = typing.get_origin(current)
        if origin is Annotated:
            current = typing.get_args(current)[0]
            origin = typing.get_origin(current)
        if isinstance(part, int):
            if origin is list:
                current = typing.get_args(current)[0]
                continue
            return None
        if origin is Union:
            members = [typing.get_args(m)[0] if typing.get_origin(m) is Annotated else m
                       for m in typing.get_args(current)]
            match = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)
                     and part in _literal_values(m)]
            if not match:
                return None
            current = match[0]
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            if field is None:
                return None
            current = field.annotation
            if typing.get_origin(current) is Union and type(None) in typing.get_args(current):
                current = next(a for a in typing.get_args(current) if a is not type(None))
            continue
        return None
    if typing.get_origin(current) is Annotated:
        current = typing.get_args(current)[0]
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _literal_values(model: type[BaseModel]) -> set:
    import typing

    out: set = set()
    for name in ("kind", "format"):
        f = model.model_fields.get(name)
        if f is not None and typing.get_origin(f.annotation) is Literal:
            out.update(typing.get_args(f.annotation))
    return out


def _first_error(exc) -> str:
    """One line from a pydantic ValidationError: the first error, its field path and the hint."""
    err = exc.errors()[0]
    raw = tuple(p for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper()))
    field = _loc(_clean_loc(raw)) or "(top level)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        model = _model_at(raw[:-1])
        keys = sorted(model.model_fields) if model is not None else None
        msg = "unknown key" + (f"; allowed keys here: {', '.join(keys)}" if keys else "; check the spelling")
    elif err["type"] == "union_tag_invalid":
        ctx = err.get("ctx", {})
        msg = f"unknown {ctx.get('discriminator', 'kind').strip(chr(39))} {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    elif err["type"] == "union_tag_not_found":
        msg = f"missing {err.get('ctx', {}).get('discriminator', 'kind')}"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    more = len(exc.errors()) - 1
    return f"{field}: {msg}" + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


_TAGS = {"demo", "folder", "jsonl", "csv", "legalbench", "squad", "labelled_rag", "token", "sentence", "recursive",
         "semantic", "pattern", "sentence_transformers", "openai", "bm25", "vector", "fusion", "knowledge_graph", "hybrid_kg", "extractive",
         "llm"}


def parse_spec(data: object, source: str = "<spec>", base_dir: Path | None = None) -> SweepSpec:
    """Validate a spec mapping; raise RagsweepError with one line naming ``source`` and the field."""
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise RagsweepError(f"{source}: the spec must be a YAML mapping (key: value), got {type(data).__name__}")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise RagsweepError(f"{source}: {_first_error(exc)}") from None
    if base_dir is not None:
        spec = _resolve_paths(spec, base_dir)
    _check_files(spec, source)
    return spec


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a YAML sweep spec. Relative paths inside it are relative to the spec file."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise RagsweepError(f"{p}: spec file not found")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RagsweepError(f"{p}: not UTF-8 text; save the spec as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RagsweepError(f"{p}: malformed YAML{where}: {problem}") from None
    return parse_spec(data, str(p), base_dir=p.resolve().parent)


def _resolve_paths(spec: SweepSpec, base: Path) -> SweepSpec:
    def fix(model: BaseModel, names: tuple[str, ...] = ("path",)) -> BaseModel:
        updates = {}
        for name in names:
            v = getattr(model, name, None)
            if isinstance(v, Path) and not v.is_absolute():
                updates[name] = (base / v).resolve()
        return model.model_copy(update=updates) if updates else model

    ds = spec.dataset.model_copy(update={"corpus": fix(spec.dataset.corpus), "questions": fix(spec.dataset.questions)})
    updates: dict = {"dataset": ds, "vector_store": fix(spec.vector_store),
                     "generator": fix(spec.generator, ("prompt_file",))}
    if spec.stage2 is not None:
        prompts = fix(spec.stage2.prompts, tuple(JudgePrompts.model_fields))
        updates["stage2"] = spec.stage2.model_copy(update={"prompts": prompts})
    return spec.model_copy(update=updates)


def _prompt_files(spec: SweepSpec) -> list[tuple[str, Path]]:
    out = []
    if getattr(spec.generator, "prompt_file", None) is not None:
        out.append(("generator.prompt_file", spec.generator.prompt_file))
    if spec.stage2 is not None:
        for name in JudgePrompts.model_fields:
            v = getattr(spec.stage2.prompts, name)
            if v is not None:
                out.append((f"stage2.prompts.{name}", v))
    return out


def _check_files(spec: SweepSpec, source: str) -> None:
    for part, model in (("dataset.corpus", spec.dataset.corpus), ("dataset.questions", spec.dataset.questions)):
        path = getattr(model, "path", None)
        if path is not None and not Path(path).exists():
            raise RagsweepError(f"{source}: {part}.path: {path} does not exist; fix the path (relative to the spec file)")
    for part, path in _prompt_files(spec):
        if not Path(path).is_file():
            raise RagsweepError(f"{source}: {part}: {path} does not exist; fix the path (relative to the spec file)")
