"""The LLM generator's prompt: one question of one HyPA type from one or two passages, as JSON (pure).

Type descriptions follow HyPA-RAG (Kalra et al. 2024, arXiv:2409.09046). The reply quotes its evidence
verbatim so that ``verify.Checker`` can find it in the corpus; an out-of-scope question instead names the
terms it asks about that the passages do not contain, and the checker verifies that the corpus lacks them.
"""

from __future__ import annotations

import json
import re

from ragsweep.llm.reply_form import ReplyForm, strict_object

MARKER = "You write one test question for a retrieval-augmented question answering system"

TYPE_INSTRUCTIONS = {
    "simple": "a simple question about one fact stated in the passage",
    "complex": "a complex question that needs two or more statements of the passages combined to answer",
    "distracting": "a question that opens with a sentence of irrelevant but plausible information, then asks "
    "about one fact of the passage",
    "situational": "a question asked from the point of view of a person in a concrete situation the passage "
    'governs ("I am ... ; can I ...?")',
    "double": "two distinct questions joined in one sentence, each answered by a different statement",
    "conversational": 'a follow-up question in a conversation, written as "Earlier: <a short earlier question that '
    'names the document and its subject> Follow-up: <the follow-up>": the follow-up refers back to the earlier '
    "question (it, they, that one) without naming the document, and the evidence answers the follow-up",
    "complex_situational": "a question about a concrete situation that needs two or more statements of the "
    "passages, applied in steps, to answer",
    "out_of_scope": "a question on the same subject matter that the passages do NOT answer (about something "
    "they never mention); give no evidence, and list in absent_terms one or two distinctive "
    "words or phrases of your question that occur nowhere in the passages",
    "vague": "an underspecified question (it does not say which document, party or case it means) that the "
    "passage still answers",
    "comparative": "a question that compares what passage 1 and passage 2 say on the same point; quote evidence "
    "from both",
    "rule_conclusion": "a question that states facts of a concrete case and asks what conclusion the rule in the "
    "passage leads to",
}
TWO_PASSAGES = ("complex", "complex_situational", "comparative")
_FOLLOW_UP = re.compile(r"^\s*Earlier:\s*(?P<earlier>.+?)\s*Follow-up:\s*(?P<question>\S.*?)\s*$", re.DOTALL)


def follow_up(question: str) -> tuple[str, list[dict]] | None:
    """A conversational reply's question split into the follow-up and its history (the earlier user question), or
    None when it is not written as "Earlier: ... Follow-up: ..."."""
    m = _FOLLOW_UP.match(question)
    if m is None:
        return None
    return m.group("question"), [{"role": "user", "content": " ".join(m.group("earlier").split())}]


def build(qtype: str, passages: list[tuple[str, str]]) -> str:
    """The prompt for one question of ``qtype`` from ``passages`` ((title, text) each)."""
    shown = "\n\n".join(
        f"<passage {i} title={json.dumps(title, ensure_ascii=False)}>\n{text}\n</passage>"
        for i, (title, text) in enumerate(passages, 1)
    )
    evidence = (
        '"evidence": [], "absent_terms": ["<a term of the question absent from the passages>"]'
        if qtype == "out_of_scope"
        else '"evidence": [{"passage": <its number>, "quote": "<one or more whole sentences copied verbatim '
        'from that passage>"}]'
    )
    return (
        f"{MARKER}. Read the passages and write {TYPE_INSTRUCTIONS[qtype]}.\n"
        f"Question type: {qtype}\n"
        "Rules: the question must make sense on its own to someone who has not seen the passages (name the "
        "document when it matters); the answer must be short and follow from the passages only; every quote "
        "must be copied character for character, without ellipses.\n\n"
        f"{shown}\n\n"
        "Reply with one JSON object and nothing else:\n"
        f'{{"question": "<the question>", "answer": "<the reference answer>", {evidence}}}'
    )


def parse(reply: str) -> dict | None:
    """The reply's JSON object (code fences and text around it allowed), or None."""
    text = reply.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    return from_object(obj) if isinstance(obj, dict) else None


def from_object(obj: dict) -> dict | None:
    """A reply's object as a candidate's parts (question, answer, quotes, absent terms), or None."""
    if not isinstance(obj.get("question"), str):
        return None
    ev = obj.get("evidence") or []
    terms = obj.get("absent_terms") or []
    if not isinstance(ev, list) or not isinstance(terms, list):
        return None
    quotes: list[tuple[int | None, str]] = []
    for e in ev:
        if isinstance(e, str):
            quotes.append((None, e))
        elif isinstance(e, dict) and isinstance(e.get("quote"), str):
            p = e.get("passage")
            quotes.append((p if isinstance(p, int) else None, e["quote"]))
        else:
            return None
    answer = obj.get("answer")
    return {
        "question": obj["question"].strip(),
        "answer": answer.strip() if isinstance(answer, str) else None,
        "quotes": quotes,
        "absent_terms": [t for t in terms if isinstance(t, str) and t.strip()],
    }


def _strict(obj: dict) -> dict:
    parts = from_object(obj)
    if parts is None or not parts["question"]:
        raise ValueError("no question in the object")
    return parts


def _text(reply: str):
    parts = parse(reply)
    return (parts, None) if parts is not None else (None, "not the JSON object asked for")


# bounds that a grammar closes, so that the longest object a looping model can write (about 1,500 characters)
# fits the default max_tokens (512)
QUESTION_FORM = ReplyForm(
    name="test_question",
    schema=strict_object(
        {
            "question": {"type": "string", "maxLength": 300},
            "answer": {"type": "string", "maxLength": 300},
            "evidence": {
                "type": "array",
                "items": strict_object(
                    {"passage": {"type": "integer", "enum": [1, 2]}, "quote": {"type": "string", "maxLength": 400}}
                ),
                "maxItems": 2,
            },
            "absent_terms": {"type": "array", "items": {"type": "string", "maxLength": 60}, "maxItems": 2},
        }
    ),
    from_json=_strict,
    parse_text=_text,
    text_format="the one JSON object the first message describes",
)
