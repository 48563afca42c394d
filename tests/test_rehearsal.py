"""Rehearsal timing: the log survives kill -9 whole, retime gives medians, --timing replaces the estimates."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.errors import InvalidInputError
from yuesheng.live.rehearsal import Measured, Take, load_timing, outliers, read_log, retime, timing_yaml
from yuesheng.live.showlog import Log
from yuesheng.timeline import Measurement, Timeline

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden.yaml"  # actions bin-ru (10 s), bai-zhi (5 s), zhengge-bei (5 s)


@pytest.fixture(scope="module")
def sheet(repertoire):
    return load(GOLDEN, repertoire=repertoire)


def _log(path: Path, entries: list[tuple[str, str, float]], rite: str = "golden") -> Path:
    log = Log(path)
    log.write("session", 0.0, rite=rite, variants=[], readings={})
    for event, cue, mono in entries:
        log.write(event, mono, cue=cue, source="page")
    log.close()
    return path


def test_each_entry_is_one_json_line_with_wall_and_monotonic_time(tmp_path):
    path = _log(tmp_path / "a.jsonl", [("go", "bin-ru", 1.5)])
    first, second = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    assert first["event"] == "session" and first["rite"] == "golden"
    assert second["event"] == "go" and second["cue"] == "bin-ru" and second["mono"] == 1.5
    assert second["source"] == "page" and second["wall"].endswith("+00:00")


def test_a_log_written_under_kill_9_has_only_whole_lines(tmp_path):
    path = tmp_path / "killed.jsonl"
    writer = ("import sys, itertools\nfrom yuesheng.live.showlog import Log\nlog = Log(sys.argv[1])\n"
              "for n in itertools.count():\n"
              "    log.write('go', float(n), cue='bin-ru', source='pedal', pad='x' * 300)\n")
    process = subprocess.Popen([sys.executable, "-c", writer, str(path)], cwd=Path(__file__).parent.parent)
    deadline = time.monotonic() + 20
    while (not path.exists() or path.stat().st_size < 200_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait()
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and len(text) >= 200_000
    monos = [json.loads(line)["mono"] for line in text.splitlines()]
    assert monos == [float(n) for n in range(len(monos))]


def _beyond(timeline: Timeline, action: str, following: str) -> float:
    """What the plan puts between *action*'s end and the *following* action's start (music that follows it)."""
    t = {c.cue.id: c for c in timeline.cues}
    return (t[following].start_tick - t[action].end_tick) / 960


def test_retime_gives_each_actions_median_over_the_logs_an_outlier_dropped(tmp_path, sheet):
    timeline = build(sheet)
    music = _beyond(timeline, "bai-zhi", "zhengge-bei")  # bai-zhi's GO interval holds the 合樂 too
    logs = [read_log(_log(tmp_path / f"{n}.jsonl", [("go", "bin-ru", 100.0), ("go", "bai-zhi", 100.0 + a),
                                                      ("go", "zhengge-bei", 100.0 + a + b + music)]), sheet)[0]
            for n, (a, b) in enumerate([(12.0, 5.5), (14.0, 6.5), (30.0, 4.0)])]
    measured = retime(timeline, logs, names=["0.jsonl", "1.jsonl", "2.jsonl"])
    assert measured["bai-zhi"] == Measured(Fraction("5.5"), 3, Fraction("2.5"))  # 4 to 6.5 s: none lies out
    # bin-ru: 12, 14 and 30 s. The median is 14, the deviations 2, 0 and 16, their median (the MAD) 2: 30 s lies
    # 16 s out, over 3 × 1.4826 × 2 = 8.9 s and over 10 % of 14 s, so it is dropped (it was the median's n = 3)
    outlier = Take("bin-ru", Fraction(30), "2.jsonl", 2, 1)
    assert measured["bin-ru"] == Measured(Fraction(13), 2, Fraction(2), (outlier,))


@pytest.mark.parametrize("seconds, dropped", [
    ((60, 61, 120), [120]),
    ((60, 61), []),  # two takes: nothing to tell which is out
    ((60, 60, 60, 65), []),  # within 10 % of the median: kept, however alike the others are
    ((60, 60, 60, 70), [70]),
    ((100, 101, 99, 102, 98, 10), [10]),  # a take cut short by a forgotten GO
    ((50, 70, 90), []),  # wide scatter, no outlier
])
def test_the_outlier_rule(seconds, dropped):
    takes = [Take("bin-ru", Fraction(s), "a.jsonl", n, 1) for n, s in enumerate(seconds, 2)]
    assert [t.seconds for t in outliers(takes)] == dropped


def test_a_jump_breaks_a_measurement(tmp_path, sheet):
    music = _beyond(build(sheet), "bai-zhi", "zhengge-bei")
    log = read_log(_log(tmp_path / "j.jsonl", [("go", "bin-ru", 0.0), ("goto", "bai-zhi", 5.0), ("go", "bai-zhi", 9.0),
                                                ("go", "zhengge-bei", 15.0 + music)]), sheet)[0]
    assert retime(build(sheet), [log]) == {"bai-zhi": Measured(Fraction(6), 1, Fraction(0))}


@pytest.mark.parametrize("line, message", [
    ("{not json", ":2: not a JSON object"),
    ("[" * 100_000, ":2: not a JSON object"),  # nested past the parser's recursion: an error, not a traceback
    ('{"event": "go", "cue": "nosuch", "mono": 3}', ":2: unknown cue 'nosuch'"),
    ('{"event": "jump", "cue": "bin-ru", "mono": 3}', ":2: event 'jump'"),
    ('{"event": "go", "cue": "bin-ru", "mono": "soon"}', ":2: mono 'soon'"),
])
def test_a_log_that_does_not_fit_is_an_error_with_the_line(tmp_path, sheet, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"event": "session", "rite": "golden", "mono": 0}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(")):
        read_log(path, sheet)


def test_time_going_backwards_is_an_error(tmp_path, sheet):
    path = _log(tmp_path / "b.jsonl", [("go", "bin-ru", 10.0), ("go", "bai-zhi", 4.0)])
    with pytest.raises(InvalidInputError, match=r"b.jsonl:3: time goes backwards \(4.0 after 10.0\)"):
        read_log(path, sheet)


def test_a_log_of_another_rite_is_refused(tmp_path, sheet):
    with pytest.raises(InvalidInputError, match="a log of rite 'dashe', not of 'golden'"):
        read_log(_log(tmp_path / "d.jsonl", [], rite="dashe"), sheet)


def test_timing_overlay_round_trips_and_replaces_the_estimates(tmp_path, sheet):
    path = tmp_path / "timing.yaml"
    measured = {"bin-ru": Measured(Fraction("14.25"), 3, Fraction("1.5"))}
    path.write_text(timing_yaml("golden", measured), encoding="utf-8")
    assert load_timing(path, sheet) == {"bin-ru": Measurement(Fraction("14.25"), 3, Fraction("1.5"))}
    from yuesheng.timeline import Options

    plain = {t.cue.id: t for t in build(sheet).cues}
    timed = {t.cue.id: t for t in build(sheet, Options(timing=load_timing(path, sheet))).cues}
    assert timed["bin-ru"].end_tick - timed["bin-ru"].start_tick == 14250 * 960 // 1000
    assert timed["bin-ru"].estimate_ticks == 10 * 960 and plain["bin-ru"].estimate_ticks is None
    assert timed["bai-zhi"].start_tick == plain["bai-zhi"].start_tick + round(4.25 * 960)


def test_the_run_sheets_show_how_many_takes_and_their_spread(tmp_path, sheet):
    """Issue 17 §5: the median, with how many takes it is of and how far they spread."""
    import json

    from yuesheng.outputs.report import run_sheet_csv, run_sheet_json, run_sheet_text
    from yuesheng.timeline import Options

    path = tmp_path / "timing.yaml"
    measured = {"bin-ru": Measured(Fraction("14.25"), 3, Fraction("1.5"))}
    path.write_text(timing_yaml("golden", measured), encoding="utf-8")
    timeline = build(sheet, Options(timing=load_timing(path, sheet)))
    row = next(line for line in run_sheet_text(timeline).splitlines() if " bin-ru " in line)
    assert row.split()[2:4] == ["0:10", "3"] and "3 range 1.5s" in row  # the estimate replaced, takes, range
    cue = next(c for c in json.loads(run_sheet_json(timeline))["cues"] if c["cue"] == "bin-ru")
    assert (cue["estimate_s"], cue["takes"], cue["spread_s"]) == (10.0, 3, 1.5)
    assert ",10.000,3,1.500" in next(line for line in run_sheet_csv(timeline).splitlines() if ",bin-ru," in line)


@pytest.mark.parametrize("text, message", [
    ("format: yuesheng-timing/1\nrite: golden\ndurations:\n  nosuch: {duration: 3s, n: 1}\n",
     ":4:3: .*unknown action 'nosuch'"),
    ("format: yuesheng-timing/1\nrite: golden\ndurations:\n  ge: {duration: 3s, n: 1}\n",
     ":4:3: .*unknown action 'ge'"),
    ("format: yuesheng-timing/1\nrite: golden\ndurations:\n  bin-ru: {duration: soon, n: 1}\n",
     ":4:.*bad duration 'soon'"),
    ("format: yuesheng-timing/1\nrite: dashe\ndurations: {}\n", ":2:7: .*timing of rite 'dashe'"),
    ("format: yuesheng-timing/1\nrite: golden\ndurations:\n  bin-ru: {duration: 3s, n: 0}\n",
     ":4:.*n 0: expected the number of takes"),
    ("format: yuesheng-timing/1\nrite: golden\ndurations:\n  bin-ru: {duration: 3s, n: 2, spread: wide}\n",
     ":4:.*bad duration 'wide'"),
])
def test_a_bad_timing_file_is_an_error_with_its_place(tmp_path, sheet, text, message):
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError, match=message):
        load_timing(path, sheet)


def test_retime_and_timing_on_the_command_line(run, tmp_path):
    logs = [_log(tmp_path / f"{n}.jsonl", [("go", "bin-ru", 0.0), ("go", "bai-zhi", float(s))])
            for n, s in enumerate((20, 24))]
    out_file = tmp_path / "timing.yaml"
    code, out, err = run("retime", str(GOLDEN), "--log", str(logs[0]), "--log", str(logs[1]), "-o", str(out_file))
    assert code == 0, err
    assert "bin-ru: {duration: 22s, n: 2, spread: 4s}" in out_file.read_text(encoding="utf-8")
    code, out, _ = run("timeline", str(GOLDEN), "--timing", str(out_file))
    assert code == 0 and "measured in rehearsal" in out
    row = next(line for line in out.splitlines() if " bin-ru " in line)
    assert row.split()[1:3] == ["0:22", "0:10"]  # measured, then the estimate it replaced
    code, out, _ = run("timeline", str(GOLDEN), "--timing", str(out_file), "--format", "csv")
    assert code == 0 and out.splitlines()[0].endswith(",estimate_s,takes,spread_s,duration_basis")


def test_retime_drops_takes_by_hand_by_line_or_session_and_reports_outliers(run, tmp_path):
    path = tmp_path / "r.jsonl"
    log = Log(path)
    for seconds in (20, 21, 60, 22):  # four sessions, one take of bin-ru each
        log.write("session", 0.0, rite="golden", variants=[], readings={})
        log.write("go", 1.0, cue="bin-ru", source="page")
        log.write("go", 1.0 + seconds, cue="bai-zhi", source="page")
    log.close()
    code, out, err = run("retime", str(GOLDEN), "--log", str(path))
    assert code == 0 and "bin-ru: {duration: 21s, n: 3, spread: 2s, dropped: 1}" in out
    assert f"retime: bin-ru: dropped the take of 60s ({path}:8, session 3), far from the median 21s" in err
    code, out, err = run("retime", str(GOLDEN), "--log", str(path), "--exclude", f"{path}:session4",
                         "--exclude", f"{path}:2")  # line 2: the first session's GO of bin-ru
    assert code == 0 and "bin-ru: {duration: 40.5s, n: 2, spread: 39s}" in out and err == ""  # 2 takes: no rule
    for bad in (f"{path}:3", f"{path}:session9", "other.jsonl:2", f"{path}:x"):
        code, _, err = run("retime", str(GOLDEN), "--log", str(path), "--exclude", bad)
        assert code == 2 and f"--exclude {bad}" in err.replace("'", "")


def test_retime_with_a_bad_log_exits_1_naming_the_line(run, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "go", "cue": "nosuch", "mono": 1}\n', encoding="utf-8")
    code, _, err = run("retime", str(GOLDEN), "--log", str(bad))
    assert code == 1 and "bad.jsonl:1: unknown cue 'nosuch'" in err


def test_a_stop_or_fade_before_the_first_go_is_part_of_a_log(tmp_path, sheet):
    path = _log(tmp_path / "s.jsonl", [("fade", "", 1.0), ("stop", "", 2.0), ("go", "bin-ru", 3.0)])
    entries, _ = read_log(path, sheet)
    assert [(e.event, e.cue) for e in entries] == [("session", ""), ("fade", ""), ("stop", ""), ("go", "bin-ru")]


def test_a_new_session_in_the_same_log_breaks_a_measurement_and_may_restart_the_clock(tmp_path, sheet):
    path = _log(tmp_path / "two.jsonl", [("go", "bin-ru", 500.0)])
    log = Log(path)  # a second console session, after a reboot: its monotonic clock starts lower
    log.write("session", 10.0, rite="golden", variants=[], readings={})
    log.write("go", 20.0, cue="bai-zhi", source="page")
    log.close()
    entries, _ = read_log(path, sheet)
    assert retime(build(sheet), [entries]) == {}  # bin-ru's GO and bai-zhi's are hours and a session apart


def test_retime_measures_against_the_programme_the_log_played(run, tmp_path):
    path = tmp_path / "y.jsonl"
    log = Log(path)
    log.write("session", 0.0, rite="yanli", variants=["nosuch"], readings={})
    log.close()
    code, _, err = run("retime", "yanli", "--log", str(path))
    assert code == 1 and "unknown variant 'nosuch'" in err
    other = _log(tmp_path / "o.jsonl", [], rite="yanli")
    code, _, err = run("retime", "yanli", "--log", str(path), "--log", str(other))
    assert code == 2 and "different programmes" in err


def test_a_log_that_is_a_device_or_fifo_is_refused_without_reading(run, tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/zero", str(fifo)):
        code, _, err = run("retime", str(GOLDEN), "--log", target)
        assert code == 1 and "not a regular file" in err


def test_retime_of_a_file_with_no_session_line_exits_1_and_writes_nothing(run, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")  # a log never written, or the wrong file: not an empty timing file
    out_file = tmp_path / "t.yaml"
    code, out, err = run("retime", str(GOLDEN), "--log", str(empty), "-o", str(out_file))
    assert code == 1 and f"{empty}: no session line: not a console log" in err and not out_file.exists()


def test_a_fast_run_through_keeps_the_music_step_and_warns_of_a_take_of_no_time(run, tmp_path, sheet):
    """Issue 31 §4–5: bai-zhi's GO, 合樂 following by itself (the console's GO: the plan, not a measurement), and
    zhengge-bei's GO before 合樂 had ended: a take of less than no time, warned and dropped, never written as 0 s;
    a GO of the music the operator gave ends bai-zhi's take. The timing written keeps every GO point and its number."""
    from yuesheng.live.cueing import go_points
    from yuesheng.timeline import Options

    path = tmp_path / "fast.jsonl"
    log = Log(path)
    for ge_source, ge_at in (("auto", 10.0), ("page", 7.5)):  # two sessions: the music following, then GOne early
        log.write("session", 0.0, rite="golden", variants=[], readings={})
        log.write("go", 1.0, cue="bin-ru", source="page")
        log.write("go", 5.0, cue="bai-zhi", source="page")
        log.write("go", ge_at, cue="ge", source=ge_source)
        log.write("go", 12.0, cue="zhengge-bei", source="page")
    log.close()
    code, out, err = run("retime", str(GOLDEN), "--log", str(path))
    assert code == 0, err
    music = _beyond(build(sheet), "bai-zhi", "zhengge-bei")
    assert f"retime: bai-zhi: dropped the take of {7 - music:g}s ({path}:3, session 1): no time or less" in err
    assert "bai-zhi: {duration: 2.5s, n: 1, spread: 0s}" in out  # 5 → 7.5 s, the GO of 合樂 the operator gave
    assert "0s," not in out.replace("spread: 0s", "")
    timing = tmp_path / "timing.yaml"
    timing.write_text(out, encoding="utf-8")
    timed = build(sheet, Options(timing=load_timing(timing, sheet)))
    assert [t.cue.id for t in go_points(timed, 0, music=True)] == [t.cue.id for t in go_points(build(sheet), 0,
                                                                                                 music=True)]


