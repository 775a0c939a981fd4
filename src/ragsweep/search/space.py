"""The grid as a search space: each configuration is a path of choices, one per axis that varies.

Axes are walked in a fixed order; at each axis only the values that some remaining configuration
has are offered, so every path ends at exactly one configuration of the grid (a BM25 retriever is
never offered an embedding, a reranker only the retrievers its ``apply_to`` names). Optuna needs
one fixed set of choices per parameter name, so a choice among a subset of an axis's values is a
parameter of its own, named by the subset (``reranker[none|maxsim]``): conditional parameters, as
in Optuna's define-by-run API (Akiba et al. 2019, "Optuna: A Next-generation Hyperparameter
Optimization Framework", KDD).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

AXES = (
    "splitter",
    "retriever",
    "embedding",
    "query_transform",
    "reranker",
    "postprocessor",
    "history",
    "top_k",
    "prompt",
)
# the retriever before the embedding: a BM25 path is offered none. IBM's RAG-HPO study (arXiv:2505.03452) found
# that fixing the models first beats pipeline order for greedy search
MODELS_FIRST = (
    "embedding",
    "reranker",
    "query_transform",
    "splitter",
    "retriever",
    "postprocessor",
    "history",
    "top_k",
    "prompt",
)


class ConfigLike(Protocol):
    """What the search reads of a configuration (a ``pipelines.grid.Configuration``)."""

    @property
    def config_hash(self) -> str: ...

    @property
    def config_id(self) -> str: ...


def axis_values(config) -> dict[str, str]:
    """One configuration's value on every axis, as strings (``none`` where it has no such part)."""

    def label(x) -> str:
        return x.label() if x is not None else "none"

    retriever = config.retriever.label() + (f"+{config.adaptive.spec.label()}" if config.adaptive is not None else "")
    return {
        "splitter": config.chunk_key,
        "embedding": label(config.embedding),
        "retriever": retriever,
        "query_transform": label(config.query_transform),
        "reranker": label(config.reranker),
        "postprocessor": label(config.postprocessor),
        "history": label(config.history),
        "top_k": str(config.top_k) if config.adaptive is None else "adaptive",
        "prompt": Path(config.prompt).stem if config.prompt is not None else "default",
    }


class SearchSpace:
    """The configurations of a grid, reachable by choosing one value per axis in ``order``."""

    def __init__(self, configs: Sequence, order: str = "plan") -> None:
        self.configs = list(configs)
        self.by_hash = {c.config_hash: c for c in self.configs}
        self.values = {c.config_hash: axis_values(c) for c in self.configs}
        walk = MODELS_FIRST if order == "models_first" else AXES
        self.options: dict[str, list[str]] = {}
        for axis in walk:
            seen = list(dict.fromkeys(v[axis] for v in self.values.values()))  # grid order: the spec's order
            if len(seen) > 1:
                self.options[axis] = seen
        self.axes = list(self.options)
        paths = {tuple(v[a] for a in self.axes) for v in self.values.values()}
        if len(paths) != len(self.configs):  # two configurations alike on every axis: tell them apart by id
            self.axes.append("config")
            self.options["config"] = [c.config_id for c in self.configs]
            for c in self.configs:
                self.values[c.config_hash]["config"] = c.config_id

    def __len__(self) -> int:
        return len(self.configs)

    def walk(self, choose: Callable[[str, list[str]], str]):
        """The configuration reached by ``choose(parameter name, options) -> option`` at each axis with a choice."""
        remaining = list(self.configs)
        for axis in self.axes:
            options = [o for o in self.options[axis] if any(self.values[c.config_hash][axis] == o for c in remaining)]
            value = options[0] if len(options) == 1 else choose(param_name(axis, options, self.options[axis]), options)
            remaining = [c for c in remaining if self.values[c.config_hash][axis] == value]
        return remaining[0]

    def params(self, config) -> dict[str, str]:
        """The parameters (name -> option) whose choice reaches ``config``."""
        chosen: dict[str, str] = {}
        mine = self.values[config.config_hash]

        def choose(name: str, options: list[str]) -> str:
            chosen[name] = mine[name.split("[", 1)[0]]
            return chosen[name]

        self.walk(choose)
        return chosen

    def matching(self, fixed: dict[str, str]) -> list:
        """The configurations whose axis values include ``fixed`` (axis -> value), in grid order."""
        return [c for c in self.configs if all(self.values[c.config_hash].get(a) == v for a, v in fixed.items())]


def param_name(axis: str, options: list[str], all_options: list[str]) -> str:
    """The axis itself when every value is on offer, else the axis with the offered subset."""
    return axis if options == all_options else f"{axis}[{'|'.join(options)}]"
