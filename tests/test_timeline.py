"""The timeline: a golden rite checked as text, 射節 invariants, 宫/商 calls, 樂闋, variants and readings."""

from __future__ import annotations

import os
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.errors import UnknownNameError
from yuesheng.music.lulu import Realization, Tuning, lu
from yuesheng.music.repertoire import data_dir
from yuesheng.outputs.report import run_sheet_text
from yuesheng.timeline import Event, EventKind, Options, Timeline, seconds, ticks

DATA = Path(__file__).parent / "data"


def _sheet(repertoire, name: str):
    path = DATA / f"{name}.yaml" if (DATA / f"{name}.yaml").exists() else data_dir("cues") / f"{name}.yaml"
    return load(path, repertoire=repertoire)


def dump(timeline: Timeline) -> str:
    """A readable text dump: the run sheet, every event but the notes, the notes counted per part, then every note:
    onset tick, length in ticks, cue, part, MIDI key and cents, 終, and the syllable sung."""
    lines = [run_sheet_text(timeline), "events"]
    for e in timeline.events:
        if e.kind is EventKind.NOTE:
            continue
        fields = [f"{seconds(e.start_tick):9.3f}", f"{seconds(e.length_ticks):7.3f}", e.kind.value, e.cue, e.part,
                  str(e.key or ""), e.text, e.round, e.pair, f"節{e.jie}" if e.jie else "", e.archer,
                  f"矢{e.arrow}" if e.arrow else "", {True: "中", False: "不中", None: ""}[e.hit],
                  {True: "貫", False: "不貫", None: ""}[e.pierced] if e.hit else "",
                  {True: "釋", False: "", None: ""}[e.counted], e.degree]
        lines.append(" ".join(f for f in fields if f))
    counts = Counter((e.cue, e.part) for e in timeline.events if e.kind is EventKind.NOTE)
    lines += ["notes"] + [f"{cue} {part} {n}" for (cue, part), n in sorted(counts.items())]
    lines += ["tick length cue part key cents zhong text"]
    lines += [f"{e.start_tick:7d} {e.length_ticks:5d} {e.cue} {e.part} {e.key} {e.cents:+.2f} 終{e.zhong} {e.text}"
              .rstrip()
              for e in timeline.events if e.kind is EventKind.NOTE]
    return "\n".join(lines) + "\n"


def test_golden_timeline(repertoire):
    """tests/data/golden.yaml built and dumped as text equals tests/data/golden_timeline.txt.

    After a change of behaviour on purpose, regenerate the file and review its diff:
    ``YUESHENG_REGOLD=1 pytest tests/test_timeline.py -k golden``.
    """
    got = dump(build(_sheet(repertoire, "golden")))
    golden = DATA / "golden_timeline.txt"
    if os.environ.get("YUESHENG_REGOLD") == "1":
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def xiangshe(repertoire):
    return build(_sheet(repertoire, "xiangshe"))


def _round3(timeline: Timeline):
    return [e for e in timeline.events if e.round == "round-3" and e.kind in (EventKind.DRUM, EventKind.RELEASE)]


def test_shejie_per_pair_five_zhong_five_jie_evenly_spaced(repertoire, xiangshe):
    sheet = _sheet(repertoire, "xiangshe")
    rnd = next(r for r in sheet.archery.rounds if r.id == "round-3")
    events = _round3(xiangshe)
    for pid in rnd.pairs:
        strokes = [e.start_tick for e in events if e.pair == pid and e.kind is EventKind.DRUM and e.velocity == 110]
        assert len(strokes) == 5
        gaps = {b - a for a, b in zip(strokes, strokes[1:], strict=False)}
        assert len(gaps) == 1  # 間若一
        (gap,) = gaps
        sung = [e for e in xiangshe.events if e.kind is EventKind.NOTE and e.part == "歌" and e.cue == "she-san"
                and strokes[0] <= e.start_tick < strokes[-1] + gap]
        assert sorted({e.zhong for e in sung}) == [1, 2, 3, 4, 5]
        assert len(sung) == 5 * 26


def test_shejie_arrows_alternate_and_skip_the_listening_jie(xiangshe):
    releases = [e for e in _round3(xiangshe) if e.kind is EventKind.RELEASE]
    by_pair: dict[str | None, list[Event]] = {}
    for r in releases:
        by_pair.setdefault(r.pair, []).append(r)
    assert len(by_pair) == 7
    for rs in by_pair.values():
        rs.sort(key=lambda r: r.arrow)
        assert [r.archer for r in rs] == ["上射", "下射"] * 4
        assert [r.jie for r in rs] == [2, 2, 3, 3, 4, 4, 5, 5]


def _on_drum(sheet, timeline: Timeline) -> dict[tuple[str, int], bool]:
    """(pair, arrow) → whether the round-3 release falls within the tolerance of a drum stroke of its 耦."""
    tolerance = ticks(sheet.archery.tolerance)
    strokes = {(e.pair, e.start_tick) for e in _round3(timeline) if e.kind is EventKind.DRUM}
    return {(r.pair, r.arrow): any(p == r.pair and abs(t - r.start_tick) <= tolerance for p, t in strokes)
            for r in _round3(timeline) if r.kind is EventKind.RELEASE}


