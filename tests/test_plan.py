"""The plan's SVG plate (``yuesheng plan --at CUE --format svg``): its labels are placed in Python
(``outputs/labels``) so that none covers another label, a person, a mat or a wall; checked here on the boxes placed,
for every cue of 鄉射 and a sample of 大射, and on the boxes Chromium draws. Then what ``yuesheng plan`` loads: each
score once, and the rules on the programme it draws (the command's other behaviour: tests/test_staging.py)."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from yuesheng import load
from yuesheng.cli.common import cue_path
from yuesheng.outputs.labels import LEADER_FROM, Label, crosses, meet, overlaps, place_labels, text_em
from yuesheng.outputs.plan import plan_data, plan_svg, plate_labels, standing, thing_kind, thing_path
from yuesheng.staging.paths import blocking_beside
from yuesheng.staging.rite import staged_rite


def _plates(rite: str, repertoire: Any) -> list[dict[str, Any]]:
    """The plan data at every cue of *rite*'s programme (no variants), busiest first, then in the rite's order."""
    sheet = load(cue_path(rite), repertoire=repertoire)
    variants, readings = sheet.programme(frozenset(), {})
    blocking = blocking_beside(sheet)
    assert blocking is not None, f"{rite} has no blocking"
    staged = staged_rite(sheet, variants, readings, blocking)
    busiest = max(staged.cues, key=lambda cid: len(staged.cues[cid].stands))
    return [plan_data(staged.hall, sheet, at=cid, staged=staged.cues[cid]) for cid in [busiest, *staged.cues]]


@pytest.fixture(scope="module")
def xiangshe(repertoire) -> list[dict[str, Any]]:
    return _plates("xiangshe", repertoire)


@pytest.fixture(scope="module")
def dashe(repertoire) -> list[dict[str, Any]]:
    """大射's busiest cue, then every tenth."""
    plates = _plates("dashe", repertoire)
    return [plates[0], *plates[1::10]]


def test_a_label_is_measured_from_its_characters():
    assert text_em("公") == 1.0 and text_em("12 s") == pytest.approx(4 * 0.6)
    assert text_em("衆賓 1–3 北上") == pytest.approx(4 + 4 * 0.6 + 1)  # the en dash is as wide as a hanzi in CJK fonts


def test_segments_and_boxes_cross_only_through_their_insides():
    box = (0.0, 0.0, 2.0, 1.0)
    assert crosses((-1, 0.5, 3, 0.5), box) and crosses((1, 0.5, 1, 5), box)
    assert not crosses((-1, 1.0, 3, 1.0), box) and not crosses((3, 0, 3, 5), box)  # along an edge; beside it
    assert meet((0, 0, 2, 2), (0, 2, 2, 0)) and not meet((0, 0, 1, 1), (1, 1, 2, 0))  # crossing; touching at an end
    assert overlaps(box, (1.9, 0.9, 3, 3)) and not overlaps(box, (2.0, 0, 3, 1))


def test_a_label_with_room_stands_beside_its_anchor_without_a_leader():
    (placed,) = place_labels([Label("公", 0.0, 0.0, 0.6, "who", 0)], [(-0.3, -0.3, 0.3, 0.3)])
    assert placed.leader is None and placed.box[0] > 0.3  # east of the dot, clear of it
    assert placed.box[1] < 0.0 < placed.box[3]  # level with it


def test_a_crowded_label_goes_farther_out_along_a_leader_line():
    dot = (-0.3, -0.3, 0.3, 0.3)
    ring = [(x, y, x + 0.6, y + 0.6) for x in (-3.3, -2.1, -0.9, 0.3, 1.5, 2.7) for y in (-2.1, -0.9, 0.3, 1.5)]
    (placed,) = place_labels([Label("公", 0.0, 0.0, 0.6, "who", 0)], [dot, *ring])
    assert placed.leader is not None and placed.leader[:2] == (0.0, 0.0)
    x0, y0, x1, y1 = placed.box
    assert x0 <= placed.leader[2] <= x1 and y0 <= placed.leader[3] <= y1  # it ends on the label
    assert not any(overlaps(placed.box, o) for o in ring)


