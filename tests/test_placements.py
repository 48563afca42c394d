"""Issue 29 §2: the texts' placements where the texts and their 鄭注 put them, and each cite's layer (經, 記, 鄭注,
釋曰) read from the page's parse and shown with the cite.

Each placement test names the page it holds the plan to; each failed on the plan as it was before.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from yuesheng import load, produce, sources
from yuesheng.check.validate import check_quotes
from yuesheng.staging.model import Point
from yuesheng.staging.reader import load_blocking, load_hall
from yuesheng.staging.stage import stage
from yuesheng.yamlload import load as load_yaml

ROOT = Path(__file__).resolve().parent.parent
BLOCKING = ROOT / "blocking"


def _at(rite: str) -> dict[str, Point]:
    return {pid: p.point for pid, p in load_hall(BLOCKING / f"{rite}.hall.yaml").places.items()}


@pytest.fixture(scope="module")
def stands(repertoire):
    """After each cue of a rite: who stands at which place id, and where."""
    def after(rite: str, cue: str) -> dict[str, tuple[str, Point]]:
        sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
        staged = {c.cue: c for c in stage(load_blocking(BLOCKING / f"{rite}.yaml", sheet), sheet)}
        return {who: (s.place, s.point) for who, s in staged[cue].stands.items()}
    return after


# --- 大射儀 --------------------------------------------------------------------------------


def test_gubei_is_north_of_the_west_xuan_as_zheng_says():
    """9-25a 皆降立于鼓北; 鄭注 鼓北西縣之北也: north of the 西縣's 頌磬, not between the stairs."""
    at = _at("dashe")
    assert at["gubei"].y < at["xi-songqing"].y and abs(at["gubei"].x - at["xi-songqing"].x) < 0.5
    assert at["gubei"].x < at["xijie-foot"].x


def test_the_xiaoyuezheng_and_the_dayuezheng_stand_south_of_the_gong(stands):
    """鄭注 9-25a 小樂正亦降立于其南北面; 鄭注 9-25b 大樂正還北面立于其南."""
    after = stands("dashe", "gong-jiang-gubei")
    place, small = after["xiaoyuezheng"]
    assert place == "gubei-nan" and all(small.y > after[g][1].y for g in ("dashi", "shaoshi"))
    after = stands("dashe", "gong-dong")
    place, great = after["yuezheng"]
    assert place == "dongzhan-nan" and all(great.y > after[g][1].y for g in ("dashi", "shaoshi"))


def test_the_fubu_is_the_fuhouzhe_with_his_tu_at_the_fa(stands):
    """鄭注 9-31b 大侯服不氏負侯徒一人居乏; 10-17a 服不負侯其徒居乏: the 服不 is offered where he stands as the
    負侯者, returns to 負侯, and no second man stands beside the 負侯者."""
    place, _ = stands("dashe", "xian-fubu")["fuhouzhe#1"]
    assert place == "fubu"
    after = stands("dashe", "huozhe-she-jian")
    assert after["fuhouzhe#1"][0] == "dahou-fu" and after["huozhe#1"][0] == "dahou-fa-huo"
    assert [who for who, (p, _) in after.items() if p == "dahou-fu"] == ["fuhouzhe#1"]


def test_the_fubu_and_the_dashi_stand_off_the_hou_not_before_its_face():
    """10-16b 服不侯西北三步 and 9-8a 大史在干侯之東北, measured from the 侯's side, as 10-18a 左个之西北三步 is:
    neither stands before the face the arrows fly at (鄭注 6-34a 侯以鄉堂為面也)."""
    hall = load_hall(BLOCKING / "dashe.hall.yaml")
    at = {pid: p.point for pid, p in hall.places.items()}
    for who, hou in (("fubu", "dahou"), ("dashi-wei", "ganhou")):
        half = hall.things[hou].size[0] / 2
        assert abs(at[who].x - at[hou].x) > half and at[who].y < at[hou].y, who
    assert at["fubu"].x < at["dahou"].x and at["dashi-wei"].x > at["ganhou"].x


def test_the_ge_are_cited_from_the_ji():
    """記 6-34a 東方謂之右个, not an estimate."""
    hall = load_hall(BLOCKING / "dashe.hall.yaml")
    for pid in ("dahou-youge", "dahou-zuoge", "canhou-youge", "ganhou-zuoge"):
        assert hall.places[pid].source.layer == "記", pid


