"""The 儀禮圖 layer: halls, blocking, where everyone stands, routes and the durations they give.

The shipped blocking is staged under every variant (everyone of every cue placed, no two on one point, every walk
routed); a broken hall or blocking is an error at its file:line:col naming what is wrong.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from yuesheng import load
from yuesheng.check.staging import staging_problems
from yuesheng.cuesheet import variant_configurations
from yuesheng.errors import InvalidInputError
from yuesheng.staging import routes
from yuesheng.staging.durations import derive, gesture_seconds
from yuesheng.staging.model import Facing, Point
from yuesheng.staging.paces import lengths, shipped, walk_seconds
from yuesheng.staging.reader import load_blocking, load_hall
from yuesheng.staging.routes import blocked, route, stairs_on
from yuesheng.staging.stage import members, performer_of, stage
from yuesheng.staging.statements import statement_problems

ROOT = Path(__file__).resolve().parent.parent
BLOCKING = ROOT / "blocking"
STAGED = ["xiangshe", "xiangyinjiu", "yanli", "dashe"]  # the rites whose blocking is written


@pytest.fixture(scope="module")
def xiangshe(repertoire):
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    return sheet, load_blocking(BLOCKING / "xiangshe.yaml", sheet)


@pytest.fixture(scope="module", params=STAGED)
def staged(request, repertoire):
    """Each rite whose blocking is written: its cue sheet and blocking."""
    sheet = load(ROOT / "cues" / f"{request.param}.yaml", repertoire=repertoire)
    return sheet, load_blocking(BLOCKING / f"{request.param}.yaml", sheet)


def _copy(tmp_path: Path, rite: str, old: str = "", new: str = "", *, hall: bool = False) -> Path:
    """The rite's hall and blocking copied to *tmp_path*, *old* replaced by *new* in one of them."""
    for name in (f"{rite}.yaml", f"{rite}.hall.yaml"):
        shutil.copy(BLOCKING / name, tmp_path / name)
    if old:
        path = tmp_path / (f"{rite}.hall.yaml" if hall else f"{rite}.yaml")
        text = path.read_text(encoding="utf-8")
        assert old in text, old
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp_path / f"{rite}.yaml"


def _line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize("rite", STAGED)
def test_the_shipped_blocking_passes_the_staging_rule(repertoire, rite):
    sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
    assert staging_problems(sheet) == []


def test_every_actor_of_every_cue_stands_somewhere_facing_a_way(staged):
    sheet, blocking = staged
    for variants in variant_configurations(sheet):
        for cue_stage, cue in zip(stage(blocking, sheet, variants), sheet.active_cues(variants), strict=True):
            placed = {performer_of(m) for m in cue_stage.stands}
            for person in cue.who or cue.performers:
                assert any(m in cue_stage.stands for m in members(person, sheet, blocking.same)), (cue.id, person)
            assert all(s.facing is not None for s in cue_stage.stands.values()), cue.id
            assert placed <= set(sheet.performers)


def test_no_two_people_share_a_point_at_any_cue(staged):
    sheet, blocking = staged
    for cue_stage in (c for variants in variant_configurations(sheet) for c in stage(blocking, sheet, variants)):
        points = [(round(s.point.x, 2), round(s.point.y, 2)) for s in cue_stage.stands.values()]
        assert len(points) == len(set(points)), cue_stage.cue


def test_the_two_marks_are_a_bow_apart_and_the_places_beside_a_thing_are_not_on_it(xiangshe):
    hall = xiangshe[1].hall
    assert hall.places["wu-shang"].point.distance(hall.places["wu-xia"].point) == 1  # 其間容弓: 6 尺
    assert hall.places["zhong-xi"].point.x < hall.places["zhong"].point.x  # 于中西
    assert hall.places["fu-nan"].point.y > hall.places["fu"].point.y  # 楅之南
    assert hall.places["fu"].point.y == hall.places["xi"].point.y  # 南當洗
    assert not hall.has_shi  # the 州序 has no 室 (鄭注 5-22b)
    assert statement_problems(hall) == []


def test_no_walk_crosses_a_wall_and_the_tang_is_left_only_by_a_stair(staged):
    sheet, blocking = staged
    hall = blocking.hall
    for cue_stage in (c for variants in variant_configurations(sheet) for c in stage(blocking, sheet, variants)):
        for walk in derive(blocking, cue_stage, sheet).walks:
            stair_edges = {frozenset((s.top, s.foot)) for s in hall.stairs}
            for p, q in zip(walk.route, walk.route[1:], strict=False):
                assert frozenset((p, q)) in stair_edges or not blocked(hall, p, q), (cue_stage.cue, walk.who)
            ends_on = (hall.on_tang(walk.route[0]), hall.on_tang(walk.route[-1]))
            if ends_on[0] != ends_on[1]:
                assert walk.stairs % 2 == 1, (cue_stage.cue, walk.who)


def test_a_route_from_the_court_to_the_tang_climbs_a_stair_and_goes_round_the_wall():
    hall = load_hall(BLOCKING / "xiangshe.hall.yaml")
    court, tang = Point(0, 5), Point(0, -4)
    points = route(hall, court, tang)
    assert stairs_on(hall, points) == 1
    assert blocked(hall, court, tang) == "堂 (its edge)"
    assert sum(p.distance(q) for p, q in zip(points, points[1:], strict=False)) > court.distance(tang)


