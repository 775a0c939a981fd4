"""The LLM generator's prompt templates: the default (LlamaIndex's text-QA prompt, with the refusal
instruction when ``generator.refusal`` is set), one file (``prompt_file``) or an axis of files
(``prompt_files``: one configuration per template, labelled by the file's stem). Templates are read
here only, so the grid, the generate stage and the cost estimate see the same text."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ragsweep.errors import RagsweepError

PLACEHOLDERS = ("{context_str}", "{query_str}")


def refusal_template(refusal: str) -> str:
    """LlamaIndex's default text-QA prompt with one instruction: reply exactly ``refusal`` when the
    context does not answer the query (or the query is unrelated to it, or unsafe)."""
    from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT_TMPL

    # LlamaIndex's templates fill their known {slots} only (``SafeFormatter``): the refusal's own braces reach the
    # model as written (escaped, they arrived doubled and the model's reply no longer matched the refusal)
    marker = "answer the query.\n"
    instruction = (
        f"If the context does not contain the answer, or the query is unrelated to the context or asks "
        f"for something unsafe, reply exactly: {refusal}\n"
    )
    assert marker in DEFAULT_TEXT_QA_PROMPT_TMPL
    return DEFAULT_TEXT_QA_PROMPT_TMPL.replace(marker, marker + instruction, 1)


def prompt_label(path: Path | None) -> str | None:
    """The id part of a template of the ``prompt_files`` axis: ``p`` + the file's stem."""
    return None if path is None else f"p{Path(path).stem}"


def template_text(generator, path: str | Path | None) -> str | None:
    """The template a configuration answers with: the file's text, else the refusal template when a
    refusal is configured, else None (LlamaIndex's default prompt)."""
    if path is not None:
        return Path(path).read_text(encoding="utf-8")
    refusal = getattr(generator, "refusal", None)
    return refusal_template(refusal) if refusal else None


def prompt_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_text(encoding="utf-8").encode()).hexdigest()


def check_templates(generator) -> None:
    """Every template file must hold ``{context_str}`` and ``{query_str}``; one line naming the field."""
    if getattr(generator, "kind", None) != "llm":
        return
    files = getattr(generator, "prompt_files", None)
    named = (
        [(f"generator.prompt_files[{i}]", p) for i, p in enumerate(files)]
        if files
        else [("generator.prompt_file", generator.prompt_file)]
        if generator.prompt_file is not None
        else []
    )
    for field, path in named:
        text = Path(path).read_text(encoding="utf-8")
        if any(p not in text for p in PLACEHOLDERS):
            raise RagsweepError(f"{field}: {path} needs the placeholders {{context_str}} and {{query_str}}")


def prompt_axis(spec, configs: list) -> list:
    """With ``generator.prompt_files``: each configuration once per template, its id ending in the
    template's label (``...-k5-pconcise``) and its generator identity holding the template's hash.
    Without it the configurations are returned as they are (ids and hashes unchanged)."""
    from dataclasses import replace

    files = getattr(spec.generator, "prompt_files", None)
    if not files:
        return configs
    hashes = {str(p): prompt_sha256(p) for p in files}
    return [
        replace(
            c,
            config_id=f"{c.config_id}-{prompt_label(p)}",
            prompt=str(p),
            generator={**c.generator, "prompt_sha256": hashes[str(p)]},
        )
        for c in configs
        for p in files
    ]