def test_the_north_stair_is_a_place_of_the_plan():
    """9-28a 工人士與梓人升自北階 (畫物): behind the 堂."""
    hall = load_hall(BLOCKING / "dashe.hall.yaml")
    beijie = hall.places["beijie"]
    assert beijie.name == "北階" and beijie.point.y < hall.tang[0].y and beijie.source.layer == "經"


# --- 鄉射禮 --------------------------------------------------------------------------------


def test_the_stair_tops_of_the_xiangshe_stand_dang_mei():
    """5-4b 主人阼階上當楣北面再拜; 賓西階上當楣: level with the 楣, the 楹's line (assumption beam)."""
    at = _at("xiangshe")
    assert at["zuojie-shang"].y == at["xijie-shang"].y == at["dongying"].y


def test_the_zhuren_come_down_stands_dang_dongxu():
    """鄭注 5-8a 降立阼階東西面當東序: on the 東序's line."""
    hall = load_hall(BLOCKING / "xiangshe.hall.yaml")
    dongxu = next(w for w in hall.walls if w.name == "東序")
    assert hall.places["zuojie-xia"].point.x == dongxu.points[0].x
    assert hall.places["zuojie-xia"].facing is not None and hall.places["zuojie-xia"].facing.hanzi == "西"


def test_the_gong_mats_lie_a_little_east_of_the_west_stair(stands):
    """5-14b 席工于西階上少東: every one of the four east of the stair's top."""
    after = stands("xiangshe", "gong-ru")
    top = _at("xiangshe")["xijie-shang"].x
    gong = [pt for who, (place, pt) in after.items() if who.startswith("gong#")]
    assert len(gong) == 4 and all(top < p.x < top + 4 for p in gong)


def test_the_zunzhe_is_met_inside_the_gate_and_the_bins_party_go_back_to_their_first_place(stands):
    """5-13a 主人降 (鄭注 迎大夫于門内也); 賓及衆賓皆降復初位: 門内, facing east (5-4b 入門左東面北上)."""
    after = stands("xiangshe", "zunzhe-ru")
    at = _at("xiangshe")
    assert after["zhuren"][0] == "men-nei-dong" and after["zhuren"][1].y > at["men-zuo"].y
    assert after["bin"][0] == "men-zuo-bin"
    assert all(after[f"zhongbin#{n}"][0] == "men-zuo" for n in (1, 2, 3))


def test_the_xiangshe_dafu_mat_cites_its_own_jing():
    """5-13b 席于尊東: 鄉射's own 經, not 鄉飲酒's."""
    hall = load_hall(BLOCKING / "xiangshe.hall.yaml")
    assert hall.places["dafu-xi"].source.page == "5-13b" and hall.places["dafu-xi"].source.layer == "經"
    assert hall.places["dafu-xi"].point.x > hall.places["zun"].point.x


# --- 鄉飲酒禮 -------------------------------------------------------------------------------


def test_the_zunzhe_mats_lie_east_of_the_zun():
    """釋曰 4-36a 席遵者又于尊東 … 其席南面西上統于尊: not between the 賓 and the 尊."""
    hall = load_hall(BLOCKING / "xiangyinjiu.hall.yaml")
    mat, zun = hall.places["zhugong-xi"], hall.places["zun"]
    assert mat.point.x > zun.point.x and mat.head is not None and mat.head.hanzi == "西上"


def test_the_zhi_between_the_stairs_lies_level_with_the_zhongting():
    """4-27b 階間北面坐奠觶; 鄭注 其南北當中庭."""
    at = _at("xiangyinjiu")
    assert at["zhi"].x == 0 and abs(at["zhi"].y - at["zhongting"].y) <= 0.5


# --- layers -----------------------------------------------------------------------------


@pytest.mark.parametrize(("page", "quote", "layer"), [
    ("9-25a", "皆降立于鼓北", "經"), ("9-25a", "鼓北西縣之北也", "鄭注"), ("6-34a", "東方謂之右个", "記"),
    ("7-2b", "大射在學官", "釋曰"), ("9-1b", "宰戒百官有事于射者", "經"), ("9-1b", "射人戒諸公卿大夫射", "經"),
    ("9-1b", "有命政教宜由尊者", "鄭注"), ("9-2a", "佐也謂士佐執事不射者", "鄭注"),
    ("5-13a", "主人降鄭注迎大夫于門内也", "經+鄭注"), ("9-2a", "大侯九十…鄭注量人", "經+鄭注"),
    ("zhouli:30-25a", "諸侯以四耦射二侯", "經"), ("9-25a", "not on the page", ""), ("99-1a", "鼓北", ""),
])
def test_a_quotes_layer_is_read_from_the_pages_parse(page, quote, layer):
    assert sources.layer(page, quote) == layer


