"""The repertoire: the shipped scores plus a user's own, looked up by id, title or alias.

A user's score file (``--scores DIR`` or a path) replaces a shipped piece of the
same id: that is how a modern realization of a lost piece is swapped for one's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yuesheng.errors import AmbiguousNameError, InvalidInputError, Problem, UnknownNameError
from yuesheng.music.score import Piece, load_piece
from yuesheng.text import normalize, normalize_pinyin, suggest

_HERE = Path(__file__).resolve().parent.parent  # the yuesheng package


def data_dir(name: str) -> Path:
    """The shipped ``scores`` or ``cues`` folder, installed (inside the package) or in a checkout."""
    for candidate in (_HERE / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"shipped {name}/ not found next to {_HERE}")


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

    def names(self) -> list[list[Any]]:
        """What finding a piece by name reads of each piece, by id: its spellings, and whether it sounds (a cue's
        checks are kept under a digest of it: ``check.kept``)."""
        return [[p.id, sorted(_keys(p)), bool(p.realization), bool(p.playable)] for p in self]

    def __iter__(self) -> Iterator[Piece]:
        return iter(sorted(self.pieces.values(), key=lambda p: p.id))

    def __len__(self) -> int:
        return len(self.pieces)


def _folder_scores(folder: Path) -> list[Path]:
    """The ``*.yaml`` files of a user's folder; an unreadable folder, or one with none, is an error."""
    try:
        names = sorted(folder.iterdir())
    except OSError as exc:
        raise InvalidInputError([Problem(str(folder), None, None, "", f"cannot read folder: {exc.strerror or exc}",
                                         "io")]) from None
    paths = [p for p in names if p.suffix == ".yaml"]
    if not paths:
        others = [p.name for p in names if p.suffix.lower() in (".yml", ".yaml")]
        hint = f" (found {', '.join(others[:3])}: score files must be named *.yaml)" if others else ""
        raise InvalidInputError([Problem(str(folder), None, None, "", f"no score files (*.yaml) in this folder{hint}",
                                         "io")])
    return paths


def score_paths(extra: Sequence[str | Path] = ()) -> list[Path]:
    """The shipped score files, then each extra file or every ``*.yaml`` of an extra folder."""
    paths = sorted(data_dir("scores").glob("*.yaml"))
    for text in extra:
        item = Path(text)
        if not str(text).strip():
            raise InvalidInputError([Problem("--scores", None, None, "", "an empty path (it would mean this folder)")])
        if not item.exists():
            raise InvalidInputError([Problem(str(item), None, None, "", "no such score file or folder")])
        paths += _folder_scores(item) if item.is_dir() else [item]
    return paths


def load_repertoire(extra: Sequence[str | Path] = ()) -> Repertoire:
    """The shipped scores, then the extra ones (replacing by id).

    Raises InvalidInputError holding the problems of every file that fails to load, and of
    two files of one folder (or the command line) that give the same id.
    """
    repertoire = Repertoire()
    problems: list[Problem] = []
    loaded: list[tuple[Path, Piece]] = []
    for path in score_paths(extra):
        try:
            piece = load_piece(path)
        except InvalidInputError as exc:
            problems.extend(exc.problems)
            continue
        loaded.append((path, piece))
        repertoire.add(piece)
    if problems := problems + duplicate_ids(loaded):
        raise InvalidInputError(problems)
    return repertoire


def duplicate_ids(loaded: Iterable[tuple[Path, Piece]]) -> list[Problem]:
    """Two files of one user folder that give the same piece id: a problem at each later file, naming the first
    (a file of a folder given with ``--scores`` replaces a shipped piece of its id; two of one folder are a
    mistake, since only one of them would be used)."""
    shipped = data_dir("scores").resolve()
    first: dict[tuple[Path, str], Path] = {}  # (folder, id) → the file that gave it
    problems = []
    for path, piece in loaded:
        folder = path.resolve().parent
        if folder != shipped and (other := first.setdefault((folder, piece.id), path)) != path:
            problems.append(Problem(str(path), None, None, "id", f"duplicate piece id {piece.id!r}: {other} has it "
                                    "too (only one of them would be used)", "reference"))
    return problems
