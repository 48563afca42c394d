"""Each cue's own checks kept between runs: an edit to one cue reads and checks that cue alone.

A cue's own checks depend on its text and on nothing of the other cues: its schema (``Reader.cue``), what it names of
the sheet's declarations (``declared_references``: cast, instruments, position, variants, reading), the rules of one
cue (``Rule.of_cue``) and its quotes against the shipped texts (``validate`` only). They are kept in
``caches.folder("checks")``, one entry for each cue-sheet file (named by its path, a shipped sheet by its name, under
``caches.key``: the package's code is in it), each cue's checks in it under a digest of the cue's data and of its
context: the sheet's frame (everything but the cues: rite, defaults, declarations, readings, archery) and the
repertoire's names. A cue found there is made again from what was kept of it (each value checked for its type; its
pieces by id from the repertoire) and its problems are placed again where it stands now; a cue whose text changed —
every cue, where the frame or the repertoire did — is read and checked.

What relates cues to each other is checked over the whole sheet on every run, from the cues as they are: ids unique,
the anchors that name cues (and 樂闋 and 聲止 at actions), cycles of anchors, and the rules over a programme (正歌備,
the rounds, a 許諾 that sounds, the limits): an edit to one cue can break them at another cue.

``counted`` counts, by kind, the cues checked (not taken as kept) in this process: the tests count what an edit checks
again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from yuesheng import caches
from yuesheng.check.rules import Finding, Rule, cue_findings
from yuesheng.checking import Checker, Found
from yuesheng.cuesheet.model import Anchor, Cite, Cue, CueSheet, MusicKind, PieceRef, Start
from yuesheng.cuesheet.reader import Reader
from yuesheng.cuesheet.references import declared_references
from yuesheng.errors import DecodeError
from yuesheng.music.repertoire import Repertoire
from yuesheng.yamlload import Document, PathKey

_FORMAT = "yuesheng-checks-1"
CACHE_ENTRIES = 64  # cue-sheet files kept (of one's own; the shipped rites' apart: ``caches``)
MAX_CUES = 4096  # cues kept for one file: those of its latest text first
MAX_ENTRY_BYTES = 32 << 20  # 大射儀's: about 0.2 MB
KINDS = ("read", "declared", "rules", "quotes")
counted: Counter[str] = Counter()  # cues checked in this process, by kind (a rule of one cue: each rule and cue)

Record = dict[str, Any]  # one cue's kept checks: "cue" (encoded, or None), and the findings of each kind


class KeptChecks:
    """The kept checks of one cue-sheet file for one run (``reader.CueMemo``, and the rules' and quotes' of one cue);
    ``save`` keeps what was checked anew."""

    def __init__(self, folder: caches.Folder, entry: str, doc: Document, repertoire: Repertoire) -> None:
        self.folder, self.entry, self.repertoire = folder, entry, repertoire
        kept = folder.read_json(entry, limit=MAX_ENTRY_BYTES)
        cues = kept.get("cues") if isinstance(kept, dict) and kept.get("format") == _FORMAT else None
        self.kept: dict[str, Any] = cues if isinstance(cues, dict) else {}
        data = doc.data if isinstance(doc.data, dict) else {}
        raw = data.get("cues")
        context = _context(data, repertoire)
        self.digests = [_digest(context, item) for item in raw] if isinstance(raw, list) else []
        self.used: dict[str, Record] = {}
        self.changed = False

    def record(self, index: int) -> Record:
        """The kept checks of the cue at *index* (empty if none)."""
        digest = self.digests[index]
        if digest not in self.used:
            record = self.kept.get(digest)
            self.used[digest] = dict(record) if isinstance(record, dict) else {}
        return self.used[digest]

    def read(self, r: Reader, raw: Any, index: int) -> Cue | None:
        """The cue at *index*: as kept, its problems reported to *r* again, else read by *r*."""
        record = self.record(index)
        kept = self._kept_cue(record, index)
        if kept is not None:
            for f in kept[1]:
                r.report(f)
            return kept[0]
        start = len(r.found)
        cue = r.cue(raw, index)
        self._keep(record, "read", r.found[start:], index)
        record["cue"] = _encoded(cue) if cue is not None else None
        return cue

    def _kept_cue(self, record: Record, index: int) -> tuple[Cue | None, list[Found]] | None:
        """The kept cue of *record* (None: it did not read, which an error says) and its problems, or None (a miss)."""
        found = _placed(record.get("read"), ("cues", index))
        if found is None or "cue" not in record:
            return None
        try:
            cue = self._decoded(record["cue"], index)
        except DecodeError:
            return None
        return (cue, found) if cue is not None or any(f[3] == "error" for f in found) else None

    def declared(self, r: Checker, sheet: CueSheet, cue: Cue) -> None:
        """``declared_references`` of *cue*, or its problems as kept."""
        found = _placed(self.record(cue.index).get("declared"), ("cues", cue.index))
        if found is not None:
            for f in found:
                r.report(f)
            return
        start = len(r.found)
        declared_references(r, sheet, cue)
        self._keep(self.record(cue.index), "declared", r.found[start:], cue.index)

    def rule(self, rule: Rule, sheet: CueSheet, cue: Cue) -> list[Finding]:
        """What *rule*, a rule of one cue, finds in *cue*: as kept, else ``cue_findings``' (``rules.CueFindings``)."""
        record = self.record(cue.index)
        rules = record.get("rules")
        if not isinstance(rules, dict):
            rules = record["rules"] = {}
        found = _placed(rules.get(rule.id), ("cues", cue.index))
        if found is not None:
            return [(path, message) for path, message, *_ in found]
        findings = cue_findings(rule, sheet, cue)
        counted["rules"] += 1
        kept = _relative([(path, message, "", "error", False) for path, message in findings], ("cues", cue.index))
        if kept is not None:
            rules[rule.id] = kept
            self.changed = True
        return findings

    def quotes(self, index: int, find: Callable[[], list[Found]]) -> list[Found]:
        """The quote problems of the cue at *index*: as kept, else ``find()``'s."""
        found = _placed(self.record(index).get("quotes"), ("cues", index))
        if found is not None:
            return found
        findings = find()
        self._keep(self.record(index), "quotes", findings, index)
        return findings

    def _keep(self, record: Record, kind: str, found: list[Found], index: int) -> None:
        counted[kind] += 1
        kept = _relative(found, ("cues", index))
        if kept is not None:
            record[kind] = kept
            self.changed = True

    def _decoded(self, data: Any, index: int) -> Cue | None:
        """A kept cue (None: the cue did not read), at *index*, its pieces from the repertoire; DecodeError if the data
        are not what ``_encoded`` makes."""
        if data is None:
            return None
        if not (isinstance(data, list) and len(data) == len(_PARTS)):
            raise DecodeError("not a kept cue")
        texts, ids, cite, start, times, music, end_on_zhong, pieces = data
        if not (_strings(texts, len(_TEXTS)) and isinstance(ids, list) and len(ids) == len(_IDS)
                and all(_strings(i) for i in ids) and _strings(cite, 2) and isinstance(end_on_zhong, bool)
                and (music is None or isinstance(music, str)) and isinstance(times, list) and len(times) == 2
                and (start is None or (isinstance(start, list) and len(start) == 3 and _strings(start[:2])))
                and isinstance(pieces, list)):
            raise DecodeError("not a kept cue")
        given: dict[str, Any] = dict(zip(_TEXTS, texts, strict=True))
        given |= {k: tuple(v) for k, v in zip(_IDS, ids, strict=True)}
        try:
            return Cue(**given, index=index, cite=Cite(*cite), end_on_zhong=end_on_zhong,
                       start=None if start is None else _start(start),
                       duration=_fraction(times[0]), hold=_fraction(times[1]),
                       music=None if music is None else MusicKind(music), pieces=tuple(map(self._piece, pieces)))
        except (ValueError, ZeroDivisionError):
            raise DecodeError("not a kept cue") from None

    def _piece(self, data: Any) -> PieceRef:
        if not (isinstance(data, list) and len(data) == 4 and isinstance(data[0], str) and type(data[1]) is int
                and isinstance(data[2], str)):
            raise DecodeError("not a kept piece")
        piece = self.repertoire.pieces.get(data[0])
        if piece is None:
            raise DecodeError(f"no piece {data[0]!r}")
        return PieceRef(piece, data[1], data[2], _fraction(data[3]))

    def save(self) -> None:
        """Keep this run's cues' checks, and those kept before up to ``MAX_CUES``, where any was checked anew."""
        if not self.changed:
            return
        cues = caches.newest(self.used, self.kept, MAX_CUES)
        self.folder.write_json(self.entry, {"format": _FORMAT, "cues": cues}, entries=CACHE_ENTRIES)


