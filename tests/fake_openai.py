#!/usr/bin/env python3
"""A scripted, local OpenAI-compatible HTTP server for tests and benchmarks (standard library only).

Why: the LLM-judge and OpenAI-embedding paths of ragsweep must be testable offline, deterministically,
and under failure (429/5xx, timeouts, dropped connections, malformed judge replies) without a real key.

Run as a script::

    python tests/fake_openai.py --port 0 [--script rules.json] [--log calls.jsonl] [--latency-ms 0]
                                [--api-key KEY] [--models m1,m2]

It prints exactly one line ``listening on http://127.0.0.1:PORT/v1`` once ready and serves until killed.
Or in-process::

    with FakeOpenAI(rules=[...]).start() as fake:
        client = openai.OpenAI(base_url=fake.base_url, api_key="x")

Endpoints (with or without the ``/v1`` prefix): ``POST /chat/completions``, ``POST /embeddings``,
``GET /models``; admin: ``GET|POST /_rules``, ``GET /_stats``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import math
import re
import socket
import struct
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from fake_structured import STRUCTURED, schema_of, structured_reply

# --- request classification -------------------------------------------------------------------------------------
# Marker strings from LlamaIndex 0.14's default prompts. Order matters only for robustness: the judge prompts embed
# the retrieved context and the answer under test, so the most specific markers are checked first.
CORRECTNESS_MARKER = "You are an expert evaluation system for a question answering chatbot"
# relevancy.DEFAULT_REFINE_TEMPLATE concatenates "...query and response is" + "in line with the context information"
# with no space ("isin line"), so the shared marker deliberately omits the leading "is ".
RELEVANCY_MARKERS = ("in line with the context information",)
FAITHFULNESS_MARKERS = ("is supported by the context", "if the following information is present")
QUERY_GEN_MARKER = "search queries"
KG_EXTRACT_MARKER = "knowledge triplets"  # SimpleLLMPathExtractor / DynamicLLMPathExtractor prompts
# LLMRerank's choice-select prompt (DEFAULT_CHOICE_SELECT_PROMPT_TMPL and the chat CHAT_CONTENT_CHOICE_SELECT_PROMPT):
# a sentence of LlamaIndex's template that no judge prompt holds, while its documents may hold a judge's generic marker
RERANK_MARKER = "A list of documents is shown below. Each document has a number next to it"
# query transforms: LlamaIndex's HyDE prompt (HYDE_TMPL) and ragsweep's decomposition prompt
# (retrievers/transforms/decompose.py); both hold the question alone, so they are checked after the judges
HYDE_MARKER = "Please write a passage to answer the question"
# contextual chunks (src/ragsweep/splitters/situate.py, Anthropic's prompt): it embeds a whole document, so it is
# checked right after the rerank prompt
SITUATE_MARKER = "situate this chunk within the overall document"
DECOMPOSE_MARKER = "simpler sub-questions"
# a follow-up condensed into a standalone question (LlamaIndex's CondenseQuestionChatEngine and
# CondensePlusContextChatEngine prompts: src/ragsweep/history/condense.py)
CONDENSE_MARKERS = (
    "rewrite the message to be a standalone question",
    "rephrase the follow up question to be a standalone question",
)
# test-set generation (src/ragsweep/generate/prompts.py): it embeds passages, so it is checked right after situate
TESTSET_MARKER = "You write one test question for a retrieval-augmented question answering system"
# claim-level verification (src/ragsweep/groundedness/detectors/claims.py): the check embeds contexts, so both are
# checked before the judges
CLAIM_SPLIT_MARKER = "Break the answer into its atomic factual claims"
CLAIM_CHECK_MARKER = "Is the claim fully supported by the context"
# ragsweep's structured-output probe (src/ragsweep/llm/structured.py): the whole prompt, nothing else
PROBE_PROMPT = "Reply with one JSON object."
KINDS = (
    "probe",
    "rerank",
    "situate",
    "testset",
    "claim_split",
    "claim_check",
    "correctness",
    "faithfulness",
    "relevancy",
    "hyde",
    "decompose",
    "query_gen",
    "kg_extract",
    "generation",
)
EMBEDDINGS_KIND = "embeddings"
RULE_KINDS = (*KINDS, EMBEDDINGS_KIND, "any")
# echo: reply with the request's last user message, as a small model that repeats its prompt does
ACTIONS = ("reply", "malformed", "status", "sleep", "drop", "echo")

DEFAULT_CORRECTNESS_REPLY = "4.0\nThe generated answer is relevant and correct."
DEFAULT_MALFORMED_REPLY = "I think the answer is fine."
DEFAULT_DIMENSIONS = 64


def classify(text: str) -> str:
    """The kind of a chat request, from its concatenated message text (see the module markers)."""
    if text.strip() == PROBE_PROMPT:
        return "probe"
    if RERANK_MARKER in text:  # first: the prompt embeds documents, which may say anything a later marker says
        return "rerank"
    if SITUATE_MARKER in text:
        return "situate"
    if TESTSET_MARKER in text:
        return "testset"
    if CLAIM_CHECK_MARKER in text:
        return "claim_check"
    if CLAIM_SPLIT_MARKER in text:
        return "claim_split"
    if CORRECTNESS_MARKER in text:
        return "correctness"
    if any(m in text for m in RELEVANCY_MARKERS):
        return "relevancy"
    if any(m in text for m in FAITHFULNESS_MARKERS):
        return "faithfulness"
    if HYDE_MARKER in text:
        return "hyde"
    if DECOMPOSE_MARKER in text:
        return "decompose"
    if any(m in text for m in CONDENSE_MARKERS):
        return "condense"
    if QUERY_GEN_MARKER in text:
        return "query_gen"
    if KG_EXTRACT_MARKER in text:
        return "kg_extract"
    return "generation"


def content_text(content: Any) -> str:
    """A message's text: plain strings, or the text parts of a multi-part content list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return " ".join(parts)
    return str(content)


