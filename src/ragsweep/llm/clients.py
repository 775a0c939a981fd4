"""The LLMs of one invocation: the generator's (also used for query rewrites) and the judges'.

Calls to the same endpoint and model share one engine (one concurrency ceiling, one set of rate
limits); all share the call cache and the invocation's budget.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ragsweep.config import LLMSpec, SweepSpec
from ragsweep.config.chunk_context import uses_llm
from ragsweep.errors import RagsweepError
from ragsweep.llm.budget import Budget


def llms_in_use(spec: SweepSpec, with_stage2: bool = True) -> list[tuple[str, LLMSpec]]:
    """(role, spec) for every LLM the sweep will call."""
    out: list[tuple[str, LLMSpec]] = []
    if spec.llm is not None and (
        spec.generator.calls_llm
        or any(getattr(r, "num_queries", 1) > 1 for r in spec.retrievers)
        or any(getattr(r, "uses_llm", False) for r in spec.retrievers)
        or any(getattr(r, "uses_llm", False) for r in spec.rerankers)
        or any(getattr(t, "uses_llm", False) for t in spec.query_transforms)
        or any(getattr(h, "uses_llm", False) for h in spec.history)
    ):
        out.append(("llm", spec.llm))
    for i, sp in enumerate(spec.splitters):  # contextual chunks written by an LLM: the spec's, or their own
        ctx = getattr(sp, "context", None)
        if uses_llm(ctx):  # kind llm
            own = ctx.llm is not None
            llm = ctx.llm or spec.llm
            assert llm is not None  # SweepSpec's validation: an LLM context has its own llm or the spec's
            if own or not any(role == "llm" for role, _ in out):
                out.append((f"splitters[{i}].context.llm" if own else "llm", llm))
    if with_stage2 and spec.stage2 is not None:
        judge = spec.stage2.llm or spec.llm
        if judge is not None:
            out.append(("stage2.llm" if spec.stage2.llm else "llm", judge))
    return out


def api_key_for(llm: LLMSpec, field: str = "llm") -> str | None:
    if llm.api_key_env is None:
        return None
    value = os.environ.get(llm.api_key_env, "")
    if not value:
        raise RagsweepError(
            f"{field}.api_key_env: environment variable {llm.api_key_env} is not set; export it, or set "
            f"api_key_env: null for a local server that needs no key"
        )
    return value


def secret_values(spec: SweepSpec) -> tuple[str, ...]:
    """The API keys in use, and the credentials any URL of the spec carries (a base_url's password or
    ``?api_key=``), so that an error quoting one (a server naming the path it was asked) is scrubbed."""
    from ragsweep.redact import secrets_in

    llms = [llm for _, llm in llms_in_use(spec)]
    if spec.generate is not None and spec.generate.llm is not None:  # ragsweep generate's own endpoint
        llms.append(spec.generate.llm)
    names = {llm.api_key_env for llm in llms if llm.api_key_env}
    keys = tuple(v for v in (os.environ.get(n, "") for n in sorted(names)) if len(v) >= 4)
    return keys + secrets_in(spec.model_dump(mode="json"))


def refuse_redacted(llm: LLMSpec, field: str = "llm") -> None:
    """A one-line error for a base_url read back from a stored spec (a manifest, an export's pipeline.json), whose
    credentials ragsweep never wrote: it would reach the server with ``***`` for a key."""
    from ragsweep.redact import is_redacted

    if is_redacted(llm.base_url):
        raise RagsweepError(
            f"{field}.base_url {llm.base_url}: its credentials were left out when the spec was stored (ragsweep "
            "never writes them); write them back into that base_url, or give the key through api_key_env (an "
            "environment variable) and a base_url without credentials"
        )


def check_llms(spec: SweepSpec, budget_usd: float | None) -> None:
    """Preflight: keys are set and, under a budget, every model has a price."""
    from ragsweep.llm.pricing import price_for

    for role, llm in llms_in_use(spec):
        refuse_redacted(llm, role)
        api_key_for(llm, role)
        if budget_usd is not None and price_for(llm.model, spec.prices) is None:
            raise RagsweepError(
                f"--budget: model {llm.model!r} ({role}.model) has no price, so spending cannot be bounded; "
                f"add it to the spec's prices, e.g. prices: {{{llm.model}: {{input: 0.5, output: 1.5}}}} (USD per "
                "million tokens)"
            )


def _identity(llm: LLMSpec) -> str:
    return json.dumps(llm.model_dump(mode="json"), sort_keys=True)


class LLMClients:
    def __init__(self, spec: SweepSpec, cache_path: Path, *, run_id: str, budget_usd: float | None = None) -> None:
        self.spec = spec
        self.cache_path = cache_path
        self.run_id = run_id
        self.budget = Budget(budget_usd) if budget_usd is not None else None
        self._llms: dict[str, object] = {}
        self._engines: dict[str, object] = {}
        self._caches: list = []
        self._secrets = secret_values(spec)

    def get(self, llm: LLMSpec):
        """The ``SweepLLM`` for ``llm`` (one per distinct spec, one engine per endpoint and model)."""
        from ragsweep.llm.cache import LLMCallCache
        from ragsweep.llm.engine import LLMEngine
        from ragsweep.llm.engine_inputs import RunTerms
        from ragsweep.llm.openai_like import SweepLLM
        from ragsweep.llm.pricing import price_for
        from ragsweep.llm.server_info import probe

        ident = _identity(llm)
        if ident not in self._llms:
            refuse_redacted(llm)
            ekey = json.dumps([llm.base_url, llm.model])
            if ekey not in self._engines:
                cache = LLMCallCache(self.cache_path)
                self._caches.append(cache)
                price = price_for(llm.model, self.spec.prices)
                self._engines[ekey] = LLMEngine(
                    llm,
                    cache,
                    run=RunTerms(price=price, budget=self.budget, run_id=self.run_id, secrets=self._secrets),
                    seed=self.spec.seed,
                    server=probe(
                        llm.base_url,
                        llm.model,
                        api_key_for(llm),
                        llm.context_window,
                        llm.timeout,
                        str(self.cache_path.with_name("server_facts.json")),
                    ),
                )
            self._llms[ident] = SweepLLM(llm, self._engines[ekey], api_key_for(llm))
        return self._llms[ident]

    @property
    def engines(self) -> list:
        return list(self._engines.values())

    def counters(self) -> dict:
        return {
            "llm_calls_made": sum(e.calls for e in self.engines),
            "llm_cache_hits": sum(e.cache_hits for e in self.engines),
            "llm_retries": sum(e.retries for e in self.engines),
            "llm_failed_calls": sum(e.failures for e in self.engines),
            "llm_max_in_flight": max((e.max_in_flight for e in self.engines), default=0),
            "llm_timeouts": sum(e.timeouts for e in self.engines),
            "llm_truncated": sum(e.truncated for e in self.engines),
            "llm_endpoints": [e.describe() for e in self.engines],
            "budget_usd": self.budget.limit if self.budget else None,
            "spent_usd": self.budget.spent if self.budget else None,
        }

    def close(self) -> None:
        for e in self.engines:
            e.close()
        for c in self._caches:
            c.close()
