"""``ragsweep judges evaluate``'s printed tables: one row per detector (then a footnote on detectors no better than
chance, and the unmeasured items with an example reason), then detection per category."""

from __future__ import annotations

CHANCE = "(!)"  # after a detector's name: no better than chance on the test items


def _ci(e: dict, fmt: str = ".3f") -> str:
    if e["value"] != e["value"]:
        return "-"
    lo, hi = e["lo"], e["hi"]
    return f"{e['value']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]" if lo == lo else f"{e['value']:{fmt}}"


def print_result(result: dict, console) -> None:
    from rich.table import Table

    repeated = any(r.get("self_agreement") for r in result["rows"])
    t = Table(
        title=f"Detectors against {result['labels']} ({result['items']} items: threshold tuned on "
        f"{result['dev']} dev items, figures on {result['test']} test items, 95% bootstrap CIs)",
        caption="target: grounded (label), or correctness >= 4; Spearman: of the score with the grounded "
        "label (0/1) and with correctness (1-5); ms: median per item; USD: mean per item (priced "
        "from tokens, cached calls included)",
    )
    for col in (
        "detector",
        "target",
        "macro-F1",
        "kappa",
        "AUROC",
        "Spearman grounded",
        "Spearman correctness",
        "ms/item",
        "USD/item",
        "threshold",
        "unmeasured",
        *(("self-agreement", "flips") if repeated else ()),
    ):
        t.add_column(col, justify="left" if col in ("detector", "target") else "right", no_wrap=col == "detector")
    for r in result["rows"]:
        usd = "-" if r["usd_per_item"] is None else _ci(r["usd_per_item"], ".5f")
        agree = _agreement(r.get("self_agreement")) if repeated else ()
        t.add_row(
            _name(r),
            r["label"],
            _ci(r["macro_f1"]),
            _ci(r["kappa"]),
            _ci(r["auroc"]),
            _ci(r["spearman_grounded"], "+.2f"),
            _ci(r["spearman_correctness"], "+.2f"),
            _ci(r["ms_per_item"], ".1f"),
            usd,
            f"{r['threshold']:.3f}",
            f"{r['unscored']}/{r.get('n_items') or result['items']}",
            *agree,
        )
    console.print(t)
    for line in notes(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    cats = result.get("categories") or []
    if cats:
        c = Table(
            title="Share of test items each detector calls grounded, per category (supported should be "
            "high, the others low)"
        )
        c.add_column("detector")
        for cat in cats:
            c.add_column(cat, justify="right")
        for r in result["rows"]:
            c.add_row(r["detector"], *(f"{r['per_category'][k]:.2f}" if k in r["per_category"] else "-" for k in cats))
        console.print(c)


def _agreement(a: dict | None) -> tuple[str, str]:
    """Krippendorff's alpha across repeats with its CI (``(!)`` where it reaches 0), and the share that flips."""
    if not a:
        return "-", "-"
    if a.get("alpha") is None:
        return "undefined (!)", "-"
    ci = f" [{a['lo']:.2f}, {a['hi']:.2f}]" if a.get("lo") is not None else ""
    flag = f" {CHANCE}" if a.get("no_better_than_chance") else ""
    return f"{a['alpha']:.2f}{ci}{flag}", f"{100 * a['flips']:.0f} %"


def _name(row: dict) -> str:
    return f"{row['detector']} {CHANCE}" if row.get("no_better_than_chance") else row["detector"]


def notes(result: dict) -> list[str]:
    """Lines under the table: which detectors are no better than chance (and why), what went unmeasured."""
    rows = result["rows"]
    chance = [r for r in rows if r.get("no_better_than_chance")]
    out = []
    if chance:
        out.append(
            f"{CHANCE} no better than chance on the {result['test']} test items: constant outputs, or "
            "kappa's 95% CI reaching 0 (agreement beyond chance not shown); the other figures do not "
            "make up for it"
        )
        out += [f"    {r['detector']}: {r['chance_reason']}" for r in chance]
    for r in rows:
        if r["unscored"]:
            why = r.get("unmeasured_example") or "no reason recorded"
            out.append(
                f"{r['detector']}: {r['unscored']}/{r.get('n_items') or result['items']} items unmeasured "
                f"(unparseable replies, failed calls; left out of the figures), e.g. {why}"
            )
    return out
