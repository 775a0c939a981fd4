"""Concatenation (offline): the conversation's last user messages, then the follow-up, as one query. The
simplest use of a history (the "query rewriting by concatenation" baseline of conversational search, e.g. TREC
CAsT's "all previous utterances" runs; Dalton et al. 2020): it needs no model, so its query vectors are embedded
ahead, with the questions'."""

from __future__ import annotations

from ragsweep.datasets.types import Question
from ragsweep.history.base import HistoryMode, Standalone, user_turns


def offline_text(spec, question: Question) -> str:
    """The query searched with: the last ``spec.user_turns`` user messages and the follow-up, one per line."""
    return "\n".join([*user_turns(question.history, spec.user_turns), question.question])


class ConcatHistory(HistoryMode):
    def standalone(self, question: Question) -> Standalone:
        return Standalone(offline_text(self.spec, question))
