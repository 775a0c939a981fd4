"""Credentials inside URLs, kept out of everything ragsweep stores or shows (manifest, report, exports, MLflow, logs).

A URL may carry a secret in two places: its userinfo (RFC 3986 section 3.2.1, ``user:password@host``, which the RFC
itself deprecates for passwords because they travel and get shown in clear text) and its query (``?api_key=``,
``?access_token=``, a presigned ``X-Amz-Signature``). The whole userinfo becomes ``***`` (the user name of
``TOKEN:x-oauth-basic@`` is the secret, so none of it is kept) and so does the value of every query (or fragment)
parameter named like a credential. Nothing else changes: a URL without a secret, and every text without such a URL,
is returned byte for byte, so this can be applied to anything without changing a hash, a path or a message.

Pure: the standard library only, no I/O.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar
from urllib.parse import unquote, unquote_plus

MASK = "***"

# RFC 3986 Appendix B: scheme, authority, path, query, fragment of any string (each part optional)
_PARTS = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S)
# a URL inside free text: scheme://, up to white space, a quote or an angle bracket
_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
_TRAILING = ".,;:!?)]}"  # sentence punctuation after a URL in text, not part of it
# parameter names that hold a credential: api_key, apikey, access_token, client_secret, password, auth, X-Amz-Signature,
# sig (Azure SAS), X-Amz-Credential, ...; a harmless name caught by it (monkey, author) only loses its value on show
_SECRET_NAME = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential", re.I)

T = TypeVar("T")


def redact_url(url: str) -> str:
    """``url`` with its userinfo and the values of credential-named query and fragment parameters as ``***``."""
    scheme, authority, path, query, fragment = _parts(url)
    if authority is not None:
        userinfo, at, host = authority.rpartition("@")
        if at and userinfo:
            authority = f"{MASK}@{host}"
    if query is not None:
        query = _masked(query)
    if fragment is not None and "=" in fragment:  # OAuth's implicit flow: #access_token=...
        fragment = _masked(fragment)
    return "".join(
        [
            f"{scheme}:" if scheme is not None else "",
            f"//{authority}" if authority is not None else "",
            path or "",
            f"?{query}" if query is not None else "",
            f"#{fragment}" if fragment is not None else "",
        ]
    )


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` as written and decoded (the password, or a user name alone, which is then a token;
    credential-named parameter values), for scrubbing them from texts that quote them without the URL around them
    (a server's error naming the path it was asked, an exception's message)."""
    _, authority, _, query, fragment = _parts(url)
    found: list[str] = []
    if authority is not None and "@" in authority:
        user, colon, password = authority.rpartition("@")[0].partition(":")
        raw = password if colon and password else user
        found += [raw, unquote(raw)]
    for name, value in _pairs(query) + _pairs(fragment):
        if value and _SECRET_NAME.search(unquote_plus(name)):
            found += [value, unquote_plus(value)]
    return [s for s in dict.fromkeys(found) if s and s != MASK]


def redact_text(text: str) -> str:
    """``text`` with every ``scheme://`` URL in it redacted (``redact_url``)."""
    if "://" not in text:
        return text
    return _IN_TEXT.sub(lambda m: _redact_match(m.group(0)), text)


def redact(value: T) -> T:
    """A JSON-like value (dicts, lists, tuples, strings; keys too) with every URL in its strings redacted."""
    out: Any
    if isinstance(value, str):
        out = redact_text(value)
    elif isinstance(value, dict):
        out = {redact(k): redact(v) for k, v in value.items()}
    elif isinstance(value, (list, tuple)):
        out = type(value)(redact(v) for v in value)
    else:
        out = value
    return out  # type: ignore[no-any-return]


def secrets_in(value: Any, shortest: int = 4) -> tuple[str, ...]:
    """The secret parts of every URL in a JSON-like value (a spec's dump), ``shortest`` characters or more (a shorter
    one would blank common words out of every scrubbed message)."""
    found: list[str] = []
    if isinstance(value, str):
        found = [s for m in _IN_TEXT.finditer(value) for s in url_secrets(_strip(m.group(0))[0])]
    elif isinstance(value, dict):
        found = [s for v in value.values() for s in secrets_in(v, shortest)]
    elif isinstance(value, (list, tuple)):
        found = [s for v in value for s in secrets_in(v, shortest)]
    return tuple(s for s in dict.fromkeys(found) if len(s) >= shortest)


def is_redacted(url: str | None) -> bool:
    """Whether ``url`` lost its credentials to ``redact_url`` (its userinfo or a credential parameter is ``***``): it
    was read from a stored spec, and the credentials, never stored, must be given again."""
    if not url or MASK not in url:
        return False
    _, authority, _, query, fragment = _parts(url)
    if (authority or "").rpartition("@")[0] == MASK:
        return True
    return any(
        value == MASK and _SECRET_NAME.search(unquote_plus(name)) for name, value in _pairs(query) + _pairs(fragment)
    )


def _parts(url: str) -> tuple[str | None, str | None, str | None, str | None, str | None]:
    m = _PARTS.match(url)
    assert m is not None  # every part of the pattern is optional
    scheme, authority, path, query, fragment = m.groups()
    return scheme, authority, path, query, fragment


def _pairs(part: str | None) -> list[tuple[str, str]]:
    """(name, value) of each ``name=value`` parameter of a query or fragment."""
    out = []
    for piece in (part or "").split("&"):
        name, eq, value = piece.partition("=")
        if eq:
            out.append((name, value))
    return out


def _masked(part: str) -> str:
    pieces = []
    for piece in part.split("&"):
        name, eq, value = piece.partition("=")
        if eq and value and _SECRET_NAME.search(unquote_plus(name)):
            piece = f"{name}={MASK}"
        pieces.append(piece)
    return "&".join(pieces)


def _strip(url: str) -> tuple[str, str]:
    """(the URL, the sentence punctuation that followed it in the text)."""
    core = url.rstrip(_TRAILING)
    return core, url[len(core) :]


def _redact_match(found: str) -> str:
    core, tail = _strip(found)
    return redact_url(core) + tail