def test_source_9_1b_prints_its_two_jing_clauses_as_jing(run):
    code, out, _ = run("source", "9-1b", "--format", "json")
    kinds = [(p["kind"], p["text"][:4]) for p in json.loads(out)["parts"]]
    assert code == 0 and ("經", "宰戒百官") in kinds and ("經", "射人戒諸") in kinds
    assert [k for k, _ in kinds] == ["鄭注", "經", "鄭注", "經", "鄭注"]


_NAMED = re.compile(r"(鄭注|釋曰|記) (\d+-\d+[ab]) ([^\s,;:)(\"'…—]{3,})")


@pytest.mark.parametrize("path", sorted(BLOCKING.glob("*.yaml")), ids=lambda p: p.name)
def test_every_layer_the_blocking_names_is_the_pages(path):
    """'鄭注 7-2b 大射在學官' in a note or comment names the layer its quote is in on that page (釋曰, here): each
    such mention whose words are on the page."""
    wrong = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for named, page, quote in _NAMED.findall(line):
            found = sources.layer(page, quote)
            if found and found != named:
                wrong.append(f"{path.name}:{n}: {named} {page} {quote} is {found}")
    assert wrong == []


def test_no_cite_of_the_shipped_sheets_or_blocking_splices_two_layers():
    spliced = [f"{p.name}:{q.line}: {q.message}" for p in [*sorted((ROOT / "cues").glob("*.yaml")),
                                                            *sorted(BLOCKING.glob("*.yaml"))]
               for q in check_quotes(load_yaml(p)) if "runs over" in q.message]
    assert spliced == []


def test_the_quote_rule_refuses_a_quote_that_splices_jing_and_zhu(tmp_path):
    text = (BLOCKING / "xiangshe.yaml").read_text(encoding="utf-8")
    old = "cite: {page: 5-13a, quote: 迎大夫于門内也}"
    assert old in text
    path = tmp_path / "xiangshe.yaml"
    path.write_text(text.replace(old, "cite: {page: 5-13a, quote: 主人降鄭注迎大夫于門内也}"), encoding="utf-8")
    line = next(n for n, s in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if "主人降鄭注" in s)
    problems = [str(q) for q in check_quotes(load_yaml(path))]
    assert len(problems) == 1 and problems[0].startswith(f"{path}:{line}:")
    assert "runs over 經 and 鄭注: quote one layer" in problems[0] and problems[0].endswith("[quote]")


# --- the layer shown wherever the cite is -----------------------------------------------


def test_a_places_source_names_its_layer_in_the_plan(run):
    code, out, _ = run("plan", "dashe")
    places = {p["id"]: p for p in json.loads(out)["places"]}
    assert code == 0 and places["gubei"]["layer"] == "鄭注"
    assert places["gubei"]["source"] == "儀禮集釋 9-25a 鄭注 鼓北西縣之北也"
    assert places["dahou"]["layer"] == "經" and places["tanglian"]["layer"] == ""


def test_the_plans_svg_titles_carry_the_layer(run, tmp_path):
    out = tmp_path / "plan.svg"
    code, _, _ = run("plan", "dashe", "--format", "svg", "-o", str(out))
    title = "鼓北 (西縣之北): 儀禮集釋 9-25a 鄭注 鼓北西縣之北也</title>"
    assert code == 0 and title in out.read_text(encoding="utf-8")


def test_a_staging_message_names_the_layer_of_its_quote(tmp_path, repertoire):
    from yuesheng.staging.statements import statement_problems

    for name in ("dashe.yaml", "dashe.hall.yaml"):
        shutil.copy(BLOCKING / name, tmp_path / name)
    hall_path = tmp_path / "dashe.hall.yaml"
    text = hall_path.read_text(encoding="utf-8")
    hall_path.write_text(text.replace("of: xi-songqing, dir: 北, dist: 0.9", "of: xi-songqing, dir: 南, dist: 0.9"),
                         encoding="utf-8")
    problems = [str(p) for p in statement_problems(load_hall(hall_path))]
    assert any("(儀禮集釋 9-25a 鄭注 鼓北西縣之北也)" in p for p in problems), problems


@pytest.fixture(scope="module")
def xiangshe_production(repertoire):
    return produce(load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire))


