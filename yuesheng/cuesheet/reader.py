"""Reading a cue sheet: a YAML Document → a CueSheet, every problem reported with file:line:col.

The format (``docs/cuesheet.md``, schema ``yuesheng/data/cuesheet.schema.json``)::

    format: yuesheng-cues/1
    rite: {id: xiangshe, name: 鄉射禮, rank: 大夫, source: 儀禮集釋 卷五–六}
    defaults: {syllable: 1.5s, call_jun: 黄鍾, huangzhong: C4}
    performers: {gong: {name: 工, count: 4}}
    instruments: {se: {name: 瑟, count: 2, player: gong}}
    positions: {xijie-shang: {name: 西階上}}
    variants: {caipin: {name: 歌采蘋, cite: {page: 6-34b, quote: …}}}
    cues:
      - {id: gong-ru, section: 樂賓, action: 工入升自西階, who: [gong], duration: 1min,
         cite: {page: 5-15a, quote: 工四人二瑟}}
      - {id: heyue, section: 樂賓, music: 合樂, pieces: [{piece: guanju}], cite: {…}}
    archery: {…}

Reading happens in two passes: the schema (keys, types, values), then the
references (pieces, anchors and their cycles, cast, variants). The ritual
rules live in ``rules.py``; ``validate.py`` composes the two.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Protocol

from yuesheng.characters import display
from yuesheng.checking import Checker, type_name
from yuesheng.cuesheet.model import (
    CALLS,
    DEFAULT_OFFSET_SD,
    DEFAULT_SYLLABLE,
    JIE_READING,
    Anchor,
    Archery,
    Arrow,
    Cite,
    Count,
    Cue,
    CueSheet,
    Member,
    MusicKind,
    Pair,
    PieceRef,
    Reading,
    Round,
    Shooter,
    Start,
    Variant,
    parse_duration,
    parse_reading,
)
from yuesheng.cuesheet.references import check_references
from yuesheng.errors import InvalidValueError, Problem, UnknownNameError
from yuesheng.music.lulu import Lu, lu, parse_huangzhong
from yuesheng.music.repertoire import Repertoire
from yuesheng.yamlload import Document, PathKey

FORMAT = "yuesheng-cues/1"
_ID = re.compile(r"[a-z0-9][a-z0-9-]*")
_ARROW = re.compile(r"([HhM])(?:([+-])([0-9]+(?:\.[0-9]+)?(?:ms|s)))?")
MIN_JIE = 4  # the four 節 that carry the eight arrows
_NUMBER = re.compile(r"[0-9]{1,6}")
_PAGE = re.compile(r"(?:周禮注疏 )?\d{1,2}-\d{1,2}[ab]")
PLAN_LIMIT = 500.0  # 步 from the 堂: a 射宮's 大侯 stands 90 步 away; more is surely a slip of the unit


_TOP_KEYS = ("format", "rite", "defaults", "estimates", "readings", "performers", "instruments", "positions",
             "variants", "cues", "archery")
_COMMON_CUE_KEYS = ("id", "section", "who", "where", "words", "cite", "start", "variant", "unless", "reading", "note")
_ACTION_KEYS = _COMMON_CUE_KEYS + ("action", "duration")
_MUSIC_KEYS = _COMMON_CUE_KEYS + ("music", "pieces", "performers", "instruments", "end", "calls", "hold")
# The keys allowed at each level of a cue sheet, in the order messages list them, by the level's place in
# cuesheet.schema.json (``*``: any member of a mapping or list; ``action``/``music``: the two kinds of cue).
# tests/test_cuesheet.py holds each equal to the schema's ``properties`` at the same place.
KEYS: dict[str, tuple[str, ...]] = {
    "": _TOP_KEYS,
    "$defs/cite": ("page", "quote"),
    "$defs/piece": ("piece", "zhong", "part", "syllable"),
    "rite": ("id", "name", "rank", "source"),
    "defaults": ("syllable", "call_jun", "huangzhong"),
    "readings/*": ("name", "chosen", "options", "note"),
    "readings/*/options/*": ("text", "cite", "value"),
    "performers/*": ("name", "count", "position", "note"),
    "instruments/*": ("name", "count", "player", "position", "note", "program"),
    "positions/*": ("name", "note", "x", "y", "w", "h", "estimate"),
    "variants/*": ("name", "cite", "note", "requires"),
    "cues/action": _ACTION_KEYS,
    "cues/music": _MUSIC_KEYS,
    "cues/start": ("after", "with", "delay"),
    "cues/end": ("at", "zhong"),
    "cues/hold": ("until",),
    "archery": ("jie", "tolerance", "change", "pairs", "rounds", "shots", "variant", "note"),
    "archery/jie": ("total", "listen", "cite", "note"),
    "archery/pairs/*": ("name", "upper", "lower", "first", "note"),
    "archery/rounds/*": ("id", "cue", "pairs", "count", "cite", "music", "exempt", "any_hit", "pair_cues", "note"),
    "archery/shots": ("seed", "hit", "pierce", "offset_sd", "script", "note"),
}


class Reader(Checker):
    """Schema and reference checks of one cue-sheet Document."""

    def __init__(self, doc: Document, repertoire: Repertoire) -> None:
        super().__init__(doc)
        self.repertoire = repertoire

    # -- small values ------------------------------------------------------------------------------

    def ident(self, value: Any, path: PathKey) -> str | None:
        if not isinstance(value, str) or not _ID.fullmatch(value):
            self.error(path, f"bad id {value!r}: expected lower-case ASCII letters, digits and '-'", "schema")
            return None
        return value

    def duration(self, data: dict[str, Any], path: PathKey, key: str, *, required: bool) -> Fraction | None:
        if data.get(key) is None:
            if required:
                self.error(path, f"missing key {key!r}", "schema")
            return None
        try:
            return parse_duration(data[key])
        except InvalidValueError as exc:
            self.error(path + (key,), str(exc), "duration")
            return None

    def cite(self, data: dict[str, Any], path: PathKey, *, required: bool = True) -> Cite | None:
        raw = data.get("cite")
        if raw is None:
            if required:
                self.error(path, "missing key 'cite' (every cue cites its page: {page: 4-20b, quote: …})", "cite")
            return None
        raw = self.mapping(raw, path + ("cite",), "{page, quote}")
        if raw is None:
            return None
        self.keys(raw, path + ("cite",), KEYS["$defs/cite"])
        page = self.field(raw, path + ("cite",), "page", str)
        quote = self.field(raw, path + ("cite",), "quote", str)
        if page is not None and not _PAGE.fullmatch(page):
            self.error(path + ("cite", "page"), f"bad page id {page!r}: expected 卷-頁面 such as 6-12b "
                       "(or 周禮注疏 30-25a)", "cite")
            return None
        return Cite(page, display(quote)) if page and quote else None

    def id_list(self, data: dict[str, Any], path: PathKey, key: str) -> tuple[str, ...]:
        raw = self.field(data, path, key, list, required=False) or []
        return tuple(i for n, v in enumerate(raw) if (i := self.ident(v, path + (key, n))))

    def text(self, data: dict[str, Any], path: PathKey, key: str, *, required: bool = False) -> str:
        """A text field, private-use codes shown as their characters (``characters.display``): what people read."""
        return display(self.field(data, path, key, str, required=required) or "")

    # -- sections --------------------------------------------------------------------------------

    def members(self, data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> dict[str, Member]:
        raw = self.field(data, (), key, dict, required=key != "positions") or {}
        out = {}
        for mid, item in raw.items():
            path: PathKey = (key, mid)
            if not self.ident(mid, path) or (item := self.mapping(item, path, "{name, …}")) is None:
                continue
            self.keys(item, path, allowed)
            count = self.field(item, path, "count", int, required=False)
            count = 1 if count is None else count
            if count < 1:
                self.error(path + ("count",), f"count {count}, expected 1 or more", "schema")
            program = self.field(item, path, "program", int, required=False)
            if program is not None and not 0 <= program <= 127:
                self.error(path + ("program",), f"program {program}, expected a General MIDI program 0..127", "schema")
            out[mid] = Member(mid, self.text(item, path, "name", required=True), count, self.text(item, path, "player"),
                              self.text(item, path, "position"), self.text(item, path, "note"), program,
                              **(self.place(item, path) if key == "positions" else {}))
        return out

    def place(self, item: dict[str, Any], path: PathKey) -> dict[str, Any]:
        """A position's place on the ground plan: x, y (and extent w, h) in 步, and whether it is an estimate."""
        values = {k: self.measure(item, path, k) for k in ("x", "y", "w", "h")}
        estimate = self.field(item, path, "estimate", bool, required=False)
        for a, b in (("x", "y"), ("w", "h")):
            if (item.get(a) is None) != (item.get(b) is None):
                self.error(path, f"{a} and {b} go together: give both or neither", "plan")
        if item.get("x") is None and item.get("y") is None:
            if item.get("w") is not None or estimate is not None:
                self.error(path, "w, h and estimate need the position's x and y", "plan")
        return values | {"estimate": bool(estimate)}

    def unplaced(self, positions: dict[str, Member]) -> None:
        """Warn about positions left off the ground plan when others are on it (a sheet may have no plan at all)."""
        if any(p.placed for p in positions.values()):
            for p in positions.values():
                if not p.placed:
                    self.warn(("positions", p.id), f"position {p.id!r} has no x, y: the ground plan lists it beside "
                              "the plan", "plan")

    def measure(self, item: dict[str, Any], path: PathKey, key: str) -> float | None:
        """A coordinate (x, y: -PLAN_LIMIT..PLAN_LIMIT 步) or an extent (w, h: more than 0, up to PLAN_LIMIT 步)."""
        value: float | None = self.field(item, path, key, float, required=False)
        if value is None:
            return None
        low = 0.0 if key in ("w", "h") else -PLAN_LIMIT
        if not low <= value <= PLAN_LIMIT or (key in ("w", "h") and value == 0):
            allowed = f"more than 0 and at most {PLAN_LIMIT:g}" if low == 0 else f"{-PLAN_LIMIT:g}..{PLAN_LIMIT:g}"
            self.error(path + (key,), f"{key} {value:g} 步, expected {allowed} (1 步 = 6 尺)", "plan")
            return None
        return float(value)

    def readings(self, data: dict[str, Any]) -> dict[str, Reading]:
        out = {}
        for rid, item in (self.field(data, (), "readings", dict, required=False) or {}).items():
            path: PathKey = ("readings", rid)
            if not self.ident(rid, path) or (item := self.mapping(item, path, "{name, chosen, options}")) is None:
                continue
            self.keys(item, path, KEYS["readings/*"])
            options = self.field(item, path, "options", dict) or {}
            for oid, option in options.items():
                opath = path + ("options", oid)
                if rid == JIE_READING and not (_NUMBER.fullmatch(oid) and int(oid) >= MIN_JIE):
                    self.error(opath, f"option {oid!r} of the 節 reading: expected a whole number of 節 written in "
                               f"ASCII digits, at least {MIN_JIE} (四節四拾)", "schema", key=True)
                if (option := self.mapping(option, opath, "{text, cite}")) is not None:
                    self.keys(option, opath, KEYS["readings/*/options/*"])
                    self.text(option, opath, "text", required=True)
                    self.cite(option, opath, required=False)
            chosen = self.text(item, path, "chosen", required=True)
            if chosen and options and chosen not in options:
                self.error(path + ("chosen",), f"chosen {chosen!r} is not one of the options {', '.join(options)}",
                           "reference")
            out[rid] = Reading(rid, self.text(item, path, "name", required=True), chosen, tuple(options))
        return out

    def piece_ref(self, raw: Any, path: PathKey) -> PieceRef | None:
        if (raw := self.mapping(raw, path, "{piece, zhong, part}")) is None:
            return None
        self.keys(raw, path, KEYS["$defs/piece"])
        name = self.field(raw, path, "piece", str)
        zhong = self.field(raw, path, "zhong", int, required=False)
        zhong = 1 if zhong is None else zhong
        if zhong < 1:
            self.error(path + ("zhong",), f"zhong {zhong}, expected 1 or more (a 終 is one performance)", "schema")
        if name is None:
            return None
        try:
            piece = self.repertoire.find(name)
        except UnknownNameError as exc:
            self.error(path + ("piece",), str(exc), "reference")
            return None
        if not piece.realization and not piece.playable:
            self.warn(path + ("piece",), f"{piece.title} is lost and has no labelled realization: nothing will sound",
                      "lost-realization")
        syllable = self.duration(raw, path, "syllable", required=False)
        if syllable is not None and syllable <= 0:
            self.error(path + ("syllable",), "syllable must be longer than 0s", "duration")
        return PieceRef(piece, zhong, self.text(raw, path, "part"), syllable)

    def reading(self, raw: dict[str, Any], path: PathKey) -> str:
        """A cue's ``reading: ID=OPTION``, or '' (and a problem) if it is not of that form."""
        text = self.text(raw, path, "reading")
        try:
            parse_reading(text) if text else None
        except InvalidValueError as exc:
            self.error(path + ("reading",), str(exc), "schema")
            return ""
        return text

    def start(self, raw: Any, path: PathKey) -> Start | None:
        if (raw := self.mapping(raw, path, "{after: CUE} or {with: CUE}, optional delay")) is None:
            return None
        self.keys(raw, path, KEYS["cues/start"])
        anchors = [k for k in ("after", "with") if k in raw]
        if len(anchors) != 1:
            self.error(path, "start needs exactly one of 'after' or 'with'", "schema")
            return None
        cue = self.ident(raw[anchors[0]], path + (anchors[0],))
        delay = self.duration(raw, path, "delay", required=False)
        delay = Fraction(0) if delay is None else delay
        return Start(Anchor(anchors[0]), cue, delay) if cue else None

    def cue(self, raw: Any, index: int) -> Cue | None:
        path: PathKey = ("cues", index)
        if (raw := self.mapping(raw, path, "a cue")) is None:
            return None
        is_music = "music" in raw
        if is_music == ("action" in raw):
            self.keys(raw, path, tuple(dict.fromkeys(KEYS["cues/action"] + KEYS["cues/music"])))
            which = "both" if is_music else "neither"
            self.error(path, "a cue has either 'action' (an action cue) or 'music' (a music cue); "
                       f"this one has {which}", "schema")
            return None
        self.keys(raw, path, KEYS["cues/music" if is_music else "cues/action"])
        cue_id = self.ident(raw.get("id"), path + ("id",))
        cite = self.cite(raw, path)
        common: dict[str, Any] = dict(
            section=self.text(raw, path, "section", required=True), who=self.id_list(raw, path, "who"),
            where=self.text(raw, path, "where"), words=self.text(raw, path, "words"), note=self.text(raw, path, "note"),
            variant=self.text(raw, path, "variant"), unless=self.text(raw, path, "unless"),
            reading=self.reading(raw, path),
            start=self.start(raw["start"], path + ("start",)) if raw.get("start") is not None else None,
        )
        if not is_music:
            action = self.text(raw, path, "action", required=True)
            duration = self.duration(raw, path, "duration", required=True)
            if cue_id and cite and duration is not None:
                return Cue(cue_id, index, cite=cite, action=action, duration=duration, **common)
            return None
        return self.music_cue(raw, path, cue_id, index, cite, common)

    def music_cue(self, raw: dict[str, Any], path: PathKey, cue_id: str | None, index: int, cite: Cite | None,
                  common: dict[str, Any]) -> Cue | None:
        kind_text = raw.get("music")
        try:
            kind = MusicKind(kind_text)
        except ValueError:
            self.error(path + ("music",), f"music kind {kind_text!r}, expected one of "
                       f"{', '.join(k.value for k in MusicKind)}", "schema")
            return None
        pieces = tuple(p for n, item in enumerate(self.field(raw, path, "pieces", list, required=False) or [])
                       if (p := self.piece_ref(item, path + ("pieces", n))))
        end_at, end_on_zhong = "", False
        end = self.mapping(raw["end"], path + ("end",), "{at: CUE} or {zhong: true}") if raw.get("end") is not None \
            else None
        if end:
            self.keys(end, path + ("end",), KEYS["cues/end"])
            if ("at" in end) == ("zhong" in end):
                self.error(path + ("end",), "end needs exactly one of 'at' (樂闋 at an action) or 'zhong: true'",
                           "schema")
            elif "at" in end:
                end_at = self.ident(end["at"], path + ("end", "at")) or ""
            elif end["zhong"] is not True:
                self.error(path + ("end", "zhong"), f"end zhong {end['zhong']!r}, expected true (the piece's own 終 "
                           "are in pieces)", "schema")
            else:
                end_on_zhong = True
        calls = tuple(self.field(raw, path, "calls", list, required=False) or [])
        for n, call in enumerate(calls):
            if call not in CALLS:
                self.error(path + ("calls", n), f"call {call!r}, expected one of {', '.join(CALLS)}", "schema")
        hold_until, hold = self.hold(raw, path, kind)
        if not (cue_id and cite):
            return None
        return Cue(cue_id, index, cite=cite, music=kind, pieces=pieces,
                   performers=self.id_list(raw, path, "performers"),
                   instruments=self.id_list(raw, path, "instruments"), end_at=end_at, end_on_zhong=end_on_zhong,
                   calls=calls, hold_until=hold_until, hold=hold, **common)

    def hold(self, raw: dict[str, Any], path: PathKey, kind: MusicKind) -> tuple[str, Fraction | None]:
        """A 唱聲 cue's held last call: ``hold: {until: CUE}`` (聲止 when that cue ends) or ``hold: 12s``."""
        value = raw.get("hold")
        if value is None:
            return "", None
        if kind is not MusicKind.CHANGSHENG:
            self.error(path + ("hold",), f"hold is for a 唱聲 cue's last call, not for {kind.value}", "schema")
            return "", None
        if isinstance(value, dict):
            self.keys(value, path + ("hold",), KEYS["cues/hold"])
            return self.ident(value.get("until"), path + ("hold", "until")) or "", None
        hold = self.duration(raw, path, "hold", required=True)
        if hold is not None and hold <= 0:
            self.error(path + ("hold",), "hold must be longer than 0s", "duration")
            return "", None
        return "", hold

    # -- archery ---------------------------------------------------------------------------------

    def archery(self, raw: Any) -> Archery | None:
        path: PathKey = ("archery",)
        if (raw := self.mapping(raw, path, "{jie, tolerance, pairs, rounds, shots}")) is None:
            return None
        self.keys(raw, path, KEYS["archery"])
        jie = self.mapping(raw.get("jie"), path + ("jie",), "{total, listen, cite}") or {}
        self.keys(jie, path + ("jie",), KEYS["archery/jie"])
        total = self.field(jie, path + ("jie",), "total", int)
        listen = self.field(jie, path + ("jie",), "listen", int)
        if total is not None and total < MIN_JIE:
            self.error(path + ("jie", "total"), f"{total} 節, expected at least {MIN_JIE} (四節四拾: the eight arrows "
                       "take four 節)", "schema")
        if listen is not None and listen < 0:
            self.error(path + ("jie", "listen"), f"{listen} 節 to listen, expected 0 or more", "schema")
        jie_cite = self.cite(jie, path + ("jie",))
        tolerance = self.duration(raw, path, "tolerance", required=True)
        pairs = {}
        for pid, item in (self.field(raw, path, "pairs", dict) or {}).items():
            ppath = path + ("pairs", pid)
            if self.ident(pid, ppath) and (item := self.mapping(item, ppath, "{name, upper, lower}")) is not None:
                self.keys(item, ppath, KEYS["archery/pairs/*"])
                first_text = self.text(item, ppath, "first") or Shooter.UPPER
                try:
                    first = Shooter(first_text)
                except ValueError:
                    self.error(ppath + ("first",), f"first {first_text!r}, expected upper or lower (who looses first)",
                               "schema")
                    first = Shooter.UPPER
                pairs[pid] = Pair(pid, self.text(item, ppath, "name", required=True),
                                  self.text(item, ppath, "upper", required=True),
                                  self.text(item, ppath, "lower", required=True), first)
        rounds = tuple(rd for n, item in enumerate(self.field(raw, path, "rounds", list) or [])
                       if (rd := self.round(item, path + ("rounds", n))))
        shots = self.mapping(_given(raw, "shots"), path + ("shots",), "{seed, hit, pierce, offset_sd, script}") or {}
        self.keys(shots, path + ("shots",), KEYS["archery/shots"])
        spath = path + ("shots",)
        rates = {k: self.field(shots, spath, k, float, required=False) for k in ("hit", "pierce")}
        for key, value in rates.items():
            if value is not None and not 0 <= value <= 1:
                self.error(spath + (key,), f"{key} rate {value}, expected a probability between 0 and 1", "schema")
        script = self.script(_given(shots, "script"), spath + ("script",))
        if total is None or listen is None or jie_cite is None or tolerance is None:
            return None
        seed = self.field(shots, spath, "seed", int, required=False)
        offset_sd = self.duration(shots, spath, "offset_sd", required=False)
        change = self.duration(raw, path, "change", required=False)
        return Archery(total, listen, jie_cite, tolerance, pairs, rounds,
                       seed=0 if seed is None else seed,
                       hit_rate=rates["hit"] if rates["hit"] is not None else 0.5,
                       pierce_rate=rates["pierce"] if rates["pierce"] is not None else 0.8,
                       offset_sd=DEFAULT_OFFSET_SD if offset_sd is None else offset_sd,
                       change=Fraction(0) if change is None else change, script=script,
                       variant=self.text(raw, path, "variant"))

    def round(self, raw: Any, path: PathKey) -> Round | None:
        if (raw := self.mapping(raw, path, "{id, cue, pairs, count, cite}")) is None:
            return None
        self.keys(raw, path, KEYS["archery/rounds/*"])
        count_text = self.field(raw, path, "count", str)
        count = None
        if count_text is not None:
            try:
                count = Count(count_text)
            except ValueError:
                self.error(path + ("count",), f"count {count_text!r}, expected none, pierce or drum", "schema")
        music = self.piece_ref(raw["music"], path + ("music",)) if raw.get("music") is not None else None
        rid, cite = self.ident(raw.get("id"), path + ("id",)), self.cite(raw, path)
        cue = raw.get("cue")
        one = None if isinstance(cue, list) else self.ident(cue, path + ("cue",))
        cues = self.id_list(raw, path, "cue") if isinstance(cue, list) else ((one,) if one else ())
        if not (rid and cues and cite and count):
            return None
        given = self.field(raw, path, "pair_cues", dict, required=False) or {}
        pair_cues = tuple((pid, cid) for pid, cid in given.items()
                          if self.ident(pid, path + ("pair_cues", pid)) and self.ident(cid, path + ("pair_cues", pid)))
        return Round(rid, cues, self.id_list(raw, path, "pairs"), count, cite, music, self.id_list(raw, path, "exempt"),
                     self.id_list(raw, path, "any_hit"), pair_cues)

    def script(self, raw: Any, path: PathKey) -> dict[tuple[str, str], tuple[Arrow, ...]]:
        out = {}
        for rid, pairs in (self.mapping(raw, path, "{ROUND: {PAIR: [arrows]}}") or {}).items():
            for pid, arrows in (self.mapping(pairs, path + (rid,), "{PAIR: [arrows]}") or {}).items():
                apath = path + (rid, pid)
                if not isinstance(arrows, list):
                    self.error(apath, f"expected a list of arrows such as [H, M, h+100ms], got {type_name(arrows)}",
                               "schema")
                    continue
                parsed = [a for n, text in enumerate(arrows) if (a := self.arrow(text, apath + (n,)))]
                if len(arrows) > 8:
                    self.error(apath, f"{len(arrows)} arrows, expected at most 8 (乘矢 each: 4 for 上射, 4 for 下射)",
                               "schema")
                out[(rid, pid)] = tuple(parsed)
        return out

    def arrow(self, text: Any, path: PathKey) -> Arrow | None:
        match = _ARROW.fullmatch(str(text)) if isinstance(text, str) else None
        if not match:
            self.error(path, f"bad arrow {text!r}: expected H (hit), h (hit, not pierced) or M (miss), "
                       "optionally with an offset from the 節 such as H+100ms", "schema")
            return None
        mark, sign, amount = match.groups()
        offset = parse_duration(amount) * (-1 if sign == "-" else 1) if amount else Fraction(0)
        return Arrow(mark in "Hh", mark == "H", offset)


