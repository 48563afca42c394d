"""A piece: stanzas of notes with lyric, 律, 俗字 and source page; loading and cross-checks.

A score file is YAML (see ``docs/scores.md``)::

    id: luming
    title: 鹿鳴
    aliases: [鹿鸣]
    mode: 黄鍾宫
    provenance: sourced          # or: lost
    source: {text: 瑟譜 卷二 詩舊譜, pages: [002-1a, 002-2a], mode_line: …}
    stanzas:
      - page: 002-1a
        lyrics: 呦呦鹿鳴…        # exactly as transmitted
        lines: 呦呦鹿鳴 食野之苹 …  # the same, a space at each line end (句)
        lu: 黄南蕤姑…            # the 律 line, exactly as transmitted
        suzi: 六工勾一…          # the 俗字 line, exactly as transmitted
    emendations:
      - {stanza: 1, line: lu, position: 31, transmitted: 大, adopted: 太, reason: …}
    irregularities:
      - {stanza: 5, check: final, reason: …, cite: 瑟譜 002-5a}

The transmitted lines stay untouched; emendations are applied on load, and the
cross-checks (equal lengths, 律 agrees with 俗字, 律 in the mode's scale, the
final, the lines against the 章N句M of the mode line) run on the emended text.
A disagreement that no emendation or recorded irregularity explains is a
problem. ``source_problems`` (run by ``score check``) holds a sourced piece's
stanzas (lyrics and pitch block, as transmitted) and mode line to their pages
of the shipped 瑟譜, a lost piece's quote to its 儀禮集釋 page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any

from yuesheng.checking import Checker, type_name
from yuesheng.errors import InvalidInputError, InvalidValueError, Problem, UnknownNameError, UnknownPageError
from yuesheng.music.lulu import LU, SUZI_SYMBOLS, Mode, Pitch, parse_mode, resolve
from yuesheng.yamlload import Document, PathKey, load

LU_SYMBOLS = "".join(the_lu.short for the_lu in LU) + "夹"
LINES = ("lyrics", "lu", "suzi")
CHECKS = ("length", "lu", "suzi", "agree", "scale", "start", "final", "lines")


class Provenance(Enum):
    """Where a piece's notes come from."""

    SOURCED = "sourced"  # encoded from 瑟譜
    LOST = "lost"  # no notation survives; any notes are a labelled modern realization


@dataclass(frozen=True, slots=True)
class Note:
    """One sung syllable (or one played note of an instrumental realization)."""

    lyric: str
    lu: str
    suzi: str
    pitch: Pitch
    stanza: int
    position: int


@dataclass(frozen=True, slots=True)
class Stanza:
    """One stanza as transmitted, its page, and its notes after emendation."""

    number: int
    page: str
    lyrics: str
    lu_line: str
    suzi_line: str
    notes: tuple[Note, ...]
    line_lengths: tuple[int, ...] = ()  # the notes in each line (句) of the poem; () if the score does not say

    @property
    def line_ends(self) -> tuple[int, ...]:
        """The number of notes sung when each line but the last ends (where a bar falls inside the stanza)."""
        ends, total = [], 0
        for length in self.line_lengths[:-1]:
            total += length
            ends.append(total)
        return tuple(ends)


@dataclass(frozen=True, slots=True)
class Emendation:
    """A correction of the transmitted text: at *position* (1-based), *transmitted* → *adopted*."""

    stanza: int
    line: str
    position: int
    transmitted: str
    adopted: str
    reason: str


@dataclass(frozen=True, slots=True)
class Irregularity:
    """A departure from a cross-check that the source itself explains; recorded, not fixed."""

    stanza: int
    check: str
    reason: str
    cite: str


@dataclass(frozen=True, slots=True)
class ModernRealization:
    """The label and rule of a modern realization of a lost piece (not ``lulu.Realization``, which sounds 律)."""

    label: str
    rule: str

    @property
    def heading(self) -> str:
        """The label to open a sentence: its first letter capital, the rest in the author's case ('after ZHU
        Zaiyu' → 'After ZHU Zaiyu')."""
        return self.label[:1].upper() + self.label[1:]


