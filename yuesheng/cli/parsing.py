"""What every command shares that needs only the standard library: exit codes, the parser, --format, JSON.

Exit codes: 0 ok (warnings allowed), 1 invalid input (bad file, unknown name,
failed check), 2 usage error. Kept apart from ``common`` (which imports the music)
so that a command that needs no music, ``source``, does not import it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from yuesheng.errors import UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are UsageErrors (exit 2, one line), not SystemExit, and whose arguments
    may be added by *fill* when it is first used: a command's module is imported only when that command runs."""

    def __init__(self, *args: Any, fill: Callable[[Parser], None] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fill = fill

    def filled(self) -> Parser:
        """This parser with its arguments added (once)."""
        fill, self._fill = self._fill, None
        if fill is not None:
            fill(self)
        return self

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None) -> tuple[argparse.Namespace, list[str]]:
        self.filled()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self.filled()
        return super().format_help()

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def dump_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def format_option(parser: argparse.ArgumentParser, *choices: str) -> None:
    parser.add_argument("--format", choices=choices or ("text", "json"), default="text")
