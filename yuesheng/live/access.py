"""The console's token: where it comes from, and what a token must be.

A token is never given on the command line (every user of the machine can read it there, in ``ps``): it comes
from the environment variable ``YUESHENG_TOKEN`` or from the first line of a file (``--token-file``, a regular file
of at most ``MAX_FILE`` bytes), else it is generated when the console listens off loopback. It is at least
``MIN_LENGTH`` characters of the URL-safe set ``A-Z a-z 0-9 - _ . ~`` (it travels in a URL and a cookie): 22, what
``secrets.token_urlsafe(16)`` makes, about 128 bits. A token that is one character repeated, a run (``abcdef…``,
``987654…``) or a short pattern repeated (``abab…``) is refused, whatever its length: it is guessed first.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from yuesheng.errors import InvalidInputError, UsageError
from yuesheng.yamlload import read_bytes

ENVIRONMENT = "YUESHENG_TOKEN"
MIN_LENGTH = 22
_PATTERN = 4  # a token that repeats a pattern of at most this many characters is refused
MAX_FILE = 4096
_SAFE = re.compile(r"[A-Za-z0-9._~-]+")


def check_token(token: str, where: str) -> str:
    """*token* if it is long enough and URL-safe; UsageError naming *where* it came from (never the token)."""
    if len(token) < MIN_LENGTH:
        raise UsageError(f"{where}: a token of {len(token)} characters; at least {MIN_LENGTH} are needed, about 128 "
                         "bits (python3 -c 'import secrets; print(secrets.token_urlsafe(16))' makes one)")
    if not _SAFE.fullmatch(token):
        raise UsageError(f"{where}: a token is made of A-Z a-z 0-9 - _ . ~ only (it travels in a URL)")
    if why := _guessable(token):
        raise UsageError(f"{where}: the token is {why}, guessed first; use a random one "
                         "(python3 -c 'import secrets; print(secrets.token_urlsafe(16))' makes one)")
    return token


def _guessable(token: str) -> str:
    """Why *token* is guessed first ('one character repeated', 'a run', 'a short pattern repeated'), or ''."""
    steps = {ord(b) - ord(a) for a, b in zip(token, token[1:], strict=False)}
    if steps == {0}:
        return "one character repeated"
    if steps <= {1, -9} or steps <= {-1, 9} or steps in ({1}, {-1}):  # abc…, 0123456789012…, and back
        return "a run"
    if any(token == (token[:n] * len(token))[:len(token)] for n in range(2, _PATTERN + 1)):
        return "a short pattern repeated"
    return ""


def read_token_file(path: str | Path) -> str:
    """The token on the first line of *path* (surrounding blanks ignored)."""
    try:
        raw = read_bytes(path, MAX_FILE)
    except InvalidInputError as exc:
        raise UsageError(f"--token-file {path}: {exc.problems[0].message}") from None
    if len(raw) > MAX_FILE:
        raise UsageError(f"--token-file {path}: over {MAX_FILE} bytes; a token file holds one line")
    lines = raw.decode("utf-8", "replace").splitlines()
    return check_token(lines[0].strip() if lines else "", f"--token-file {path}")


def console_token(environ: Mapping[str, str], token_file: str | None, *, loopback: bool) -> str | None:
    """The console's token: from *token_file*, else the environment, else generated off *loopback* (None on it)."""
    if token_file:
        return read_token_file(token_file)
    if environ.get(ENVIRONMENT):
        return check_token(environ[ENVIRONMENT].strip(), ENVIRONMENT)
    return None if loopback else secrets.token_urlsafe(16)
