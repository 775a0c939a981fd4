"""Pareto fronts and their hypervolume, pure functions over objective vectors.

A point dominates another when it is no worse in every objective and better in one (Deb 2001,
"Multi-Objective Optimization Using Evolutionary Algorithms", Wiley); the hypervolume is the volume
the front dominates up to a reference point (Zitzler & Thiele 1999, IEEE TEVC 3(4)), the measure by
which one front covers another.
"""

from __future__ import annotations

from collections.abc import Sequence


def _signed(points: Sequence[Sequence[float]], directions: Sequence[str]) -> list[tuple[float, ...]]:
    """Every objective turned into one to minimise."""
    return [tuple(-x if d == "maximize" else x for x, d in zip(p, directions)) for p in points]


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` dominates ``b`` (both minimised)."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def front(points: Sequence[Sequence[float]], directions: Sequence[str]) -> list[int]:
    """Indices of the non-dominated points (duplicates of a front point are all on it)."""
    signed = _signed(points, directions)
    return [i for i, p in enumerate(signed) if not any(dominates(q, p) for q in signed)]


def hypervolume(points: Sequence[Sequence[float]], directions: Sequence[str], reference: Sequence[float]) -> float:
    """The volume the points dominate up to ``reference`` (a point worse than every one in each objective),
    exactly, by slicing along the first objective (enough for the two or three objectives of a search)."""
    ref = _signed([reference], directions)[0]
    pts = sorted({p for p in _signed(points, directions) if all(x < r for x, r in zip(p, ref))})
    return _volume(pts, ref)


def _volume(pts: list[tuple[float, ...]], ref: tuple[float, ...]) -> float:
    if not pts:
        return 0.0
    if len(ref) == 1:
        return ref[0] - min(p[0] for p in pts)
    total = 0.0
    for i, p in enumerate(pts):  # sorted by the first objective: slab [p0, next p0) is dominated by pts[:i+1]
        upper = pts[i + 1][0] if i + 1 < len(pts) else ref[0]
        if upper > p[0]:
            total += (upper - p[0]) * _volume(sorted({q[1:] for q in pts[: i + 1]}), ref[1:])
    return total
