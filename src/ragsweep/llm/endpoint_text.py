"""A line per LLM endpoint when it did not simply answer: how many requests it was given at once and why,
what calls waited, what timed out, what was cut or refused, how replies asked in a form were held to it and
what was asked again (from the manifest's invocation record)."""

from __future__ import annotations

from ragsweep.run_records import Manifest


def endpoint_lines(manifest: Manifest) -> list[str]:
    inv = (manifest.get("invocations") or [{}])[-1] or {}
    return [line for e in inv.get("llm_endpoints") or [] if (line := endpoint_line(e))]


def endpoint_line(e: dict) -> str | None:
    """None when there is nothing to say (every call answered at the configured concurrency)."""
    cap = e.get("capacity") or {}
    bits = []
    if cap.get("adaptive") and (cap.get("queued_at") or cap.get("limit", 0) < cap.get("maximum", 0)):
        seen = (
            f"{cap['queued_at']} at once served no more than fewer did, or timed out"
            if cap.get("queued_at")
            else "the server's replies never showed room for more"
        )
        bits.append(
            f"{cap['limit']} request(s) in flight at the end, of llm.concurrency {cap['maximum']} ({seen}; "
            f"between {cap['lowest']} and {cap['highest']})"
        )
    if cap.get("waited"):
        bits.append(
            f"{cap['waited']} calls waited for a free slot ({_duration(cap.get('wait_s', 0) / cap['waited'])} "
            "on average, in ragsweep: not in any latency figure)"
        )
    if cap.get("queued"):
        bits.append(
            f"{cap['queued']} calls waited {_duration(cap.get('queue_s', 0))} in the server's queue "
            "(left out of their service times)"
        )
    if e.get("timeouts"):
        bits.append(
            f"{e['timeouts']} timed out after llm.timeout (a retry is sent only once the server is "
            "presumed done with the copy it was computing)"
        )
    if e.get("truncated"):
        bits.append(f"{e['truncated']} replies cut at max_tokens")
    if (formed := _formed(e.get("structured") or {})) is not None:
        bits.append(formed)
    if not bits:
        return None
    return f"LLM {e.get('endpoint')} ({e.get('model')}): " + "; ".join(bits)


def _formed(st: dict) -> str | None:
    """How replies asked in a form (scores, verdicts, lists) were held to it, and what had to be asked again."""
    if not st.get("asked") and not st.get("reasks"):
        return None
    if st.get("mode") == "text":
        held = f"{st.get('asked', 0)} formed replies read as text (no schema support: {st.get('source')})"
    else:
        held = f"{st.get('asked', 0)} formed replies held to their JSON schema (response_format {st.get('mode')})"
    if st.get("refused"):
        held += f", refused for {', '.join(sorted(st['refused']))} (read as text)"
    if st.get("reasks"):
        usd = st.get("reask_usd")
        price = "unpriced" if usd is None else f"USD {usd:.4f}"
        held += f"; {st['reasks']} repair re-asks ({price}), {st.get('repaired', 0)} read after one"
    if st.get("unreadable"):
        held += f"; {st['unreadable']} still unreadable"
    return held


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.1f} s"