@dataclass(frozen=True, slots=True)
class Source:
    """Where a sourced piece is written: the text, its pages, and the mode line with its page."""

    text: str = ""
    pages: tuple[str, ...] = ()
    mode_line: str = ""
    mode_page: str = ""

    def citation(self) -> str:
        """'瑟譜 (KR1i0004) 卷二 詩舊譜, 002-1a, 002-2a' (the pages only if there are any)."""
        return self.text + (f", {', '.join(self.pages)}" if self.pages else "")

    def as_dict(self) -> dict[str, Any]:
        """The ``source`` mapping as a score file writes it (keys that are set)."""
        data = {"text": self.text, "pages": list(self.pages), "mode_line": self.mode_line, "mode_page": self.mode_page}
        return {k: v for k, v in data.items() if v}


@dataclass(frozen=True, slots=True)
class Lost:
    """A lost piece: the passage that says so (a 儀禮集釋 page and a quote), and the passage of each rite whose own
    text says so (``rites``: rite id → Lost), where it differs."""

    cite: str
    quote: str
    rites: tuple[tuple[str, Lost], ...] = ()

    def citation(self) -> str:
        """'儀禮集釋 4-22b: 南陔白華華黍小雅篇也今亡其義未聞'."""
        return f"{self.cite}: {self.quote}"

    def in_rite(self, rite: str) -> Lost | None:
        """The passage of rite *rite*'s own text that says the piece is lost, or None."""
        return next((lost for rid, lost in self.rites if rid == rite), None)

    def as_dict(self) -> dict[str, Any]:
        """The ``lost`` mapping as a score file writes it."""
        out: dict[str, Any] = {"cite": self.cite, "quote": self.quote}
        if self.rites:
            out["rites"] = {rid: {"cite": lost.cite, "quote": lost.quote} for rid, lost in self.rites}
        return out


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece of music with its provenance."""

    id: str
    title: str
    aliases: tuple[str, ...]
    mode: Mode | None
    mode_common: str
    provenance: Provenance
    source: Source | None
    stanzas: tuple[Stanza, ...]
    emendations: tuple[Emendation, ...]
    irregularities: tuple[Irregularity, ...]
    realization: ModernRealization | None
    lost: Lost | None
    path: str
    notes: tuple[Note, ...] = field(init=False, repr=False, compare=False)  # every stanza's notes, in order

    def __post_init__(self) -> None:
        # Computed once: the sequencer asks for the notes (and their count) at every note it plays.
        object.__setattr__(self, "notes", tuple(n for s in self.stanzas for n in s.notes))

    @property
    def playable(self) -> bool:
        """True if there are notes to sound (sourced, or a lost piece with a realization)."""
        return bool(self.stanzas)

    @property
    def provenance_label(self) -> str:
        """'sourced', 'lost', or 'lost (modern realization)'."""
        if self.provenance is Provenance.LOST and self.realization:
            return f"lost ({self.realization.label})"
        return self.provenance.value


def _apply(text: str, edits: list[Emendation]) -> str:
    """Apply emendations to one line, right to left so positions stay those of the transmitted text."""
    for e in sorted(edits, key=lambda e: e.position, reverse=True):
        start = e.position - 1
        text = text[:start] + e.adopted + text[start + len(e.transmitted):]
    return text


_PIECE_KEYS = (
    "id", "title", "aliases", "mode", "mode_common", "provenance", "source", "stanzas",
    "emendations", "irregularities", "realization", "lost", "notes",
)


def read_piece(doc: Document) -> Piece:
    """Validate a loaded score Document and build the Piece (InvalidInputError on any problem)."""
    r = Checker(doc)
    data = doc.data
    if not isinstance(data, dict):
        raise InvalidInputError([doc.problem((), "a score file must be a mapping")])
    r.keys(data, (), _PIECE_KEYS)
    pid = r.field(data, (), "id", str)
    title = r.field(data, (), "title", str)
    aliases = tuple(_aliases(r, r.field(data, (), "aliases", list, required=False) or []))
    prov_text = r.field(data, (), "provenance", str)
    provenance = Provenance.SOURCED
    if prov_text is not None:
        try:
            provenance = Provenance(prov_text)
        except ValueError:
            r.error(("provenance",), f"provenance {prov_text!r}, expected sourced or lost")
    realization_data = r.field(data, (), "realization", dict, required=False)
    realization = None
    if realization_data is not None:
        r.keys(realization_data, ("realization",), ("label", "rule"))
        label = r.field(realization_data, ("realization",), "label", str)
        rule = r.field(realization_data, ("realization",), "rule", str)
        realization = ModernRealization(label or "", rule or "")
    lost = r.field(data, (), "lost", dict, required=provenance is Provenance.LOST)
    if provenance is Provenance.LOST and lost is not None:
        r.keys(lost, ("lost",), ("cite", "quote", "rites"))
        for key in ("cite", "quote"):
            r.field(lost, ("lost",), key, str)
        for rid, entry in (r.field(lost, ("lost",), "rites", dict, required=False) or {}).items():
            if r.mapping(entry, ("lost", "rites", rid), "the rite's cite and quote") is not None:
                r.keys(entry, ("lost", "rites", rid), ("cite", "quote"))
                for key in ("cite", "quote"):
                    r.field(entry, ("lost", "rites", rid), key, str)
    if provenance is Provenance.SOURCED and (lost is not None or realization is not None):
        r.error((), "a sourced piece has no 'lost' or 'realization'")
    stanza_data = r.field(data, (), "stanzas", list, required=provenance is Provenance.SOURCED) or []
    if stanza_data and provenance is Provenance.LOST and realization is None:
        r.error(("stanzas",), "a lost piece with notes must label them with 'realization: {label, rule}'")
    mode_text = r.field(data, (), "mode", str, required=bool(stanza_data))
    mode = None
    if mode_text is not None:
        try:
            mode = parse_mode(mode_text)
        except UnknownNameError as exc:
            r.error(("mode",), str(exc))
    emendations = [Emendation(*v) for v in _read_records(r, data, "emendations", _EMENDATION_FIELDS, ("line", LINES))]
    irregularities = [Irregularity(*v) for v in
                      _read_records(r, data, "irregularities", _IRREGULARITY_FIELDS, ("check", CHECKS))]
    stanzas = tuple(
        s
        for i, raw in enumerate(stanza_data)
        if (s := _read_stanza(r, raw, i, mode, emendations, irregularities, instrumental=realization is not None))
    )
    _check_stated_lines(r, data, stanzas)
    if provenance is Provenance.SOURCED and not r.problems and not any(s.notes for s in stanzas):
        r.error(("stanzas",), "a sourced piece with no notes: nothing to sing (a lost piece says 'provenance: lost')")
    for e in emendations:
        if not 1 <= e.stanza <= len(stanza_data):
            r.error(("emendations",), f"emendation names stanza {e.stanza}; the piece has {len(stanza_data)}")
    if r.problems:
        raise InvalidInputError(r.problems)
    return Piece(
        pid, title, aliases, mode, str(data.get("mode_common") or ""), provenance,
        _source(data.get("source")), stanzas, tuple(emendations), tuple(irregularities),
        realization, _lost(lost) if lost is not None else None, doc.file,
    )


def _source(raw: Any) -> Source | None:
    """The ``source`` mapping of a score file as a Source (None if it has none)."""
    if not isinstance(raw, dict) or not raw:
        return None
    return Source(str(raw.get("text") or ""), tuple(str(p) for p in raw.get("pages") or ()),
                  str(raw.get("mode_line") or ""), str(raw.get("mode_page") or ""))


def _check_on_page(r: Checker, path: PathKey, name: str, text: str, what: str, *, default: str) -> None:
    """Check ``source``: *text* is on page *name* of the shipped texts (or runs on to the next page)."""
    from yuesheng import sources

    try:
        page = sources.page(name, text=default)
    except UnknownPageError as exc:
        r.error(path, str(exc), "source")
        return
    if sources.find_quote(text, page) is None:
        r.error(path, f"{what} {text!r} is not on {page.id.citation} as transmitted", "source")


def _aliases(r: Checker, given: list[Any]) -> Iterator[str]:
    """The aliases that are text; each other one an error (a number or a date is not a name: ``str()`` of it could
    never be typed to find the piece as written)."""
    for n, alias in enumerate(given):
        if isinstance(alias, str):
            yield alias
        else:
            r.error(("aliases", n), f"alias {alias!r}: expected text, got {type_name(alias)}", "schema")


def _check_pages(r: Checker, data: dict[str, Any], stanzas: tuple[Stanza, ...]) -> None:
    """Each stanza's lyrics then pitch block, and the mode line, are on their 瑟譜 pages as transmitted."""
    for s in stanzas:
        path: PathKey = ("stanzas", s.number - 1)
        if s.page:  # the lyrics start on the page, their pitch block follows (perhaps on the next)
            _check_on_page(r, path + ("lyrics",), s.page, f"{s.lyrics}…({s.lu_line}{s.suzi_line})",
                           f"stanza {s.number}: lyrics…(律俗字)", default="sepu")
    source = data.get("source")
    if (isinstance(source, dict) and isinstance(source.get("mode_page"), str)
            and isinstance(source.get("mode_line"), str)):
        _check_on_page(r, ("source", "mode_line"), source["mode_page"], source["mode_line"], "the mode line",
                       default="sepu")


