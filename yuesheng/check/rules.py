"""The ritual rules a cue sheet must keep, each with an id and the passage it enforces.

Every rule is checked on the programme as written and with each variant
switched on; a broken rule is reported at the cue (or archery entry) that
breaks it, as ``file:line:col: path: message [rule-id]``.

A rule holds for any rite unless it is rite-specific (``Rule.per_rite``): such a rule
holds for the rites whose row of ``data/rites.json`` lists it. What differs between
the rites as data — which shoot, the 節 of the drum, the pieces a round may sing, the
music before 正歌備, the sounds of the 許諾, with their citations — is in that row
too (``datafiles.rites``); no rite id is written here. A sheet is of the rite of its
``rite.id``; a sheet of one's own with another id, of the rite whose name is exactly
its ``rite.name`` (``rite_of``). A sheet of neither is checked by the rules for any
rite, and a warning at its ``rite`` says which rite-specific rules were not applied
(rule ``rite``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from yuesheng import datafiles, limits
from yuesheng.cuesheet import (
    JIE_READING,
    Archery,
    Count,
    Cue,
    CueSheet,
    MusicKind,
    Round,
    parse_reading,
    rounds_called,
    timed_values,
    variant_configurations,
)
from yuesheng.cuesheet.model import Anchor
from yuesheng.cuesheet.zhong import zhong_count
from yuesheng.datafiles import Rite
from yuesheng.errors import InvalidValueError, Problem, Severity
from yuesheng.yamlload import PathKey

Finding = tuple[PathKey, str]
SHIHUO_OPTIONS = ("ru-chu", "drum-only")  # the options of reading shihuo the sequencer knows


def rite_of(sheet: CueSheet) -> Rite | None:
    """The rite of *sheet* in ``data/rites.json``: by its id, else (a sheet of one's own) by its exact name; None if
    neither."""
    return datafiles.rite_of(sheet.rite_id, sheet.rite_name)


SheetCheck = Callable[[CueSheet, tuple[Cue, ...]], Iterator[Finding]]  # a rule over the cues of a programme
CueCheck = Callable[[CueSheet, Cue], Iterator[Finding]]  # a rule of one cue alone (and the sheet's frame)
CueFindings = Callable[["Rule", CueSheet, Cue], list[Finding]]  # a rule of one cue's findings, or as kept


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule: id, the passage it enforces, its check — over the cues of a programme (*check*), or of one cue alone
    (*of_cue*: kept with the cue's other checks, ``check.kept``) — and whether it holds only for the rites that list
    it."""

    id: str
    cite: str
    check: SheetCheck | None = None
    per_rite: bool = False  # holds only for the rites whose row of data/rites.json lists it
    severity: Severity = "error"
    of_cue: CueCheck | None = None

    def findings(self, sheet: CueSheet, cues: tuple[Cue, ...], of_cue: CueFindings) -> Iterator[Finding]:
        """What the rule finds in the programme *cues*: its *check*, or *of_cue* on each cue."""
        if self.check is not None:
            yield from self.check(sheet, cues)
        else:
            for cue in cues:
                yield from of_cue(self, sheet, cue)


def cue_findings(rule: Rule, sheet: CueSheet, cue: Cue) -> list[Finding]:
    """What a rule of one cue finds in *cue*."""
    return list(rule.of_cue(sheet, cue)) if rule.of_cue is not None else []


def _cue_path(cue: Cue, *rest: str | int) -> PathKey:
    return ("cues", cue.index) + rest


def _said(cue: Cue, text: str) -> bool:
    return text in cue.words or text in cue.action


def zhengge_bei(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """正歌備 only after the full programme: 升歌, 笙, 間歌, 合樂, three 終 each (the 記's 以樂納賓: 升歌, 下管, 合樂;
    a rite's own where its row gives it: 鄉射's 合樂 alone).

    The 終 are counted as ``zhong.zhong_of`` counts them: an ode and its 笙 piece are one 終 of 間歌, a 周南
    ode with its 召南 ode one 終 of 合樂 (4-26a), so six odes of 合樂 are three 終, not six.
    """
    announce = next((c for c in cues if not c.is_music and _said(c, "正歌備")), None)
    if announce is None:
        yield ("cues",), "no cue announces 正歌備 (工告于樂正曰正歌備)"
        return
    before = [c for c in cues if c.index < announce.index and c.is_music]
    kinds = {c.music for c in before}
    rite = rite_of(sheet)
    if rite is not None and rite.zhengge:  # the rite's own (鄉射: 合樂 alone, 不歌不笙不閒 5-15b)
        wanted = {MusicKind(kind): zhong for kind, zhong in rite.zhengge}
    elif MusicKind.XIAGUAN in kinds:  # 記: 升歌鹿鳴，下管新宮，笙入三成，遂合鄉樂
        wanted = {MusicKind.SHENGGE: 0, MusicKind.XIAGUAN: 3, MusicKind.HEYUE: 3}
    else:
        wanted = {MusicKind.SHENGGE: 3, MusicKind.SHENG: 3, MusicKind.JIANGE: 3, MusicKind.HEYUE: 3}
    for kind, zhong in wanted.items():
        done = [c for c in before if c.music is kind]
        if not done:
            yield _cue_path(announce), f"正歌備 announced before any {kind.value}"
            continue
        total = sum(zhong_count(c) for c in done)
        if zhong and total != zhong:
            yield _cue_path(done[0], "pieces"), f"{kind.value} has {total} 終 before 正歌備, expected {zhong}"


def xiangshe_bu_ge(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """鄉射: only 合樂 before the shooting — 不歌不笙不閒."""
    rounds = {cid for r in (sheet.archery.rounds if sheet.archery else ()) for cid in r.cues}
    first_round = min((c.index for c in cues if c.id in rounds), default=len(sheet.cues))
    short = rite.short if (rite := rite_of(sheet)) is not None else sheet.rite_name
    for cue in cues:
        if cue.index < first_round and cue.music in (MusicKind.SHENGGE, MusicKind.SHENG, MusicKind.JIANGE):
            yield _cue_path(cue, "music"), (f"{cue.music.value} before the shooting: {short} has only 合樂 "
                                            "(不歌不笙不閒)")


def jiange_alternation(sheet: CueSheet, cue: Cue) -> Iterator[Finding]:
    """間歌: one ode sung, then one 笙 piece, three times (一歌則一吹)."""
    if cue.music is MusicKind.JIANGE:
        parts = [p.part for p in cue.pieces]
        if parts != ["歌", "笙"] * 3:
            yield _cue_path(cue, "pieces"), f"間歌 parts are {' '.join(parts) or 'missing'}, expected 歌 笙 ×3"


def jinzou_que(sheet: CueSheet, cue: Cue) -> Iterator[Finding]:
    """金奏 runs from one ritual action until another: it needs the action that stops it (end: {at: CUE}) —
    樂闋 where the text writes it (肆夏), our reading of the text elsewhere (陔).

    Where the text names no action that stops it, the sheet must say so with end: {zhong: true}.
    """
    if cue.music is MusicKind.JINZOU and not (cue.end_at or cue.end_on_zhong):
        yield _cue_path(cue), ("金奏 without its end: give end: {at: CUE} (the action that stops it: 樂闋 "
                               "where the text writes it), or end: {zhong: true} where the text names none")


def _archery(sheet: CueSheet, cues: tuple[Cue, ...]) -> Archery | None:
    """The archery section if it is in the programme *cues* (a section under a variant needs one of its cues)."""
    archery = sheet.archery
    if archery is None or not archery.variant:
        return archery
    return archery if any(c.variant == archery.variant for c in cues) else None


def _active_rounds(archery: Archery, cues: tuple[Cue, ...]) -> list[Round]:
    ids = {c.id for c in cues}
    return [r for r in archery.rounds if any(cid in ids for cid in r.cues)]


def three_rounds(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """Three rounds first: hits not counted, counted if pierced, counted on the drum; a 復射 may follow."""
    archery = _archery(sheet, cues)
    if archery is None:
        if sheet.archery is None and (rite := rite_of(sheet)) is not None and rite.archery:
            yield ("archery",), "an archery rite needs its archery section (rounds, pairs, 節)"
        return
    counts = [r.count for r in _active_rounds(archery, cues)]
    if counts[:3] != [Count.NONE, Count.PIERCE, Count.DRUM]:
        yield ("archery", "rounds"), (f"rounds count {', '.join(c.value for c in counts)}; expected none, pierce, "
                                      "drum (始射獲而未釋獲；復，釋獲；復，用樂行之)")


def archery_references(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """Rounds name existing cues and pairs; pairs name performers; the script names rounds and pairs.

    A section under a variant names cues of that variant; reading shihuo has the options the sequencer knows.
    """
    archery = sheet.archery
    if archery is None:
        return
    by_id = {c.id: c for c in sheet.cues}
    for n, rnd in enumerate(archery.rounds):
        for cid in rnd.cues:
            if cid not in by_id:
                yield ("archery", "rounds", n, "cue"), f"unknown cue {cid!r}"
            elif archery.variant and by_id[cid].variant != archery.variant:
                yield ("archery", "rounds", n, "cue"), (f"cue {cid!r} is not of variant {archery.variant!r}, "
                                                        "which the archery section applies under")
        for pid in rnd.pairs:
            if pid not in archery.pairs:
                yield ("archery", "rounds", n, "pairs"), f"unknown pair {pid!r}"
        for key, ids in (("exempt", rnd.exempt), ("any_hit", rnd.any_hit)):
            for pid in ids:
                if pid not in sheet.performers:
                    yield ("archery", "rounds", n, key), f"unknown performer {pid!r}"
        yield from _pair_cues(rnd, n, by_id)
        if rnd.count is Count.DRUM and rnd.music is None:
            yield ("archery", "rounds", n), "a round counted on the drum needs its music (不鼓不釋)"
    for pair in archery.pairs.values():
        for who in (pair.upper, pair.lower):
            if who not in sheet.performers:
                yield ("archery", "pairs", pair.id), f"unknown performer {who!r}"
    unknown = set(sheet.readings["shihuo"].options) - set(SHIHUO_OPTIONS) if "shihuo" in sheet.readings else set()
    if unknown:
        yield ("readings", "shihuo", "options"), (f"reading shihuo has option(s) {', '.join(sorted(unknown))}; the "
                                                  f"sequencer knows {', '.join(SHIHUO_OPTIONS)}")
    rounds = {r.id: r for r in archery.rounds}
    for rid, pid in archery.script:
        if rid not in rounds or pid not in rounds[rid].pairs:
            yield ("archery", "shots", "script", rid), f"script for {rid}/{pid}: no such pair in that round"


def _pair_cues(rnd: Round, n: int, by_id: dict[str, Cue]) -> Iterator[Finding]:
    """A round's pair_cues name its pairs and action cues of the round's programme."""
    variant = by_id[rnd.cues[0]].variant if rnd.cues and rnd.cues[0] in by_id else ""
    for pid, cid in rnd.pair_cues:
        path = ("archery", "rounds", n, "pair_cues", pid)
        if pid not in rnd.pairs:
            yield path, f"pair {pid!r} is not one of the round's pairs"
        elif cid not in by_id or by_id[cid].is_music:
            yield path, f"{cid!r} is not an action cue: a pair shoots in an action"
        elif by_id[cid].variant != variant:
            yield path, f"{cid!r} is not in the same programme as the round's cue"


def jie_rule(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """Four 節 carry the eight arrows (四節四拾); the rest are for listening; 鄉射 has five."""
    archery = _archery(sheet, cues)
    if archery is None:
        return
    if archery.jie_total - archery.jie_listen != 4:
        yield ("archery", "jie"), (f"{archery.jie_total} 節 with {archery.jie_listen} to listen leaves "
                                   f"{archery.jie_total - archery.jie_listen} for the arrows; expected 4 (四節四拾)")
    rite = rite_of(sheet)
    if rite is not None and rite.jie_total is not None and archery.jie_total != rite.jie_total:
        yield ("archery", "jie", "total"), (f"{rite.short} has {archery.jie_total} 節; expected {rite.jie_total} "
                                            f"({rite.jie_cite})")


def music_round(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """The music of a drum round: one 終 per 節, begun again for every 耦; 鄉射 sings 騶虞 or 采蘋."""
    archery = _archery(sheet, cues)
    if archery is None:
        return
    rite = rite_of(sheet)
    for n, rnd in enumerate(archery.rounds):
        active = [c for c in cues if c.id in rnd.cues]
        refs = [p for c in active for p in c.pieces] or ([rnd.music] if rnd.music else [])
        for ref in refs:
            if ref.zhong != archery.jie_total:
                yield ("archery", "rounds", n), (f"{ref.piece.title} sung {ref.zhong} 終 per 耦, but the drum gives "
                                                 f"{archery.jie_total} 節 (鼓五節歌五終; 每一耦射歌五終)")
            if rite is not None and rite.round_pieces and ref.piece.id not in rite.round_pieces:
                yield ("archery", "rounds", n), f"{rite.short} shoots to {rite.round_names}, not {ref.piece.title}"


def calls_on_gong_shang(sheet: CueSheet, cue: Cue) -> Iterator[Finding]:
    """Hit calls rise on 宫 and fall on 商; a 許諾 is on the sounds its rite's row gives (鄉射: one unbroken sound;
    大射: on 宫 then 商, the 商 held until the 負侯者 reach the 乏)."""
    if cue.music is not MusicKind.CHANGSHENG:
        return
    calls = list(cue.calls)
    if not calls:
        yield _cue_path(cue), "a 唱聲 cue needs its calls: [宫, 商] for a hit, [不絶] for 鄉射's 許諾"
    elif "獲" in cue.words and calls != ["宫", "商"]:
        yield _cue_path(cue, "calls"), f"the hit call is {calls}; expected [宫, 商] (舉旌以宫偃旌以商)"
    elif "諾" in cue.words and (rite := rite_of(sheet)) is not None and rite.xunuo:
        yield from _xunuo_calls(cue, calls, rite)


def _xunuo_calls(cue: Cue, calls: list[str], rite: Rite) -> Iterator[Finding]:
    """A 許諾 on the sounds of its rite, the held one held until a walk ends or for a time."""
    if not set(calls) <= set(rite.xunuo):
        yield _cue_path(cue, "calls"), (f"{rite.short}'s 許諾 is {calls}; expected [{', '.join(rite.xunuo)}] "
                                        f"({rite.xunuo_cite})")
    elif calls[-1] == rite.xunuo_held and not (cue.hold_until or cue.hold):
        yield _cue_path(cue, "calls"), (f"{rite.short}'s 諾 on {rite.xunuo_held} is held until the walk it answers "
                                        f"ends ({rite.xunuo_cite}): give hold: {{until: WALK}} or hold: DURATION")


def xunuo_sounds(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """Every 許諾 of the 負侯者 or 獲者 sounds: an action that says it has a 唱聲 cue with it or held until it."""
    callers = {pid for pid, m in sheet.performers.items() if "負侯" in m.name or m.name == "獲者"}
    sounding = {c.start.cue for c in cues
                if c.music is MusicKind.CHANGSHENG and c.start and c.start.anchor is Anchor.WITH}
    sounding |= {c.hold_until for c in cues if c.music is MusicKind.CHANGSHENG and c.hold_until}
    for cue in cues:
        if not cue.is_music and "許諾" in cue.action and set(cue.who) & callers and cue.id not in sounding:
            yield _cue_path(cue), (f"{cue.action}: the 許諾 is only words; add a 唱聲 cue that starts with this cue "
                                   "(start: {with: …}) so that it sounds")


def calls_belong_to_hits(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """A hit call (獲) runs over a round of shooting: it answers hits."""
    archery = _archery(sheet, cues)
    rounds = archery.rounds if archery else ()
    for cue in cues:
        if cue.music is MusicKind.CHANGSHENG and "獲" in cue.words and not rounds_called(cue, sheet.cues, rounds):
            yield _cue_path(cue), ("a hit call (獲) must run over a round of shooting: start it with the round, "
                                   "or end it (end: {at: …}) after the round")


def gong_after_music(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """大射, 燕禮: the 公 steps on the mark only after the music starts (樂作而后就物)."""
    archery = _archery(sheet, cues)
    if archery is None:
        return
    for rnd in archery.rounds:
        music = [c for c in cues if c.id in rnd.cues and c.is_music]
        if rnd.count is not Count.DRUM or not music or not rnd.exempt:
            continue
        for cue in cues:
            exempt = set(cue.who) & set(rnd.exempt)
            if _said(cue, "就物") and exempt and _said(cue, "樂作") and cue.index < music[0].index:
                yield _cue_path(cue), f"the 公 steps on the mark before the music ({music[0].id}) starts: 樂作而后就物"


def within_limits(sheet: CueSheet, cues: tuple[Cue, ...]) -> Iterator[Finding]:
    """終, 節, syllables and durations within ``yuesheng.limits`` (the length and size of the whole rite are
    checked by ``validate``, which measures the timeline)."""
    checks: list[tuple[PathKey, str | None]] = [(t.path, limits.RITE_SECONDS.check(t.key, t.seconds))
                                                for t in timed_values(sheet, cues)]
    checks += [(t.path, limits.SYLLABLE.check(t.key, t.seconds)) for t in timed_values(sheet, cues)
               if t.key == "syllable"]
    for cue in cues:
        for n, ref in enumerate(cue.pieces):
            checks.append((_cue_path(cue, "pieces", n, "zhong"), limits.ZHONG.check("zhong", ref.zhong)))
    if (archery := sheet.archery) is not None:
        checks.append((("archery", "jie", "total"), limits.JIE.check("節", archery.jie_total)))
    if (reading := sheet.readings.get(JIE_READING)) is not None:  # its numeric options set the 節 (timeline)
        for option in reading.options:
            if option.isascii() and option.isdigit():
                checks.append((("readings", reading.id, "options", option), limits.JIE.check("節", int(option))))
    yield from ((path, message) for path, message in checks if message)


RULES: tuple[Rule, ...] = (
    Rule("zhengge-bei", "儀禮集釋 4-26a 釋曰; 8-7a 鄭注 升歌及笙各三終閒歌三終合樂三終", zhengge_bei, per_rite=True),
    Rule("xiangshe-bu-ge", "儀禮集釋 5-15b 鄭注 不歌不笙不閒志在射略於樂也", xiangshe_bu_ge, per_rite=True),
    Rule("jiange-alternation", "儀禮集釋 4-23b 乃間歌魚麗笙由庚…; 鄭注 一歌則一吹", of_cue=jiange_alternation),
    Rule("jinzou-que", "儀禮集釋 8-24a 奏肆夏…而樂闋", of_cue=jinzou_que),
    Rule("three-rounds", "儀禮集釋 6-31a 記 始射獲而未釋獲復釋獲復用樂行之", three_rounds, per_rite=True),
    Rule("archery-reference", "the archery section names declared cues, pairs and performers", archery_references),
    Rule("jie", "儀禮集釋 6-12b 鄭注 鄉射之鼓五節…四節四拾其一節先以聽也", jie_rule, per_rite=True),
    Rule("music-round", "儀禮集釋 6-34b 記 歌騶虞若采蘋皆五終 鄭注 每一耦射歌五終也", music_round, per_rite=True),
    Rule("calls", "儀禮集釋 5-25a 聲不絶; 5-26a 舉旌以宫偃旌以商; 9-31b 許諾以宫…又諾以商", of_cue=calls_on_gong_shang),
    Rule("calls-hits", "儀禮集釋 5-26a 獲者坐而獲", calls_belong_to_hits),
    Rule("xunuo-sounds", "儀禮集釋 9-31b 負侯皆許諾以宫…又諾以商至乏聲止; 5-25a 獲者執旌許諾聲不絶", xunuo_sounds),
    Rule("gong-after-music", "儀禮集釋 10-23a 公樂作而後就物…不以樂志; 8-26b 樂作而后就物", gong_after_music,
         per_rite=True),
    Rule("limits", "yuesheng/limits.py: what one cue sheet may ask of the sequencer", within_limits),
)


Programme = tuple[frozenset[str], dict[str, str]]  # the variants switched on, the readings chosen (others: defaults)


def programmes(sheet: CueSheet) -> list[Programme]:
    """The programme as written and with each variant on; and with each option of a reading that brings cues
    of its own (``reading: ID=OPTION``) under each of those, where such a cue is in it."""
    out: list[Programme] = [(v, {}) for v in variant_configurations(sheet)]
    cue_readings = sorted({c.reading for c in sheet.cues if c.reading})
    for variants, _ in list(out):
        for choice in cue_readings:  # each well formed: the reader keeps '' for one that is not
            rid, option = parse_reading(choice)
            brings = any(c.reading == choice and c.active(variants) for c in sheet.cues)
            if rid in sheet.readings and sheet.readings[rid].chosen != option and brings:
                out.append((variants, {rid: option}))
    return out


def check_rules(sheet: CueSheet, chosen: Programme | None = None, of_cue: CueFindings = cue_findings) -> list[Problem]:
    """Every rule on each of the ``programmes`` (on the *chosen* one alone, if given: a build's); deduplicated, in
    file order. A rule of one cue is asked of each cue once, through *of_cue* (``cue_findings``, or as kept)."""
    found: dict[tuple[str, int], list[Finding]] = {}

    def once(rule: Rule, sheet: CueSheet, cue: Cue) -> list[Finding]:
        key = (rule.id, cue.index)
        if key not in found:
            found[key] = of_cue(rule, sheet, cue)
        return found[key]

    seen: dict[tuple[PathKey, str, str], Problem] = {}
    configurations = [(variants, readings, sheet.active_cues(variants, readings))
                      for variants, readings in ([chosen] if chosen is not None else programmes(sheet))]
    rite = _row_checked(rite_of(sheet))
    for rule in RULES:
        if rule.per_rite and (rite is None or rule.id not in rite.rules):
            continue
        for variants, readings, cues in configurations:
            for path, message in rule.findings(sheet, cues, once):
                said = [f"variant {', '.join(sorted(variants))}"] * bool(variants) + \
                       [f"reading {k}={v}" for k, v in readings.items()]
                suffix = f" (with {'; '.join(said)})" if said else ""
                key = (path, message, rule.id)
                if key not in seen:
                    seen[key] = sheet.doc.problem(path, f"{message}{suffix} — {rule.cite}", rule=rule.id,
                                                  severity=rule.severity)
    unknown = [] if rite is not None else [unknown_rite(sheet)]
    return sorted([*unknown, *seen.values()], key=lambda p: (p.line or 0, p.col or 0, p.rule))


def _row_checked(rite: Rite | None) -> Rite | None:
    """*rite*, whose row names only rite-specific rules and kinds of music that exist: InvalidValueError otherwise (a
    row with a typo would silently hold its rite to less)."""
    if rite is None:
        return None
    per_rite = [rule.id for rule in RULES if rule.per_rite]
    kinds = [kind.value for kind in MusicKind]
    for field, names, known in (("rules", sorted(rite.rules), per_rite),
                                ("zhengge", [kind for kind, _ in rite.zhengge], kinds)):
        for name in names:
            if name not in known:
                raise InvalidValueError(f"data/rites.json: rite {rite.id}: {field}", name, f"one of {' '.join(known)}")
    return rite


def unknown_rite(sheet: CueSheet) -> Problem:
    """The warning for a sheet of no rite of ``data/rites.json``: which rules it was not held to."""
    skipped = ", ".join(rule.id for rule in RULES if rule.per_rite)
    return sheet.doc.problem(("rite", "id"), (
        f"rite {sheet.rite_id!r} ({sheet.rite_name}) has no row in data/rites.json (nor has a rite of that name): "
        f"checked by the rules for any rite only; not applied: the rite-specific rules {skipped}, and what a row "
        "gives the others (archery needed, the 節, a round's pieces, the music before 正歌備, the 許諾's sounds)"),
        rule="rite", severity="warning")