def _given(data: dict[str, Any], key: str) -> Any:
    """``data[key]``, or an empty mapping if absent or null (a 0 or '' stays, to be reported)."""
    value = data.get(key)
    return {} if value is None else value


def _defaults(r: Reader, data: dict[str, Any]) -> tuple[Fraction, Lu, int]:
    raw = r.field(data, (), "defaults", dict, required=False) or {}
    r.keys(raw, ("defaults",), KEYS["defaults"])
    syllable = r.duration(raw, ("defaults",), "syllable", required=False)
    if syllable is not None and syllable <= 0:
        r.error(("defaults", "syllable"), "syllable must be longer than 0s", "duration")
    syllable = DEFAULT_SYLLABLE if syllable is None or syllable <= 0 else syllable
    call_jun = lu(0)
    if raw.get("call_jun") is not None:
        try:
            call_jun = lu(str(raw["call_jun"]))
        except UnknownNameError as exc:
            r.error(("defaults", "call_jun"), str(exc), "schema")
    huangzhong = 60
    if raw.get("huangzhong") is not None:
        try:
            huangzhong = parse_huangzhong(str(raw["huangzhong"]))
        except InvalidValueError as exc:
            r.error(("defaults", "huangzhong"), str(exc), "schema")
    return syllable, call_jun, huangzhong


