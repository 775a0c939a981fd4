"""Reading a spec: YAML in, a validated ``SweepSpec`` out, or one line naming the file, the field and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel

from ragsweep.config.chunk_context import PROMPT_PLACEHOLDERS, uses_llm
from ragsweep.config.evaluation import JudgePrompts
from ragsweep.config.sweep import SweepSpec
from ragsweep.config.tags import union_tags
from ragsweep.errors import RagsweepError


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _union_member(part) -> bool:
    """A member name pydantic inserts in the location of a plain union's error (``tuple[float, float]``,
    ``literal['tune']``, ``float``)."""
    return isinstance(part, str) and ("[" in part or part in ("float", "int", "str", "bool"))


def _clean_loc(loc: tuple) -> tuple:
    """Drop the union tags pydantic inserts after a discriminated field (``splitters.0.pattern.x``) and
    the member names it inserts in a plain union (``weights.tuple[float, float]``, ``abstain_below.float``)."""
    out: list = []
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i else None
        if _union_member(part):
            continue
        if (
            isinstance(part, str)
            and part in union_tags()
            and (isinstance(prev, int) or prev in ("corpus", "questions", "generator", "context"))
        ):
            continue
        out.append(part)
    return tuple(out)


def _model_at(loc: tuple):
    """The pydantic model class at a (raw) error location, for listing its keys; None if unknown."""
    import typing

    current: object = SweepSpec
    for part in loc:
        origin = typing.get_origin(current)
        if origin is Annotated:
            current = typing.get_args(current)[0]
            origin = typing.get_origin(current)
        if isinstance(part, int):
            if origin is list:
                current = typing.get_args(current)[0]
                continue
            return None
        if origin is Union:
            members = [
                typing.get_args(m)[0] if typing.get_origin(m) is Annotated else m for m in typing.get_args(current)
            ]
            match = [
                m for m in members if isinstance(m, type) and issubclass(m, BaseModel) and part in _literal_values(m)
            ]
            if not match:
                return None
            current = match[0]
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(part)
            if field is None:
                return None
            current = field.annotation
            if typing.get_origin(current) is Union and type(None) in typing.get_args(current):
                current = next(a for a in typing.get_args(current) if a is not type(None))
            continue
        return None
    if typing.get_origin(current) is Annotated:
        current = typing.get_args(current)[0]
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _literal_values(model: type[BaseModel]) -> set:
    import typing

    out: set = set()
    for name in ("kind", "format"):
        f = model.model_fields.get(name)
        if f is not None and typing.get_origin(f.annotation) is Literal:
            out.update(typing.get_args(f.annotation))
    return out


def _unknown_key(name: object, model: type[BaseModel] | None) -> str:
    """``unknown key `splittr`; did you mean `splitters`?``: the closest allowed name where one is close, else the
    allowed names."""
    import difflib

    keys = sorted(model.model_fields) if model is not None else []
    close = difflib.get_close_matches(str(name), keys, n=1, cutoff=0.6)
    if close:
        return f"unknown key `{name}`; did you mean `{close[0]}`?"
    return f"unknown key `{name}`" + (f"; allowed keys here: {', '.join(keys)}" if keys else "; check the spelling")


def _first_error(exc) -> str:
    """One line from a pydantic ValidationError: the first error (a misspelled key before anything else: its
    typo explains the missing field that comes with it), its field path and the hint."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    raw = tuple(p for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper()))
    field = _loc(_clean_loc(raw)) or "(top level)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = _unknown_key(raw[-1] if raw else "?", _model_at(raw[:-1]))
    elif err["type"] == "union_tag_invalid":
        ctx = err.get("ctx", {})
        msg = (
            f"unknown {ctx.get('discriminator', 'kind').strip(chr(39))} {ctx.get('tag')!r}; "
            f"expected one of {ctx.get('expected_tags')}"
        )
    elif err["type"] == "union_tag_not_found":
        msg = f"missing {err.get('ctx', {}).get('discriminator', 'kind')}"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    # a plain union (weights: a list or "tune") fails once per member at the same field: say all of them
    same = []
    if any(_union_member(p) for p in err["loc"]):
        same = [e for e in errors if e is not err and _clean_loc(e["loc"]) == _clean_loc(err["loc"])]
        msg = "; or ".join([msg] + [e["msg"] for e in same])
    more = len(errors) - 1 - len(same)
    return f"{field}: {msg}" + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def parse_spec(
    data: object, source: str = "<spec>", base_dir: Path | None = None, *, questions_needed: bool = True
) -> SweepSpec:
    """Validate a spec mapping; raise RagsweepError with one line naming ``source`` and the field.

    ``questions_needed=False`` (``ragsweep generate``, which writes them) lets the questions file be missing."""
    from pydantic import ValidationError

    if not isinstance(data, dict):
        raise RagsweepError(f"{source}: the spec must be a YAML mapping (key: value), got {type(data).__name__}")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise RagsweepError(f"{source}: {_first_error(exc)}") from None
    if base_dir is not None:
        spec = _resolve_paths(spec, base_dir)
    _check_files(spec, source, questions_needed)
    return spec