def _lost(data: dict[str, Any]) -> Lost:
    """The checked ``lost`` mapping of a score file as a Lost."""
    rites = tuple((str(rid), Lost(e["cite"], e["quote"])) for rid, e in (data.get("rites") or {}).items())
    return Lost(data["cite"], data["quote"], rites)


def _check_lost(r: Checker, lost: Lost) -> None:
    """A lost piece's quotes are on their cited pages (``儀禮集釋 4-22b``), its own and each rite's."""
    _check_on_page(r, ("lost", "quote"), lost.cite, lost.quote, "the quote", default="yili")
    for rid, entry in lost.rites:
        _check_on_page(r, ("lost", "rites", rid, "quote"), entry.cite, entry.quote, "the quote", default="yili")


def _read_records(r: Checker, data: dict[str, Any], key: str, fields: tuple[tuple[str, type], ...],
                  choice: tuple[str, tuple[str, ...]]) -> list[list[Any]]:
    """The entries of a list of records (emendations, irregularities), each checked.

    *choice* is a field with fixed values.
    """
    names = tuple(name for name, _ in fields)
    out = []
    for i, raw in enumerate(r.field(data, (), key, list, required=False) or []):
        path: PathKey = (key, i)
        if not isinstance(raw, dict):
            r.error(path, f"expected a mapping {{{', '.join(names)}}}")
            continue
        r.keys(raw, path, names)
        values = [r.field(raw, path, name, kind) for name, kind in fields]
        if None in values:
            continue
        field_name, allowed = choice
        if values[names.index(field_name)] not in allowed:
            r.error(path + (field_name,), f"{field_name} {values[names.index(field_name)]!r}, expected one of "
                    f"{', '.join(allowed)}")
            continue
        out.append(values)
    return out


