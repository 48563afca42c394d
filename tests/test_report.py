"""The run sheet in text, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.outputs.report import run_sheet_csv, run_sheet_json, run_sheet_text, sections
from yuesheng.timeline import clock
from yuesheng.timeline.archery import Tally

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00"), (75, "1:15"), (3600, "1:00:00"), (3725.4, "1:02:05")])
def test_clock(seconds, text):
    assert clock(round(seconds * 960)) == text


@pytest.mark.parametrize(("right", "left", "words"), [
    (6, 2, "右賢于左2純"), (5, 2, "右賢于左1純1奇"), (3, 2, "右賢于左1奇"), (1, 4, "左賢于右1純1奇"),
    (4, 4, "左右鈞"), (0, 0, "左右鈞"),
])
def test_tally_wording(right, left, words):
    assert Tally("r", right, left).announcement == words


def test_text_run_sheet(golden):
    text = run_sheet_text(golden)
    assert "total 3:48" in text
    assert "round-3: 右 1 算, 左 2 算 — 左賢于右1奇" in text
    assert "0:10     0:05    迎賓" in text and "主人, 賓" in text


def test_sections_are_runs_of_cues(golden):
    assert [(s.name, s.cues) for s in sections(golden)] == [("迎賓", 3), ("樂賓", 2), ("射", 2)]


def test_csv(golden):
    rows = list(csv.DictReader(io.StringIO(run_sheet_csv(golden))))
    assert len(rows) == 7 and rows[0]["cue"] == "bin-ru" and rows[0]["cite_page"] == "5-4a"
    assert rows[1]["kind"] == "金奏" and "樂闋" in rows[1]["action_or_music"]


def test_json_contract(golden):
    data = json.loads(run_sheet_json(golden))
    assert {"rite", "duration_s", "events", "tally"} <= set(data)
    assert data["rite"] == "鄉射禮" and data["duration_s"] == 228.0
    kinds = {e["kind"] for e in data["events"]}
    assert kinds == {"action", "marker", "note", "drum", "release", "call"}
    note = next(e for e in data["events"] if e["kind"] == "note" and e["part"] == "歌")
    assert {"t", "dur", "cue", "part", "midi", "text", "piece", "zhong"} <= set(note) and note["zhong"] == 1
    drum = next(e for e in data["events"] if e["kind"] == "drum" and e["round"])
    assert {"round", "pair", "jie"} <= set(drum)
    release = next(e for e in data["events"] if e["kind"] == "release")
    assert {"round", "pair", "archer", "arrow", "hit", "pierced", "counted"} <= set(release)
    releases = [e for e in data["events"] if e["kind"] == "release"]
    assert all(isinstance(e["pierced"], bool) for e in releases)
    assert all(not e["counted"] or (e["hit"] and e["pierced"]) for e in releases)  # 釋獲如初: 不貫不釋
    call = next(e for e in data["events"] if e["kind"] == "call")
    assert call["degree"] in ("宫", "商") and call["midi"] in (60, 62) and call["part"] == "獲者"
    action = next(e for e in data["events"] if e["kind"] == "action")
    assert action["text"] == "賓入" and action["cite"].startswith("5-4a")
    assert data["tally"] == {"round-3": {"right": 1, "left": 2, "announcement": "左賢于右1奇"}}


def _with_private_use(golden):
    """The golden timeline with a Kanripo private-use code in the first cue's quote, words and action."""
    from dataclasses import replace

    from yuesheng.cuesheet import Cite

    first = golden.cues[0]
    cue = replace(first.cue, cite=Cite("5-4b", "主人阼階上當&KR0925;北面再拜"), words="當&KR0925;",
                  action="當&KR0925;北面")
    events = tuple(e._replace(text="當&KR0925;北面") if e.cue == cue.id and e.text else e for e in golden.events)
    return replace(golden, cues=(replace(first, cue=cue),) + golden.cues[1:], events=events)


def test_run_sheets_show_private_use_codes_as_characters(golden):
    timeline = _with_private_use(golden)
    for render in (run_sheet_text, run_sheet_csv):
        out = render(timeline)
        assert "主人阼階上當楣北面再拜" in out and "&KR" not in out
    data = json.loads(run_sheet_json(timeline))
    first = data["cues"][0]
    assert first["words"] == "當楣" and first["cite"] == "5-4b 主人阼階上當&KR0925;北面再拜"  # the data keeps the code
    assert "&KR" not in json.dumps([e.get("text") for e in data["events"]], ensure_ascii=False)


def test_que_only_where_the_text_writes_it(repertoire):
    from yuesheng.music.repertoire import data_dir
    text = run_sheet_csv(build(load(data_dir("cues") / "dashe.yaml", repertoire=repertoire)))
    what = {r["cue"]: r["action_or_music"] for r in csv.DictReader(io.StringIO(text))}
    assert what["sixia-bin"].endswith("至 yue-que-bin (樂闋)") and what["sixia-gong"].endswith("(樂闋)")  # 9-12a, 9-14b
    assert what["zou-gai"].endswith("至 gong-ru (music ends)") and what["wu-suan-yue"].endswith("(music ends)")
    assert [c for c, w in what.items() if "樂闋" in w and w.startswith("♪")] == ["sixia-bin", "sixia-gong"]


def test_the_run_sheet_shows_the_pieces_by_zhong(repertoire):
    from yuesheng.music.repertoire import data_dir
    text = run_sheet_csv(build(load(data_dir("cues") / "xiangyinjiu.yaml", repertoire=repertoire)))
    row = next(r for r in csv.DictReader(io.StringIO(text)) if r["cue"] == "heyue")
    assert row["action_or_music"] == "♪合樂 關雎+鵲巢 葛覃+采蘩 卷耳+采蘋"
