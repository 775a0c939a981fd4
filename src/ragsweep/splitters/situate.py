"""Contextual chunks written by an LLM: the prompt for one chunk and what is kept of the reply.

Anthropic, "Introducing Contextual Retrieval" (2024): an LLM reads the whole document and one chunk
and writes "a short succinct context to situate this chunk within the overall document", which is
prepended to the chunk before embedding and BM25 indexing. The prompt here is theirs. The document
comes first, so every chunk of a document shares the prompt's prefix: endpoints that cache prompt
prefixes (OpenAI's automatic caching, vLLM's prefix caching) bill and compute it once.

A document longer than ``document_tokens`` (cl100k tokens) is shown as its first ``head_tokens``
(title, parties, definitions) and the fixed block of the rest that holds the chunk's middle; blocks
are cut at fixed token positions, so the chunks of one block still share their prefix.

Everything here is pure: the stage (``pipelines.stages.chunk_context``) sends the prompts.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# Anthropic's contextualiser prompt (anthropic-cookbook, skills/contextual-embeddings), document first
DEFAULT_PROMPT = """<document>
{document}
</document>
Here is the chunk we want to situate within the whole document
<chunk>
{chunk}
</chunk>

Please give a short succinct context to situate this chunk within the overall document for the purposes of \
improving search retrieval of the chunk.
Answer only with the succinct context and nothing else."""
ELISION = "\n[...]\n"
_PLACEHOLDER = re.compile(r"\{document\}|\{chunk\}")
_THINKING = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)  # reasoning models' scratchpad


def template_text(prompt_file: str | Path | None) -> str:
    """The template a context is written with: the file's text, else Anthropic's prompt."""
    return Path(prompt_file).read_text(encoding="utf-8") if prompt_file is not None else DEFAULT_PROMPT


def template_sha256(prompt_file: str | Path | None) -> str:
    return hashlib.sha256(template_text(prompt_file).encode()).hexdigest()


def fill(template: str, document: str, chunk: str) -> str:
    """The template with ``{document}`` and ``{chunk}`` put in, in one pass (a document that holds the text
    ``{chunk}`` stays as it is); other braces are left alone: legal text and user templates hold them."""
    values = {"{document}": document, "{chunk}": chunk}
    return _PLACEHOLDER.sub(lambda m: values[m.group()], template)


@lru_cache(maxsize=1)
def _encoding():
    from llama_index.core.utils import get_tokenizer

    get_tokenizer()  # points tiktoken at the cache llama-index ships (offline)
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


@dataclass(frozen=True)
class TokenMap:
    """Where each cl100k token of a document starts (character offsets), found once per document."""

    starts: tuple[int, ...]
    length: int  # characters

    @classmethod
    def of(cls, text: str) -> "TokenMap":
        enc = _encoding()
        tokens = enc.encode(text, disallowed_special=())
        _, starts = enc.decode_with_offsets(tokens)
        return cls(tuple(starts), len(text))

    def __len__(self) -> int:
        return len(self.starts)

    def char(self, token: int) -> int:
        """The character offset where token ``token`` starts (the text's end past the last one)."""
        return self.starts[token] if token < len(self.starts) else self.length

    def token_at(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.starts, offset) - 1)


def window_bounds(tokens: TokenMap, start: int, end: int, document_tokens: int, head_tokens: int) -> tuple[int, ...]:
    """The character ranges of the document the LLM reads for the chunk ``[start, end)``: ``()`` for all of
    it when it fits in ``document_tokens``; else ``(head_end, block_start, block_end)``, the head and the
    fixed block holding the chunk's middle (the last block is full, however the document ends)."""
    n = len(tokens)
    if n <= document_tokens:
        return ()
    body = document_tokens - head_tokens
    mid = tokens.token_at((start + end) // 2)
    block = max(0, mid - head_tokens) // body
    b0 = min(head_tokens + block * body, n - body)
    return tokens.char(head_tokens), tokens.char(b0), tokens.char(b0 + body)


def render_window(text: str, bounds: tuple[int, ...]) -> str:
    """The text of ``window_bounds``: the head, then the block, ``[...]`` wherever text is left out."""
    if not bounds:
        return text
    head_end, b0, b1 = bounds
    parts = [text[:head_end]] if head_end else []
    if b0 > head_end:
        parts.append(ELISION if head_end else ELISION.lstrip("\n"))
    parts.append(text[b0:b1])
    if b1 < len(text):
        parts.append(ELISION.rstrip("\n"))
    return "".join(parts)


def may_exceed(text: str, document_tokens: int) -> bool:
    """Whether ``text`` may be over ``document_tokens`` cl100k tokens: a token is at least one UTF-8 byte
    (not one character: a CJK character or an emoji is often two or more tokens)."""
    return len(text.encode("utf-8")) > document_tokens


def clean_reply(reply: str) -> str:
    """The context as indexed: a reasoning model's ``<think>`` block dropped, whitespace collapsed."""
    return " ".join(_THINKING.sub(" ", reply or "").split())


def prefix(sentence: str, title: str | None) -> str | None:
    """The chunk's context: the title (``title: true``) and the sentence, one per line; None if both are empty."""
    lines = [x for x in (title, sentence) if x]
    return "\n".join(lines) or None