def test_round_three_counts_hits_that_pierce_and_fall_on_the_drum(repertoire, xiangshe):
    # 釋獲如初 (6-13a): 不貫不釋 (5-33a) still holds, and 不鼓不釋 (6-12b)
    on_drum = _on_drum(_sheet(repertoire, "xiangshe"), xiangshe)
    releases = [e for e in _round3(xiangshe) if e.kind is EventKind.RELEASE]
    for r in releases:
        assert r.counted == bool(r.hit and r.pierced and on_drum[(r.pair, r.arrow)])
    assert any(r.hit and on_drum[(r.pair, r.arrow)] and not r.pierced for r in releases)  # the case that matters


def test_the_drum_only_reading_counts_unpierced_hits_on_the_drum(repertoire):
    sheet = _sheet(repertoire, "xiangshe")
    tl = build(sheet, Options(readings={"shihuo": "drum-only"}))
    on_drum = _on_drum(sheet, tl)
    for r in (e for e in _round3(tl) if e.kind is EventKind.RELEASE):
        assert r.counted == bool(r.hit and on_drum[(r.pair, r.arrow)])
    # script round-3 shang-ou arrow 5 is h on the drum: counted only under drum-only
    arrow5 = {t.readings["shihuo"]: next(e for e in _round3(t) if e.kind is EventKind.RELEASE and e.pair == "shang-ou"
                                         and e.arrow == 5) for t in (tl, build(sheet))}
    assert arrow5["drum-only"].counted and not arrow5["ru-chu"].counted and not arrow5["ru-chu"].pierced


@pytest.mark.parametrize(("rite", "pair", "arrow"), [("xiangshe", "shang-ou", 5), ("dashe", "shang-ou", 6)])
def test_the_unpierced_hit_of_the_music_round_is_not_counted(repertoire, rite, pair, arrow):
    # the audit's cases: 鄉射 上耦 arrow 5, 大射 上耦 arrow 6 are h on the drum
    tl = build(_sheet(repertoire, rite))
    r = next(e for e in tl.events if e.kind is EventKind.RELEASE and e.round == "round-3" and e.pair == pair
             and e.arrow == arrow)
    assert r.hit and r.pierced is False and not r.counted
    tally = next(t for t in tl.tallies if t.round == "round-3")
    third = [e for e in tl.events if e.kind is EventKind.RELEASE and e.round == "round-3"]
    assert (tally.right, tally.left) == (sum(bool(e.counted) for e in third if e.archer == "上射"),
                                         sum(bool(e.counted) for e in third if e.archer == "下射"))


def test_the_scripted_arrow_off_the_drum_is_not_counted(xiangshe):
    # script round-3 shang-ou: [H, H+120ms, M, H-300ms, …]: arrow 4 hits 300 ms early
    arrow4 = next(e for e in xiangshe.events if e.kind is EventKind.RELEASE and e.round == "round-3"
                  and e.pair == "shang-ou" and e.arrow == 4)
    assert arrow4.hit and not arrow4.counted


def test_first_round_calls_hits_but_counts_nothing(xiangshe):
    first = [e for e in xiangshe.events if e.kind is EventKind.RELEASE and e.round == "round-1"]
    assert len(first) == 24 and not any(e.counted for e in first)
    assert "round-1" not in {t.round for t in xiangshe.tallies}
    calls = [e for e in xiangshe.events if e.kind is EventKind.CALL and e.round == "round-1"]
    assert len(calls) == 2 * sum(e.hit for e in first)


def test_second_round_counts_only_pierced_hits(xiangshe):
    second = [e for e in xiangshe.events if e.kind is EventKind.RELEASE and e.round == "round-2"]
    script = next(e for e in second if e.pair == "shang-ou" and e.arrow == 3)  # 'h': hit, not pierced
    assert script.hit and not script.counted
    tally = next(t for t in xiangshe.tallies if t.round == "round-2")
    assert tally.right == sum(e.counted for e in second if e.archer == "上射")
    assert tally.left == sum(e.counted for e in second if e.archer == "下射")


def test_hit_calls_are_gong_then_shang_a_whole_tone_apart(xiangshe):
    calls = [e for e in xiangshe.events if e.kind is EventKind.CALL and e.text == "獲"]
    assert calls
    assert {(e.degree, e.key) for e in calls} == {("宫", 60), ("商", 62)}
    for gong, shang in zip(calls[::2], calls[1::2], strict=True):
        assert (gong.degree, shang.degree) == ("宫", "商") and shang.start_tick > gong.start_tick


def test_calls_follow_the_chosen_jun_and_huangzhong(repertoire):
    sheet = _sheet(repertoire, "golden")
    from dataclasses import replace

    tl = build(replace(sheet, call_jun=lu("林")), Options(realization=Realization(62)))
    assert {(e.degree, e.key) for e in tl.events if e.kind is EventKind.CALL} == {("宫", 69), ("商", 71)}
    tl = build(sheet, Options(call_jun=lu("應")))  # 商 of 應鍾 is 大吕清
    assert {(e.degree, e.key) for e in tl.events if e.kind is EventKind.CALL} == {("宫", 71), ("商", 73)}


