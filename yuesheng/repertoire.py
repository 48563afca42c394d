"""The repertoire: the shipped scores plus a user's own, looked up by id, title or alias.

A user's score file (``--scores DIR`` or a path) replaces a shipped piece of the
same id: that is how a modern realization of a lost piece is swapped for one's own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from yuesheng.errors import InvalidInputError, Problem, UnknownNameError
from yuesheng.lulu import normalize, normalize_pinyin, suggest
from yuesheng.score import Piece, load_piece

_HERE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The shipped ``scores`` or ``cues`` folder, installed (inside the package) or in a checkout."""
    for candidate in (_HERE / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"shipped {name}/ not found next to {_HERE}")


class AmbiguousNameError(UnknownNameError):
    """A title shared by several pieces (騶虞 has two settings)."""

    def __init__(self, name: str, ids: list[str]) -> None:
        super().__init__("piece", name, ids)
        self.args = (f"{name!r} names {len(ids)} pieces: {', '.join(ids)}; give the id",)


def _keys(piece: Piece) -> set[str]:
    """Every spelling that finds *piece*: id, title, aliases, and 'title + mode' (騶虞黄鍾羽)."""
    names = {piece.id, piece.title, *piece.aliases}
    if piece.mode is not None:
        names |= {n + piece.mode.name for n in names if not n.isascii()}
    return {normalize(n) for n in names} | {normalize_pinyin(n) for n in names if n.isascii()}


@dataclass
class Repertoire:
    """Pieces by id, with a lookup table of every spelling."""

    pieces: dict[str, Piece] = field(default_factory=dict)

    def add(self, piece: Piece) -> None:
        """Add (or replace, by id) a piece."""
        self.pieces[piece.id] = piece

    def find(self, name: str) -> Piece:
        """The piece named *name* (id, title in traditional or simplified characters, alias, pinyin)."""
        if name in self.pieces:
            return self.pieces[name]
        wanted = {normalize(name), normalize_pinyin(name)} - {""}
        hits = sorted(pid for pid, p in self.pieces.items() if wanted & _keys(p))
        if len(hits) == 1:
            return self.pieces[hits[0]]
        if hits:
            raise AmbiguousNameError(name, hits)
        every = sorted({k for p in self.pieces.values() for k in _keys(p)})
        raise UnknownNameError("piece", name, suggest(normalize(name), every))

    def __iter__(self) -> Iterator[Piece]:
        return iter(sorted(self.pieces.values(), key=lambda p: p.id))

    def __len__(self) -> int:
        return len(self.pieces)


def score_paths(extra: Sequence[str | Path] = ()) -> list[Path]:
    """The shipped score files, then each extra file or every ``*.yaml`` of an extra folder."""
    paths = sorted(data_dir("scores").glob("*.yaml"))
    for item in map(Path, extra):
        if not item.exists():
            raise InvalidInputError([Problem(str(item), None, None, "", "no such score file or folder")])
        paths += sorted(item.glob("*.yaml")) if item.is_dir() else [item]
    return paths


def load_repertoire(extra: Sequence[str | Path] = ()) -> Repertoire:
    """The shipped scores, then the extra ones (replacing by id).

    Raises InvalidInputError holding the problems of every file that fails to load.
    """
    repertoire = Repertoire()
    problems: list[Problem] = []
    for path in score_paths(extra):
        try:
            repertoire.add(load_piece(path))
        except InvalidInputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InvalidInputError(problems)
    return repertoire