_LOAD = ("import sys; from pathlib import Path; from yuesheng import load; "
         "from yuesheng.music.repertoire import load_repertoire; ")


def _twice(script: str, cache: Path) -> list[list[str]]:
    """What two processes running *script* print, one after the other, with *cache* as their cache folder."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    return [subprocess.run([sys.executable, "-c", _LOAD + script], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]


def test_routes_are_kept_for_the_next_process_which_needs_no_graph(tmp_path):
    runs = _twice("from yuesheng.check.staging import staging_problems; from yuesheng.staging import routes; "
                  "assert staging_problems(load(Path('cues/xiangshe.yaml'))) == []; "
                  "print(routes._graph.cache_info().currsize > 0)", tmp_path)
    assert runs == [["True"], ["False"]]
    assert len(list((tmp_path / "yuesheng" / "routes").glob("*.json"))) == 1


def test_a_build_takes_its_durations_from_the_ground_kept_by_the_last_and_stages_only_for_drawing(tmp_path):
    runs = _twice("from yuesheng import produce; "
                  "p = produce(load(Path('cues/dashe.yaml'))); t = p.timeline; "
                  "staged = 'yuesheng.staging.stage' in sys.modules; n = len(p.staged.cues); "
                  "print(staged, n, sum(c.end_tick - c.start_tick for c in t.cues))", tmp_path)
    assert runs[0][0] == "True" and runs[1][0] == "False"  # the second run staged nothing, to time or to draw
    assert runs[0][1:] == runs[1][1:]  # the same stands and durations
    kept = tmp_path / "yuesheng" / "staging"
    assert len(list(kept.glob("*.json"))) == 3  # the durations, the rite, and each cue's derivation
    assert len(list(kept.glob("*.rite.json"))) == 1 and len(list(kept.glob("*.cues.json"))) == 1


def test_a_kept_ground_is_used_only_for_the_same_blocking_and_a_damaged_one_is_staged_again(tmp_path, monkeypatch,
                                                                                             repertoire):
    from yuesheng.staging.ground import ground

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    path = _copy(tmp_path, "xiangshe")
    first = ground(sheet, frozenset(), {}, path)
    entry = tmp_path / "cache" / "yuesheng" / "staging" / f"{first.entry}.json"
    entry.write_text("{not json", encoding="utf-8")
    assert ground(sheet, frozenset(), {}, path).cues == first.cues
    (tmp_path / "cache" / "yuesheng" / "staging" / f"{first.entry}.rite.json").write_bytes(b"\x80garbage")
    assert first.rite(sheet).cues.keys() == first.cues.keys()
    text = path.read_text(encoding="utf-8")
    assert "gestures: [再拜, 荅再拜, 揖]" in text
    path.write_text(text.replace("gestures: [再拜, 荅再拜, 揖]", "gestures: [再拜, 荅再拜]", 1), encoding="utf-8")
    changed = ground(sheet, frozenset(), {}, path)
    assert changed.entry != first.entry
    before = first.cues["ying-bin"].duration
    assert before is not None and changed.cues["ying-bin"].duration == before - 3  # 揖 is 3 s


@pytest.mark.parametrize("rite_id", ["xiangyinjiu", "xiangshe", "yanli", "dashe"])
def test_a_kept_staged_rite_is_the_rite_staged_its_shared_stands_shared(rite_id, tmp_path, monkeypatch, repertoire):
    from yuesheng.staging.ground import keep_rite, kept_rite
    from yuesheng.staging.rite import staged_rite

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    sheet = load(ROOT / "cues" / f"{rite_id}.yaml", repertoire=repertoire)
    path = BLOCKING / f"{rite_id}.yaml"
    rite = staged_rite(sheet, frozenset(), {}, path)
    assert kept_rite("e" * 40, path) is None
    keep_rite("e" * 40, rite)
    kept = kept_rite("e" * 40, path)
    assert kept is not None and kept is not rite and same_value(kept, rite)
    assert kept_rite("e" * 40, BLOCKING / "other.yaml") is None  # kept for another copy of the files
    first, second = list(kept.cues.values())[:2]
    shared = [who for who, s in first.stands.items() if rite.cues[second.derivation.cue].stands.get(who)
              is rite.cues[first.derivation.cue].stands[who]]
    assert shared and all(second.stands[who] is first.stands[who] for who in shared)  # the plates rely on it


def same_value(a: object, b: object) -> bool:
    """Whether *a* and *b* hold the same values all through, of the same types (a Hall compares by identity)."""
    from collections.abc import Mapping
    from dataclasses import fields, is_dataclass

    if type(a) is not type(b) and not (isinstance(a, Mapping) and isinstance(b, Mapping)):
        return False
    if is_dataclass(a):
        return all(same_value(getattr(a, f.name), getattr(b, f.name)) for f in fields(a))
    if isinstance(a, Mapping):
        assert isinstance(b, Mapping)
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        assert isinstance(b, tuple | list)
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_a_kept_ground_follows_the_hall_its_blocking_names_whatever_its_file_is_called(tmp_path, monkeypatch,
                                                                                         repertoire):
    from yuesheng.staging.ground import ground

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    path = _copy(tmp_path, "xiangshe", "hall: xiangshe.hall.yaml", "hall: court.yaml")
    (tmp_path / "xiangshe.hall.yaml").rename(tmp_path / "court.yaml")
    first = ground(sheet, frozenset(), {}, path)
    hall = tmp_path / "court.yaml"
    hall.write_text(hall.read_text(encoding="utf-8") + "\n# the court remeasured\n", encoding="utf-8")
    assert ground(sheet, frozenset(), {}, path).entry != first.entry  # not the entry of the hall as it was


def test_validate_keeps_a_clean_staging_verdict_but_never_a_broken_one(tmp_path, monkeypatch, repertoire):
    from yuesheng.staging import rite

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    path = _copy(tmp_path, "xiangshe")
    assert staging_problems(sheet, path) == []
    calls = []
    monkeypatch.setattr(rite, "staged_rite", lambda *a: calls.append(a))
    assert staging_problems(sheet, path) == [] and calls == []  # kept: nothing staged
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    broken = _copy(tmp_path, "xiangshe", "{who: zhuren, to: menwai-dong,", "{who: zhuren, to: menwai-dongg,")
    for _ in range(2):  # staged, and refused, each time
        assert any("menwai-dongg" in p.message for p in staging_problems(sheet, broken))
    assert len(list((tmp_path / "cache" / "yuesheng" / "staging").glob("*.clean"))) == 1  # the clean one's alone


def test_a_kept_route_through_a_wall_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hall = load_hall(BLOCKING / "xiangshe.hall.yaml")
    court, tang = Point(0, 5), Point(0, -4)
    kept = routes._kept(hall)
    kept.put(((0, 5), (0, -4)), [(0, 5), (0, -4)])  # straight up the edge of the 堂
    kept.write()
    routes._kept.cache_clear()
    points = route(hall, court, tang)
    assert len(points) > 2 and stairs_on(hall, points) == 1


def test_each_duration_is_the_sum_of_its_parts_and_says_what_they_are(xiangshe):
    sheet, blocking = xiangshe
    by_id = {c.cue: c for c in stage(blocking, sheet)}
    d = derive(blocking, by_id["ying-bin"], sheet)
    assert [name for name, _ in d.parts][1:] == ["再拜", "荅再拜", "揖"]
    assert d.parts[0][0].startswith("walk: zhuren to 門外")
    walk = max(d.walks, key=lambda w: w.seconds)
    assert d.parts[0][1] == walk.seconds
    assert d.seconds == walk.seconds + 10 + 10 + 3
    tang, ting = (round(part, 2) for part in lengths(blocking.hall, walk.route))
    exact = walk_seconds(shipped(), tang, ting, walk.stairs, run=False)
    assert exact == Fraction(tang).limit_denominator(100) * 3 + Fraction(ting).limit_denominator(100) * Fraction(3, 2) \
        + 6 * walk.stairs  # 接武 3 s/步, 布武 1.5 s/步, a stair 6 s
    assert walk.seconds == Fraction(math.floor(exact * 10 + Fraction(1, 2)), 10)  # to the tenth of a second, halves up


def test_a_run_is_faster_than_a_walk():
    paces = shipped()
    assert paces.qu < paces.ting < paces.tang  # 趨 below, 布武 below, 接武 on the 堂
    assert gesture_seconds("再拜") == 2 * gesture_seconds("拜")


def test_facing_reads_the_texts_words():
    assert Facing.parse("東面") is Facing.DONG
    assert Facing.parse("西南") is Facing.XINAN
    assert Facing.parse("上") is None


# --- broken halls and blockings: errors at their place --------------------------------------------------------------


def _staging_error(tmp_path: Path, sheet, old: str, new: str) -> tuple[str, int]:
    """The error staging xiangshe gives with *old* replaced by *new*, and the line of *new* in the copied file."""
    path = _copy(tmp_path, "xiangshe", old, new)
    with pytest.raises(InvalidInputError) as caught:
        stage(load_blocking(path, sheet), sheet)
    return str(caught.value), _line_of(path, new)


def test_two_people_on_one_point_is_an_error_at_the_later_move(repertoire, tmp_path, xiangshe):
    message, line = _staging_error(tmp_path, xiangshe[0], "{who: bin, to: xijie-shang, facing: 北面, cite: {page: 5-7b",
                                   "{who: bin, to: zuojie-shang, facing: 北面, cite: {page: 5-7b")
    assert f"xiangshe.yaml:{line}:9: zhuren and bin both stand at" in message or \
        f"xiangshe.yaml:{line}:9: bin and zhuren both stand at" in message


def test_a_facing_against_the_text_is_an_error_naming_the_page(repertoire, tmp_path, xiangshe):
    message, line = _staging_error(tmp_path, xiangshe[0],
                                   "{who: sheng, to: xuan-zhong, cite: {page: 5-15a, quote: 笙入立于縣中西面}}",
                                   "{who: sheng, to: xuan-zhong, facing: 北面, estimate: facing the hall}")
    assert (f":{line}:9: faces 北面 at 縣中 (笙), where the text has 西面 (儀禮集釋 5-15a 鄭注 "
            "縣中磬東立西面)") in message


def test_a_statement_the_hall_breaks_is_an_error_quoting_it(repertoire, tmp_path):
    path = _copy(tmp_path, "xiangshe", "wu-xia: {name: 下物 (左物), at: [0.5, -4]",
                 "wu-xia: {name: 下物 (左物), at: [1.5, -4]", hall=True)
    hall = load_hall(path.with_name("xiangshe.hall.yaml"))
    problems = [str(p) for p in statement_problems(hall)]
    line = _line_of(path.with_name("xiangshe.hall.yaml"), "{kind: distance, a: wu-shang, b: wu-xia")
    assert problems == [f"{hall.file}:{line}:5: distance 上物 (右物) / 下物 (左物): the text says 1 步 (儀禮集釋 "
                        "6-29b 鄭注 間容弓者上下射相去六尺也); 2.00 步 apart, not 1 [staging]"]


def test_two_places_on_one_point_is_an_error(tmp_path):
    path = _copy(tmp_path, "xiangshe", "zhong-xi: {name: 中西 (釋獲者), of: zhong, dir: 西, dist: 1,",
                 "zhong-xi: {name: 中西 (釋獲者), of: zhong, dir: 西, dist: 0,", hall=True)
    with pytest.raises(InvalidInputError, match=r"中西 \(釋獲者\) is on the point of 中 \(-4, 8\): distinct things"):
        load_hall(path.with_name("xiangshe.hall.yaml"))


@pytest.mark.parametrize("value", ["abc", "[1]", ".nan", "1e400"])
def test_an_assumption_that_is_not_a_number_of_bu_is_an_error_at_its_place_not_a_traceback(tmp_path, value):
    path = _copy(tmp_path, "xiangshe", "beam: {value: 2,", f"beam: {{value: {value},", hall=True)
    with pytest.raises(InvalidInputError, match=r"assumptions\.beam\.value: expected a number of 步") as caught:
        load_hall(path.with_name("xiangshe.hall.yaml"))
    assert (caught.value.problems[0].line, caught.value.problems[0].col) == (7, 17)


def test_a_hall_of_more_wall_corners_than_the_limit_is_refused_before_any_route_is_searched(tmp_path):
    posts = "".join(f"  - {{name: post{n}, points: [[{n - 30}, 70], [{n - 29.9}, 70]]}}\n" for n in range(60))
    path = _copy(tmp_path, "xiangshe", "\nwalls:\n", "\nwalls:\n" + posts, hall=True)
    with pytest.raises(InvalidInputError, match=r"walls: the walls have 1\d\d corners, beyond the limit of corners "
                                                r"of a hall's walls \(at most 100\)"):
        load_hall(path.with_name("xiangshe.hall.yaml"))


def test_an_unknown_place_performer_or_formula_is_named_with_a_suggestion(tmp_path, xiangshe):
    sheet = xiangshe[0]
    path = _copy(tmp_path, "xiangshe", "{who: zanzhe, to: bin-xi-qian, estimate:",
                 "{who: zanzhe, to: bin-xiqian, estimate:")
    text = path.read_text(encoding="utf-8").replace("gestures: [再拜, 荅再拜, 揖]", "gestures: [再拝, 荅再拜, 揖]", 1)
    path.write_text(text.replace("{who: dizi, to: hou, offset: [0, -1]", "{who: dizee, to: hou, offset: [0, -1]", 1),
                    encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_blocking(path, sheet)
    message = str(caught.value)
    assert f":{_line_of(path, 'to: bin-xiqian')}:" in message and "unknown place 'bin-xiqian' — did you mean" in message
    assert "unknown performer 'dizee'" in message and "dizi" in message
    assert "unknown formula '再拝'" in message


def test_the_plates_name_cues_of_the_sheet_in_its_order_or_it_is_an_error_at_the_entry(tmp_path, xiangshe):
    sheet, blocking = xiangshe
    assert blocking.plates[:2] == ("ru-men", "san-yi") and "huo-1" in blocking.plates  # the pair on the 物
    path = _copy(tmp_path, "xiangshe", "plates: [ru-men, san-yi,", "plates: [ru-men, sanyi, xian-bin, ru-men,")
    with pytest.raises(InvalidInputError) as caught:
        load_blocking(path, sheet)
    message, line = str(caught.value), _line_of(path, "plates: [ru-men, sanyi")
    assert f"xiangshe.yaml:{line}:" in message and "no cue 'sanyi'" in message and "did you mean 'san-yi'" in message
    assert "ru-men is not after xian-bin: the plates go in the sheet's order" in message


@pytest.mark.parametrize(("spacing", "message"), [
    ("0", "expected the 步 between members of a file, more than 0, got 0"),
    ("-3", "expected the 步 between members of a file, more than 0, got -3"),
    ("1e308", "1e+308 步 is beyond any hall")])
def test_a_spacing_of_zero_or_past_any_hall_is_an_error_not_a_default_or_a_traceback(repertoire, tmp_path, spacing,
                                                                                     message):
    sheet = load(ROOT / "cues" / "dashe.yaml", repertoire=repertoire)
    path = _copy(tmp_path, "dashe", "to: menwai-gong, spacing: 0.8,", f"to: menwai-gong, spacing: {spacing},")
    with pytest.raises(InvalidInputError) as caught:
        load_blocking(path, sheet)
    assert f"dashe.yaml:{_line_of(path, 'to: menwai-gong, spacing')}:" in str(caught.value)
    assert f"spacing: {message}" in str(caught.value)


def test_a_wall_with_no_way_round_is_a_route_error_at_the_move(tmp_path, xiangshe):
    sheet = xiangshe[0]
    path = _copy(tmp_path, "xiangshe", "[[-1.5, 60], [-16, 60],", "[[1.5, 60], [-16, 60],", hall=True)
    blocking = load_blocking(path, sheet)
    by_id = {c.cue: c for c in stage(blocking, sheet)}
    with pytest.raises(InvalidInputError, match=r"xiangshe.yaml:\d+:9: no route from .* in 州序"):
        derive(blocking, by_id["ying-bin"], sheet)


# --- yuesheng plan ---------------------------------------------------------------------------------------------------


def test_plan_gives_the_hall_and_places_with_their_names_and_axes(run):
    code, out, _ = run("plan", "xiangshe")
    assert code == 0
    data = json.loads(out)
    assert data["unit"] == "步" and data["axes"].startswith("x east, y south")
    places = {p["id"]: p for p in data["places"]}
    assert places["zhong-xi"]["name"] == "中西 (釋獲者)" and places["zhong-xi"]["at"] == [-5.0, 8.0]
    assert places["zhong-xi"]["facing"] == "東面" and "6-3a" in places["zhong-xi"]["source"]
    assert "people" not in data
    whose = {s["name"]: s["whose"] for s in data["hall"]["stairs"]}
    assert whose["阼階"] == {"of": ["主人"], "rest": False, "source": "儀禮集釋 5-4b 經 主人阼階上當楣北面再拜",
                               "layer": "經"}
    assert whose["西階"]["of"] == ["賓", "衆賓"] and whose["西階"]["rest"] is True
    assert data["lord"] is None and data["default_seat"] == {"id": "bin-xi", "place": "bin-xi"}


def test_plan_of_a_lords_rite_names_the_lord_and_his_mat_as_the_default_seat(run):
    code, out, _ = run("plan", "dashe")
    data = json.loads(out)
    assert code == 0 and data["lord"] == {"name": "公", "mat": "gong-xi",
                                          "cite": "儀禮集釋 9-7a 小臣設公席于阼階上西鄉"}
    assert data["default_seat"] == {"id": "zuojie-shang", "place": "gong-xi"}
    assert {s["name"]: s["whose"]["of"] for s in data["hall"]["stairs"]} == {"阼階": ["公"], "西階": ["賓", "主人"]}


def test_plan_at_a_cue_gives_everyone_there_the_walks_and_the_duration_parts(run):
    code, out, _ = run("plan", "xiangshe", "--at", "ming-qu-hou-1")
    assert code == 0
    data = json.loads(out)
    people = {p["id"]: p for p in data["people"]}
    assert people["xiang"]["place"] == "wu-jian" and people["xiang"]["facing"] == "西南面"  # 西南面立于物間
    assert people["shang-ou-shangshe"]["place"] == "wu-shang"
    assert sum(part["seconds"] for part in data["duration"]["parts"]) == pytest.approx(data["duration"]["seconds"])
    (walk,) = data["walks"]
    assert walk["who"] == "xiang" and walk["stairs"] == 1 and walk["route"][-1] == [0.0, -4.0]


def test_plan_draws_one_svg_plate_with_scale_and_north(run, tmp_path):
    target = tmp_path / "plan.svg"
    code, _, _ = run("plan", "xiangshe", "--at", "ru-men", "--format", "svg", "-o", str(target))
    assert code == 0
    svg = target.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "5 步 = 30 尺" in svg and ">北<" in svg and svg.count('class="person"') >= 30


def test_plan_will_not_write_over_its_cue_sheet_blocking_or_hall(run, tmp_path):
    for folder, name in (("cues", "xiangshe.yaml"), ("blocking", "xiangshe.yaml"), ("blocking", "xiangshe.hall.yaml")):
        (tmp_path / folder).mkdir(exist_ok=True)
        shutil.copy(ROOT / folder / name, tmp_path / folder)
    sheet = tmp_path / "cues" / "xiangshe.yaml"
    for target in (sheet, tmp_path / "blocking" / "xiangshe.yaml", tmp_path / "blocking" / "xiangshe.hall.yaml"):
        before = target.read_bytes()
        code, _, err = run("plan", str(sheet), "-o", str(target))
        assert code == 1 and "it is one of this command's inputs" in err and target.read_bytes() == before


def test_plan_takes_the_variants_and_readings_the_timeline_takes(run):
    code, out, _ = run("plan", "yanli", "--variant", "wu-shao", "--at", "sixia-na-bin")  # wu-shao requires 以樂納賓
    assert code == 0 and json.loads(out)["people"]
    for option, message in ((("--variant", "nope"), "unknown variant 'nope'"),
                            (("--reading", "x=y"), "unknown reading 'x'"),
                            (("--reading", "heyue=zz"), "unknown option of reading heyue 'zz'"),
                            (("--reading", "bad"), "--reading 'bad': expected ID=OPTION")):
        code, _, err = run("plan", "xiangshe", *option)
        assert code == 2 and message in err


def test_plan_of_an_unknown_cue_or_an_unblocked_rite_says_so(run, tmp_path):
    code, _, err = run("plan", "xiangshe", "--at", "ming-qu-hou")
    assert code == 1 and "unknown cue 'ming-qu-hou'" in err
    (tmp_path / "cues").mkdir()
    sheet = shutil.copy(ROOT / "cues" / "yanli.yaml", tmp_path / "cues")  # a sheet with no blocking/ beside it
    code, _, err = run("plan", str(sheet))
    assert code == 2 and "no blocking for yanli" in err


def test_plan_of_a_rite_with_a_hall_but_no_blocking_gives_the_hall_alone(run, tmp_path):
    for folder, name in (("cues", "dashe.yaml"), ("blocking", "dashe.hall.yaml")):  # the hall without the blocking
        (tmp_path / folder).mkdir()
        shutil.copy(ROOT / folder / name, tmp_path / folder)
    sheet = str(tmp_path / "cues" / "dashe.yaml")
    code, out, _ = run("plan", sheet)
    data = json.loads(out)
    assert code == 0 and data["hall"]["name"] and "people" not in data
    assert any(p["name"].startswith("服不") for p in data["places"])
    code, _, err = run("plan", sheet, "--at", "gong-bin-she")
    assert code == 2 and "no blocking for dashe" in err and "hall alone" in err


def test_when_the_gong_shoots_only_he_and_the_bin_stand_on_the_wu_and_the_huozhe_are_at_the_fa(run):
    code, out, _ = run("plan", "dashe", "--at", "gong-bin-she")
    people = {p["id"]: p for p in json.loads(out)["people"]}
    assert code == 0 and sorted(k for k, p in people.items() if p["place"] in ("wu-shang", "wu-xia")) == ["bin", "jun"]
    assert people["jun"]["place"] == "wu-xia" and people["bin"]["place"] == "wu-shang"  # 公下射 (鄭注 10-9a)
    assert people["dashezheng"]["at"][1] < people["jun"]["at"][1] < people["xiaoshezheng"]["at"][1]  # 公後, 物南
    for n, hou in enumerate(("dahou", "canhou", "ganhou"), 1):  # each 獲者 behind his 乏, its 負侯者 at it
        assert people[f"huozhe#{n}"]["place"] == f"{hou}-fa-huo" and people[f"fuhouzhe#{n}"]["place"] == f"{hou}-fa-zhi"
    assert people["fuhouzhe#1"]["at"][1] - people["jun"]["at"][1] == pytest.approx(80.8)  # 90 步 less 西十北十's 10
    assert {people[m]["place"] for m in ("shang-ou-shangshe", "xia-ou-xiashe")} == {"ci-bei"}  # 三耦 at the 次
    assert people["taishi"]["place"] == "zhong-xi" and people["taishi"]["facing"] == "東面"


def test_the_qin_of_yanli_puts_the_ranks_where_7_5a_does(run):
    code, out, _ = run("plan", "yanli", "--at", "na-qing-dafu")
    data = json.loads(out)
    names = {p["name"] for p in data["places"]}
    assert code == 0 and {"公席 (阼階上西鄉)", "賓席 (户西)", "縣中 (笙)", "東堂下 (小臣師)"} <= names
    people = {p["id"]: p for p in data["people"]}
    assert {people[f"shi#{n}"]["facing"] for n in range(1, 11)} == {"東面"}  # 士立于西方東面北上
    assert people["shi#1"]["at"][1] < people["shi#2"]["at"][1]  # 北上: the first at the north
    assert people["xiaochen-shi"]["facing"] == "南面" and people["zhushi"]["at"][0] > 0 > people["shi-lvshi#1"]["at"][0]


def test_the_yan_she_shoots_in_the_qins_court_at_fifty_bows_cue_by_cue(run, repertoire):
    code, out, _ = run("plan", "yanli", "--variant", "yan-she", "--at", "yan-jun-jiu-wu")
    data = json.loads(out)
    places = {p["id"]: p for p in data["places"]}
    people = {p["id"]: p for p in data["people"]}
    assert code == 0 and places["hou"]["at"][1] - places["wu-xia"]["at"][1] == 50  # 侯道五十弓 from the 物 under the 楣
    assert places["men"]["at"][1] - places["hou"]["at"][1] == 14  # the 鄉射 hall's margin behind the 侯
    on_wu = [k for k, p in people.items() if p["at"] in (places["wu-shang"]["at"], places["wu-xia"]["at"])]
    assert sorted(on_wu) == ["bin", "jun"] and people["jun"]["place"] == "wu-xia"  # 君與射則爲下射 (8-26b)
    assert people["yan-huozhe"]["place"] == "fa-xi" and people["ou-1-shangshe"]["place"] == "shewei"
    assert people["shihuozhe"]["place"] == "zhong-xi" and people["dasheizheng"]["place"] == "sishe-wei"
    sheet = load(ROOT / "cues" / "yanli.yaml", repertoire=repertoire)
    blocking = load_blocking(BLOCKING / "yanli.yaml", sheet)
    shooting = [c for c in stage(blocking, sheet, frozenset({"yan-she"})) if c.cue.startswith("yan-")]
    actions = [c for c in shooting if not sheet.cue(c.cue).is_music]
    assert len(shooting) == 41 and all(c.cue in blocking.cues for c in actions)  # every action blocked, none left out
    derived = {c.cue for c in actions if not blocking.cues[c.cue].keep and derive(blocking, c, sheet).parts}
    assert {"yan-she", "yan-fu-hou", "yan-huozhe-zou-1", "yan-shihuo-2", "yan-gong-ji-wei"} <= derived


@pytest.mark.parametrize("hall", sorted(p.name for p in BLOCKING.glob("*.hall.yaml")))
def test_every_shipped_hall_reads_its_statements_hold_and_its_quotes_are_on_their_pages(hall):
    from yuesheng.check.validate import check_quotes
    from yuesheng.yamlload import load

    loaded = load_hall(BLOCKING / hall)
    assert statement_problems(loaded) == []
    assert check_quotes(load(BLOCKING / hall)) == []
    assert loaded.statements and all(a.text for a in loaded.assumptions)


@pytest.mark.parametrize(("rite", "east"), [("xiangyinjiu", "主人"), ("xiangshe", "主人"), ("yanli", "公"),
                                            ("dashe", "公")])
def test_each_hall_says_whose_stair_is_whose_with_a_cite(rite, east):
    """The 阼階 is the 主人's in the 鄉 rites and the 公's in the 君's; the 西階 the 賓's and everyone else's (in the
    君's rites the 主人's too, 7-9b 升降不由阼階與賓同由西階)."""
    stairs = {s.name: s for s in load_hall(BLOCKING / f"{rite}.hall.yaml").stairs}
    zuo, xi = stairs["阼階"].whose, stairs["西階"].whose
    assert zuo is not None and zuo.of == (east,) and not zuo.rest and zuo.source.page
    assert xi is not None and "賓" in xi.of and xi.rest and xi.source.page
    assert ("主人" in xi.of) is (east == "公")


@pytest.mark.parametrize(("old", "new", "at", "message"), [
    ("whose: {of: [主人], cite:", "whose: {of: [賓], cite:", ("zuojie", 23), "賓 is already given the 西階"),
    ("whose: {of: [主人], cite:", "whose: {of: 主人, cite:", ("zuojie", 23), "expected a list of the ranks"),
    ("whose: {of: [主人], cite:", "whose: {rest: true, of: [主人], cite:", ("zuojie", 25),
     "the rest already go by the 西階"),
    ("whose: {of: [主人], cite:", "whose: {cite:", ("zuojie", 18), "whose stair? give of: [RANK, …], or rest: true"),
    ("whose: {of: [主人], cite:", "whose: {of: [主人], owner: x, cite:", ("zuojie", 29), "unknown key 'owner'"),
    ("whose: {of: [主人], cite: {page: 5-4b, quote: 主人阼階上當楣北面再拜}}", "whose: {of: [主人]}", ("zuojie", 18),
     "no source: give cite"),
])
def test_a_stair_whose_owners_are_wrong_is_an_error_at_its_place(tmp_path, old, new, at, message):
    path = _copy(tmp_path, "xiangshe", old, new, hall=True).with_name("xiangshe.hall.yaml")
    with pytest.raises(InvalidInputError) as caught:
        load_hall(path)
    [problem] = [p for p in caught.value.problems if message in p.message]
    assert (problem.line, problem.col) == (_line_of(path, f"  {at[0]}: {{name: ") + 1, at[1]), str(problem)


def test_the_xiang_has_a_shi_and_fang_entered_only_by_their_doors():
    hall = load_hall(BLOCKING / "xiangyinjiu.hall.yaml")
    assert hall.has_shi
    inside, before = hall.places["shi"].point, hall.places["liangying-jian"].point
    points = route(hall, before, inside)
    door = hall.places["shi-hu"].point
    assert blocked(hall, before, inside) and any(abs(p.x - door.x) < 0.5 and abs(p.y - door.y) < 0.2 for p in points)


def test_the_shegong_puts_each_thing_where_the_text_does_not_where_the_old_plan_did():
    """Issue 16's corrections: 服不 by the 大侯, the 獲者's 尊 by the 大侯's 乏, the 楅 南當洗, the 大史 by the 干侯,
    each instrument of the 縣 a point of its own in its order, the 物 當楣 a 弓 apart."""
    hall = load_hall(BLOCKING / "dashe.hall.yaml")
    at = {pid: p.point for pid, p in hall.places.items()}
    assert at["fubu"].distance(at["dahou-xiage"]) == pytest.approx(3, abs=1e-3) and at["fubu"].y < at["dahou"].y
    assert at["huozhe-zun"].x > at["dahou-fa"].x and at["huozhe-zun"].y < at["dahou-fa"].y
    assert at["fu"].y == at["xi"].y
    assert at["dashi-wei"].x > at["ganhou"].x and at["dashi-wei"].y < at["ganhou"].y
    assert at["dong-shengqing"].y < at["dong-shengzhong"].y < at["dong-bo"].y
    assert at["wu-shang"].y == hall.places["xiying"].point.y and at["wu-xia"].x - at["wu-shang"].x == 1


# --- durations from geometry in the timeline --------------------------------------------------------------------------


def test_a_staged_rites_actions_last_their_derivation_unless_the_estimate_is_kept(staged):
    from yuesheng import build
    from yuesheng.timeline import ticks

    sheet, blocking = staged
    by_id = {c.cue: c for c in stage(blocking, sheet)}
    derived = kept = 0
    for t in build(sheet).cues:
        if t.cue.is_music:
            assert t.basis == ""
            continue
        d = derive(blocking, by_id[t.cue.id], sheet)
        reason = blocking.cues[t.cue.id].keep if t.cue.id in blocking.cues else ""
        if reason or not d.parts:
            kept += 1
            assert abs(t.end_tick - t.start_tick - ticks(t.cue.duration or Fraction(0))) <= 1  # ticks rounded
            assert t.basis == f"estimate: {reason or 'nothing on the ground to time it (no walk, no formula)'}"
        else:
            derived += 1
            assert abs(t.end_tick - t.start_tick - ticks(d.seconds)) <= 1  # the parts add up to the duration
            assert t.basis.endswith(f"= {float(d.seconds):.1f} s".replace(".0 s", " s"))
            assert [p for p, _ in d.parts] == [part.rsplit(" ", 2)[0] for part in t.basis.split(" = ")[0].split(" + ")]
    assert derived > 50 and kept > 15


def test_timing_still_overrides_a_derived_duration(xiangshe, tmp_path):
    from yuesheng import build
    from yuesheng.timeline import Measurement, Options, ticks

    sheet = xiangshe[0]
    timeline = build(sheet, Options(timing={"ying-bin": Measurement(Fraction(40))}))
    t = next(t for t in timeline.cues if t.cue.id == "ying-bin")
    assert t.end_tick - t.start_tick == ticks(Fraction(40))
    assert t.estimate_ticks == ticks(Fraction(1226, 10))  # it replaced: 66.37 步 round the 侯, 再拜 荅再拜 揖
    assert t.basis.startswith("walk: zhuren to 門外")


def test_timeline_json_gives_each_cues_blocking_and_each_actions_basis(run, tmp_path):
    out = tmp_path / "x.json"
    assert run("timeline", "xiangshe", "--format", "json", "-o", str(out))[0] == 0
    cues = {c["cue"]: c for c in json.loads(out.read_text(encoding="utf-8"))["cues"]}
    assert cues["ying-bin"]["basis"].startswith("walk: zhuren to 門外 (主人), 66.37 步")
    zhuren = next(s for s in cues["ying-bin"]["blocking"] if s["who"] == "zhuren")
    assert (zhuren["place"], zhuren["name"], zhuren["facing"]) == ("menwai-dong", "門外 (主人)", "西面")
    assert len({s["who"] for s in cues["ru-men"]["blocking"]}) == len(cues["ru-men"]["blocking"]) > 20
    (tmp_path / "cues").mkdir()
    sheet = shutil.copy(ROOT / "cues" / "yanli.yaml", tmp_path / "cues")  # a sheet with no blocking/ beside it
    assert "blocking" not in json.loads(_run_json(run, tmp_path, str(sheet)))["cues"][0]


def _run_json(run, tmp_path: Path, rite: str) -> str:
    out = tmp_path / f"{rite}.json"
    assert run("timeline", rite, "--format", "json", "-o", str(out))[0] == 0
    return out.read_text(encoding="utf-8")


def test_the_run_sheet_shows_each_derivation_under_its_action(run):
    code, out, _ = run("timeline", "xiangshe")
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if " ying-bin " in line)
    assert lines[at + 1].strip().startswith("= walk: zhuren to 門外") and lines[at + 1].endswith("= 122.6 s")
    code, csv_out, _ = run("timeline", "xiangshe", "--format", "csv")
    assert csv_out.splitlines()[0].endswith(",duration_basis")


def test_a_keep_without_a_reason_is_an_error(tmp_path, xiangshe):
    path = _copy(tmp_path, "xiangshe", "  ying-bin:\n", "  ying-bin:\n    keep: ''\n")
    with pytest.raises(InvalidInputError, match=r"xiangshe.yaml:\d+:\d+: .*why the cue sheet's estimate is kept"):
        load_blocking(path, xiangshe[0])


@pytest.mark.parametrize(("hall", "why"), [("fifo.yaml", "not a regular file"), ("/dev/zero", "a plain name")])
def test_a_blocking_naming_a_fifo_or_a_device_as_its_hall_is_refused_without_waiting_or_filling_memory(tmp_path,
                                                                                                        hall, why):
    (tmp_path / "cues").mkdir()
    shutil.copy(ROOT / "cues" / "xiangshe.yaml", tmp_path / "cues")
    _copy(tmp_path, "xiangshe", "hall: xiangshe.hall.yaml", f"hall: {hall}")
    (tmp_path / "blocking").mkdir()
    for name in ("xiangshe.yaml", "xiangshe.hall.yaml"):
        shutil.move(tmp_path / name, tmp_path / "blocking" / name)
    os.mkfifo(tmp_path / "blocking" / "fifo.yaml")
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    sheet = str(tmp_path / "cues" / "xiangshe.yaml")
    built = subprocess.run([sys.executable, "-m", "yuesheng", "timeline", sheet, "-o", str(tmp_path / "t.txt")],
                           env=env, capture_output=True, text=True, timeout=60)
    assert built.returncode == 0, built.stderr  # the cue sheet's estimates, as for any blocking that does not stage
    checked = subprocess.run([sys.executable, "-m", "yuesheng", "validate", sheet], env=env, capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 1 and why in checked.stderr + checked.stdout
