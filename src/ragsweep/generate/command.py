"""``ragsweep generate SOURCE --out FILE``: where the corpus and settings come from, the dry run, the LLM client.

SOURCE is a spec (its ``dataset.corpus``, ``generate:``, ``llm:``, ``prices:`` and ``cache_dir``), a folder
of documents, a JSONL corpus (``id`` and ``text`` fields) or ``demo``. Command-line options override the
``generate:`` section.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ragsweep.config import DatasetSpec, GenerateSpec, LLMSpec, SweepSpec
from ragsweep.errors import RagsweepError


@dataclass
class GenerateRequest:
    dataset: DatasetSpec
    generate: GenerateSpec
    spec: SweepSpec | None  # when SOURCE is a spec: its llm, prices and cache_dir
    source: str


def parse_mix(text: str) -> dict[str, float]:
    """``simple=0.5,out_of_scope=0.1`` as a mapping."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise RagsweepError(f"--mix: {part!r} is not TYPE=WEIGHT; e.g. --mix simple=0.6,out_of_scope=0.2")
    return out


def resolve(source: str, overrides: dict) -> GenerateRequest:
    from pydantic import ValidationError

    from ragsweep.config import FolderCorpus, JsonlCorpus

    spec = None
    path = Path(source)
    if source == "demo":
        dataset = DatasetSpec()
    elif path.suffix in (".yaml", ".yml"):
        from ragsweep.config import load_spec

        spec = load_spec(path, questions_needed=False)
        dataset = spec.dataset
    elif path.is_dir():
        dataset = DatasetSpec(corpus=FolderCorpus(format="folder", path=path))
    elif path.is_file() and path.suffix == ".jsonl":
        dataset = DatasetSpec(corpus=JsonlCorpus(format="jsonl", path=path))
    else:
        raise RagsweepError(
            f"{source}: not a spec (.yaml), a folder of documents, a .jsonl corpus or 'demo'; give one of those"
        )
    base = spec.generate if spec is not None and spec.generate is not None else GenerateSpec()
    try:
        gen = GenerateSpec.model_validate(
            {**base.model_dump(exclude_unset=True), **{k: v for k, v in overrides.items() if v is not None}}
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(["generate", *(str(p) for p in err["loc"])])
        raise RagsweepError(f"{field}: {err['msg'].removeprefix('Value error, ')}") from None
    if gen.generator == "llm" and (spec is None or (gen.llm or spec.llm) is None):
        raise RagsweepError(
            "--generator llm: needs an endpoint; give as SOURCE a spec with an llm: section (or "
            "generate.llm), or use the offline generator"
        )
    return GenerateRequest(dataset, gen, spec, source)


def _spec(req: GenerateRequest) -> SweepSpec:
    """The spec of a request for the llm generator (``resolve`` refuses one without a spec)."""
    assert req.spec is not None
    return req.spec


def _llm_spec(req: GenerateRequest) -> LLMSpec:
    llm = req.generate.llm or _spec(req).llm
    assert llm is not None  # resolve refuses the llm generator without an endpoint
    return llm


def estimate(req: GenerateRequest, documents):
    """The first round's prompts, counted (later rounds replace rejected questions: at most ``rounds`` x)."""
    from ragsweep.generate.llm_source import PassageCursor, prompt_for
    from ragsweep.generate.run import document_titles, quotas
    from ragsweep.llm.pricing import price_for
    from ragsweep.llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, count_tokens
    from ragsweep.pipelines.stage_estimate import StageEstimate

    if req.generate.generator == "offline":
        return []
    gen, llm = req.generate, _llm_spec(req)
    est = StageEstimate("generate", llm.model)
    cursor = PassageCursor(documents, document_titles(documents), gen.passage_tokens, gen.seed)
    price = price_for(llm.model, _spec(req).prices)
    for t, q in quotas(gen.weights(), gen.questions).items():
        for _ in range(int(-(-q * gen.oversample // 1))):
            got = prompt_for(t, cursor)
            if got is None:
                break
            est.add(1, count_tokens(got[0]) + MESSAGE_OVERHEAD + REPLY_PRIMING, llm.max_tokens, price)
    est.notes.append(
        f"the first round; rejected questions are replaced in up to {gen.rounds - 1} more rounds of "
        "fewer prompts; cached replies cost nothing"
    )
    return [est]


def run_generate(req: GenerateRequest, out: Path, *, cache: Path | None, budget: float | None, say) -> tuple:
    """Generate, write ``out`` and its side files; (outcome, paths)."""
    from ragsweep.datasets.load import load_corpus
    from ragsweep.generate import output
    from ragsweep.generate.run import generate_questions

    notes: list[str] = []
    documents = load_corpus(req.dataset, notes)
    if not documents:
        raise RagsweepError(f"{req.source}: the corpus has no documents with text; nothing to ask about")
    for n in notes:
        say(f"note: {n}")
    clients = None
    llm = None
    if req.generate.generator == "llm":
        from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
        from ragsweep.llm.clients import LLMClients, api_key_for
        from ragsweep.llm.pricing import price_for

        spec_llm = _llm_spec(req)
        api_key_for(spec_llm, "generate.llm" if req.generate.llm else "llm")
        if budget is not None and price_for(spec_llm.model, _spec(req).prices) is None:
            raise RagsweepError(
                f"--budget: model {spec_llm.model!r} has no price, so spending cannot be bounded; add "
                f"it to the spec's prices (USD per million tokens)"
            )
        cache_dir = CacheDir(Path(cache or _spec(req).cache_dir or DEFAULT_CACHE))
        cache_dir.root.mkdir(parents=True, exist_ok=True)
        clients = LLMClients(_spec(req), cache_dir.llm_calls, run_id=f"generate-{int(time.time())}", budget_usd=budget)
        llm = clients.get(spec_llm)
    endpoints: list[dict] = []
    try:
        outcome = generate_questions(req.generate, documents, llm=llm, say=say)
    finally:
        if clients is not None:
            from ragsweep.llm.endpoint_text import endpoint_line

            endpoints = [engine.describe() for engine in clients.engines]
            for e in endpoints:  # what the endpoint did, when more than answer (queueing, cut replies, re-asks)
                if line := endpoint_line(e):
                    say(line)
            clients.close()
    from ragsweep.datasets.types import Dataset

    extra = {
        "source": req.source,
        "documents": len(documents),
        "corpus_fingerprint": Dataset("corpus", documents, []).corpus_fingerprint(),
        **({"llm_endpoints": endpoints} if endpoints else {}),
    }
    return outcome, output.write(out, outcome, extra)


def _top_reasons(rejected: dict[str, int], n: int = 3) -> str:
    top = sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{k} {v}" for k, v in top)


def exit_status(summary: dict, rejected_path: Path) -> tuple[int, str | None]:
    """The exit code and the one line that explains it, so that a script notices a short set: 4 stopped early
    (budget, refused key; the summary says why), 2 none written, 3 fewer than asked, 0 all asked."""
    if summary.get("stopped"):
        return 4, None
    written, wanted, rejected = summary["written"], summary["wanted"], summary["rejected"]
    if written >= wanted:
        return 0, None
    failed = summary.get("failed_calls") or 0
    parts = ([f"rejected {_top_reasons(rejected)} (see {rejected_path})"] if rejected else []) + (
        [f"{failed} LLM calls failed"] if failed else []
    )
    why = "; ".join(parts) or (
        "no candidates: the corpus ran out of passages"
        if summary["generator"] == "llm"
        else "no candidates: the corpus has too few definitions, duties or sentences"
    )
    if written:
        return 3, f"wrote {written} of {wanted} questions asked; {why}"
    if summary["generator"] != "llm":
        hint = "try another --mix, a larger corpus, or --generator llm"
    elif failed > sum(rejected.values()):
        hint = "check the endpoint (generate.llm or llm) and its log, or try --generator offline"
    else:
        hint = "try a larger (instruction-tuned) model as generate.llm, or --generator offline"
    return 2, f"wrote none of {wanted} questions asked: {why}; {hint}"
