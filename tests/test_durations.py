"""Durations a director can trust: paces by the ground (堂上接武, 堂下布武, 趨 below only), a paces file for every
build, paces fitted to rehearsal, and the texts' round trips (降盥…升), turns (序進) and errands (反命) walked."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

import yuesheng
import yuesheng.staging.rite
from yuesheng.errors import InvalidInputError
from yuesheng.live.showlog import Log
from yuesheng.staging.paces import FORMAT, Observed, fit, lengths, load_paces, observed, paces_yaml, shipped
from yuesheng.timeline import Options

ROOT = Path(__file__).resolve().parent.parent
LIJI = ROOT / "yuesheng" / "texts" / "liji" / "KR1d0052_001.txt"


@pytest.fixture(scope="module")
def rites(repertoire):
    """Each staged rite: its cue sheet and its staged rite at the shipped paces."""
    out = {}
    for rite in ("xiangyinjiu", "xiangshe", "yanli", "dashe"):
        sheet = yuesheng.load(rite, repertoire=repertoire)
        out[rite] = sheet, yuesheng.produce(sheet).staged
    return out


def _parts(rites, rite: str, cue: str) -> dict[str, Fraction]:
    return dict(rites[rite][1].cues[cue].derivation.parts)


# --- paces ---------------------------------------------------------------------------------------------------------

def test_the_paces_are_the_li_jis_shipped_and_cited():
    text = LIJI.read_text(encoding="utf-8")
    assert "堂上不趨，¶" in text and "堂上接武，¶\n堂下布武。¶" in text  # 曲禮上 1.18, as transcribed
    table = json.loads((ROOT / "yuesheng" / "data" / "staging.json").read_text(encoding="utf-8"))["paces"]
    assert set(table) == {"堂上", "堂下", "趨"}
    for kind, words in (("堂上", "堂上接武"), ("堂下", "堂下布武"), ("趨", "堂上不趨")):
        assert words in table[kind]["source"] and "KR1d0052" in table[kind]["source"] and table[kind]["estimate"]
    assert "liji/" in (ROOT / "yuesheng" / "texts" / "README.md").read_text(encoding="utf-8")


def test_a_walk_on_the_tang_is_slower_than_below_and_a_run_runs_only_below(rites):
    paces = shipped()
    assert paces.qu < paces.ting < paces.tang
    _, rite = rites["xiangshe"]
    hall = rite.hall
    for cue in rite.cues.values():
        for walk in cue.derivation.walks:
            tang, ting = lengths(hall, walk.route)
            assert tang + ting == pytest.approx(walk.length, abs=0.011)
    on, off = rites["dashe"][1].cues["bin-bai-xi"].derivation.parts[0][0], _parts(rites, "dashe", "bin-bai-xi")
    assert "on the 堂 at 3 s/步 (接武)" in on and "below at 1.5 s/步 (布武)" in on and off


def _paces_file(tmp_path: Path, body: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_a_paces_file_replaces_the_kinds_it_names(tmp_path):
    paces = load_paces(_paces_file(tmp_path, f"format: {FORMAT}\npaces: {{堂上: 4, 階: 7.5}}\n"))
    base = shipped()
    assert (paces.tang, paces.ting, paces.qu, paces.stair) == (Fraction(4), base.ting, base.qu, Fraction(15, 2))
    as_json = load_paces(_paces_file(tmp_path, json.dumps({"format": FORMAT, "paces": {"堂下": 2}}), "p.json"))
    assert as_json.ting == 2 and as_json.tang == shipped().tang
    again = load_paces(_paces_file(tmp_path, paces_yaml(paces, "a note: with a colon"), "again.yaml"))
    assert again.key() == paces.key()


@pytest.mark.parametrize("body, where, says", [
    ("format: {f}\npaces: {{堂上: 0}}\n", ":2:", "堂上 0 s: expected 0.2 to 20 seconds"),
    ("format: {f}\npaces:\n  走: 1\n", ":3:3", "unknown key '走'"),
    ("format: {f}\npaces: {{堂下: fast}}\n", ":2:", "expected a number, got a string 'fast'"),
    ("format: other\npaces: {{}}\n", ":1:9", "expected 'yuesheng-paces-1'"),
    ("- 1\n", ":1:1", "a paces file is a mapping"),
])
def test_a_bad_paces_file_is_an_error_at_its_line(tmp_path, body, where, says):
    path = _paces_file(tmp_path, body.format(f=FORMAT))
    with pytest.raises(InvalidInputError) as caught:
        load_paces(path)
    assert f"{path}{where}" in str(caught.value) and says in str(caught.value)


def test_paces_on_the_command_line_change_the_timeline_and_its_cached_ground(run, tmp_path):
    slow = _paces_file(tmp_path, f"format: {FORMAT}\npaces: {{堂上: 6, 堂下: 3, 趨: 1.5, 階: 12}}\n")
    code, plain, _ = run("timeline", "xiangyinjiu", "--format", "json")
    assert code == 0
    code, slowed, _ = run("timeline", "xiangyinjiu", "--format", "json", "--paces", str(slow))
    assert code == 0
    code, plain_again, _ = run("timeline", "xiangyinjiu", "--format", "json")  # not the slow ground kept
    assert plain_again == plain

    def total(text: str) -> float:
        return float(json.loads(text)["duration_s"])

    assert total(slowed) > total(plain) + 60
    code, _, err = run("timeline", "xiangyinjiu", "--paces", str(_paces_file(tmp_path, "paces: 1\n", "bad.yaml")))
    assert code == 1 and "bad.yaml:1:1" in err
    code, out, _ = run("plan", "xiangyinjiu", "--at", "ying-bin", "--paces", str(slow))
    assert code == 0 and "3 s/步 (布武)" in out


# --- fitting paces to rehearsal -----------------------------------------------------------------------------------

def test_fit_recovers_the_paces_that_timed_the_walks():
    true = shipped().__class__(Fraction(5, 2), Fraction(7, 4), Fraction(4, 5), Fraction(9))
    walks = [(3, 10, 0, 1), (0, 20, 0, 0), (6, 0, 0, 0), (1, 4, 0, 2), (0, 0, 12, 0), (2, 5, 3, 1)]
    seen = [Observed(f"c{n}", t, g, q, f, t * true.tang + g * true.ting + q * true.qu + f * true.stair)
            for n, (t, g, q, f) in enumerate(walks)]
    paces, notes = fit(seen, shipped(), "fit")
    assert paces.key() == true.key() and notes == []
    only_below, notes = fit([s for s in seen if not s.tang and not s.qu and not s.flights], shipped(), "fit")
    assert only_below.ting == true.ting and only_below.tang == shipped().tang
    assert any(n.startswith("堂上: no walk measured crosses it") for n in notes)
    with pytest.raises(ValueError, match="cannot tell the ground kinds apart"):
        fit([Observed("a", 1, 2, 0, 0, Fraction(5)), Observed("b", 2, 4, 0, 0, Fraction(10))], shipped(), "fit")
    with pytest.raises(ValueError, match="no measured action"):
        fit([], shipped(), "fit")


def test_the_walks_of_a_rite_timed_as_planned_fit_the_shipped_paces(rites):
    sheet, rite = rites["dashe"]
    timed = {cid: c.derivation for cid, c in rite.cues.items() if c.duration is not None}
    measured = {cid: d.seconds for cid, d in timed.items()}
    seen = observed(rite.hall, timed, measured)
    assert len(seen) > 50
    paces, _ = fit(seen, shipped(), "fit")
    for kind in ("堂上", "堂下", "趨", "階"):  # the walks' seconds are rounded to the tenth
        assert float(paces.of(kind)) == pytest.approx(float(shipped().of(kind)), abs=0.05)


def test_retime_fits_paces_from_logs_of_a_rehearsal_at_other_paces(run, tmp_path, repertoire):
    slow = _paces_file(tmp_path, f"format: {FORMAT}\npaces: {{堂上: 4, 堂下: 2, 趨: 1, 階: 8}}\n")
    sheet = yuesheng.load("xiangshe", repertoire=repertoire)
    timeline = yuesheng.produce(sheet, Options(paces=load_paces(slow))).timeline
    log = Log(tmp_path / "r.jsonl")
    log.write("session", 0.0, rite="xiangshe", variants=[], readings={})
    for cue in timeline.cues:  # every action begun when the slower plan begins it
        if not cue.cue.is_music:
            log.write("go", cue.start_tick / 960, cue=cue.cue.id, source="page")
    log.close()
    out = tmp_path / "fitted.yaml"
    code, _, err = run("retime", "xiangshe", "--log", str(tmp_path / "r.jsonl"), "-o", str(tmp_path / "t.yaml"),
                       "--fit-paces", str(out))
    assert code == 0, err
    assert f"wrote {out}: paces fitted to" in err
    fitted = load_paces(out)
    for kind, value in (("堂上", 4), ("堂下", 2), ("階", 8)):
        assert float(fitted.of(kind)) == pytest.approx(value, abs=0.1), kind
    assert "retime --fit-paces: 趨: no walk measured crosses it; kept at 0.75 s" in err  # no longest walk runs
    assert fitted.qu == shipped().qu
    code, _, err = run("retime", "xiangshe", "--log", str(tmp_path / "r.jsonl"), "--fit-paces", str(slow))
    assert code == 0  # overwriting the paces file it was given is allowed: it is not an input of retime


# --- the texts' round trips, turns and errands --------------------------------------------------------------------

@pytest.mark.parametrize("rite, cue, who, flights", [
    ("dashe", "bin-bai-xi", "zhuren", 3),  # 主人升 … 降盥 … 升 (9-11a)
    ("dashe", "bin-bai-xi", "bin", 3),  # 賓揖升 … 賓降 … 揖升
    ("xiangshe", "bai-xi", "zhuren", 3),  # 以賓升 … 乃降 … 卒盥 … 升 (5-6a)
    ("xiangshe", "bin-zuo", "bin", 3),  # 揖讓如初升 … 降盥 … 升
    ("yanli", "zhuren-zu-xi", "zhuren", 3),
    ("yanli", "bin-zu-xi", "bin", 3),
])
def test_a_round_trip_the_text_states_is_walked(rites, rite, cue, who, flights):
    walks = {w.who: w for w in rites[rite][1].cues[cue].derivation.walks}
    assert walks[who].stairs == flights


WASH_ROUND_TRIP = re.compile(r"降[^升]{0,12}?(盥|洗)[^升]*升")  # 降盥…升, 降洗…升, 乃降 賓降 主人卒盥 …升


def test_every_wash_between_a_descent_and_a_climb_is_walked_down_and_up(rites):
    """The general rule: where a cue's action goes down to wash and up again, and the ground times it, some walk of
    the cue takes two flights at least (on main bin-bai-xi, 鄉射 bai-xi and 燕禮 zhuren-zu-xi took one)."""
    checked = 0
    for sheet, rite in rites.values():
        for cue in sheet.cues:
            staged = rite.cues.get(cue.id)
            if staged is None or staged.duration is None or not WASH_ROUND_TRIP.search(cue.action or ""):
                continue
            checked += 1
            assert max((w.stairs for w in staged.derivation.walks), default=0) >= 2, (sheet.rite_id, cue.id)
    assert checked >= 25


def test_fan_ming_you_ming_zhi_is_two_trips(rites):
    walks = rites["dashe"][1].cues["bin-shou-ming"].derivation.walks
    (binzhe,) = [w for w in walks if w.who == "binzhe"]
    assert binzhe.length > 20  # to the 公 and back to the 賓
    assert any(p.x > 3 and p.y < 3 for p in binzhe.route)  # he reaches the 公 (east, by the 阼階)
    yanli = rites["yanli"][1].cues
    for cue in ("sheren-ming-bin", "bin-xu-nuo"):  # 命 … 反命, then 又命之 … 反命: the 射人 there and back twice
        (sheren,) = [w for w in yanli[cue].derivation.walks if w.who == "sheren"]
        assert sheren.length > 100 and sheren.route[0].distance(sheren.route[-1]) < 1


def test_the_xiaochenshi_fetches_the_ranks_before_they_walk_in(rites):
    derivation = rites["dashe"][1].cues["na-qing-dafu"].derivation
    names = [name for name, _ in derivation.parts]
    assert names[0].startswith("walk first: xiaochenshi to 門") and names[1].startswith("walk: ")
    first = max(w.seconds for w in derivation.walks if w.who == "xiaochenshi")
    rest = max(w.seconds for w in derivation.walks if w.who != "xiaochenshi")
    assert derivation.seconds == first + rest


@pytest.mark.parametrize("rite, cue, again", [
    ("dashe", "yingjue-xi-zhuo", ("盥", "洗", "實")),  # 序進盥洗角觶 … 序進酌散 (9-16a)
    ("dashe", "jie-zhi", ("奠", "坐", "奠")),
    ("yanli", "yingjue-xi-zhuo", ("盥", "洗", "實")),
    ("yanli", "qing-zhi-zhe", ("奠",)),
    ("yanli", "yingjue-dian-jian-nan", ("坐", "奠")),
])
def test_what_the_two_yingjuezhe_do_in_turn_is_counted_twice(rites, rite, cue, again):
    from yuesheng.staging.durations import gesture_seconds

    turns = [(name, s) for name, s in rites[rite][1].cues[cue].derivation.parts if name.startswith("序進")]
    assert len(turns) == 1 and turns[0][0].startswith(f"序進: {' '.join(again)} once more (媵爵者, 2 in turn")
    assert turns[0][1] == sum(gesture_seconds(g) for g in again)


def test_every_xujin_the_texts_state_is_made_in_turn(rites):
    for sheet, rite in rites.values():
        blocking = yuesheng.staging.rite.loaded(Path(rite.file), sheet)
        for cue in sheet.cues:
            if "序進" in (cue.action or "") and cue.id in rite.cues:
                assert blocking.cues[cue.id].turns is not None, (sheet.rite_id, cue.id)


def test_the_sima_who_does_not_shoot_bares_his_arm_only(rites):
    names = list(_parts(rites, "xiangshe", "ming-qu-hou-1"))
    assert "袒" in names and "袒決遂" not in names  # 司馬適堂西不決遂袒執弓 (5-24b)


# --- where the texts turn square, routes turn square ---------------------------------------------------------------

@pytest.mark.parametrize("rite, cue, who, place", [
    ("xiangyinjiu", "san-yi-san-rang", "zhuren", "dang-chen-dong"),  # 三揖者將進揖當陳揖當碑揖 (鄭注 4-7a)
    ("xiangyinjiu", "san-yi-san-rang", "bin", "dang-chen-xi"),
    ("xiangshe", "san-yi", "zhuren", "dang-chen-dong"),
    ("xiangshe", "san-yi", "bin", "dang-chen-xi"),
    ("dashe", "na-bin", "bin", "men-nei-zuo"),  # 既入而左北面 (鄭注 7-8a)
])
def test_a_walk_turns_at_the_point_the_text_names(rites, rite, cue, who, place):
    staged = rites[rite][1]
    (walk,) = [w for w in staged.cues[cue].derivation.walks if w.who == who]
    turn = staged.hall.places[place].point
    assert turn in walk.route
    after = walk.route[walk.route.index(turn) + 1]
    if rite == "xiangyinjiu":  # nothing in the way: on from the bend straight north, along the stair's line
        assert after.x == turn.x and after.y < turn.y


@pytest.mark.parametrize("rite, cue, members", [
    ("xiangyinjiu", "san-yi-san-rang", ["jie", "zhongbin-zhang#1", "zhongbin"]),  # 釋曰 4-7a
    ("xiangshe", "san-yi", ["zhongbin#1", "zhongbin#8"]),
])
def test_the_jie_and_the_zhongbin_follow_the_bin_up_the_tangtu_and_turn_square(rites, rite, cue, members):
    """釋曰 4-7a 介及衆賓亦隨賓至西階下而序立: they bend onto the 西階's 堂塗 where the 賓 did (當陳), go up it along
    the stair's line to below the 西階 (the 鄉射 侯 standing across it: round its west end, a step off the line), and
    turn west there to their place: no diagonal across the court."""
    staged = rites[rite][1]
    bend, foot = (staged.hall.places[p].point for p in ("dang-chen-xi", "xijie-tu"))
    walks = {w.who: w for w in staged.cues[cue].derivation.walks}
    for who in members:
        route = walks[who].route
        assert bend in route and foot in route, who
        up = route[route.index(bend):route.index(foot) + 1]
        assert all(abs(p.x - bend.x) <= 0.7 for p in up), (who, up)
        assert all(a.y >= b.y for a, b in zip(up, up[1:], strict=False)), (who, up)  # north all the way
        (end,) = route[route.index(foot) + 1:]
        assert end.x < foot.x and end.y >= foot.y, who  # west to their place, its head level with the turn
