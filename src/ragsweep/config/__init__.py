"""The sweep spec: one pydantic schema that every stage reads, one module per section.

Unknown keys are refused (``extra="forbid"``) so a typo fails at start-up, not after an hour of
embedding. ``load_spec`` turns pydantic's errors into one line naming the file and field.
"""

from __future__ import annotations

from ragsweep.config.adaptive import AdaptiveClassSpec, AdaptiveSpec, ClassifierSpec  # noqa: F401
from ragsweep.config.base import Strict, check_weights, env_var_name  # noqa: F401
from ragsweep.config.chunk_context import LLMChunkContextSpec, context_llm, uses_llm  # noqa: F401
from ragsweep.config.dataset import (  # noqa: F401
    CorpusSpec,
    DatasetSpec,
    DemoCorpus,
    DemoQuestions,
    FolderCorpus,
    GiskardQuestions,
    JsonlCorpus,
    LabelledRagQuestions,
    LegalBenchCorpus,
    LegalBenchQuestions,
    QuestionsSpec,
    SquadCorpus,
    SquadQuestions,
    TableQuestions,
)
from ragsweep.config.embeddings import EMBEDDING_BACKENDS, EmbeddingSpec, HFEmbeddingSpec, OpenAIEmbeddingSpec  # noqa: F401
from ragsweep.config.evaluation import BERTScoreSpec, JudgeName, JudgePrompts, ScoringSpec, SplitSpec, Stage2Spec  # noqa: F401
from ragsweep.config.generate import DEFAULT_MIX, OFFLINE_TYPES, QUESTION_TYPES, GenerateSpec  # noqa: F401
from ragsweep.config.history import (  # noqa: F401
    ActiveHistory,
    ConcatHistorySpec,
    CondenseHistorySpec,
    CondensePlusContextSpec,
    HistorySpec,
    NoHistorySpec,
)
from ragsweep.config.llm import ExtractiveGeneratorSpec, GeneratorSpec, LLMGeneratorSpec, LLMSpec, PriceSpec  # noqa: F401
from ragsweep.config.llm_transforms import DecomposeSpec, HyDESpec, MultiQuerySpec  # noqa: F401
from ragsweep.config.loading import load_spec, parse_spec  # noqa: F401
from ragsweep.config.postprocessors import (  # noqa: F401
    ActivePostprocessor,
    AutoMergingSpec,
    LongContextReorderSpec,
    NoPostprocessSpec,
    PostprocessorSpec,
    SentenceWindowPostSpec,
    SimilarityCutoffSpec,
)
from ragsweep.config.query_transforms import ActiveTransform, NoTransformSpec, QueryTransformSpec, RM3Spec  # noqa: F401
from ragsweep.config.rerankers import (  # noqa: F401
    ActiveReranker,
    CrossEncoderSpec,
    LateInteractionSpec,
    LLMRerankSpec,
    NoRerankSpec,
    RerankerSpec,
)
from ragsweep.config.retrievers import (  # noqa: F401
    MEMORY_PARTS,
    BM25Spec,
    FusionSpec,
    GraphParams,
    GraphRetrieverSpec,
    HybridKGSpec,
    KnowledgeGraphSpec,
    RetrieverSpec,
    VectorSpec,
)
from ragsweep.config.services import Neo4jSpec, RaySpec, TrackingSpec, VectorStoreSpec  # noqa: F401
from ragsweep.config.splitters import (  # noqa: F401
    HierarchicalSplitterSpec,
    PatternSplitterSpec,
    RecursiveSplitterSpec,
    SemanticSplitterSpec,
    SentenceSplitterSpec,
    SentenceWindowSplitterSpec,
    SplitterSpec,
    TokenSplitterSpec,
)
from ragsweep.config.sweep import SweepSpec  # noqa: F401
from ragsweep.config.tracing import TracingSpec  # noqa: F401