def kept_checks(path: str | Path, doc: Document, repertoire: Repertoire) -> KeptChecks | None:
    """The kept checks of the cue-sheet file *path* (loaded as *doc*), or None where caches are off."""
    folder = caches.folder("checks")
    if folder is None:
        return None
    name = f"shipped {Path(path).name}" if caches.shipped(path) else str(Path(path).absolute())
    return KeptChecks(folder, f"{caches.prefix(path)}{caches.key(_FORMAT, name)}.json", doc, repertoire)


def _context(data: dict[str, Any], repertoire: Repertoire) -> str:
    """A digest of what a cue's own checks read besides the cue: the sheet's frame and the repertoire's names."""
    frame = {key: value for key, value in data.items() if key != "cues"}
    text = json.dumps([frame, repertoire.names()], ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _digest(context: str, raw: Any) -> str:
    """A digest of a cue's data (plain YAML values: their ``repr`` is the same in every process) in its context."""
    text = context + repr(raw)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_TEXTS = ("id", "section", "where", "words", "note", "variant", "unless", "reading", "action", "end_at", "hold_until")
_IDS = ("who", "performers", "instruments", "calls")
_PARTS = ("texts", "ids", "cite", "start", "times", "music", "end_on_zhong", "pieces")  # a kept cue's, in order


def _encoded(cue: Cue) -> list[Any]:
    """*cue* as kept (``_PARTS``): its pieces by id (the repertoire holds them), fractions as text, no index."""
    start = cue.start
    return [[getattr(cue, k) for k in _TEXTS], [list(getattr(cue, k)) for k in _IDS], [cue.cite.page, cue.cite.quote],
            None if start is None else [start.anchor.value, start.cue, _pair(start.delay)],
            [_pair(cue.duration), _pair(cue.hold)], None if cue.music is None else cue.music.value, cue.end_on_zhong,
            [[r.piece.id, r.zhong, r.part, _pair(r.syllable)] for r in cue.pieces]]


def _pair(value: Fraction | None) -> list[int] | None:
    return None if value is None else [value.numerator, value.denominator]


def _fraction(pair: Any) -> Fraction | None:
    """A fraction kept as [numerator, denominator] (None: none); DecodeError for anything else."""
    if pair is None:
        return None
    if not (isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int and type(pair[1]) is int
            and pair[1] > 0):
        raise DecodeError("not a kept fraction")
    return Fraction(pair[0], pair[1])


def _start(data: list[Any]) -> Start:
    """A kept start: [anchor, cue, delay]; DecodeError for anything else (ValueError for an anchor that is none)."""
    delay = _fraction(data[2])
    if delay is None:
        raise DecodeError("not a kept start")
    return Start(Anchor(data[0]), data[1], delay)


def _strings(value: Any, length: int | None = None) -> bool:
    """Whether *value* is a list of strings, of *length* if given (``str.join`` checks them at C speed)."""
    if not isinstance(value, list) or (length is not None and len(value) != length):
        return False
    try:
        "".join(value)
    except TypeError:
        return False
    return True


def _relative(found: list[Found], at: PathKey) -> list[list[Any]] | None:
    """*found* as kept: each path after *at*; None where one is not under it (then nothing is kept)."""
    if any(path[:len(at)] != at for path, *_ in found):
        return None
    return [[list(path[len(at):]), message, rule, severity, key] for path, message, rule, severity, key in found]


def _placed(kept: Any, at: PathKey) -> list[Found] | None:
    """Kept findings placed under *at* again; None if there are none kept, or they are not what ``_relative`` makes."""
    if not isinstance(kept, list):
        return None
    if not kept:
        return []
    out: list[Found] = []
    for item in kept:
        if not (isinstance(item, list) and len(item) == 5 and isinstance(item[0], list)
                and all(isinstance(p, str) or type(p) is int for p in item[0]) and isinstance(item[1], str)
                and isinstance(item[2], str) and item[3] in ("error", "warning") and isinstance(item[4], bool)):
            return None
        out.append((at + tuple(item[0]), item[1], item[2], item[3], item[4]))
    return out
