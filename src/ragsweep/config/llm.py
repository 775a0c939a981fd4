"""Answer generation and the LLM endpoint (``generator:``, ``llm:``, ``prices:``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ragsweep.config.base import Strict, env_var_name


class ExtractiveGeneratorSpec(Strict):
    """Offline baseline: answers with the retrieved sentences that best match the question."""

    kind: Literal["extractive"] = "extractive"
    calls_llm: ClassVar[bool] = False  # what the plan, the stages and the estimate read, never the kind
    max_sentences: int = Field(2, gt=0, description="retrieved sentences the extractive answer keeps")
    abstain_below: float | Literal["tune"] | None = Field(
        None,
        description="abstain (reply the fixed refusal) when the top retrieval score is below this; tune: "
        "chosen per configuration on the validation questions; default: never abstain",
    )

    def label(self) -> str:
        return "extractive-baseline"


class LLMGeneratorSpec(Strict):
    """Answers written by the spec's ``llm`` from the retrieved chunks (a LlamaIndex response synthesizer)."""

    kind: Literal["llm"]
    calls_llm: ClassVar[bool] = True
    response_mode: Literal["compact", "refine", "simple_summarize", "tree_summarize"] = Field(
        "compact", description="LlamaIndex's response synthesizer mode: how the chunks are put into prompts"
    )
    prompt_file: Path | None = Field(
        None, description="text-QA prompt template file with {context_str} and {query_str}"
    )
    prompt_files: list[Path] | None = Field(
        None, min_length=1, description="several prompt template files: one configuration each (an axis)"
    )
    refusal: str | None = Field(
        None,
        min_length=1,
        description="the sentence the default prompt tells the LLM to reply when the context "
        "does not answer; also matched as an abstention",
    )

    @model_validator(mode="after")
    def _one_prompt_key(self) -> "LLMGeneratorSpec":
        if self.prompt_file is not None and self.prompt_files is not None:
            raise ValueError("give prompt_file or prompt_files, not both")
        if self.prompt_files is not None:
            stems = [p.stem for p in self.prompt_files]
            clash = next((s for s in stems if stems.count(s) > 1), None)
            if clash is not None:
                raise ValueError(f"prompt_files: two files share the name {clash!r} (their label); rename one")
        return self

    def label(self) -> str:
        return "llm"


GeneratorSpec = Annotated[
    Union[Annotated[ExtractiveGeneratorSpec, Tag("extractive")], Annotated[LLMGeneratorSpec, Tag("llm")]],
    Discriminator(lambda v: v.get("kind", "extractive") if isinstance(v, dict) else getattr(v, "kind", None)),
]


class LLMSpec(Strict):
    """OpenAI or any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp server, LM Studio).

    Only the *name* of the environment variable holding the key is stored; ``api_key_env: null``
    for a local server that needs none.
    """

    model: str = Field(description="the model name the endpoint serves")
    base_url: str | None = Field(None, description="default: https://api.openai.com/v1")
    api_key_env: str | None = Field(
        "OPENAI_API_KEY", description="the environment variable holding the key; null for a local server without one"
    )
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature (0: the most repeatable)")
    seed: int | None = Field(0, description="sent to the endpoint for reproducibility; null: not sent")
    max_tokens: int = Field(
        512, gt=0, description="the most tokens a reply may have (replies cut there are flagged truncated)"
    )
    timeout: float = Field(
        60.0,
        gt=0,
        description="seconds per request; a request that timed out is sent again "
        "only once the server is presumed done with it",
    )
    context_window: int = Field(
        8192,
        gt=0,
        description="tokens of prompt and reply the model holds; LlamaIndex "
        "packs retrieved chunks to fit it; must not exceed the server's (llama.cpp n_ctx, "
        "vLLM max_model_len, Ollama num_ctx)",
    )
    concurrency: int = Field(8, gt=0, description="the most requests in flight at once")
    adaptive_concurrency: bool = Field(
        True,
        description="start at one request in flight and follow what the server computes at once, up to "
        "concurrency (a server that queues gets no more than it serves); false: always concurrency",
    )
    requests_per_minute: float | None = Field(None, gt=0, description="the endpoint's request rate limit")
    tokens_per_minute: float | None = Field(None, gt=0, description="the endpoint's token rate limit")
    max_retries: int = Field(6, ge=0, description="retries on 429, 5xx, timeouts and dropped connections")
    max_backoff: float = Field(60.0, gt=0, description="seconds; the longest wait between retries")
    structured_output: Literal["auto", "json_schema", "json_object", "text"] = Field(
        "auto",
        description="how replies that must take a form (judges' scores, claims, test questions, rerank scores, "
        "sub-questions) are held to their JSON schema: auto: learnt from the server once (OpenAI's API: "
        "json_schema); json_schema: response_format json_schema (OpenAI, vLLM, LM Studio, Ollama, llama.cpp); "
        "json_object: response_format json_object with a schema (llama-cpp-python); text: free text parsed, one "
        "repair re-ask per unreadable reply",
    )

    _env_name = field_validator("api_key_env")(classmethod(lambda cls, v: env_var_name(v)))

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://", v):
            raise ValueError(f"base_url {v!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
        return v

    def label(self) -> str:
        return self.model


class PriceSpec(Strict):
    """US dollars per million tokens."""

    input: float = Field(ge=0, description="USD per million prompt tokens")
    output: float = Field(0.0, ge=0, description="USD per million completion tokens")
