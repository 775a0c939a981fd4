"""Where the corpus and the questions come from (``dataset:``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field

from ragsweep.config.base import Strict


class DemoCorpus(Strict):
    """The corpus shipped with ragsweep (original legal/policy-style documents)."""

    format: Literal["demo"]


class FolderCorpus(Strict):
    """A folder of .txt/.md/.html/.pdf/.docx files read with LlamaIndex's SimpleDirectoryReader."""

    format: Literal["folder"]
    path: Path = Field(description="the file or folder, relative to the spec")
    extensions: list[str] = Field(
        [".txt", ".md", ".html", ".htm", ".pdf", ".docx"],
        description="file name endings read; other files are left out",
    )
    recursive: bool = Field(True, description="read sub-folders too")
    on_unreadable: Literal["error", "skip"] = Field(
        "error",
        description="a file that cannot be read (binary, no text encoding fits, a PDF or Word file that does not "
        "parse): stop (error), or leave it out and name it in the dataset notes (skip)",
    )


class JsonlCorpus(Strict):
    """One JSON object per line with an id field and a text field."""

    format: Literal["jsonl"]
    path: Path = Field(description="the file or folder, relative to the spec")
    id_field: str = Field("id", description="the key holding a document's id")
    text_field: str = Field("text", description="the key holding a document's text")


class LegalBenchCorpus(Strict):
    """LegalBench-RAG: ``<root>/corpus/<subset>/*.txt``."""

    format: Literal["legalbench"]
    path: Path = Field(description="the file or folder, relative to the spec")
    subset: str = Field(description="the benchmark's part, e.g. cuad, maud, contractnli, privacy_qa")


class SquadCorpus(Strict):
    """SQuAD-style JSON: every distinct context becomes a document."""

    format: Literal["squad"]
    path: Path = Field(description="the file or folder, relative to the spec")


CorpusSpec = Annotated[
    Union[DemoCorpus, FolderCorpus, JsonlCorpus, LegalBenchCorpus, SquadCorpus], Field(discriminator="format")
]


class DemoQuestions(Strict):
    """The demo's questions; ``conversations`` adds its follow-up questions (type ``conversational``, each with the
    conversation before it)."""

    format: Literal["demo"]
    conversations: bool = Field(
        False, description="also the demo's follow-up questions (type conversational, with their history)"
    )


class TableQuestions(Strict):
    """JSONL or CSV questions; evidence as spans or as text to locate in the corpus."""

    format: Literal["jsonl", "csv"]
    path: Path = Field(description="the file or folder, relative to the spec")


class LabelledRagQuestions(Strict):
    """A LlamaIndex ``LabelledRagDataset`` JSON file; reference contexts are located in the corpus."""

    format: Literal["labelled_rag"]
    path: Path = Field(description="the file or folder, relative to the spec")


class GiskardQuestions(Strict):
    """A Giskard RAGET test set (``QATestset.save``: JSON Lines; or CSV): ``question``, ``reference_answer``,
    ``reference_context`` ("Document n: ..." blocks, located in the corpus), ``conversation_history`` and
    ``metadata.question_type`` as the type."""

    format: Literal["giskard"]
    path: Path = Field(description="the file or folder, relative to the spec")


class LegalBenchQuestions(Strict):
    """LegalBench-RAG: ``<root>/benchmarks/<subset>.json``; the gold span text is the reference answer."""

    format: Literal["legalbench"]
    path: Path = Field(description="the file or folder, relative to the spec")
    subset: str = Field(description="the benchmark's part, e.g. cuad, maud, contractnli, privacy_qa")


class SquadQuestions(Strict):
    format: Literal["squad"]
    path: Path = Field(description="the file or folder, relative to the spec")


QuestionsSpec = Annotated[
    Union[DemoQuestions, TableQuestions, LabelledRagQuestions, GiskardQuestions, LegalBenchQuestions, SquadQuestions],
    Field(discriminator="format"),
]


class DatasetSpec(Strict):
    name: str | None = Field(None, description="the dataset's name in reports (default: from its format and path)")
    corpus: CorpusSpec = Field(DemoCorpus(format="demo"), description="the documents (default: the shipped demo)")
    questions: QuestionsSpec = Field(
        DemoQuestions(format="demo"),
        description="the questions, reference answers and gold evidence (default: the shipped demo)",
    )
    unlocated_evidence: Literal["error", "drop_question", "keep_question"] = Field(
        "error",
        description="evidence given as text that cannot be found in the corpus: stop (error), drop the "
        "question, or keep it without that evidence",
    )
    fuzzy_evidence: float | None = Field(
        None,
        gt=0.0,
        le=1.0,
        description="also locate evidence text approximately when its best match is at least this similar "
        "(0-1, normalised Indel similarity; e.g. 0.9); off by default; fuzzy matches are counted separately",
    )
    negatives: Path | None = Field(
        None,
        description="a JSONL file of negative questions (no gold evidence: irrelevant, jailbreak, unsafe) "
        "appended to the dataset's questions, their ids prefixed with 'neg-'",
    )
    duplicate_evidence: Literal["all_copies", "first"] = Field(
        "all_copies",
        description="gold evidence whose text also occurs elsewhere in the corpus: every copy counts as gold "
        "(all_copies), or only the given or first-found place (first)",
    )
