"""How long a request takes a server to compute, from its size: learnt from requests that had the
server to themselves (or whose service time the server reported).

An LLM request's service time is about a fixed cost plus a cost per prompt token (prefill) plus a cost
per generated token (decode); the three are fitted by non-negative least squares on recent samples.
With few samples it falls back to one rate per unit of work (decode tokens, and prompt tokens at a
twentieth of their weight: prefill is one to two orders of magnitude faster per token than decode on
CPUs and GPUs alike), which needs one sample.
"""

from __future__ import annotations

from collections import deque
from statistics import median

PREFILL_WEIGHT = 1 / 20  # a prompt token against a generated one, in the one-rate fallback
MIN_FIT = 6  # samples before the three-cost fit is used


def _work(prompt_tokens: int, completion_tokens: int) -> float:
    return 1.0 + completion_tokens + prompt_tokens * PREFILL_WEIGHT


class ServiceModel:
    def __init__(self, maxlen: int = 64) -> None:
        self.samples: deque[tuple[int, int, float]] = deque(maxlen=maxlen)
        self._coef: tuple[float, float, float] | None = None
        self._stale = False

    def add(self, prompt_tokens: int, completion_tokens: int, ms: float) -> None:
        if ms > 0:
            self.samples.append((int(prompt_tokens), int(completion_tokens), float(ms)))
            self._stale = True

    def predict(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Milliseconds, or None before the first sample."""
        if not self.samples:
            return None
        coef = self._fit()
        if coef is not None:
            a, b, c = coef
            ms = a + b * prompt_tokens + c * completion_tokens
            if ms > 0:
                return ms
        rate = median(ms / _work(p, o) for p, o, ms in self.samples)
        return rate * _work(prompt_tokens, completion_tokens)

    def _fit(self) -> tuple[float, float, float] | None:
        if not self._stale:
            return self._coef
        self._stale = False
        self._coef = None
        if len(self.samples) < MIN_FIT:
            return None
        import numpy as np
        from scipy.optimize import nnls

        x = np.array([[1.0, p, o] for p, o, _ in self.samples])
        y = np.array([ms for _, _, ms in self.samples])
        if np.linalg.matrix_rank(x) < 3:  # every sample the same size: the fallback rate is as good
            return None
        try:
            coef, _ = nnls(x, y)
        except RuntimeError:  # no convergence within its iterations: the one-rate fallback serves
            return None
        self._coef = (float(coef[0]), float(coef[1]), float(coef[2]))
        return self._coef