class CueMemo(Protocol):
    """Each cue's own checks kept between runs (``check.kept``): a cue read, and what it names of the declarations
    checked, only where its text or the sheet's frame changed; else as kept, its problems reported again."""

    def read(self, r: Reader, raw: Any, index: int) -> Cue | None:
        """``r.cue(raw, index)``, or the cue as kept."""

    def declared(self, r: Checker, sheet: CueSheet, cue: Cue) -> None:
        """``declared_references(r, sheet, cue)``, or as kept."""


def read_cuesheet(doc: Document, repertoire: Repertoire,
                  memo: CueMemo | None = None) -> tuple[CueSheet | None, list[Problem]]:
    """Schema and reference checks; the CueSheet (None if the schema fails) and every problem found. Each cue's own
    checks through *memo* where one is given."""
    r = Reader(doc, repertoire)
    data = doc.data
    if not isinstance(data, dict):
        message = f"a cue sheet is a mapping with keys {', '.join(_TOP_KEYS)}; got {type_name(data)}"
        return None, [doc.problem((), message, rule="schema")]
    r.keys(data, (), KEYS[""])
    if data.get("format") != FORMAT:
        r.error(("format",), f"format {data.get('format')!r}, expected {FORMAT!r}", "schema")
    rite = r.field(data, (), "rite", dict) or {}
    r.keys(rite, ("rite",), KEYS["rite"])
    rite_id = r.ident(rite.get("id"), ("rite", "id")) or ""
    syllable, call_jun, huangzhong = _defaults(r, data)
    members = {key: r.members(data, key, allowed) for key, allowed in (
        ("performers", KEYS["performers/*"]), ("instruments", KEYS["instruments/*"]),
        ("positions", KEYS["positions/*"]),
    )}
    r.unplaced(members["positions"])
    variants = {}
    for vid, item in (r.field(data, (), "variants", dict, required=False) or {}).items():
        if r.ident(vid, ("variants", vid)) and (item := r.mapping(item, ("variants", vid), "{name, cite, note}")):
            vpath: PathKey = ("variants", vid)
            r.keys(item, vpath, KEYS["variants/*"])
            variants[vid] = Variant(vid, r.text(item, vpath, "name", required=True), r.cite(item, vpath),
                                    r.id_list(item, vpath, "requires"), r.text(item, vpath, "note"))
    read = r.cue if memo is None else lambda raw, index: memo.read(r, raw, index)
    cues = tuple(c for i, raw in enumerate(r.field(data, (), "cues", list) or []) if (c := read(raw, i)))
    archery = r.archery(data["archery"]) if data.get("archery") is not None else None
    sheet = CueSheet(
        doc.file, rite_id, r.text(rite, ("rite",), "name", required=True), r.text(rite, ("rite",), "rank"),
        r.text(rite, ("rite",), "source"), syllable, call_jun, huangzhong, r.text(data, (), "estimates"),
        r.readings(data), members["performers"], members["instruments"], members["positions"], variants, cues,
        archery, doc,
    )
    check_references(r, sheet, None if memo is None else memo.declared)
    return sheet, r.problems