def load_spec(path: str | Path, *, questions_needed: bool = True) -> SweepSpec:
    """Read and validate a YAML sweep spec. Relative paths inside it are relative to the spec file."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise RagsweepError(f"{p}: spec file not found")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise RagsweepError(f"{p}: not UTF-8 text; save the spec as UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RagsweepError(f"{p}: malformed YAML{where}: {problem}") from None
    return parse_spec(data, str(p), base_dir=p.resolve().parent, questions_needed=questions_needed)


def _resolve_paths(spec: SweepSpec, base: Path) -> SweepSpec:
    def fix(model: BaseModel, names: tuple[str, ...] = ("path",)) -> BaseModel:
        updates = {}
        for name in names:
            v = getattr(model, name, None)
            if isinstance(v, Path) and not v.is_absolute():
                updates[name] = (base / v).resolve()
        return model.model_copy(update=updates) if updates else model

    ds = fix(spec.dataset, ("negatives",)).model_copy(
        update={"corpus": fix(spec.dataset.corpus), "questions": fix(spec.dataset.questions)}
    )
    updates: dict = {
        "dataset": ds,
        "vector_store": fix(spec.vector_store),
        "generator": fix(spec.generator, ("prompt_file",)),
    }
    prompt_files = getattr(spec.generator, "prompt_files", None)  # an llm generator's
    if prompt_files:
        updates["generator"] = updates["generator"].model_copy(
            update={"prompt_files": [p if p.is_absolute() else (base / p).resolve() for p in prompt_files]}
        )
    if spec.adaptive:
        updates["adaptive"] = [fix(a, ("labels_file",)) for a in spec.adaptive]
    if any(uses_llm(sp.context) for sp in spec.splitters):
        updates["splitters"] = [
            sp.model_copy(update={"context": fix(sp.context, ("prompt_file",))}) if uses_llm(sp.context) else sp
            for sp in spec.splitters
        ]
    if spec.stage2 is not None:
        prompts = fix(spec.stage2.prompts, tuple(JudgePrompts.model_fields))
        updates["stage2"] = spec.stage2.model_copy(update={"prompts": prompts})
    return spec.model_copy(update=updates)


def _prompt_files(spec: SweepSpec) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    prompt_file = getattr(spec.generator, "prompt_file", None)  # an llm generator's
    if prompt_file is not None:
        out.append(("generator.prompt_file", prompt_file))
    for i, p in enumerate(getattr(spec.generator, "prompt_files", None) or []):
        out.append((f"generator.prompt_files[{i}]", p))
    for i, sp in enumerate(spec.splitters):
        if uses_llm(sp.context) and sp.context.prompt_file is not None:
            out.append((f"splitters[{i}].context.prompt_file", sp.context.prompt_file))
    if spec.stage2 is not None:
        for name in JudgePrompts.model_fields:
            v = getattr(spec.stage2.prompts, name)
            if v is not None:
                out.append((f"stage2.prompts.{name}", v))
    return out


def _check_files(spec: SweepSpec, source: str, questions_needed: bool = True) -> None:
    for part, model in (("dataset.corpus", spec.dataset.corpus), ("dataset.questions", spec.dataset.questions)):
        path = getattr(model, "path", None)
        if part == "dataset.questions" and not questions_needed:
            continue
        if path is not None and not Path(path).exists():
            raise RagsweepError(
                f"{source}: {part}.path: {path} does not exist; fix the path (relative to the spec file)"
            )
    if spec.dataset.negatives is not None and not Path(spec.dataset.negatives).is_file():
        raise RagsweepError(
            f"{source}: dataset.negatives: {spec.dataset.negatives} does not exist; fix the path "
            "(relative to the spec file)"
        )
    for i, a in enumerate(spec.adaptive):
        if a.labels_file is not None and not Path(a.labels_file).is_file():
            raise RagsweepError(
                f"{source}: adaptive[{i}].labels_file: {a.labels_file} does not exist; fix the path "
                "(relative to the spec file)"
            )
    for part, path in _prompt_files(spec):
        if not Path(path).is_file():
            raise RagsweepError(f"{source}: {part}: {path} does not exist; fix the path (relative to the spec file)")
    for i, sp in enumerate(spec.splitters):
        path = sp.context.prompt_file if uses_llm(sp.context) else None
        if path is not None:
            text = Path(path).read_text(encoding="utf-8")
            if any(p not in text for p in PROMPT_PLACEHOLDERS):
                raise RagsweepError(
                    f"{source}: splitters[{i}].context.prompt_file: {path} needs the placeholders "
                    "{document} and {chunk}"
                )