_EMENDATION_FIELDS = (("stanza", int), ("line", str), ("position", int), ("transmitted", str), ("adopted", str),
                      ("reason", str))
_IRREGULARITY_FIELDS = (("stanza", int), ("check", str), ("reason", str), ("cite", str))


def _read_stanza(
    r: Checker,
    raw: Any,
    index: int,
    mode: Mode | None,
    emendations: list[Emendation],
    irregularities: list[Irregularity],
    *,
    instrumental: bool,
) -> Stanza | None:
    number = index + 1
    path: PathKey = ("stanzas", index)
    if not isinstance(raw, dict):
        r.error(path, "expected a mapping {page, lyrics, lu, suzi}")
        return None
    r.keys(raw, path, ("page", "lyrics", "lines", "lu", "suzi"))
    page = r.field(raw, path, "page", str, required=not instrumental) or ""
    lines = {k: r.field(raw, path, k, str, required=not (k == "lyrics" and instrumental)) for k in LINES}
    if lines["lu"] is None or lines["suzi"] is None:
        return None
    transmitted = {k: v or "" for k, v in lines.items()}
    emended = {}
    for key in LINES:
        edits = [e for e in emendations if e.stanza == number and e.line == key]
        for e in edits:
            found = transmitted[key][e.position - 1: e.position - 1 + len(e.transmitted)]
            if found != e.transmitted or e.position < 1:
                r.error(("emendations",), f"stanza {number} {key} position {e.position}: emendation expects "
                      f"{e.transmitted!r} but the transmitted text has {found!r}")
                return None
        emended[key] = _apply(transmitted[key], edits)
    excused = {i.check for i in irregularities if i.stanza == number}
    lyrics = emended["lyrics"] if not instrumental or lines["lyrics"] else "\u3000" * len(emended["lu"])
    if not len(lyrics) == len(emended["lu"]) == len(emended["suzi"]) and "length" not in excused:
        r.error(path, f"stanza {number}: lyrics, 律 and 俗字 lines have {len(lyrics)}, {len(emended['lu'])} "
              f"and {len(emended['suzi'])} characters; they must be equal", "length")
        return None
    notes = []
    columns = zip(lyrics, emended["lu"], emended["suzi"], strict=False)  # "length" excused: the shortest line ends it
    for pos, (syllable, lu_char, suzi_char) in enumerate(columns, start=1):
        note = _read_note(r, path, number, pos, syllable, lu_char, suzi_char, mode, excused)
        if note is not None:
            notes.append(note)
    if notes and mode is not None:
        for check, note, verb in (("start", notes[0], "starts"), ("final", notes[-1], "ends")):
            if check not in excused and note.pitch.lu != mode.final:
                r.error(path, f"stanza {number} {verb} on {note.lu}, but {mode.name} {verb} on {mode.final.name} "
                      f"(起調畢曲, 瑟譜 001-6a)", check)
    sung = emended["lyrics"] if lines["lyrics"] else emended["lu"]
    line_lengths = _read_lines(r, raw, path, number, sung, "lyrics" if lines["lyrics"] else "律")
    return Stanza(number, page, lines["lyrics"] or "", lines["lu"], lines["suzi"], tuple(notes), line_lengths)