def test_the_run_sheet_names_each_cites_layer(xiangshe_production):
    from yuesheng.outputs.report import run_sheet_csv, run_sheet_json, run_sheet_text

    timeline = xiangshe_production.timeline
    rows = {r["cue"]: r for r in csv.DictReader(io.StringIO(run_sheet_csv(timeline)))}
    assert rows["wu-suan-yue"]["cite_layer"] == "經" and rows["wu-suan-yue"]["cite_quote"] == "無算樂"
    cues = {c["cue"]: c for c in json.loads(run_sheet_json(timeline))["cues"]}
    assert cues["wu-suan-yue"]["cite_layer"] == "經"
    assert any(" 6-22a 經 無算樂" in line for line in run_sheet_text(timeline).splitlines())


def test_the_directors_page_names_each_cites_layer(xiangshe_production):
    from yuesheng.web.sheet import sheet_html

    page = sheet_html(xiangshe_production)
    assert '<td class="cite"><b>6-22a</b> <i>經</i> 無算樂</td>' in page


# --- what the texts set out, as places and things of the plan ---------------------------


@pytest.mark.parametrize(("rite", "places", "things"), [
    ("dashe", {"罍 (水)", "篚 (洗西)", "膳篚 (篚北)", "膳尊 (兩甒 在南)", "簜", "鼗", "東坫", "室", "房 (東房)",
               "室户", "房户", "北階"},
     {"罍 (水)", "篚 (洗西)", "膳篚", "簜", "鼗", "東坫"}),
    ("yanli", {"罍 (水)", "篚 (洗西)", "膳篚 (篚北)", "亨 (門外東方)"}, {"罍 (水)", "篚", "膳篚"}),
    ("xiangyinjiu", {"水 (洗東)", "篚 (洗西)", "亨 (堂東北)"}, {"水 (洗東)", "篚"}),
    ("xiangshe", {"水 (洗東)", "篚 (洗西)", "亨 (堂東北)"}, {"水 (洗東)", "篚"}),
])
def test_the_objects_the_texts_set_out_are_places_and_things_of_the_plan(rite, places, things):
    """罍 and 水 (東), the 篚 (洗西) and 膳篚, the 膳尊, 簜, 鼗, 東坫, 户, 室 and 房, 亨: each a place citing its page,
    the solid ones things routes keep clear of (the 篚 open: one goes to it)."""
    hall = load_hall(BLOCKING / f"{rite}.hall.yaml")
    named = {p.name: p for p in hall.places.values()}
    assert places <= set(named)
    assert {t.name for t in hall.things.values()} >= things
    assert all(named[n].source.page or named[n].source.estimate for n in places)
    assert all(t.open for t in hall.things.values() if t.name.startswith(("篚", "膳篚")))


# --- docs/staging.md's counts -----------------------------------------------------------

DOC = (ROOT / "docs" / "staging.md").read_text(encoding="utf-8")
RITES = {"xiangyinjiu": "鄉飲酒禮", "xiangshe": "鄉射禮", "yanli": "燕禮", "dashe": "大射儀"}


def test_the_docs_count_each_halls_places_and_statements():
    halls = [load_hall(BLOCKING / f"{rite}.hall.yaml") for rite in RITES]
    counted = {(len(h.places), len(h.statements)) for h in halls}
    said = {(int(p), int(s)) for p, s in re.findall(r"(\d+) places, (\d+) statements", DOC)}
    assert said == counted


def test_the_docs_count_each_rites_cues(repertoire):
    said = dict((name, int(n)) for n, name in re.findall(r"all (\d+)\s+cues of\s+(\S+?)[\s,]", DOC))
    for rite, name in RITES.items():
        sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
        assert said[name] == len(sheet.cues), name
    everyone = [int(n) for n in re.findall(r"moves everyone of the (\d+) cues", DOC)]
    assert sorted(everyone) == sorted(len(load(ROOT / "cues" / f"{r}.yaml", repertoire=repertoire).cues)
                                      for r in ("dashe", "yanli"))


def test_the_docs_count_the_blockings_quotes_by_layer():
    from collections import Counter

    from yuesheng.check.validate import _cites

    layers = Counter(sources.layer(page, quote) for path in sorted(BLOCKING.glob("*.yaml"))
                     for _, page, quote in _cites(load_yaml(path).data))
    said = re.search(r"Of the blocking's (\d+) quotes (\d+) are 經, (\d+) 記, (\d+) 鄭注 and (\d+) 釋曰", DOC)
    assert said is not None
    assert [int(n) for n in said.groups()] == [sum(layers.values()), layers["經"], layers["記"], layers["鄭注"],
                                               layers["釋曰"]]
