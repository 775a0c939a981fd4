"""What stage 2's judges showed of themselves, as lines: each judge's self-agreement across repeats (from the
manifest's ``stage2.self_agreement``), printed at the end of a run, by ``show`` and in the report."""

from __future__ import annotations

from ragsweep.run_records import Stage2Record


def self_agreement_lines(stage2: Stage2Record | None) -> list[str]:
    """A line per judge whose judgements were repeated: Krippendorff's alpha with its CI, the items that flip, and
    a warning where the CI reaches 0 (that judge never decides a verdict)."""
    out = []
    for judge, a in ((stage2 or {}).get("self_agreement") or {}).items():
        n, repeats = a.get("n_items") or 0, a.get("repeats") or 0
        if a.get("alpha") is None:
            what = "alpha undefined (fewer than two items judged twice, or one value everywhere)"
        else:
            what = (
                f"Krippendorff's alpha {a['alpha']:.2f} [{a['lo']:.2f}, {a['hi']:.2f}]"
                if a.get("lo") is not None
                else (f"Krippendorff's alpha {a['alpha']:.2f}")
            )
        flips = f"; {100 * a['flips']:.0f} % of the {n} items flip" if a.get("flips") is not None else ""
        line = f"{judge}: self-agreement over {repeats} repeats: {what}{flips}"
        if a.get("no_better_than_chance"):
            line += " (!) no better than chance: it does not decide the verdict"
        out.append(line)
    return out