def _read_lines(r: Checker, raw: dict[str, Any], path: PathKey, number: int, sung: str, what: str) -> tuple[int, ...]:
    """The length of each line of ``lines`` (the stanza's *sung* line split at its 句 by spaces), checked."""
    text = r.field(raw, path, "lines", str, required=False)
    if text is None:
        return ()
    parts = text.split()
    if "".join(parts) != sung:
        r.error(path + ("lines",), f"stanza {number}: lines {text!r} are not the {what} {sung!r} split at "
                "the line ends", "lines")
        return ()
    return tuple(len(part) for part in parts)


_NUMERALS = {c: n for n, c in enumerate("一二三四五六七八九十", start=1)}


def stated_lines(mode_line: str) -> tuple[int, ...] | None:
    """The lines of each stanza that a mode line states (``鹿鳴三章章八句`` → (8, 8, 8); ``闗雎三章一章四句
    二章章八句`` → (4, 8, 8)), or None if it states none or its groups do not add up to its stanzas.
    """
    head = re.search(r"([一二三四五六七八九十]+)章(章([一二三四五六七八九十]+)句|(?:[一二三四五六七八九十]+章章?"
                     r"[一二三四五六七八九十]+句)+)", mode_line)
    if head is None:
        return None
    count = _number(head.group(1))
    if head.group(3):
        return (_number(head.group(3)),) * count
    groups = re.findall(r"([一二三四五六七八九十]+)章章?([一二三四五六七八九十]+)句", head.group(2))
    stated = tuple(_number(lines) for stanzas, lines in groups for _ in range(_number(stanzas)))
    return stated if len(stated) == count else None


