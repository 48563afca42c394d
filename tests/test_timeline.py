"""The timeline: a golden rite checked as text, 射節 invariants, 宫/商 calls, 樂闋, variants and readings."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from yuesheng.validate import load_cuesheet
from yuesheng.errors import UnknownNameError
from yuesheng.lulu import Realization, Tuning, lu
from yuesheng.report import run_sheet_text
from yuesheng.repertoire import data_dir
from yuesheng.timeline import EventKind, Options, Timeline, build_timeline, seconds, ticks

DATA = Path(__file__).parent / "data"


def _sheet(repertoire, name: str):
    path = DATA / f"{name}.yaml" if (DATA / f"{name}.yaml").exists() else data_dir("cues") / f"{name}.yaml"
    return load_cuesheet(path, repertoire)


def dump(timeline: Timeline) -> str:
    """A readable text dump: the run sheet, then every event but the notes, then notes counted per part."""
    lines = [run_sheet_text(timeline), "events"]
    for e in timeline.events:
        if e.kind is EventKind.NOTE:
            continue
        fields = [f"{seconds(e.start_tick):9.3f}", f"{seconds(e.length_ticks):7.3f}", e.kind.value, e.cue, e.part,
                  str(e.key or ""), e.text, e.round, e.pair, f"節{e.jie}" if e.jie else "", e.archer,
                  f"矢{e.arrow}" if e.arrow else "", {True: "中", False: "不中", None: ""}[e.hit],
                  {True: "釋", False: "", None: ""}[e.counted], e.degree]
        lines.append(" ".join(f for f in fields if f))
    counts = Counter((e.cue, e.part) for e in timeline.events if e.kind is EventKind.NOTE)
    lines += ["notes"] + [f"{cue} {part} {n}" for (cue, part), n in sorted(counts.items())]
    return "\n".join(lines) + "\n"


def test_golden_timeline(repertoire):
    got = dump(build_timeline(_sheet(repertoire, "golden")))
    golden = DATA / "golden_timeline.txt"
    assert got == golden.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def xiangshe(repertoire):
    return build_timeline(_sheet(repertoire, "xiangshe"))


def _round3(timeline: Timeline):
    return [e for e in timeline.events if e.round == "round-3" and e.kind in (EventKind.DRUM, EventKind.RELEASE)]


def test_shejie_per_pair_five_zhong_five_jie_evenly_spaced(repertoire, xiangshe):
    sheet = _sheet(repertoire, "xiangshe")
    rnd = next(r for r in sheet.archery.rounds if r.id == "round-3")
    events = _round3(xiangshe)
    for pid in rnd.pairs:
        strokes = [e.start_tick for e in events if e.pair == pid and e.kind is EventKind.DRUM and e.velocity == 110]
        assert len(strokes) == 5
        gaps = {b - a for a, b in zip(strokes, strokes[1:])}
        assert len(gaps) == 1  # 間若一
        (gap,) = gaps
        sung = [e for e in xiangshe.events if e.kind is EventKind.NOTE and e.part == "歌" and e.cue == "she-san"
                and strokes[0] <= e.start_tick < strokes[-1] + gap]
        assert sorted({e.zhong for e in sung}) == [1, 2, 3, 4, 5]
        assert len(sung) == 5 * 26


def test_shejie_arrows_alternate_and_skip_the_listening_jie(xiangshe):
    releases = [e for e in _round3(xiangshe) if e.kind is EventKind.RELEASE]
    by_pair: dict[str, list] = {}
    for r in releases:
        by_pair.setdefault(r.pair, []).append(r)
    assert len(by_pair) == 7
    for rs in by_pair.values():
        rs.sort(key=lambda r: r.arrow)
        assert [r.archer for r in rs] == ["上射", "下射"] * 4
        assert [r.jie for r in rs] == [2, 2, 3, 3, 4, 4, 5, 5]


def test_only_releases_on_the_drum_count_in_round_three(repertoire, xiangshe):
    sheet = _sheet(repertoire, "xiangshe")
    tolerance = ticks(sheet.archery.tolerance)
    strokes = {(e.pair, e.start_tick) for e in _round3(xiangshe) if e.kind is EventKind.DRUM}
    for r in (e for e in _round3(xiangshe) if e.kind is EventKind.RELEASE):
        on_drum = any(p == r.pair and abs(t - r.start_tick) <= tolerance for p, t in strokes)
        assert r.counted == (r.hit and on_drum)


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
    for gong, shang in zip(calls[::2], calls[1::2]):
        assert (gong.degree, shang.degree) == ("宫", "商") and shang.start_tick > gong.start_tick


def test_calls_follow_the_chosen_jun_and_huangzhong(repertoire):
    sheet = _sheet(repertoire, "golden")
    from dataclasses import replace

    tl = build_timeline(replace(sheet, call_jun=lu("林")), Options(realization=Realization(62)))
    assert {(e.degree, e.key) for e in tl.events if e.kind is EventKind.CALL} == {("宫", 69), ("商", 71)}
    tl = build_timeline(sheet, Options(call_jun=lu("應")))  # 商 of 應鍾 is 大吕清
    assert {(e.degree, e.key) for e in tl.events if e.kind is EventKind.CALL} == {("宫", 71), ("商", 73)}


def test_xiangshe_xunuo_is_one_unbroken_call_not_on_gong_or_shang(xiangshe):
    xunuo = [e for e in xiangshe.events if e.kind is EventKind.CALL and e.text == "諾"]
    assert xunuo and {e.degree for e in xunuo} == {"不絶"}
    assert all(e.length_ticks >= ticks(Fraction(10)) for e in xunuo)  # held from 侯 to 乏


def test_dashe_target_bearers_answer_on_gong_then_shang(repertoire):
    tl = build_timeline(_sheet(repertoire, "dashe"))
    nuo = [(e.degree, e.part, e.key) for e in tl.events if e.kind is EventKind.CALL and e.text == "諾"]
    assert nuo == [("宫", "負侯者", 60), ("商", "負侯者", 62)]


def test_jinzou_stops_at_the_phrase_end_after_its_action(repertoire):
    tl = build_timeline(_sheet(repertoire, "golden"))
    timing = {t.cue.id: t for t in tl.cues}
    action = timing["bai-zhi"].start_tick
    end = timing["sixia"].end_tick
    bells = [e for e in tl.events if e.cue == "sixia" and e.kind is EventKind.NOTE]
    assert end >= action and (end - timing["sixia"].start_tick) % (4 * ticks(Fraction(1))) == 0
    assert max(e.start_tick for e in bells) < end <= action + 4 * ticks(Fraction(1))
    assert len(bells) > 8  # the 8-stroke figure repeats until the 樂闋


def test_variant_programme(repertoire):
    sheet = _sheet(repertoire, "yanli")
    plain = {t.cue.id for t in build_timeline(sheet).cues}
    nabin = build_timeline(sheet, Options(variants=frozenset({"wu-shao"})))
    assert nabin.variants == {"wu-shao", "yi-yue-na-bin"}
    pieces = {e.piece for e in nabin.events if e.kind is EventKind.NOTE}
    assert {"sixia", "xingong", "shao"} <= pieces and "nangai" not in pieces
    assert "nangai" in {e.piece for e in build_timeline(sheet).events if e.kind is EventKind.NOTE}
    assert {t.cue.id for t in nabin.cues} != plain


def test_unknown_variant_and_reading_suggest(repertoire):
    sheet = _sheet(repertoire, "yanli")
    with pytest.raises(UnknownNameError, match="did you mean 'yi-yue-na-bin'"):
        build_timeline(sheet, Options(variants=frozenset({"yi-yue-nabin"})))
    with pytest.raises(UnknownNameError, match="option of reading heyue"):
        build_timeline(sheet, Options(readings={"heyue": "zhu"}))


def test_heyue_after_li_rugui_sounds_the_pairs_together(repertoire):
    sheet = _sheet(repertoire, "xiangyinjiu")
    def heyue_span(timeline):
        t = next(t for t in timeline.cues if t.cue.id == "heyue")
        return t.end_tick - t.start_tick
    zheng = build_timeline(sheet)
    li = build_timeline(sheet, Options(readings={"heyue": "li-rugui"}))
    assert heyue_span(li) < heyue_span(zheng)
    starts = Counter(e.start_tick for e in li.events if e.cue == "heyue" and e.kind is EventKind.NOTE and e.part == "笙")
    sung = {e.start_tick for e in li.events if e.cue == "heyue" and e.kind is EventKind.NOTE and e.part == "歌"}
    assert sung & set(starts)  # 笙 on the 召南 ode while the 歌 sing the 周南 ode


def test_lishou_reading_five_jie(repertoire):
    sheet = _sheet(repertoire, "dashe")
    seven = build_timeline(sheet)
    five = build_timeline(sheet, Options(readings={"lishou-jie": "5"}))
    def jie(tl):
        return max(e.jie for e in tl.events if e.kind is EventKind.DRUM and e.round == "round-3")
    assert (jie(seven), jie(five)) == (7, 5)


def test_dashe_gong_is_exempt_from_the_drum(repertoire):
    tl = build_timeline(_sheet(repertoire, "dashe"))
    gong = [e for e in tl.events if e.kind is EventKind.RELEASE and e.round == "round-3" and e.text == "jun"]
    assert gong and all(e.counted == e.hit for e in gong)


def test_same_options_same_timeline_and_seed_changes_shots(repertoire):
    sheet = _sheet(repertoire, "xiangshe")
    assert build_timeline(sheet).events == build_timeline(sheet).events
    a = [e.hit for e in build_timeline(sheet, Options(seed=1)).events if e.kind is EventKind.RELEASE]
    b = [e.hit for e in build_timeline(sheet, Options(seed=2)).events if e.kind is EventKind.RELEASE]
    assert a != b


def test_syllable_option_scales_the_music(repertoire):
    sheet = _sheet(repertoire, "golden")
    slow = build_timeline(sheet, Options(syllable=Fraction(2)))
    ge = next(t for t in slow.cues if t.cue.id == "ge")
    assert ge.end_tick - ge.start_tick == ticks(Fraction(156))  # 3 終 × 26 syllables × 2 s


def test_sanfen_cents_on_notes(repertoire):
    tl = build_timeline(_sheet(repertoire, "golden"), Options(realization=Realization(60, Tuning.SANFEN)))
    cents = {(e.key % 12, e.cents) for e in tl.events if e.kind is EventKind.NOTE}
    assert (9, 5.87) in cents and (0, 0.0) in cents  # 南吕 +5.87, 黄鍾 0


def test_heyue_default_sounds_each_pair_in_turn_and_counts_three_zhong(repertoire):
    tl = build_timeline(_sheet(repertoire, "xiangyinjiu"))
    notes = [e for e in tl.events if e.cue == "heyue" and e.kind is EventKind.NOTE]
    zhong = {e.piece: e.zhong for e in notes}
    assert zhong == {"guanju": 1, "queshao": 1, "getan": 2, "caifan": 2, "juaner": 3, "caipin": 3}
    span = {p: (min(e.start_tick for e in notes if e.piece == p), max(e.start_tick for e in notes if e.piece == p))
            for p in zhong}
    assert span["guanju"][1] < span["queshao"][0] < span["queshao"][1] < span["getan"][0]  # in turn, pair by pair
    assert {e.part for e in notes if e.piece == "queshao"} == {"歌", "瑟", "笙", "和", "磬"}  # 衆聲俱作 on every ode


def test_wusuanyue_starts_with_the_cups_or_where_the_jing_writes_it(repertoire):
    sheet = _sheet(repertoire, "yanli")
    def start(tl, cue):
        return next(t for t in tl.cues if t.cue.id == cue)
    default = build_timeline(sheet)
    jing = build_timeline(sheet, Options(readings={"wusuanyue": "jing-ci"}))
    assert start(default, "wusuan-yue").start_tick == start(default, "wusuan-jue").start_tick
    assert start(jing, "wusuan-yue").start_tick == start(jing, "shi-zhong-lv").end_tick
    assert default.duration_ticks == jing.duration_ticks  # the drinking is the same; only the music moves
    for tl in (default, jing):  # it stops as the 賓 rises, either way
        assert start(tl, "bin-zui").start_tick <= start(tl, "wusuan-yue").end_tick


def test_wusuan_yue_sounds_sheng_ge_jian_and_he_with_their_own_parts(repertoire):
    tl = build_timeline(_sheet(repertoire, "dashe"))
    parts: dict[str, set[str]] = {}
    for e in tl.events:
        if e.cue == "wu-suan-yue" and e.kind is EventKind.NOTE:
            parts.setdefault(e.piece, set()).add(e.part)
    assert parts["luming"] == {"歌", "瑟"}  # 升歌
    assert parts["yougeng"] == {"笙"}  # 間: the 笙 answers (lost: no words)
    assert parts["guanju"] == {"歌", "瑟", "笙", "鐘", "磬"}  # 合


def test_fangzhong_is_strings_and_voices_without_bells_or_stones(repertoire):
    tl = build_timeline(_sheet(repertoire, "yanli"), Options(variants=frozenset({"fangzhong"})))
    assert "si-fang-zhi-bin" in tl.variants
    parts = {e.part for e in tl.events if e.cue == "fangzhong-yue" and e.kind is EventKind.NOTE}
    assert parts == {"歌", "瑟"}
    cues = {t.cue.id for t in tl.cues}
    assert "wusuan-yue-fangzhong" in cues and "wusuan-yue" not in cues


def test_xuan_zhong_qing_adds_the_bells_to_heyue(repertoire):
    sheet = _sheet(repertoire, "xiangshe")
    def parts(tl):
        return {e.part for e in tl.events if e.cue == "he-yue" and e.kind is EventKind.NOTE}
    assert "鐘" not in parts(build_timeline(sheet))
    assert "鐘" in parts(build_timeline(sheet, Options(readings={"xuan": "zhong-qing"})))


def test_dashe_jinzou_begins_with_the_tao_then_shuopi_then_yingpi(repertoire):
    tl = build_timeline(_sheet(repertoire, "dashe"))
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
    assert luming(build_timeline(sheet, Options(variants=on))) == [("shengge-luming", 1)]
    san = build_timeline(sheet, Options(variants=on, readings={"yiyue-luming": "san-zhong"}))
    assert luming(san) == [("shengge-luming-san", 3)]  # 鹿鳴三終, as 大射 9-23b
