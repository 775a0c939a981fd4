"""A search's figures, from the manifest's ``search`` record: the best validation quality found against
the compute spent, and every trial's quality against its latency with the Pareto front."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.run_records import SearchRecord, SearchTrial

if TYPE_CHECKING:
    from ragsweep.results.run import RunData


def _record(run: RunData) -> SearchRecord | None:
    record = run.meta.get("search")
    return record if record and record.get("trials") else None


def search_progress(run: RunData):
    """Best-so-far validation quality against compute seconds; each evaluated trial a point (dropped by
    racing: hollow)."""
    import matplotlib.pyplot as plt

    record = _record(run)
    if record is None or not record.get("best_so_far"):
        return None
    curve = [p for p in record["best_so_far"] if p["best"] is not None]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.step(
        [p["seconds"] for p in curve], [p["best"] for p in curve], where="post", color="#0072B2", label="best so far"
    )
    spent, xs, ys, hollow = 0.0, [], [], []
    for t in record["trials"]:
        if t["state"] not in ("complete", "pruned", "failed"):
            continue
        spent += t["seconds"]  # as best_so_far counts it
        if t["state"] == "failed":
            continue
        if t["values"].get("quality") is not None:
            xs.append(spent)
            ys.append(t["values"]["quality"])
            hollow.append(t["state"] == "pruned")
    ax.scatter(
        [x for x, h in zip(xs, hollow) if not h],
        [y for y, h in zip(ys, hollow) if not h],
        s=14,
        color="#E69F00",
        label="trial",
        zorder=3,
    )
    if any(hollow):
        ax.scatter(
            [x for x, h in zip(xs, hollow) if h],
            [y for y, h in zip(ys, hollow) if h],
            s=14,
            facecolors="none",
            edgecolors="#999999",
            label="dropped by racing (its questions so far)",
            zorder=3,
        )
    ax.set_xlabel("compute spent on trials (s)")
    ax.set_ylabel(f"validation {record['metric']}")
    ax.set_title(f"{record['strategy']}: {record['used']['trials']} of {record['space']} configurations")
    ax.legend(frameon=False, loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def pareto_front(run: RunData):
    """Validation quality against median latency of every complete trial; the Pareto front joined."""
    import matplotlib.pyplot as plt

    from ragsweep.search.pareto import front

    record = _record(run)
    if record is None:
        return None
    done = [t for t in record["trials"] if t["state"] == "complete" and t["values"].get("quality") is not None]
    lat = {t["config_id"]: _latency(run, t) for t in done}
    known = {c: v for c, v in lat.items() if v is not None}
    done = [t for t in done if t["config_id"] in known]
    if len(done) < 2:
        return None
    points = [(t["values"]["quality"], known[t["config_id"]]) for t in done]
    lower = record["directions"][record["objectives"].index("quality")] == "minimize"
    idx = sorted(front(points, ["minimize" if lower else "maximize", "minimize"]), key=lambda i: points[i][1])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.scatter([p[1] for p in points], [p[0] for p in points], s=14, color="#999999", label="trial")
    ax.plot(
        [points[i][1] for i in idx],
        [points[i][0] for i in idx],
        "o-",
        color="#D55E00",
        label="Pareto front",
        drawstyle="steps-post",
    )
    for i in idx:
        ax.annotate(
            str(done[i]["config_id"]),
            (points[i][1], points[i][0]),
            fontsize=7,
            xytext=(4, 2),
            textcoords="offset points",
        )
    ax.set_xlabel("median latency per question (ms, validation)")
    ax.set_ylabel(f"validation {record['metric']}")
    ax.legend(frameon=False, loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def _latency(run: RunData, trial: SearchTrial) -> float | None:
    """A trial's latency: its objective when searched for, else the median of its validation records."""
    if trial["values"].get("latency") is not None:
        return float(trial["values"]["latency"])
    r = run.records
    if r.empty:
        return None
    r = r[(r["config_id"] == trial["config_id"]) & (r["split"] == "validation")]
    if r.empty:
        return None
    return float((r["retrieval_ms"].fillna(0) + r["generation_ms"].fillna(0)).median())