def _number(numeral: str) -> int:
    """一 … 十, and 十一 … 九十九 written 十N or N十M."""
    if "十" not in numeral:
        return _NUMERALS[numeral]
    tens, _, units = numeral.partition("十")
    return (_NUMERALS[tens] if tens else 1) * 10 + (_NUMERALS[units] if units else 0)


def _check_stated_lines(r: Checker, data: dict[str, Any], stanzas: tuple[Stanza, ...]) -> None:
    """The stanzas' lines (句) are as many as the mode line states (``章N句M``), where both are given."""
    source = data.get("source")
    mode_line = source.get("mode_line") if isinstance(source, dict) else None
    stated = stated_lines(mode_line) if isinstance(mode_line, str) else None
    if stated is None or not any(s.line_lengths for s in stanzas):
        return
    if len(stated) != len(stanzas):
        r.error(("source", "mode_line"), f"the mode line states {len(stated)} stanzas; the score has "
                f"{len(stanzas)}", "lines")
        return
    for s, count in zip(stanzas, stated, strict=True):
        if s.line_lengths and len(s.line_lengths) != count:
            r.error(("stanzas", s.number - 1, "lines"), f"stanza {s.number} has {len(s.line_lengths)} lines; "
                    f"the mode line {mode_line!r} states {count}", "lines")


@lru_cache(maxsize=256)  # a score has a few dozen (律, 俗字) pairs, each read once per note: resolve each once
def _resolved(lu_char: str, suzi_char: str) -> Pitch:
    return resolve(lu_char, suzi_char)


def _read_note(
    r: Checker, path: PathKey, number: int, pos: int, syllable: str, lu_char: str, suzi_char: str,
    mode: Mode | None, excused: set[str],
) -> Note | None:
    where = f"stanza {number} position {pos} ({syllable.strip() or 'note'})"
    if lu_char not in LU_SYMBOLS:
        r.error(path + ("lu",), f"{where}: {lu_char!r} is no 律", "lu")
        return None
    if suzi_char not in SUZI_SYMBOLS:
        r.error(path + ("suzi",), f"{where}: {suzi_char!r} is no 俗字", "suzi")
        return None
    try:
        pitch = _resolved(lu_char, suzi_char)
    except InvalidValueError as exc:
        if "agree" in excused:
            return None
        r.error(path + ("lu",), f"{where}: {exc}", "agree")
        return None
    if mode is not None and mode.degree_of(pitch.lu) is None and "scale" not in excused:
        scale = "".join(the_lu.short for the_lu in mode.scale)
        r.error(path + ("lu",), f"{where}: {lu_char} is not in the scale of {mode.name} ({scale})", "scale")
    return Note(syllable, lu_char, suzi_char, pitch, number, pos)


def load_piece(path: str | Path) -> Piece:
    """Load, validate and cross-check one score file."""
    return read_piece(load(path))


def source_problems(path: str | Path) -> list[Problem]:
    """Check ``source`` of a score file that loads: its text is on the pages it cites, as transmitted."""
    doc = load(path)
    return check_source(doc, read_piece(doc))


def check_source(doc: Document, piece: Piece) -> list[Problem]:
    """``source_problems`` of a score already read: *doc* and the *piece* made from it."""
    r = Checker(doc)
    if piece.provenance is Provenance.SOURCED:
        _check_pages(r, doc.data, piece.stanzas)
    elif piece.lost is not None:
        _check_lost(r, piece.lost)
    return r.problems
