"""``yuesheng sides``: each person's book — every cue he acts in once, in order, with where he stands and goes, what
he does and says with its quote; the PDF's text read back by pdftotext, no cue split by a page turn."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import yuesheng
from yuesheng.staging.stage import members

SIDES = ("sides", "xiangshe", "--person", "司射", "--person", "衆賓 2")


@pytest.fixture(scope="module")
def xiangshe(repertoire):
    production = yuesheng.produce(yuesheng.load("xiangshe", repertoire=repertoire))
    assert production.staged is not None and production.motion is not None
    return production


@pytest.fixture(scope="module")
def book(xiangshe, tmp_path_factory):
    from yuesheng.cli import main

    out = tmp_path_factory.mktemp("sides") / "sides.json"
    assert main([*SIDES, "--format", "json", "-o", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _named_in(member, production) -> list[str]:
    """The cues of the programme whose who or performers name a role he stands as."""
    sheet, staged = production.sheet, production.staged
    roles = {r for r in sheet.performers if member in members(r, sheet, staged.same)}
    return [c for c in staged.cues if roles & {*sheet.cue(c).who, *sheet.cue(c).performers}]


def test_every_cue_a_person_acts_in_appears_once_in_order(book, xiangshe):
    staged, motion = xiangshe.staged, xiangshe.motion
    order = list(staged.cues)
    assert [p["member"] for p in book["people"]] == ["sishe", "zhongbin#2"]
    for person in book["people"]:
        ids = [c["id"] for c in person["cues"]]
        assert len(ids) == len(set(ids)) and ids == sorted(ids, key=order.index)
        named, walked = _named_in(person["member"], xiangshe), {leg.cue for leg in motion.legs(person["member"])}
        assert set(named) | walked <= set(ids)
        for cue_id in set(ids) - set(named) - walked:  # otherwise only a turn where he stands
            i = order.index(cue_id)
            before, after = (staged.cues[order[i - 1]].stands[person["member"]],
                             staged.cues[cue_id].stands[person["member"]])
            assert before.facing != after.facing and before.point == after.point
        legs = [leg["n"] for c in person["cues"] for leg in c["legs"]]
        assert legs == list(range(1, len(legs) + 1)) == [leg["n"] for leg in person["track"]["legs"]]


def test_a_cue_says_where_he_is_and_goes_what_he_does_and_its_text(book, xiangshe):
    sishe = book["people"][0]
    first = next(c for c in sishe["cues"] if c["legs"])
    cue = xiangshe.sheet.cue(first["id"])
    assert first["action"] == cue.action and first["cite"]["quote"] == cue.cite.quote
    assert first["cite"]["page"] == f"儀禮集釋 {cue.cite.page}" and first["cite"]["layer"] in ("經", "記", "鄭注")
    leg = first["legs"][0]
    assert leg["seconds"] > 0 and leg["to"] == first["stands"] and leg["from"]
    assert first["warning"]["seen"] and first["warning"]["cue"]
    assert first["plate"]["legs"] and first["plate"]["me"]["at"] == leg["route"][-1]
    told = [c for c in sishe["cues"] if c["words"]]
    assert told and all(xiangshe.sheet.cue(c["id"]).words == c["words"] for c in told)
    carried = [t for c in sishe["cues"] for t in c["things"]]
    assert {"how": "carries", "what": "弓", "words": "執弓"} in carried or any(t["what"] == "弓" for t in carried)


def test_an_unknown_person_is_a_usage_error_naming_the_nearest(run):
    code, _, err = run("sides", "xiangshe", "--person", "司射人", "--format", "json")
    assert code == 2 and "司射" in err
    code, _, err = run("sides", "xiangshe", "--format", "json")
    assert code == 2 and "--all" in err
    code, _, err = run("sides", "xiangshe", "--all", "--format", "json", "-o", "x.pdf")
    assert code == 2 and ".json" in err


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("pdftotext") is None or shutil.which("chromium") is None,
                    reason="pdftotext and Chromium print and read the book")
def test_the_pdf_reads_back_every_cue_in_order_none_split_by_a_page_turn(book, tmp_path):
    from yuesheng.cli import main

    out = tmp_path / "sides.pdf"
    assert main([*SIDES, "--paper", "a5", "-o", str(out)]) == 0
    pages = subprocess.run(["pdftotext", "-layout", str(out), "-"], capture_output=True, text=True,
                           check=True).stdout.split("\f")
    text = "".join(pages)
    at = 0
    for person in book["people"]:
        at = text.index(person["label"], at)
        for n, cue in enumerate(person["cues"], start=1):
            at = text.index(f"{n}. {cue['id']}", at)
    for page in pages:  # a cue's header, its warning and its text's page are on one page
        headers = re.findall(r"^\s*\d+\. [a-z0-9-]+ ", page, flags=re.M)
        assert len(headers) == page.count("Warning:") == len(re.findall(r"儀禮集釋 \d+-\d+[ab]", page)), page


@pytest.mark.parametrize(("action", "things"), [
    ("司射適堂西袒決遂取弓于階西兼挾乘矢", [("takes up", "弓"), ("carries", "乘矢")]),
    ("司馬正袒決遂執弓", [("carries", "弓")]),
    ("大夫奠觶于豐上", [("sets down", "觶")]),  # not the 豐: 于 brings in a place
    ("司正適洗洗角觶南面坐奠于中庭", []),
])
def test_the_things_an_action_names_carried_or_handed(action, things):
    from yuesheng.web.sides import named_things

    assert [(t["how"], t["what"]) for t in named_things(action)] == things