def _check_plates(plates: list[dict[str, Any]]) -> None:
    for data in plates:
        labels, obstacles = plate_labels(data)
        placed = place_labels(labels, obstacles)
        cue = data["cue"]["id"]
        assert len(placed) == len(labels), f"{cue}: a label found no room"
        for a, b in itertools.combinations(placed, 2):
            assert not overlaps(a.box, b.box), f"{cue}: {a.label.text!r} covers {b.label.text!r}"
        for p in placed:
            covered = [o for o in obstacles if overlaps(p.box, o)]
            assert not covered, f"{cue}: {p.label.text!r} covers a person, a mat or a wall at {covered[0]}"
            nearest = (min(max(p.label.x, p.box[0]), p.box[2]), min(max(p.label.y, p.box[1]), p.box[3]))
            if p.leader is None:  # next to its anchor
                assert math.dist((p.label.x, p.label.y), nearest) <= LEADER_FROM, f"{cue}: {p.label.text!r}"
            else:  # from the anchor to the label
                assert p.leader == (p.label.x, p.label.y, *nearest), f"{cue}: {p.label.text!r}"


def test_no_label_of_any_xiangshe_plate_covers_another_a_person_or_a_mat(xiangshe):
    assert len(xiangshe) > 150 and max(len(d["people"]) for d in xiangshe) >= 40
    _check_plates(xiangshe)


def test_no_label_of_the_busiest_and_every_tenth_dashe_plate_covers_another_a_person_or_a_mat(dashe):
    assert len(dashe) > 25 and len(dashe[0]["people"]) >= 80
    _check_plates(dashe)


def test_the_plate_is_the_same_whatever_order_its_people_come_in_and_names_a_cjk_font(dashe):
    data = dashe[0]
    svg = plan_svg(data)
    assert plan_svg({**data, "people": data["people"][::-1]}) == svg
    assert "font-family=\"'Noto Sans CJK TC', 'Noto Sans CJK SC'" in svg and svg.count('class="leader"') > 5


def test_each_target_spans_its_left_and_right_ge_and_each_screen_is_drawn(xiangshe, dashe):
    widths = {t["name"]: round(t["to"][0] - t["from"][0], 2) for t in dashe[0]["hall"]["targets"]}
    assert widths == {"大侯": 12, "參侯": 9.34, "干侯": 6.66}  # 上个 = 4 中, 中 = 2 寸 a 弓 of 侯道 (6-36a)
    assert [t["from"][1] for t in dashe[0]["hall"]["targets"]] == [87.5, 67.5, 47.5]
    assert [f["name"] for f in dashe[0]["hall"]["screens"]] == ["大侯之乏", "參侯之乏", "干侯之乏"]
    svg = plan_svg(next(d for d in xiangshe if {"hou", "fa"} <= set(d["standing"])))
    assert '<path class="thing hou" d="M-3.33,45.9H3.33V46.1H-3.33Z' in svg  # the 侯 from its 左个 to its 右个
    assert svg.count('<path class="thing fa"') >= 1


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yanli", "dashe"])
def test_every_set_piece_standing_is_drawn_by_its_kind_to_its_size_and_named(rite, repertoire):
    plates = _plates(rite, repertoire)
    hall = plates[0]["hall"]
    assert hall["things"] and {t["id"] for t in hall["things"]} >= set().union(*(p["standing"] for p in plates))
    for data in (plates[0], max(plates, key=lambda p: len(p["standing"]))):
        svg = plan_svg(data)
        for t in standing(data):
            (x, y), (w, d) = t["at"], t["size"]
            assert f'<path class="thing {t["kind"]}" d="{thing_path(t["kind"], x, y, w, d)}"><title>{t["name"]}' in svg
            assert f'>{t["label"]}</text>' in svg, t["label"]  # named
    assert thing_kind("笙磬 (東縣)") == "frame" and thing_kind("大侯 (with its 个)") == "hou"
    assert thing_kind("大侯之乏") == "fa" and thing_kind("士旅食之尊") == "vessel" and thing_kind("上物") == "wu"


_MEASURE = """() => {
  const svg = document.documentElement, frame = svg.getBoundingClientRect();
  const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left - frame.left, r.top - frame.top,
                                                                     r.right - frame.left, r.bottom - frame.top]; };
  const labels = [...svg.querySelectorAll("text.label")].map((t) => ({text: t.textContent, client: rect(t),
    panel: rect(t.closest("svg.panel")), px: Number(t.getAttribute("font-size")) * t.getScreenCTM().a}));
  const words = [...svg.querySelectorAll("text:not(.label)")].map((t) => ({text: t.textContent, client: rect(t),
    px: Number(t.getAttribute("font-size")) * t.getScreenCTM().a}));
  return {size: [frame.width, frame.height], labels, words};
}"""
PX_PER_MM = 96 / 25.4  # the SVG is as large as it prints: its width and height are in mm