def test_logs_of_different_plans_are_refused_with_the_plans_named_unless_mixed_plans(run, tmp_path):
    logs = []
    for n, plan in enumerate(("aaaa", "bbbb")):
        log = Log(tmp_path / f"{n}.jsonl")
        log.write("session", 0.0, rite="golden", variants=[], readings={}, plan=plan)
        log.write("go", 1.0, cue="bin-ru", source="page")
        log.write("go", 21.0 + n, cue="bai-zhi", source="page")
        log.close()
        logs += ["--log", str(tmp_path / f"{n}.jsonl")]
    code, _, err = run("retime", str(GOLDEN), *logs)
    assert code == 2 and "different plans" in err
    assert f"plan aaaa at {tmp_path / '0.jsonl'}:1, plan bbbb at {tmp_path / '1.jsonl'}:1" in err
    code, out, err = run("retime", str(GOLDEN), *logs, "--mixed-plans")
    assert code == 0 and "bin-ru: {duration: 20.5s, n: 2, spread: 1s}" in out


def test_the_time_paused_is_left_out_of_a_take(tmp_path, sheet):
    music = _beyond(build(sheet), "bai-zhi", "zhengge-bei")
    entries = [("go", "bin-ru", 0.0), ("go", "bai-zhi", 9.0), ("pause", "bai-zhi", 10.0), ("level", "", 11.0),
               ("resume", "bai-zhi", 14.0), ("go", "zhengge-bei", 19.0 + music)]
    log = read_log(_log(tmp_path / "p.jsonl", entries), sheet)[0]
    assert retime(build(sheet), [log])["bai-zhi"] == Measured(Fraction(6), 1, Fraction(0))  # 10 s less 4 s paused
