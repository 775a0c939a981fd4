"""The ways an LLM call fails for good, and the one line each leaves a record and the user."""

from __future__ import annotations

from ragsweep.errors import RagsweepError


class LLMFatalError(RagsweepError):
    """A failure every later call would repeat (bad key, unknown model): the stage stops."""


class LLMCallError(RagsweepError):
    """One call failed for good (retries used up, or a request the server rejects)."""


class FormRefused(LLMCallError):
    """The server refused a request's ``response_format`` (400/422): the call is made again without it."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(message)


class LLMContextError(LLMCallError):
    """The prompt does not fit the server's context window: every retry would fail the same way."""

    def __init__(self, prompt_tokens: int | None, limit: int | None, source: str | None, *, sent: bool) -> None:
        self.prompt_tokens, self.limit, self.source, self.sent = prompt_tokens, limit, source, sent
        size = f"a prompt of {prompt_tokens:,} tokens" if prompt_tokens else "the prompt"
        size += "" if sent else " (estimated; not sent)"
        window = f"the context window of {limit:,} tokens" if limit else "the server's context window"
        super().__init__(f"{size} exceeds {window}" + (f" ({source})" if source else ""))

    def advice(self, stage: str) -> str:
        """One line for a record and the user: the stage, the sizes, and what to change."""
        return (
            f"{stage}: {self}; lower top_k, the splitter's chunk_size or max_tokens, or give the server a larger "
            "context (llama.cpp -c / n_ctx, vLLM --max-model-len, Ollama num_ctx) and set llm.context_window to it"
        )


class ConfigurationStopped(LLMContextError):
    """Not sent: the server, stating no context window, refused another prompt of the same configuration (and
    stage, and judge) as too long; its prompts are of that kind of size (top_k chunks of one splitter), though not
    all of them need be too long, so a re-run sends it again (it is not a failure for good)."""

    def __init__(self, why: str) -> None:
        LLMCallError.__init__(self, f"not sent: {why} as longer than its context window")
        self.prompt_tokens, self.limit, self.source, self.sent = None, None, why, False


def describe_error(exc: BaseException, scrub) -> str:
    """``Type (status): first line``, secrets scrubbed, at most 500 characters."""
    from ragsweep.llm.retry import status_of

    status = status_of(exc)
    text = str(exc).strip().splitlines()
    msg = f"{type(exc).__name__}" + (f" ({status})" if status else "") + (f": {text[0]}" if text else "")
    return scrub(msg)[:500]


def fatal_message(spec, exc: BaseException, scrub) -> str:
    """The one line that stops a stage: the endpoint, what its refusal means, and what to fix."""
    from ragsweep.llm.retry import status_of

    status = status_of(exc)
    where = spec.base_url or "https://api.openai.com/v1"
    if status == 401:
        hint = (
            f"the endpoint refused the API key from ${spec.api_key_env}; check the key"
            if spec.api_key_env
            else "the endpoint wants an API key; set llm.api_key_env"
        )
    elif status == 403:
        hint = "the key has no access to this model or endpoint"
    elif status == 429:
        hint = "the account's quota is used up (insufficient_quota); add credit or use another key"
    else:
        hint = (
            f"model {spec.model!r} or the path not found there; fix llm.model (GET {where}/models "
            "lists them) or base_url (OpenAI-compatible servers usually end in /v1)"
        )
    return scrub(f"LLM endpoint {where}: {hint} [{describe_error(exc, scrub)}]")  # where: a URL's credentials
