"""Near-duplicate questions: a question too similar to one already kept is dropped (pure, deterministic).

Similarity is the cosine of TF-IDF vectors of word uni- and bigrams, with IDF over the candidate questions
of the batch and those kept, so the words templates and document titles share weigh little and the words
that make two questions differ weigh much (Salton & Buckley 1988, "Term-weighting approaches in automatic
text retrieval"; near-duplicate filtering after Broder 1997, with TF-IDF in place of shingles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer


class NearDuplicates:
    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.kept: list[str] = []
        self._vec: TfidfVectorizer | None = None
        self._matrix: sp.csr_matrix | None = None

    def fit(self, batch: list[str]) -> None:
        """Weigh words by their IDF over ``batch`` (the candidates about to be checked) and the kept questions."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._vec = TfidfVectorizer(
            ngram_range=(1, 2), lowercase=True, sublinear_tf=True, norm="l2", token_pattern=r"(?u)\b\w+\b"
        ).fit(self.kept + list(batch) or ["empty"])
        self._matrix = self._vec.transform(self.kept) if self.kept else None

    def add_if_new(self, text: str) -> bool:
        """Keep ``text`` unless a kept question is at least ``threshold`` similar; True when kept."""
        import scipy.sparse as sp

        if self._vec is None:
            self.fit([text])
        assert self._vec is not None  # fit() always sets it
        v = self._vec.transform([text])
        if self._matrix is not None and v.nnz and (self._matrix @ v.T).max() >= self.threshold - 1e-12:
            return False
        self._matrix = v if self._matrix is None else sp.vstack([self._matrix, v], format="csr")
        self.kept.append(text)
        return True