def test_xiangshe_xunuo_is_one_unbroken_call_not_on_gong_or_shang(xiangshe):
    xunuo = [e for e in xiangshe.events if e.kind is EventKind.CALL and e.text == "諾"]
    assert xunuo and {e.degree for e in xunuo} == {"不絶"}
    assert all(e.length_ticks >= ticks(Fraction(10)) for e in xunuo)  # held from 侯 to 乏


def test_xiangshe_xunuo_sounds_on_no_lu_unless_the_reading_holds_it_on_zhi(repertoire, xiangshe):
    def xunuo(tl):
        return {(e.part, e.key, e.cents) for e in tl.events if e.kind is EventKind.CALL and e.degree == "不絶"}

    assert xunuo(xiangshe) == {("許諾", 60, 0.0)}  # 不以宮商: Breath Noise at one fixed key
    sheet = _sheet(repertoire, "xiangshe")
    other = build(sheet, Options(call_jun=lu("應"), realization=Realization(62, Tuning.SANFEN)))
    assert xunuo(other) == xunuo(xiangshe)  # no 律: neither the 均 nor 黄鍾 nor the tuning moves it
    zhi = build(sheet, Options(readings={"xunuo": "zhi"}))
    assert xunuo(zhi) == {("獲者", 67, 0.0)}  # 徵 of 黄鍾 = 林鍾, G4 with 黄鍾 on C4
    assert any("不以宮商" in n for n in xiangshe.notices) and any("xunuo=zhi" in n for n in zhi.notices)


@pytest.mark.parametrize(("variants", "fixed", "following"), [
    (frozenset(), {("宫", 60), ("商", 62)}, {("宫", 60), ("商", 62)}),  # 騶虞 黄鍾羽: the 均 is 黄鍾 either way
    (frozenset({"caipin"}), {("宫", 60), ("商", 62)}, {("宫", 70), ("商", 72)}),  # 采蘋 無射商: 無射 and 黄鍾清
])
def test_the_calls_jun_is_fixed_or_follows_the_music_in_play(repertoire, variants, fixed, following):
    sheet = _sheet(repertoire, "xiangshe")

    def hit_calls(readings):
        tl = build(sheet, Options(variants=variants, readings=readings))
        return {(e.degree, e.key) for e in tl.events if e.kind is EventKind.CALL and e.round == "round-3"}

    assert sheet.readings["changjun"].chosen == "gu-ding"
    assert hit_calls({}) == fixed
    assert hit_calls({"changjun": "sui-yue"}) == following


@pytest.fixture(scope="module")
def dashe(repertoire):
    return build(_sheet(repertoire, "dashe"))


# every 負侯許諾 of 大射: the 唱聲 cue(s) and the walk whose end stops the voice (聲止)
DASHE_XUNUO = [
    ("9-31b", ("xunuo-gong", "xunuo-shang"), "fuhou-zhi-fa"),
    ("9-33b", ("xunuo-qu-shi",), "fuhou-xunuo-qu-shi"),
    ("10-4a", ("xunuo-gong-2", "xunuo-shang-2"), "fuhou-zhi-fa-2"),
    ("10-7b", ("xunuo-gong-jun", "xunuo-shang-jun"), "fuhou-zhi-fa-jun"),
    ("10-10a", ("xunuo-qu-shi-2",), "fuhou-fu-hou-2"),
    ("10-21b", ("xunuo-gong-3", "xunuo-shang-3"), "fuhou-zhi-fa-3"),
    ("10-23b", ("xunuo-qu-shi-3",), "fuhou-fu-hou-3"),
]


def test_dashe_target_bearers_answer_on_gong_then_shang(dashe):
    nuo = [(e.degree, e.part, e.key) for e in dashe.events if e.kind is EventKind.CALL and e.text == "諾"]
    assert nuo == [("宫", "負侯者", 60), ("商", "負侯者", 62)] * len(DASHE_XUNUO)


@pytest.mark.parametrize(("page", "cues", "walk"), DASHE_XUNUO, ids=[x[0] for x in DASHE_XUNUO])
def test_every_dashe_xunuo_sounds_and_its_shang_is_held_to_the_end_of_the_walk(dashe, page, cues, walk):
    timing = {t.cue.id: t for t in dashe.cues}
    calls = sorted((e for e in dashe.events if e.kind is EventKind.CALL and e.cue in cues), key=lambda e: e.start_tick)
    assert [e.degree for e in calls] == ["宫", "商"] and all(e.part == "負侯者" for e in calls)
    gong, shang = calls
    assert timing[cues[0]].cue.cite.page == page
    assert gong.length_ticks == ticks(Fraction(4, 5))  # a short answer on 宫
    assert shang.start_tick > gong.start_tick
    assert shang.start_tick + shang.length_ticks == timing[walk].end_tick  # 至乏聲止
    assert shang.length_ticks >= ticks(Fraction(5))  # held, not a short note


@pytest.mark.parametrize(("suffix", "then"), [("", "shou-huozhe"), ("-2", "sima-jiang-2"), ("-jun", "sima-jiang-jun"),
                                              ("-3", "sima-jiang-3")])