def messages_text(messages: Any) -> str:
    """All message contents joined with a single space (what token counts and matching see)."""
    if not isinstance(messages, list):
        return ""
    return " ".join(content_text(m.get("content")) if isinstance(m, dict) else str(m) for m in messages)


def last_user_text(messages: Any) -> str:
    """The text of the request's last user message (the ``echo`` action's reply); "" when there is none."""
    if not isinstance(messages, list):
        return ""
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return content_text(users[-1].get("content")) if users else ""


def count_words(text: str) -> int:
    """The fake tokenizer: whitespace-separated words, simple enough for tests to recompute."""
    return len(text.split())


def request_key(model: Any, messages: Any, temperature: Any = None, max_tokens: Any = None, seed: Any = None) -> str:
    """A stable fingerprint of a chat request, so tests can tell repeated (e.g. retried or cached) calls apart."""
    blob = json.dumps([model, messages, temperature, max_tokens, seed], sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def fake_embedding(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """A deterministic unit-norm vector from sha256(text): equal texts give equal vectors, different ones differ."""
    values: list[float] = []
    counter = 0
    seed = text.encode("utf-8")
    while len(values) < dimensions:
        digest = hashlib.sha256(seed + b"\x00" + str(counter).encode()).digest()
        for i in range(0, len(digest), 4):
            (n,) = struct.unpack("<I", digest[i : i + 4])
            values.append(n / 0xFFFFFFFF * 2.0 - 1.0)
        counter += 1
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def generation_reply(text: str) -> str:
    """First sentence (max 40 words) of the context in LlamaIndex's text-QA prompt, else "I don't know."."""
    idx = text.find("Context information is below.")
    if idx < 0:
        return "I don't know."
    rest = text[idx + len("Context information is below.") :]
    dash = re.search(r"-{3,}[ \t]*\n", rest)
    if not dash:
        return "I don't know."
    context = rest[dash.end() :]
    end = re.search(r"\n-{3,}", context)
    if end:
        context = context[: end.start()]
    context = context.strip()
    dot = context.find(".")
    sentence = context[: dot + 1] if dot >= 0 else context
    words = sentence.split()[:40]
    return " ".join(words) if words else "I don't know."


def query_gen_reply(text: str) -> str:
    """N lines "<query> variant i", N from "Generate N search queries" (the fusion retriever asks num_queries-1)."""
    m = re.search(r"Generate (\d+) search queries", text)
    n = int(m.group(1)) if m else 3
    q = re.search(r"Query: (.*?)\nQueries:", text, re.DOTALL) or re.search(r"Query: (.*)", text)
    query = q.group(1).strip() if q else "query"
    return "\n".join(f"{query} variant {i}" for i in range(1, n + 1))


def _question_words(text: str, start: str, end: str) -> list[str]:
    """The words of the question between the last ``start`` and the next ``end`` of a prompt."""
    at = text.rfind(start)
    body = text[at + len(start) :] if at >= 0 else text
    body = body[: body.find(end)] if end in body else body
    return re.findall(r"[A-Za-z0-9]+", body)


def hyde_reply(text: str) -> str:
    """A passage built from the question's words (the text between the HyDE prompt's instructions and
    "Passage:"): the words, then their second half again as a summary."""
    words = _question_words(text, "as many key details as possible.", "Passage:") or ["nothing"]
    return f"{' '.join(words)}. In short, {' '.join(words[len(words) // 2 :])}."


def condense_reply(text: str) -> str:
    """The standalone question: the conversation's last user message, then the follow-up (its line after
    ``<Follow Up Message>`` or ``Follow Up Input:``)."""
    said = [line.strip()[len("user: ") :].strip() for line in text.splitlines() if line.strip().startswith("user: ")]
    follow = ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "<Follow Up Message>" and i + 1 < len(lines):
            follow = lines[i + 1].strip()
        elif line.strip().startswith("Follow Up Input:"):
            follow = line.strip()[len("Follow Up Input:") :].strip()
    return " ".join(x for x in (said[-1] if said else "", follow) if x)


def decompose_reply(text: str) -> str:
    """Two numbered sub-questions: "What is" the first half of the question's words, then the second half."""
    words = _question_words(text, "Question:", "Sub-questions:") or ["it"]
    half = max(1, len(words) // 2)
    return f"1. What is {' '.join(words[:half])}?\n2. What is {' '.join(words[half:]) or words[0]}?"


def situate_reply(text: str) -> str:
    """ "This chunk is from the document that begins: <its first 8 words>; it covers <the chunk's first 3 long
    words>." (the document and chunk between their tags in the prompt)."""

    def between(start: str, end: str) -> str:
        at = text.find(start)
        body = text[at + len(start) :] if at >= 0 else ""
        return body[: body.find(end)] if end in body else body

    head = " ".join(between("<document>", "</document>").split()[:8]) or "nothing"
    words = re.findall(r"[A-Za-z]{6,}", between("<chunk>", "</chunk>"))[:3]
    return f"This chunk is from the document that begins: {head}; it covers {', '.join(words) or 'little'}."


def testset_reply(text: str) -> str:
    """A JSON test question: for out_of_scope, a question about "quantum escrow tokens" (absent_terms);
    otherwise "What does <title> say about <the first 4 long words of passage 1's first sentence>?" with that
    sentence (and, with two passages, passage 2's first sentence) quoted as evidence."""
    m = re.search(r"Question type: (\w+)", text)
    qtype = m.group(1) if m else "simple"
    if qtype == "out_of_scope":
        return json.dumps(
            {
                "question": "What do the documents say about quantum escrow tokens?",
                "answer": "The documents do not say.",
                "evidence": [],
                "absent_terms": ["quantum escrow tokens"],
            }
        )
    passages = re.findall(r'<passage (\d+) title=("(?:[^"\\]|\\.)*")>\n(.*?)\n</passage>', text, re.DOTALL)
    evidence, title, words = [], "the document", []
    for number, raw_title, body in passages[:2]:
        sentence = next((s.strip() for s in re.split(r"(?<=[.;])\s+", body) if len(s.split()) >= 6), body.strip())
        evidence.append({"passage": int(number), "quote": sentence})
        if not words:
            title, words = json.loads(raw_title), re.findall(r"[A-Za-z]{5,}", sentence)[:4]
    question = f"What does {title} say about {' '.join(words) or 'this'}?"
    if qtype == "conversational":  # the earlier question names the document; the follow-up refers back to it
        question = f"Earlier: What is {title} about? Follow-up: What does it say about {' '.join(words) or 'this'}?"
    return json.dumps(
        {
            "question": question,
            "answer": evidence[0]["quote"] if evidence else "",
            "evidence": evidence,
        }
    )


def claim_split_reply(text: str) -> str:
    """The sentences of the prompt's answer (after "Answer:", before "Claims:"), one per line."""
    body = text[text.rfind("Answer:") + 7 :]
    body = body[: body.find("Claims:")] if "Claims:" in body else body
    return "\n".join(s.strip() for s in re.split(r"(?<=[.!?])\s+", body.strip()) if s.strip())


def claim_check_reply(text: str) -> str:
    """YES when at least 80 % of the claim's words of three or more letters (no stopwords) occur in the
    context, else NO."""
    context = text[text.find("Context:") + 8 : text.rfind("Claim:")]
    claim = text[text.rfind("Claim:") + 6 :].split("\n\n")[0]
    words = [w for w in _overlap_words(claim) if len(w) >= 3]
    have = _overlap_words(context)
    share = sum(w in have for w in words) / len(words) if words else 0.0
    return ("YES" if share >= 0.8 else "NO") + f". {share:.0%} of the claim's words are in the context."


def kg_extract_reply(text: str) -> str:
    """Up to 3 triplets "(word1, relates to, word2)" chaining the first long words of the prompt's last "Text:"."""
    body = text[text.rfind("Text:") + 5 :]
    body = body[: body.find("Triplets:")] if "Triplets:" in body else body
    words = re.findall(r"[A-Za-z]{6,}", body)[:4]
    return "\n".join(f"({a}, relates to, {b})" for a, b in zip(words, words[1:])) or "(none)"


_RERANK_STOPWORDS = frozenset(
    "a an and are as at be by did do does for from has have how in is it its of on or the this that to was were "
    "what when where which who whom why with".split()
)


def _overlap_words(text: str) -> set[str]:
    """Lower-case words of two or more letters or digits, without the commonest function words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1 and w not in _RERANK_STOPWORDS}


def rerank_documents(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The question and the numbered documents of a choice-select prompt (what follows its example)."""
    body = (
        text[text.rfind("Let's try this now:") + len("Let's try this now:") :]
        if "Let's try this now:" in text
        else text
    )
    q_at = body.rfind("Question:")
    question = body[q_at + len("Question:") :] if q_at >= 0 else ""
    question = question.split("Answer:")[0].strip()
    docs_part = body[:q_at] if q_at >= 0 else body
    heads = list(re.finditer(r"(?m)^Document (\d+):[ \t]*\n?", docs_part))
    docs = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(docs_part)
        docs.append((int(m.group(1)), docs_part[m.end() : end].strip()))
    return question, docs


def rerank_reply(text: str) -> str:
    """Lines "Doc: N, Relevance: R" for the documents sharing a word with the question, most shared first
    (ties: lower N first); R = 1 + 9 x the share of the question's words the document has, rounded (1-10)."""
    question, docs = rerank_documents(text)
    qwords = _overlap_words(question)
    scored = []
    for n, doc in docs:
        shared = len(qwords & _overlap_words(doc))
        if shared:
            scored.append((-shared, n, 1 + round(9 * shared / len(qwords))))
    return "\n".join(f"Doc: {n}, Relevance: {r}" for _, n, r in sorted(scored)) or "No document is relevant."


def default_reply(kind: str, text: str) -> str:
    """The scripted-free answer for each kind: passing judge verdicts, a word-overlap rerank, fusion variants,
    a HyDE passage, two sub-questions, knowledge triplets, an extractive answer."""
    if kind == "correctness":
        return DEFAULT_CORRECTNESS_REPLY
    if kind in ("faithfulness", "relevancy"):
        return "YES"
    if kind == "rerank":
        return rerank_reply(text)
    if kind == "query_gen":
        return query_gen_reply(text)
    if kind == "hyde":
        return hyde_reply(text)
    if kind == "decompose":
        return decompose_reply(text)
    if kind == "condense":
        return condense_reply(text)
    if kind == "kg_extract":
        return kg_extract_reply(text)
    if kind == "situate":
        return situate_reply(text)
    if kind == "testset":
        return testset_reply(text)
    if kind == "claim_split":
        return claim_split_reply(text)
    if kind == "claim_check":
        return claim_check_reply(text)
    return generation_reply(text)


# --- rules ------------------------------------------------------------------------------------------------------


def validate_rules(rules: Any) -> list[dict[str, Any]]:
    """Check a rule list up front, so a typo in a test script fails loudly instead of silently never matching."""
    if not isinstance(rules, list):
        raise ValueError("rules must be a JSON list of objects")
    out: list[dict[str, Any]] = []
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise ValueError(f"rule {i} is not an object")
        known = {
            "kind",
            "match",
            "times",
            "action",
            "reply",
            "status",
            "retry_after",
            "delay_ms",
            "message",
            "finish_reason",
            "choices",
            "choose_by",
            "cut_after",
        }
        unknown = set(rule) - known
        if unknown:
            raise ValueError(f"rule {i}: unknown field(s) {sorted(unknown)}")
        rule = dict(rule)
        rule.setdefault("kind", "any")
        rule.setdefault("action", "reply")
        if rule["kind"] not in RULE_KINDS:
            raise ValueError(f"rule {i}: kind must be one of {RULE_KINDS}")
        if rule["action"] not in ACTIONS:
            raise ValueError(f"rule {i}: action must be one of {ACTIONS}")
        if rule["action"] == "status" and not isinstance(rule.get("status"), int):
            raise ValueError(f"rule {i}: action 'status' needs an integer 'status'")
        if "times" in rule and not isinstance(rule["times"], int):
            raise ValueError(f"rule {i}: 'times' must be an integer")
        if "choices" in rule and (not isinstance(rule["choices"], list) or not rule["choices"]):
            raise ValueError(f"rule {i}: 'choices' must be a non-empty list of replies")
        if "cut_after" in rule and not isinstance(rule["cut_after"], int):
            raise ValueError(f"rule {i}: 'cut_after' must be an integer (content chunks streamed before the cut)")
        if rule.get("choose_by", "request") not in ("request", "prompt"):
            raise ValueError(f"rule {i}: 'choose_by' must be 'request' (seed included) or 'prompt' (messages only)")
        out.append(rule)
    return out


def error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    """An OpenAI-style error object (the openai client reads error.message/type/code from it)."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


_STATUS_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "bad_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "server_error"),
    502: ("server_error", "bad_gateway"),
    503: ("server_error", "service_unavailable"),
}


# --- server -----------------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer tuned for many concurrent keep-alive clients."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512
    fake: "FakeOpenAI"


class _Handler(BaseHTTPRequestHandler):
    """Routes requests to the owning FakeOpenAI; every response is written in one send with Content-Length."""

    protocol_version = "HTTP/1.1"
    server: _Server
    # Called once with the status right before a response's bytes go out, so the call log and stats are
    # complete by the time the client sees its response (tests may read them right after a call returns).
    before_send: Callable[[int], None] | None = None

    def setup(self) -> None:
        """Disable Nagle: small request/response pairs on keep-alive connections would otherwise stall ~40 ms."""
        super().setup()
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        """No per-request stderr logging: it costs throughput and floods test output."""

    # -- plumbing --
    def _read_body(self) -> bytes:
        """Read the whole request body (keep-alive needs it consumed even when we answer with an error)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(
        self, status: int, body: bytes, content_type: str = "application/json", extra: dict[str, str] | None = None
    ) -> None:
        """Write status line, headers and body in one write; swallow errors from clients that already left."""
        reason = self.responses.get(status, ("",))[0]
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
        for k, v in (extra or {}).items():
            lines.append(f"{k}: {v}")
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        hook, self.before_send = self.before_send, None
        if hook is not None:
            hook(status)
        try:
            self.wfile.write(head + body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _send_json(self, status: int, obj: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode("utf-8"), extra=extra)

    def _route(self) -> str:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/") or path == "/v1":
            path = path[3:]
        return path or "/"

    # -- verbs --
    def do_GET(self) -> None:
        """Models list and admin endpoints."""
        self._read_body()
        route = self._route()
        fake = self.server.fake
        if route == "/_stats":
            self._send_json(200, fake.stats())
        elif route == "/_rules":
            self._send_json(200, fake.rules())
        elif route == "/props" and fake.props is not None:
            self._send_json(200, fake.props)
        elif route == "/models":
            if not self._check_auth():
                return
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models or ["fake-model"]
            ]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, error_body(f"Unknown path {self.path}", "invalid_request_error", "not_found"))

    def do_POST(self) -> None:
        """Chat completions, embeddings, and runtime rule replacement."""
        raw = self._read_body()
        route = self._route()
        fake = self.server.fake
        if route == "/_rules":
            try:
                fake.set_rules(json.loads(raw or b"[]"))
            except (ValueError, TypeError) as exc:
                self._send_json(400, error_body(str(exc), "invalid_request_error", "bad_rules"))
                return
            self._send_json(200, {"ok": True, "rules": len(fake.rules())})
            return
        if route not in ("/chat/completions", "/embeddings"):
            self._send_json(404, error_body(f"Unknown path {self.path}", "invalid_request_error", "not_found"))
            return
        fake._handle_api(self, route, raw)

    def _bad_key(self) -> str | None:
        """The key the client sent when it is wrong (None when auth is off or the key is right)."""
        fake = self.server.fake
        header = self.headers.get("Authorization") or ""
        if fake.api_key is None or header == f"Bearer {fake.api_key}":
            return None
        return header[len("Bearer ") :] if header.startswith("Bearer ") else header

    def _send_401(self, sent: str) -> None:
        """401 with the sent key echoed (like OpenAI does), so products under test must scrub it from errors."""
        self._send_json(
            401, error_body(f"Incorrect API key provided: {sent}", "invalid_request_error", "invalid_api_key")
        )

    def _check_auth(self) -> bool:
        sent = self._bad_key()
        if sent is not None:
            self._send_401(sent)
        return sent is None


class FakeOpenAI:
    """The fake server's state (rules, call log, stats) plus its HTTP server; usable in-process or via the CLI."""

    def __init__(
        self,
        rules: list[dict[str, Any]] | None = None,
        log_path: str | None = None,
        latency_ms: float = 0.0,
        api_key: str | None = None,
        models: list[str] | None = None,
        host: str = "127.0.0.1",
        slots: int | None = None,
        n_ctx: int | None = None,
        props: dict[str, Any] | None = None,
        timings: bool = False,
        structured: str = "json_schema",
    ) -> None:
        """``slots``: chat requests computed at once, the rest queued (llama-cpp-python: 1), each taking
        ``latency_ms`` (+ a rule's ``delay_ms``) of its slot and computed to the end even when its client left;
        ``n_ctx``: prompts longer (in words) are refused as llama-cpp-python refuses them (400
        ``context_length_exceeded``); ``props``: served at ``GET /props`` (llama.cpp's server information);
        ``timings``: replies carry llama.cpp's ``timings`` (the slot time as ``predicted_ms``); ``structured``: which
        ``response_format`` it takes and how (``fake_structured.STRUCTURED``: json_schema, json_object, ignore,
        reject)."""
        if structured not in STRUCTURED:
            raise ValueError(f"structured must be one of {STRUCTURED}")
        self.structured = structured
        self.host = host
        self.slots = threading.Semaphore(slots) if slots else None
        self.n_ctx = n_ctx
        self.props = props
        self.timings = timings
        self.stream_options = True  # False: a request carrying stream_options is refused (400), as older servers do
        self._generations = 0
        self.latency_ms = float(latency_ms)
        self.api_key = api_key
        self.models = list(models) if models else None
        self.log_path = log_path
        self._lock = threading.Lock()
        self._rules: list[dict[str, Any]] = []
        self._used: list[int] = []
        self._log: list[dict[str, Any]] = []
        self._log_file = open(log_path, "a", encoding="utf-8") if log_path else None
        self._in_flight = 0
        self._max_in_flight = 0
        self._by_kind: dict[str, int] = {}
        self._by_status: dict[str, int] = {}
        self._completed = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.set_rules(rules or [])

    # -- lifecycle --
    def _bind(self, port: int) -> _Server:
        server = _Server((self.host, port), _Handler)
        server.fake = self
        self._server = server
        return server

    def start(self, port: int = 0) -> "FakeOpenAI":
        """Serve from a background daemon thread of this process; returns self once the socket is bound."""
        server = self._bind(port)
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self, port: int = 0, announce: bool = True) -> None:
        """Serve in the calling thread (the CLI); prints the "listening on" line once bound."""
        server = self._bind(port)
        if announce:
            print(f"listening on {self.base_url}", flush=True)
        try:
            server.serve_forever(poll_interval=0.05)
        finally:
            server.server_close()

    def stop(self) -> None:
        """Stop serving and close the log file; safe to call twice."""
        if self._server is not None:
            if self._thread is not None:
                self._server.shutdown()
                self._thread.join(timeout=5)
            self._server.server_close()
            self._server = None
            self._thread = None
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    def __enter__(self) -> "FakeOpenAI":
        if self._server is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to hand to openai.OpenAI(base_url=...) / LlamaIndex's api_base."""
        return f"http://{self.host}:{self.port}/v1"

    # -- rules, log, stats --
    def set_rules(self, rules: list[dict[str, Any]]) -> None:
        """Replace the rule list and reset its `times` counters."""
        checked = validate_rules(rules)
        with self._lock:
            self._rules = checked
            self._used = [0] * len(checked)

    def rules(self) -> list[dict[str, Any]]:
        """The current rules, each with how often it has fired (`used`)."""
        with self._lock:
            return [{**r, "used": n} for r, n in zip(self._rules, self._used)]

    def calls(self, include_events: bool = False) -> list[dict[str, Any]]:
        """Completed call records (oldest first); with include_events also the chat "start" events."""
        with self._lock:
            return [dict(c) for c in self._log if include_events or "event" not in c]

    def stats(self) -> dict[str, Any]:
        """Counts of completed calls by kind and status, and the peak number of concurrent in-flight calls."""
        with self._lock:
            return {
                "calls": self._completed,
                "by_kind": dict(self._by_kind),
                "by_status": dict(self._by_status),
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
                "generations": self._generations,
            }

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(record)
            if "event" not in record:
                self._completed += 1
                self._by_kind[record["kind"]] = self._by_kind.get(record["kind"], 0) + 1
                st = str(record["status"])
                self._by_status[st] = self._by_status.get(st, 0) + 1
            if self._log_file is not None:
                self._log_file.write(json.dumps(record) + "\n")
                self._log_file.flush()

    def _claim_rule(self, kind: str, text: str) -> dict[str, Any] | None:
        """First matching non-exhausted rule, its use counted atomically so `times` holds under concurrency."""
        with self._lock:
            for i, rule in enumerate(self._rules):
                rk = rule["kind"]
                if kind == EMBEDDINGS_KIND:
                    if rk != EMBEDDINGS_KIND:
                        continue
                elif rk not in ("any", kind):
                    continue
                if rule.get("match") is not None and rule["match"] not in text:
                    continue
                if "times" in rule and self._used[i] >= rule["times"]:
                    continue
                self._used[i] += 1
                return rule
        return None

    # -- the API --
    def _handle_api(self, h: _Handler, route: str, raw: bytes) -> None:
        """One chat/embeddings request: auth, model check, rules, reply; logged once the response is sent."""
        t_start = time.time()
        endpoint = "chat" if route == "/chat/completions" else "embeddings"
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        record: dict[str, Any] = {
            "t_start": t_start,
            "endpoint": endpoint,
            "kind": None,
            "status": 0,
            "model": None,
            "key": None,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "auth_ok": True,
            "response_format": None,
        }
        finished = False

        def finish(status: int | None = None) -> None:
            nonlocal finished
            if finished:
                return
            finished = True
            if status is not None:
                record["status"] = status
            record["t_end"] = time.time()
            if record["kind"] is None:
                record["kind"] = EMBEDDINGS_KIND if endpoint == "embeddings" else "generation"
            with self._lock:
                self._in_flight -= 1
            self._append(
                {
                    k: record[k]
                    for k in (
                        "t_start",
                        "t_end",
                        "endpoint",
                        "kind",
                        "status",
                        "model",
                        "key",
                        "prompt_tokens",
                        "completion_tokens",
                        "auth_ok",
                        "response_format",
                    )
                }
            )

        h.before_send = finish
        try:
            self._serve_api(h, endpoint, raw, record)
        except Exception as exc:  # a bug here must still answer, or the client hangs until its timeout
            h.before_send = finish
            h._send_json(500, error_body(f"fake_openai internal error: {exc!r}", "server_error", "server_error"))
        finally:
            h.before_send = None
            finish()  # "drop" (nothing sent) ends here

    def _serve_api(self, h: _Handler, endpoint: str, raw: bytes, record: dict[str, Any]) -> None:
        if not raw:  # a client killed between headers and body: never answer that as a request
            h._send_json(400, error_body("Empty request body", "invalid_request_error", "bad_request"))
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            h._send_json(400, error_body(f"Invalid JSON body: {exc}", "invalid_request_error", "bad_request"))
            return
        model = body.get("model")
        record["model"] = model
        if endpoint == "chat":
            messages = body.get("messages")
            text = messages_text(messages)
            kind = classify(text)
            record["key"] = request_key(
                model, messages, body.get("temperature"), body.get("max_tokens"), body.get("seed")
            )
            record["prompt_tokens"] = count_words(text)
            self._append({"event": "start", "key": record["key"], "t_start": record["t_start"]})
        else:
            inputs = body.get("input")
            inputs = [inputs] if not isinstance(inputs, list) else inputs
            inputs = [x if isinstance(x, str) else json.dumps(x) for x in inputs]
            text = " ".join(inputs)
            kind = EMBEDDINGS_KIND
            record["key"] = request_key(model, inputs, body.get("dimensions"))
            record["prompt_tokens"] = sum(count_words(x) for x in inputs)
        record["kind"] = kind

        sent_key = h._bad_key()
        if sent_key is not None:
            record["auth_ok"] = False
            h._send_401(sent_key)
            return
        if self.models is not None and model not in self.models:
            h._send_json(
                404, error_body(f"The model `{model}` does not exist", "invalid_request_error", "model_not_found")
            )
            return

        if endpoint == "chat" and self.n_ctx is not None and record["prompt_tokens"] >= self.n_ctx:
            p, m = record["prompt_tokens"], int(body.get("max_tokens") or 0)
            h._send_json(
                400,
                {
                    "error": {
                        "message": (
                            f"This model's maximum context length is {self.n_ctx} tokens. However, you requested "
                            f"{p + m} tokens ({p} in the messages, {m} in the completion). Please reduce the "
                            "length of the messages or completion."
                        ),
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                },
            )
            return
        if endpoint == "chat" and "stream_options" in body and not self.stream_options:
            message = "Unrecognized request argument supplied: stream_options"
            h._send_json(400, error_body(message, "invalid_request_error", "unknown_parameter"))
            return
        schema = None
        if endpoint == "chat":
            fmt = body.get("response_format")
            record["response_format"] = fmt.get("type") if isinstance(fmt, dict) else None
            schema, refused = schema_of(self.structured, fmt)
            if refused is not None:
                h._send_json(refused[0], error_body(refused[1], "invalid_request_error", "invalid_response_format"))
                return
        rule = self._claim_rule(kind, text)
        delay = self.latency_ms + float(rule.get("delay_ms", 0) if rule else 0)
        if endpoint == "chat" and self.slots is not None:
            with self.slots:  # one of the server's slots: computed to the end, whether its client waits or not
                if delay > 0:
                    time.sleep(delay / 1000.0)
                with self._lock:
                    self._generations += 1
        elif delay > 0:
            time.sleep(delay / 1000.0)
        record["service_ms"] = delay
        action = rule["action"] if rule else None

        if action == "drop":
            # Close without a byte of response: the client sees a disconnect (openai.APIConnectionError). Logged
            # first, as a response is logged before its bytes go out: once the client sees the close, its next
            # request may be answered (and logged) before this thread would get back to log the drop.
            record["status"] = 0
            hook, h.before_send = h.before_send, None
            if hook is not None:
                hook(0)
            h.close_connection = True
            try:
                h.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if action == "status":
            assert rule is not None
            status = int(rule["status"])
            type_, code = _STATUS_ERRORS.get(
                status, ("server_error" if status >= 500 else "invalid_request_error", f"http_{status}")
            )
            msg = rule.get("message") or f"Scripted error {status} from fake_openai"
            extra = {"Retry-After": str(rule["retry_after"])} if rule.get("retry_after") is not None else None
            h._send_json(status, error_body(msg, type_, code), extra=extra)
            return

        if endpoint == "embeddings":
            self._reply_embeddings(h, body, inputs, record)
            return

        if action == "reply":
            assert rule is not None
            if "choices" in rule:  # a judge at random (by request: its seed too) or consistent (by prompt alone)
                basis = (
                    record["key"]
                    if rule.get("choose_by", "request") == "request"
                    else messages_text(body.get("messages"))
                )
                pick = int(hashlib.sha256(str(basis).encode()).hexdigest(), 16) % len(rule["choices"])
                reply = str(rule["choices"][pick])
            elif "reply" in rule:
                reply = str(rule["reply"])
            else:
                reply = default_reply(kind, text)
                reply = structured_reply(schema, reply) if schema is not None else reply
        elif action == "malformed":
            assert rule is not None
            reply = str(rule.get("reply", DEFAULT_MALFORMED_REPLY))
        elif action == "echo":
            reply = last_user_text(body.get("messages"))
        else:  # no rule, or "sleep" (already slept): answer normally, in the schema when held to one
            reply = default_reply(kind, text)
            if schema is not None:
                reply = structured_reply(schema, reply)
        finish = (rule or {}).get("finish_reason") or "stop"
        if finish == "length" and body.get("max_tokens"):  # cut at max_tokens words, as a server cuts at its tokens
            reply = " ".join(reply.split()[: int(body["max_tokens"])])
        self._reply_chat(h, body, model, reply, record, finish, (rule or {}).get("cut_after"))

    def _reply_chat(
        self,
        h: _Handler,
        body: dict[str, Any],
        model: Any,
        reply: str,
        record: dict[str, Any],
        finish: str = "stop",
        cut_after: int | None = None,
    ) -> None:
        p, c = record["prompt_tokens"], count_words(reply)
        record["completion_tokens"] = c
        usage = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if body.get("stream"):
            # Streaming clients get the whole SSE transcript at once (still with Content-Length, keeping keep-alive):
            # the role, then the reply a word at a time (as a server writes tokens), then the finish. ``cut_after``
            # (a rule's): that many words are written, then the connection is closed mid-body
            base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
            words = re.findall(r"\s*\S+\s*", reply) or [reply]
            chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}]
            chunks += [
                {**base, "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": None}]} for w in words
            ]
            chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                chunks.append({**base, "choices": [], "usage": usage})
            events = [f"data: {json.dumps(ch)}\n\n" for ch in chunks] + ["data: [DONE]\n\n"]
            if cut_after is not None:
                self._cut(h, events, 1 + cut_after)
                return
            h._send(200, "".join(events).encode("utf-8"), content_type="text/event-stream")
            return
        out = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": finish}],
            "usage": usage,
        }
        if self.timings:
            out["timings"] = {"prompt_n": p, "prompt_ms": 0.0, "predicted_n": c, "predicted_ms": record["service_ms"]}
        h._send_json(200, out)

    @staticmethod
    def _cut(h: _Handler, events: list[str], keep: int) -> None:
        """The head of the whole transcript, its first ``keep`` events, then the connection closed: a stream that
        broke on its way."""
        whole = "".join(events).encode("utf-8")
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(whole)}\r\n\r\n"
        hook, h.before_send = h.before_send, None
        if hook is not None:
            hook(200)
        h.close_connection = True
        try:
            h.wfile.write(head.encode("latin-1") + "".join(events[:keep]).encode("utf-8"))
            h.wfile.flush()
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _reply_embeddings(self, h: _Handler, body: dict[str, Any], inputs: list[str], record: dict[str, Any]) -> None:
        dims = body.get("dimensions") or DEFAULT_DIMENSIONS
        as_b64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(inputs):
            vec = fake_embedding(text, int(dims))
            emb: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii") if as_b64 else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        p = record["prompt_tokens"]
        h._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": p, "total_tokens": p},
            },
        )


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: bind, announce, serve until killed."""
    ap = argparse.ArgumentParser(description="Scripted local OpenAI-compatible server for tests and benchmarks.")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port (read it from the 'listening on' line)")
    ap.add_argument("--script", help="JSON file with a list of rules")
    ap.add_argument("--log", help="append one JSON line per call (and per chat start event) to this file")
    ap.add_argument("--latency-ms", type=float, default=0.0, help="fixed sleep added to every chat/embedding call")
    ap.add_argument("--api-key", help="require 'Authorization: Bearer KEY' (401 otherwise)")
    ap.add_argument("--models", help="comma-separated model ids; others get 404 model_not_found")
    ap.add_argument("--structured", default="json_schema", choices=STRUCTURED, help="which response_format it takes")
    args = ap.parse_args(argv)
    rules: list[dict[str, Any]] = []
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            rules = json.load(f)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    fake = FakeOpenAI(
        rules=rules,
        log_path=args.log,
        latency_ms=args.latency_ms,
        api_key=args.api_key,
        models=models,
        structured=args.structured,
    )
    try:
        fake.serve_forever(args.port)
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