@pytest.mark.browser
@pytest.mark.parametrize("rite", ["xiangshe", "dashe"])
def test_chromium_draws_the_busiest_plate_with_no_two_labels_touching_all_inside_and_9_pt_on_a4(rite, run, tmp_path,
                                                                                                repertoire):
    from test_sheet import _chromium

    data = _plates(rite, repertoire)[0]
    target = tmp_path / f"{rite}.svg"
    code, _, _ = run("plan", rite, "--at", data["cue"]["id"], "--format", "svg", "-o", str(target))
    assert code == 0
    with _chromium() as browser:
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            tab.goto(Path(target).as_uri())
            found = tab.evaluate(_MEASURE)
            tab.screenshot(path=str(tmp_path / f"{rite}.png"))  # to look at
        finally:
            tab.close()
    labels, (width, height) = found["labels"], found["size"]
    assert width <= 277 * PX_PER_MM + 1 and height <= 190 * PX_PER_MM + 1  # it fits A4 landscape, inside 10 mm
    assert len(labels) == len(plate_labels(data)[0]) > 25
    for a, b in itertools.combinations(labels, 2):
        assert not overlaps(a["client"], b["client"]), f"{a['text']!r} and {b['text']!r} overlap on screen"
    for label in labels:
        x0, y0, x1, y1 = label["client"]
        p0, q0, p1, q1 = label["panel"]
        assert p0 <= x0 and q0 <= y0 and x1 <= p1 and y1 <= q1, label["text"]  # inside its panel
        assert label["px"] >= 12 - 1e-6, label  # 9 pt
    words = " ".join(w["text"] for w in found["words"])
    assert "5 步 = 30 尺 ≈ 6.9 m" in words and "person, facing" in words and "set piece, named" in words
    assert all(w["px"] >= 12 for w in found["words"]), words


# --- what yuesheng plan loads ----------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_plan_reads_each_score_file_once(run, monkeypatch, tmp_path):
    from yuesheng.music import repertoire, score

    read: list[Path] = []
    load_piece = score.load_piece

    def noting(path):
        read.append(Path(path))
        return load_piece(path)

    monkeypatch.setattr(repertoire, "load_piece", noting)
    own = tmp_path / "scores"
    own.mkdir()
    shutil.copy(ROOT / "scores" / "luming.yaml", own / "mine.yaml")
    code, _, err = run("plan", "xiangshe", "--scores", str(own), "-o", str(tmp_path / "plan.json"))
    assert code == 0, err
    assert sorted(read) == sorted(repertoire.score_paths([own])) and len(read) == len(set(read))


def test_plan_checks_the_rules_on_the_programme_it_draws_as_a_build_does(run, tmp_path):
    text = (ROOT / "cues" / "yanli.yaml").read_text(encoding="utf-8")
    old = "      count: pierce\n      cite: {page: 5-33a"
    assert text.count(old) == 1  # the 燕射 counting nothing breaks three-rounds, a rule of the 燕射 alone
    for folder in ("cues", "blocking"):
        (tmp_path / folder).mkdir()
    sheet = tmp_path / "cues" / "yanli.yaml"
    sheet.write_text(text.replace(old, old.replace("pierce", "none")), encoding="utf-8")
    for name in ("yanli.yaml", "yanli.hall.yaml"):
        shutil.copy(ROOT / "blocking" / name, tmp_path / "blocking")
    assert run("timeline", str(sheet), "-o", str(tmp_path / "plain.txt"))[0] == 0
    code, out, err = run("plan", str(sheet), "--at", "na-qing-dafu")
    assert code == 0 and json.loads(out)["people"], err  # the 燕射 is not in this programme
    code, _, err = run("plan", str(sheet), "--variant", "yan-she")
    assert code == 1 and "[three-rounds]" in err and "(with variant yan-she)" in err


def test_plan_at_a_cue_of_a_copied_rite_names_and_guards_the_copy_s_files(run, tmp_path):
    assert run("plan", "xiangshe", "--at", "jie-bin", "-o", str(tmp_path / "shipped.json"))[0] == 0  # kept staged
    for folder, name in (("cues", "xiangshe.yaml"), ("blocking", "xiangshe.yaml"), ("blocking", "xiangshe.hall.yaml")):
        (tmp_path / folder).mkdir(exist_ok=True)
        shutil.copy(ROOT / folder / name, tmp_path / folder)
    sheet, hall = tmp_path / "cues" / "xiangshe.yaml", tmp_path / "blocking" / "xiangshe.hall.yaml"
    code, out, err = run("plan", str(sheet), "--at", "jie-bin")  # the same contents: the same digest
    assert code == 0 and json.loads(out)["hall"]["file"] == str(hall.resolve()), err
    before = hall.read_bytes()
    code, _, err = run("plan", str(sheet), "--at", "jie-bin", "-o", str(hall))
    assert code == 1 and "it is one of this command's inputs" in err and hall.read_bytes() == before