def test_dashe_xunuo_to_the_fa_places_the_shang_after_the_run(dashe, suffix, then):
    # 許諾以宫 趨直西及乏南 又諾以商 至乏聲止 (9-31b), and 如初 at each later 去侯
    timing = {t.cue.id: t for t in dashe.cues}
    run = "fuhou-qu-fa" + suffix
    gong = next(e for e in dashe.events if e.kind is EventKind.CALL and e.cue == "xunuo-gong" + suffix)
    shang = next(e for e in dashe.events if e.kind is EventKind.CALL and e.cue == "xunuo-shang" + suffix)
    assert gong.start_tick == timing[run].start_tick
    assert shang.start_tick == timing[run].end_tick == timing["fuhou-zhi-fa" + suffix].start_tick
    assert shang.start_tick + shang.length_ticks == timing["fuhou-zhi-fa" + suffix].end_tick
    assert timing[then].start_tick == timing["fuhou-zhi-fa" + suffix].end_tick


def test_dashe_fushe_sounds_a_call_pair_for_every_hit(repertoire, dashe):
    assert not [e for e in dashe.events if e.round == "fu-she"]
    tl = build(_sheet(repertoire, "dashe"), Options(variants=frozenset({"fu-she"})))
    timing = {t.cue.id: t for t in tl.cues}
    shots = [e for e in tl.events if e.kind is EventKind.RELEASE and e.round == "fu-she"]
    assert len(shots) == 3 * 8 and not any(e.counted for e in shots)  # 皆獲: called, no 釋獲 is written
    assert all(timing["fu-she-she"].start_tick <= e.start_tick < timing["fu-she-she"].end_tick for e in shots)
    calls = [e for e in tl.events if e.kind is EventKind.CALL and e.cue == "huo-chang-fu"]
    assert len(calls) == 2 * sum(bool(e.hit) for e in shots) > 0
    assert [e.degree for e in calls] == ["宫", "商"] * (len(calls) // 2)


XIANGSHE_XUNUO = ["5-25a", "5-27a", "5-32a", "6-2b", "6-12a", "6-13b"]


def test_every_xiangshe_xunuo_sounds_unbroken(xiangshe):
    calls = [e for e in xiangshe.events if e.kind is EventKind.CALL and e.text == "諾"]
    pages = [next(t.cue.cite.page for t in xiangshe.cues if t.cue.id == e.cue) for e in calls]
    assert pages == XIANGSHE_XUNUO
    assert {(e.degree, e.part) for e in calls} == {("不絶", "許諾")}  # the 獲者's voice on no 律


def test_the_gong_looses_first_in_his_pair(dashe):
    for rnd in ("round-2", "round-3"):
        gong = sorted((e for e in dashe.events
                       if e.kind is EventKind.RELEASE and e.round == rnd and e.pair == "gong-bin"),
                      key=lambda e: e.arrow)
        assert [(e.archer, e.text) for e in gong[:2]] == [("下射", "jun"), ("上射", "bin")]  # 公下射也而先發 (10-9a)
        assert [e.archer for e in gong] == ["下射", "上射"] * 4
    drum = {e.start_tick for e in dashe.events if e.kind is EventKind.DRUM and e.pair == "gong-bin" and e.velocity > 80}
    bin_third = [e for e in dashe.events if e.kind is EventKind.RELEASE and e.round == "round-3"
                 and e.pair == "gong-bin" and e.text == "bin"]
    assert not any(e.start_tick in drum for e in bin_third)  # the 賓 looses on the half-節 stroke


def test_the_gongs_unpierced_hits_count_gong_ze_shi_huo(dashe):
    # 中離維綱揚觸梱復公則釋獲衆則不與 (10-5a)
    second = [e for e in dashe.events if e.kind is EventKind.RELEASE and e.round == "round-2" and e.pair == "gong-bin"]
    assert any(e.text == "jun" and e.hit and not e.pierced and e.counted for e in second)
    assert not any(e.text == "bin" and e.hit and not e.pierced and e.counted for e in second)


def test_jinzou_stops_at_the_phrase_end_after_its_action(repertoire):
    tl = build(_sheet(repertoire, "golden"))
    timing = {t.cue.id: t for t in tl.cues}
    action = timing["bai-zhi"].start_tick
    end = timing["sixia"].end_tick
    bells = [e for e in tl.events if e.cue == "sixia" and e.kind is EventKind.NOTE]
    assert end >= action and (end - timing["sixia"].start_tick) % (4 * ticks(Fraction(1))) == 0
    assert max(e.start_tick for e in bells) < end <= action + 4 * ticks(Fraction(1))
    assert len(bells) > 8  # the 8-stroke figure repeats until the 樂闋


def test_variant_programme(repertoire):
    sheet = _sheet(repertoire, "yanli")
    plain = {t.cue.id for t in build(sheet).cues}
    nabin = build(sheet, Options(variants=frozenset({"wu-shao"})))
    assert nabin.variants == {"wu-shao", "yi-yue-na-bin"}
    pieces = {e.piece for e in nabin.events if e.kind is EventKind.NOTE}
    assert {"sixia", "xingong", "shao"} <= pieces and "nangai" not in pieces
    assert "nangai" in {e.piece for e in build(sheet).events if e.kind is EventKind.NOTE}
    assert {t.cue.id for t in nabin.cues} != plain


def test_unknown_variant_and_reading_suggest(repertoire):
    sheet = _sheet(repertoire, "yanli")
    with pytest.raises(UnknownNameError, match="did you mean 'yi-yue-na-bin'"):
        build(sheet, Options(variants=frozenset({"yi-yue-nabin"})))
    with pytest.raises(UnknownNameError, match="option of reading heyue"):
        build(sheet, Options(readings={"heyue": "zhu"}))


def test_heyue_after_li_rugui_sounds_the_pairs_together(repertoire):
    sheet = _sheet(repertoire, "xiangyinjiu")
    def heyue_span(timeline):
        t = next(t for t in timeline.cues if t.cue.id == "heyue")
        return t.end_tick - t.start_tick
    zheng = build(sheet)
    li = build(sheet, Options(readings={"heyue": "li-rugui"}))
    assert heyue_span(li) < heyue_span(zheng)
    starts = Counter(e.start_tick for e in li.events
                     if e.cue == "heyue" and e.kind is EventKind.NOTE and e.part == "笙")
    sung = {e.start_tick for e in li.events if e.cue == "heyue" and e.kind is EventKind.NOTE and e.part == "歌"}
    assert sung & set(starts)  # 笙 on the 召南 ode while the 歌 sing the 周南 ode


def test_lishou_reading_five_jie(repertoire):
    sheet = _sheet(repertoire, "dashe")
    seven = build(sheet)
    five = build(sheet, Options(readings={"lishou-jie": "5"}))
    def jie(tl):
        return max(e.jie for e in tl.events if e.kind is EventKind.DRUM and e.round == "round-3")
    assert (jie(seven), jie(five)) == (7, 5)


def test_dashe_gong_is_exempt_from_the_drum(dashe):
    gong = [e for e in dashe.events if e.kind is EventKind.RELEASE and e.round == "round-3" and e.text == "jun"]
    assert gong and all(e.counted == e.hit for e in gong)  # 不以樂志, and 公則釋獲: pierced or not
    assert any(e.hit and not e.pierced for e in gong)


def test_same_options_same_timeline_and_seed_changes_shots(repertoire):
    sheet = _sheet(repertoire, "xiangshe")
    assert build(sheet).events == build(sheet).events
    a = [e.hit for e in build(sheet, Options(seed=1)).events if e.kind is EventKind.RELEASE]
    b = [e.hit for e in build(sheet, Options(seed=2)).events if e.kind is EventKind.RELEASE]
    assert a != b


def test_syllable_option_scales_the_music(repertoire):
    sheet = _sheet(repertoire, "golden")
    slow = build(sheet, Options(syllable=Fraction(2)))
    ge = next(t for t in slow.cues if t.cue.id == "ge")
    assert ge.end_tick - ge.start_tick == ticks(Fraction(156))  # 3 終 × 26 syllables × 2 s


def test_sanfen_cents_on_notes(repertoire):
    tl = build(_sheet(repertoire, "golden"), Options(realization=Realization(60, Tuning.SANFEN)))
    cents = {(e.key % 12, e.cents) for e in tl.events if e.kind is EventKind.NOTE and e.key is not None}
    assert (9, 5.87) in cents and (0, 0.0) in cents  # 南吕 +5.87, 黄鍾 0


@pytest.fixture(scope="module")
def yan_she(repertoire):
    return build(_sheet(repertoire, "yanli"), Options(variants=frozenset({"yan-she"})))


def test_yanli_shoots_only_with_variant_yan_she(repertoire, yan_she):
    plain = build(_sheet(repertoire, "yanli"))
    assert not [e for e in plain.events if e.kind in (EventKind.RELEASE, EventKind.CALL)] and not plain.tallies
    assert not [t for t in plain.cues if t.cue.id.startswith("yan-")]
    rounds = {e.round for e in yan_she.events if e.kind is EventKind.RELEASE}
    assert rounds == {"yan-round-1", "yan-round-2", "yan-round-3"}
    assert [t.round for t in yan_she.tallies] == ["yan-round-2", "yan-round-3"]  # 獲而未釋獲 in the first
    pieces = {e.piece for e in yan_she.events if e.kind is EventKind.NOTE and e.cue == "yan-she-san"}
    assert pieces == {"zouyu-huangzhong-yu"}  # 如鄉射之禮: 騶虞


def test_yanli_she_round_three_five_jie_per_pair_and_hit_calls(yan_she):
    strokes = [e for e in yan_she.events if e.kind is EventKind.DRUM and e.round == "yan-round-3" and e.velocity > 80]
    assert sorted(Counter(e.pair for e in strokes).values()) == [5] * 5  # 五節, begun again for each 耦
    hits = [e for e in yan_she.events if e.kind is EventKind.RELEASE and e.hit]
    calls = [e for e in yan_she.events if e.kind is EventKind.CALL and e.text == "獲"]
    assert len(calls) == 2 * len(hits) and {e.degree for e in calls} == {"宫", "商"}


def test_yanli_she_xunuo_is_unbroken_and_held_to_the_end_of_the_walk(yan_she):
    timing = {t.cue.id: t for t in yan_she.cues}
    xunuo = [e for e in yan_she.events if e.kind is EventKind.CALL and e.text == "諾"]
    assert len(xunuo) == 6 and {e.degree for e in xunuo} == {"不絶"}
    for e in xunuo:
        walk = timing[e.cue].cue.hold_until
        assert e.start_tick == timing[walk].start_tick and e.start_tick + e.length_ticks == timing[walk].end_tick


def test_yanli_jun_steps_on_after_the_music_looses_first_and_is_exempt(yan_she):
    # 記 8-26b–27a: 君與射則爲下射 … 樂作而后就物 … 不以樂志
    timing = {t.cue.id: t for t in yan_she.cues}
    third = [e for e in yan_she.events
             if e.kind is EventKind.RELEASE and e.round == "yan-round-3" and e.pair == "jun-bin"]
    first_stroke = min(e.start_tick for e in yan_she.events if e.kind is EventKind.DRUM and e.pair == "jun-bin")
    assert timing["yan-jun-jiu-wu"].start_tick >= first_stroke >= timing["yan-she-san"].start_tick
    assert min(e.start_tick for e in third) > timing["yan-jun-jiu-wu"].start_tick
    by_arrow = {e.arrow: e for e in third}
    assert (by_arrow[1].text, by_arrow[1].archer) == ("jun", "下射")
    assert by_arrow[3].text == "jun" and by_arrow[3].counted  # 1.5 s off the 節: 不以樂志
    assert by_arrow[4].text == "bin" and by_arrow[4].hit and not by_arrow[4].counted  # 400 ms off: 不鼓不釋


def test_every_release_in_the_json_has_pierced_and_the_reading_is_chosen_on_the_command_line(run):
    import json

    counted = {}
    for reading in ("ru-chu", "drum-only"):
        code, out, _ = run("timeline", "xiangshe", "--format", "json", "--reading", f"shihuo={reading}")
        data = json.loads(out)
        releases = [e for e in data["events"] if e["kind"] == "release"]
        assert code == 0 and releases and all(isinstance(e["pierced"], bool) for e in releases)
        third = [e for e in releases if e["round"] == "round-3"]
        counted[reading] = sum(e["counted"] for e in third)
        assert data["readings"]["shihuo"] == reading
    assert counted["drum-only"] > counted["ru-chu"]


def test_dashe_pairs_shoot_within_their_own_actions(dashe):
    # round 2: 三耦 (10-6a), then 公與賓 (10-9a), 卿大夫繼射 (10-9b), 衆皆繼射 (10-9b); round 1: 三耦卒射亦如之 (9-33a)
    timing = {t.cue.id: t for t in dashe.cues}
    expected = {("round-1", "shang-ou"): "shang-ou-she", ("round-1", "ci-ou"): "sanou-zu-she",
                ("round-2", "xia-ou"): "sanou-she-2", ("round-2", "gong-bin"): "gong-bin-she",
                ("round-2", "dafu-shi-ou"): "qing-dafu-ji-she", ("round-2", "zhong-ou-2"): "zhong-ji-she"}
    for (rnd, pair), cue in expected.items():
        shots = [e for e in dashe.events if e.kind is EventKind.RELEASE and e.round == rnd and e.pair == pair]
        assert len(shots) == 8 and {e.cue for e in shots} == {cue}
        assert all(timing[cue].start_tick <= e.start_tick < timing[cue].end_tick for e in shots)
    second = [e for e in dashe.events if e.kind is EventKind.RELEASE and e.round == "round-2"]
    calls = [e for e in dashe.events if e.kind is EventKind.CALL and e.round == "round-2"]
    assert len(calls) == 2 * sum(e.hit for e in second)
    assert all(timing["gong-bin-she"].start_tick <= c.start_tick < timing["gong-bin-she"].end_tick
               for c in calls if c.pair == "gong-bin")


def test_a_call_held_for_a_duration(repertoire, tmp_path):
    text = (DATA / "mini_xiangshe.yaml").read_text(encoding="utf-8")
    old = "    calls: [不絶]\n    end: {at: she-yi}\n"
    assert old in text
    path = tmp_path / "held.yaml"
    text = text.replace(old, "    calls: [宫, 商]\n    hold: 12s\n").replace(
        "  name: 鄉射禮", "  name: 試射")  # not 鄉射's 聲不絶
    path.write_text(text, encoding="utf-8")
    tl = build(load(path, repertoire=repertoire))
    timing = next(t for t in tl.cues if t.cue.id == "xunuo")
    gong, shang = sorted((e for e in tl.events if e.kind is EventKind.CALL and e.cue == "xunuo"),
                         key=lambda e: e.start_tick)
    assert (gong.degree, gong.length_ticks) == ("宫", ticks(Fraction(4, 5)))
    assert (shang.degree, shang.start_tick - gong.start_tick, shang.length_ticks) == (
        "商", ticks(Fraction(1)), ticks(Fraction(12)))
    assert timing.end_tick == shang.start_tick + shang.length_ticks
def test_heyue_default_sounds_each_pair_in_turn_and_counts_three_zhong(repertoire):
    tl = build(_sheet(repertoire, "xiangyinjiu"))
    notes = [e for e in tl.events if e.cue == "heyue" and e.kind is EventKind.NOTE]
    zhong = {e.piece: e.zhong for e in notes}
    assert zhong == {"guanju": 1, "queshao": 1, "getan": 2, "caifan": 2, "juaner": 3, "caipin": 3}
    span = {p: (min(e.start_tick for e in notes if e.piece == p), max(e.start_tick for e in notes if e.piece == p))
            for p in zhong}
    assert span["guanju"][1] < span["queshao"][0] < span["queshao"][1] < span["getan"][0]  # in turn, pair by pair
    assert {e.part for e in notes if e.piece == "queshao"} == {"歌", "瑟", "笙", "和", "磬"}  # 衆聲俱作 on every ode


@pytest.mark.parametrize(("rite", "music", "cups", "clause"), [
    ("yanli", "wusuan-yue", "wusuan-jue", "shi-zhong-lv"),  # 8-18a 士終旅于上如初 / 無算樂
    ("dashe", "wu-suan-yue", "wu-suan-jue", "shi-zhong-lv"),  # 10-31b
    ("xiangshe", "wu-suan-yue", "wu-suan-jue", "wu-suan-fan"),  # 6-21b 反奠于賓與大夫 / 6-22a 無算樂
])
def test_wusuanyue_starts_where_the_jing_writes_it_or_with_the_cups_as_a_reading(repertoire, rite, music, cups,
                                                                                clause):
    sheet = _sheet(repertoire, rite)
    def start(tl, cue):
        return next(t for t in tl.cues if t.cue.id == cue)
    default = build(sheet)
    cupwise = build(sheet, Options(readings={"wusuanyue": "yu-jue"}))
    assert sheet.readings["wusuanyue"].chosen == "jing-ci"
    assert start(default, music).start_tick == start(default, clause).end_tick
    assert start(cupwise, music).start_tick == start(cupwise, cups).start_tick
    assert default.duration_ticks == cupwise.duration_ticks  # the drinking is the same; only the music moves
    for tl in (default, cupwise):  # it stops as the 賓 rises, either way
        assert start(tl, "bin-zui" if rite != "xiangshe" else "bin-xing").start_tick <= start(tl, music).end_tick


def test_wusuanyue_in_xiangyinjiu_starts_with_the_cups_the_jing_writing_them_side_by_side(repertoire):
    sheet = _sheet(repertoire, "xiangyinjiu")
    tl = build(sheet)
    start = {t.cue.id: t.start_tick for t in tl.cues}
    assert sheet.readings["wusuanyue"].chosen == "yu-jue"
    assert start["wusuanyue"] == start["wusuanjue"]


def test_wusuan_yue_sounds_sheng_ge_jian_and_he_with_their_own_parts(repertoire):
    tl = build(_sheet(repertoire, "dashe"))
    parts: dict[str, set[str]] = {}
    for e in tl.events:
        if e.cue == "wu-suan-yue" and e.kind is EventKind.NOTE:
            parts.setdefault(e.piece, set()).add(e.part)
    assert parts["luming"] == {"歌", "瑟"}  # 升歌
    assert parts["yougeng"] == {"笙"}  # 間: the 笙 answers (lost: no words)
    assert parts["guanju"] == {"歌", "瑟", "笙", "鐘", "磬"}  # 合


def test_fangzhong_is_strings_and_voices_without_bells_or_stones(repertoire):
    tl = build(_sheet(repertoire, "yanli"), Options(variants=frozenset({"fangzhong"})))
    assert "si-fang-zhi-bin" in tl.variants
    parts = {e.part for e in tl.events if e.cue == "fangzhong-yue" and e.kind is EventKind.NOTE}
    assert parts == {"歌", "瑟"}
    cues = {t.cue.id for t in tl.cues}
    assert "wusuan-yue-fangzhong" in cues and "wusuan-yue" not in cues


def test_xuan_zhong_qing_adds_the_bells_to_heyue(repertoire):
    sheet = _sheet(repertoire, "xiangshe")
    def parts(tl):
        return {e.part for e in tl.events if e.cue == "he-yue" and e.kind is EventKind.NOTE}
    assert "鐘" not in parts(build(sheet))
    assert "鐘" in parts(build(sheet, Options(readings={"xuan": "zhong-qing"})))


def test_dashe_jinzou_begins_with_the_tao_then_shuopi_then_yingpi(repertoire):
    tl = build(_sheet(repertoire, "dashe"))
    events = [e for e in tl.events if e.cue == "sixia-bin" and e.kind in (EventKind.NOTE, EventKind.DRUM)]
    first_bell = min(e.start_tick for e in events if e.part == "鐘")
    onset = [(e.part, e.start_tick - events[0].start_tick) for e in events if e.start_tick < first_bell]
    assert onset == [("鼗", 0), ("鼗", 320), ("鼗", 640), ("鼙", 960), ("鼙", 1920)]  # 9-5b; 9-4b 朔鼙, 應鼙應之
    assert first_bell - events[0].start_tick == 3 * 960
    gong = [e for e in tl.events if e.cue == "sixia-gong" and e.kind is EventKind.DRUM]
    assert "鼗" not in {e.part for e in gong[:2]}  # the 鼗 greets the 賓 only (賓至摇之)


def test_a_cue_belongs_to_its_reading_option(repertoire):
    sheet = _sheet(repertoire, "yanli")
    on = frozenset({"yi-yue-na-bin"})
    def luming(tl):
        return [(t.cue.id, max(e.zhong for e in tl.events if e.cue == t.cue.id)) for t in tl.cues
                if t.cue.id.startswith("shengge-luming")]
    assert luming(build(sheet, Options(variants=on))) == [("shengge-luming", 1)]
    san = build(sheet, Options(variants=on, readings={"yiyue-luming": "san-zhong"}))
    assert luming(san) == [("shengge-luming-san", 3)]  # 鹿鳴三終, as 大射 9-23b


def _ticks_as_before(seconds: Fraction) -> int:
    """Seconds → ticks as the Fraction formula gave them (halves away from zero)."""
    return int(seconds * 960 + Fraction(1, 2)) if seconds >= 0 else -_ticks_as_before(-seconds)


@pytest.mark.parametrize("denominator", [1, 2, 3, 7, 20, 1920, 3840, 9999])
def test_integer_ticks_round_every_fraction_as_the_fraction_formula_did(denominator):
    values = [Fraction(n, denominator) for n in range(-4000, 4001, 7)] + [Fraction(2 * n + 1, 1920) for n in (-3, 0, 5)]
    assert [ticks(v) for v in values] == [_ticks_as_before(v) for v in values]
    assert ticks(3) == 2880 and ticks(-1) == -960  # type: ignore[arg-type]  # whole seconds as ints


@pytest.mark.parametrize(("start", "step"), [(Fraction(0), Fraction(3, 2)), (Fraction(7, 3), Fraction(7, 3)),
                                             (Fraction(1, 1920), Fraction(1, 20)),
                                             (Fraction(12345, 17), Fraction(5, 7))])
def test_the_note_grid_gives_the_ticks_of_each_note_and_half_step(start, step):
    from yuesheng.timeline.music import _Grid

    notes = (0, 1, 2, 5, 9, 250)
    assert _Grid(start, step).ticks(notes) == [ticks(start + n * step) for n in notes]
    assert _Grid(start, step).ticks(notes, half=True) == [ticks(start + n * step + step / 2) for n in notes]


@pytest.mark.parametrize("jinzou", [False, True])
def test_the_notes_a_pattern_sounds_are_those_it_allows_one_by_one(jinzou):
    from yuesheng.music.instruments import Pattern
    from yuesheng.timeline.music import _indices

    for pattern in Pattern:
        for total in (1, 3, 4, 5, 8, 26):
            for played in range(total + 1):
                found = _indices(pattern, total, played, jinzou)
                assert found == tuple(n for n in range(played) if pattern.sounds(n, total, jinzou=jinzou))
                assert len(found) == pattern.count(played, total, jinzou=jinzou)


def _configurations(sheet):
    """Every variant configuration of *sheet*, then each option of each reading not chosen by default."""
    from yuesheng.cuesheet import variant_configurations

    yield from (Options(variants) for variants in variant_configurations(sheet))
    for rid, reading in sheet.readings.items():
        yield from (Options(readings={rid: option}) for option in reading.options if option != reading.chosen)


@pytest.mark.parametrize("rite", ["xiangyinjiu", *(pytest.param(r, marks=pytest.mark.slow)  # every programme: slow
                                                     for r in ("xiangshe", "yanli", "dashe"))])
def test_the_emitting_pass_reuses_the_times_it_would_compute(repertoire, rite):
    """build_timeline schedules once (counting) and emits the music over those times: scheduling while emitting
    gives every cue the same start and end, and plays the music cues in the same order from the same stops."""
    from yuesheng.timeline.builder import Played, _count, _music_end
    from yuesheng.timeline.schedule import schedule
    from yuesheng.timeline.state import BuildState, Setting

    sheet = _sheet(repertoire, rite)
    for options in _configurations(sheet):
        for syllable in (None, Fraction(7, 3)):  # the sheet's tempo, and one off the tick grid
            setting = Setting.of(sheet, Options(options.variants, options.readings, syllable=syllable))
            _, times, played = _count(setting)
            emitted = Played()
            assert schedule(setting, _music_end(setting, BuildState(), emitted)) == times, (rite, options)
            assert emitted == played


def test_li_rugui_plays_the_shorter_ode_once_and_its_players_rest_until_the_longer_ends(repertoire):
    tl = build(_sheet(repertoire, "xiangyinjiu"), Options(readings={"heyue": "li-rugui"}))
    notes = [e for e in tl.events if e.cue == "heyue" and e.kind is EventKind.NOTE and e.zhong == 1]
    guanju = [e for e in notes if e.piece == "guanju" and e.part == "歌"]
    queshao = [e for e in notes if e.piece == "queshao" and e.part == "笙"]
    assert (len(guanju), len(queshao)) == (80, 48)  # one pass each: the shorter is not repeated
    assert queshao[0].start_tick == guanju[0].start_tick
    rest = max(e.start_tick + e.length_ticks for e in guanju) - max(e.start_tick + e.length_ticks for e in queshao)
    assert rest == ticks(Fraction(48))  # 32 syllables of 1.5 s: the 召南 players rest, nothing is held
