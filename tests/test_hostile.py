"""Hostile and arbitrary input: a verdict or one clear error, never a traceback, and fast failure.

The CLI runs in-process here (``conftest.run``): an exception yuesheng did not turn into an error propagates out of
``main`` and fails the test, so "never a traceback" needs no assertion of its own; each test asserts the verdict.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yuesheng import build, load
from yuesheng.check.validate import check_cuesheet
from yuesheng.errors import InvalidInputError, InvalidValueError
from yuesheng.music.repertoire import data_dir
from yuesheng.timeline import Options
from yuesheng.yamlload import MAX_BYTES

from hang import time_limit

SHEET = (data_dir("cues") / "xiangshe.yaml").read_text(encoding="utf-8")
LINES = SHEET.splitlines()


def _validate(run, tmp_path, text: str | bytes, name: str = "input.yaml") -> tuple[int, str]:
    """Validate *text* as a file: (exit code, stdout + stderr), after checking the verdict agrees with the code."""
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    code, out, err = run("validate", str(path))
    assert (code, out.split(":")[0]) in ((0, str(path)), (1, str(path))), (code, out, err)
    assert ("INVALID" in out) == (code == 1) and (code == 0 or f"{path}:" in err), (code, out, err)
    return code, out + err


def test_alias_bomb_fails_fast(run, tmp_path):
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for x, y in zip("bcdefghij", "abcdefghi", strict=True):
        bomb += f"{x}: &{x} [*{y},*{y},*{y},*{y},*{y},*{y},*{y},*{y},*{y}]\n"
    with time_limit(10):  # a guard against expansion (once minutes), not a speed test
        code, out = _validate(run, tmp_path, bomb)
    assert code == 1 and "document too large" in out and "[yaml]" in out


def test_recursive_alias_fails_cleanly(run, tmp_path):
    code, out = _validate(run, tmp_path, "a: &a [*a]\n")
    assert code == 1 and "[yaml]" in out


def test_multi_megabyte_file_fails_fast(run, tmp_path):
    with time_limit(10):  # a guard against expansion (once minutes), not a speed test
        code, out = _validate(run, tmp_path, "cues:\n" + "  - x\n" * (3 * MAX_BYTES // 6))
    assert code == 1 and "file larger than" in out


def test_python_object_tag_is_rejected(run, tmp_path):
    code, out = _validate(run, tmp_path, "format: !!python/object/apply:os.system ['echo pwned']\n")
    assert code == 1 and "YAML tag" in out and "not allowed" in out


def test_not_utf8(run, tmp_path):
    code, out = _validate(run, tmp_path, b"format: \xff\xfe\n")
    assert code == 1 and "not UTF-8" in out


@pytest.mark.parametrize("text", ["", "[]", "42", "cues: 3", "format: yuesheng-cues/1\ncues: [1, 2]",
                                  "---\na: 1\n---\nb: 2\n", "? [a, b]\n: c\n"])
def test_odd_documents_are_invalid_not_crashes(run, tmp_path, text):
    code, out = _validate(run, tmp_path, text)
    assert code == 1


@pytest.mark.slow  # a fuzz run over many inputs
@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(run, tmp_path, text):
    _validate(run, tmp_path, text)  # a verdict that agrees with the exit code, or the test fails


_mutation = st.tuples(st.integers(0, len(LINES) - 1),
                      st.sampled_from(["delete", "duplicate", "truncate", "replace", "indent"]),
                      st.text(alphabet="abc: -[]{}&*!1\t宫商", max_size=12))


@pytest.mark.slow  # a fuzz run over many inputs
@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_shipped_sheet_never_crashes(run, tmp_path, mutations):
    lines = list(LINES)
    for index, kind, junk in mutations:
        index %= len(lines)
        if kind == "delete":
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, lines[index])
        elif kind == "truncate":
            lines[index] = lines[index][: len(lines[index]) // 2]
        elif kind == "replace":
            key, _, _ = lines[index].partition(":")
            lines[index] = f"{key}: {junk}"
        else:
            lines[index] = " " + lines[index]
        if not lines:
            lines = [""]
    _validate(run, tmp_path, "\n".join(lines))  # a verdict that agrees with the exit code, or the test fails


# --- the reproducers of issue 13, each with its exit code and message -----------------------------------------

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = (ROOT / "tests" / "data" / "golden.yaml").read_text(encoding="utf-8")
CITE = "cite: {page: 5-4a, quote: 主人以賓揖先入}"


def _yuesheng(*argv: str, env: dict[str, str] | None = None, **streams) -> subprocess.CompletedProcess[str]:
    streams = streams or {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.run([sys.executable, "-m", "yuesheng", *argv], cwd=ROOT, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, **streams)


def _sheet(tmp_path: Path, text: str, name: str = "rite.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _golden_with(old: str, new: str) -> str:
    assert old in GOLDEN
    return GOLDEN.replace(old, new, 1)


# §3 no tracebacks

@pytest.mark.parametrize("argv", [("lu",), ("score", "show", "luming"), ("timeline", "xiangyinjiu"),
                                  ("render", "xiangyinjiu", "-o", "x.mid")])
@pytest.mark.parametrize("note", ["G9", "C-1"])
def test_huangzhong_outside_the_midi_range_is_a_usage_error(run, tmp_path, monkeypatch, argv, note):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(*argv, "--huangzhong", note)
    assert code == 2 and out == "" and "puts the 律 outside the MIDI keys 0–127" in err and "C0 to G#7" in err
    assert list(tmp_path.iterdir()) == []


def test_a_cue_sheet_with_huangzhong_g9_does_not_validate(run, tmp_path):
    path = _sheet(tmp_path, _golden_with("huangzhong: C4", "huangzhong: G9"))
    code, _, err = run("validate", path)
    assert code == 1 and f"{path}:10:15: defaults.huangzhong: 黄鍾 = G9 (MIDI 127) puts the 律 outside" in err


CYCLE = _golden_with("cues:\n", f"variants:\n  va: {{name: 甲, {CITE}}}\n  vb: {{name: 乙, {CITE}}}\ncues:\n").replace(
    "  - id: sixia\n",
    f"  - {{id: xa, section: 迎賓, action: 甲, variant: va, start: {{after: xb}}, duration: 1s, {CITE}}}\n"
    f"  - {{id: xb, section: 迎賓, action: 乙, variant: vb, start: {{after: xa}}, duration: 1s, {CITE}}}\n"
    "  - id: sixia\n", 1)


def test_a_cycle_of_two_variants_together_fails_validate(run, tmp_path):
    path = _sheet(tmp_path, CYCLE)
    code, out, err = run("validate", path)
    assert code == 1 and "INVALID" in out
    assert "cues[1].start: anchors form a cycle (with va, vb on): xa → xb → xa [cycle]" in err


def test_a_cycle_reaching_the_timeline_is_a_clean_error(tmp_path, repertoire):
    sheet, problems = check_cuesheet(_sheet(tmp_path, CYCLE), repertoire)
    assert sheet is not None and [p.rule for p in problems if p.severity == "error"] == ["cycle"]
    with pytest.raises(InvalidInputError, match=r"start: anchors form a cycle \(with va, vb on\): xa → xb → xa"):
        build(sheet, Options(frozenset({"va", "vb"})))  # located in the file, as the commands give it
    assert build(sheet, Options(frozenset({"va"}))).cues  # each alone is fine


def test_a_yaml_integer_of_5000_digits_is_an_error_with_its_place(run, tmp_path):
    path = _sheet(tmp_path, _golden_with("    seed: 1\n", "    seed: " + "9" * 5000 + "\n"))
    code, _, err = run("validate", path)
    assert code == 1 and f"{path}:94:11: archery.shots.seed: number of 5000 characters is too large" in err
    assert "4300" not in err


@pytest.mark.parametrize("field, value, message", [
    ("hit", "1" + "0" * 25, "archery.shots.hit: number 1" + "0" * 25 + " is too large"),
    ("seed", "1" + "0" * 25, "archery.shots.seed: number 1" + "0" * 25 + " is too large"),
    ("hit", "1e999", "archery.shots.hit: expected a number, got a string '1e999'"),
])
def test_a_huge_number_in_a_number_field_is_an_error(run, tmp_path, field, value, message):
    path = _sheet(tmp_path, _golden_with("    seed: 1\n", f"    seed: 1\n    {field}: {value}\n" if field != "seed"
                                         else f"    seed: {value}\n"))
    code, _, err = run("validate", path)
    assert code == 1 and message in err


def test_a_duration_too_large_for_a_float_is_an_error(run, tmp_path):
    path = _sheet(tmp_path, _golden_with("duration: 10s", "duration: " + "9" * 300 + "s"))
    code, _, err = run("validate", path)
    assert code == 1 and f"{path}:30:15: cues[0].duration: duration '99999999999999999999'… is 301 characters" in err
    path = _sheet(tmp_path, _golden_with("duration: 10s", "duration: 49h"))
    code, _, err = run("validate", path)
    assert code == 1 and "cues[0].duration: duration 49h, beyond the limit of the length of a rite" in err


@pytest.mark.parametrize("value, message", [
    ("9" * 300 + "s", "--syllable: duration '99999999999999999999'… is 301 characters long"),
    ("1e400s", "--syllable: bad duration '1e400s'"),
    ("2h", "--syllable 2h: expected longer than 0s and at most 3600s"),
    ("0s", "--syllable 0s: expected longer than 0s"),
])
def test_an_absurd_syllable_is_a_usage_error(run, value, message):
    code, out, err = run("timeline", "xiangyinjiu", "--syllable", value)
    assert code == 2 and out == "" and message in err


READINGS = "readings:\n  lishou-jie:\n    name: 節\n    chosen: '5'\n    options:\n" + "".join(
    f"      '{o}': {{text: {o}}}\n" for o in ("5", "²", "0", "2", "٣")) + "performers:\n"


def test_jie_options_must_be_whole_numbers_of_at_least_four(run, tmp_path):
    path = _sheet(tmp_path, _golden_with("performers:\n", READINGS))
    code, _, err = run("validate", path)
    assert code == 1
    for option in ("²", "0", "2", "٣"):
        expected = f"readings.lishou-jie.options.{option}: option '{option}' of the 節 reading: expected a whole number"
        assert expected in err
    assert "options.5:" not in err


@pytest.mark.parametrize("total, listen, message", [
    (2, -2, "archery.jie.total: 2 節, expected at least 4"), (5, -1, "archery.jie.listen: -1 節 to listen"),
])
def test_jie_counts_that_would_number_jie_below_one_are_errors(run, tmp_path, total, listen, message):
    jie = f"    total: {total}\n    listen: {listen}\n"
    path = _sheet(tmp_path, _golden_with("    total: 5\n    listen: 1\n", jie))
    code, _, err = run("validate", path)
    assert code == 1 and message in err


def test_an_unknown_numeric_looking_reading_option_is_a_usage_error(run):
    code, _, err = run("timeline", "dashe", "--reading", "lishou-jie=²")
    assert code == 2 and "unknown option of reading lishou-jie '²'" in err


@pytest.mark.parametrize("value, suffix, code, message", [
    ("inf", "mid", 2, "'inf' is not a number (ASCII digits"),
    ("1e308", "musicxml", 2, "1e308 beats: expected from 1/64"),
    ("0.0001", "mid", 2, "0.0001 beats: expected from 1/64"),
    ("3.3333", "musicxml", 1, "error: luming: a note of 3.3333 beats cannot be written in MusicXML"),
    ("16", "musicxml", 2, "a MusicXML note is at most a bar of 4/4"),
])
def test_export_note_values_that_cannot_be_written(run, tmp_path, value, suffix, code, message):
    got, out, err = run("score", "export", "luming", "-o", str(tmp_path / f"l.{suffix}"), "--note-value", value)
    assert got == code and out == "" and message in err and list(tmp_path.iterdir()) == []


def test_stdout_that_cannot_encode_chinese():
    result = _yuesheng("timeline", "dashe", env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == ("error: standard output (ascii) cannot encode the Chinese text; "
                             "set PYTHONIOENCODING=utf-8 (or a UTF-8 locale), or write to a file with -o FILE\n")


def test_closed_stdout():
    result = subprocess.run(f"{sys.executable} -m yuesheng timeline dashe >&-", shell=True, cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "error: standard output is closed; write to a file with -o FILE\n"


def test_stdout_on_a_full_disk():
    with open("/dev/full", "w") as full:
        result = _yuesheng("timeline", "dashe", stdout=full, stderr=subprocess.PIPE)
    assert result.returncode == 1
    assert result.stderr == "error: cannot write to standard output: No space left on device\n"


def test_a_broken_pipe_is_quiet():
    result = subprocess.run(f"{sys.executable} -m yuesheng timeline dashe --format json | head -c 1 >/dev/null; "
                            "echo ${{PIPESTATUS[0]}}".format(), shell=True, executable="/bin/bash", cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.stdout in ("0\n", "1\n") and result.stderr == ""  # 0 if it all fitted in the pipe first


# §2 (the part that is about input, not limits): nothing blocks

def test_a_fifo_as_cue_sheet_is_refused_without_blocking(run, tmp_path):
    fifo = tmp_path / "rite.yaml"
    os.mkfifo(fifo)
    with time_limit(10):
        code, _, err = run("validate", str(fifo))
    assert code == 1 and err.startswith(f"{fifo}: not a regular file (a FIFO); yuesheng reads cue sheets and scores")


def test_a_fifo_under_scores_is_refused_without_blocking(run, tmp_path):
    os.mkfifo(tmp_path / "luming.yaml")
    with time_limit(10):
        code, _, err = run("timeline", "xiangyinjiu", "--scores", str(tmp_path))
    assert code == 1 and f"{tmp_path / 'luming.yaml'}: not a regular file (a FIFO)" in err


def test_play_manual_with_stdin_at_eof_stops_with_a_message(run, monkeypatch):
    sent = []

    class Port:
        def send(self, message):
            sent.append(message)

        def close(self):
            pass

    monkeypatch.setattr("yuesheng.outputs.midi.open_output", lambda name: Port())
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with time_limit(20):
        code, _, err = run("play", str(ROOT / "tests" / "data" / "golden.yaml"), "--manual")
    assert code == 1 and "error: standard input ended (end of file): no GO can come" in err
    assert {m.control for m in sent if m.type == "control_change"} >= {120, 123}  # all sound off, all notes off


# §4 nothing silently wrong

def test_zero_seconds_is_a_value_not_the_default(run, tmp_path, repertoire):
    path = _sheet(tmp_path, _golden_with("syllable: 1s", "syllable: 0s"))
    code, _, err = run("validate", path)
    assert code == 1 and f"{path}:8:13: defaults.syllable: syllable must be longer than 0s [duration]" in err
    text = _golden_with("    seed: 1\n", "    seed: 0\n    offset_sd: 0s\n").replace("  tolerance: 250ms\n",
                                                                                 "  tolerance: 250ms\n  change: 0s\n")
    archery = load(_sheet(tmp_path, text), repertoire=repertoire).archery
    assert archery is not None and (archery.offset_sd, archery.change, archery.seed) == (Fraction(0), Fraction(0), 0)


def test_score_check_checks_the_users_piece_even_when_it_fails(run, tmp_path, shipped_score_text):
    (tmp_path / "luming.yaml").write_text(shipped_score_text("luming").replace("mode: 黄鍾宫", "mode: 黄鍾宫宫"),
                                          encoding="utf-8")
    code, out, err = run("score", "check", "luming", "--scores", str(tmp_path))
    assert code == 1 and f"{tmp_path / 'luming.yaml'}:" in err and "0 of 1 scores pass" in out


@pytest.mark.parametrize("files, message", [
    ((), "no score files (*.yaml) in this folder [io]"),
    (("luming.yml",), "no score files (*.yaml) in this folder (found luming.yml: score files must be named *.yaml) "
                      "[io]"),
])
def test_an_empty_or_yml_only_scores_folder_is_an_error(run, tmp_path, files, message):
    for name in files:
        (tmp_path / name).write_text("id: x\n", encoding="utf-8")
    code, _, err = run("score", "list", "--scores", str(tmp_path))
    assert code == 1 and err == f"{tmp_path}: {message}\n"


def test_an_unreadable_scores_folder_is_an_error(run, tmp_path, monkeypatch):
    def refuse(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", refuse)  # root reads any folder: make this one refuse
    code, _, err = run("score", "list", "--scores", str(tmp_path))
    assert code == 1 and err == f"{tmp_path}: cannot read folder: Permission denied [io]\n"


def test_duplicate_ids_in_one_folder_are_an_error(run, tmp_path, shipped_score_text):
    for name in ("luming.yaml", "luming-copy.yaml"):
        (tmp_path / name).write_text(shipped_score_text("luming"), encoding="utf-8")
    code, _, err = run("score", "list", "--scores", str(tmp_path))
    assert code == 1 and "duplicate piece id 'luming'" in err


@pytest.mark.parametrize("argv", [("score", "check"), ("score", "check", "luming"), ("score", "list"),
                                  ("score", "show", "luming"), ("render", "xiangyinjiu", "-o", "{out}")])
def test_duplicate_ids_in_one_folder_are_reported_with_both_files_everywhere(run, tmp_path, shipped_score_text,
                                                                              argv):
    folder = tmp_path / "scores"
    folder.mkdir()
    for name in ("luming.yaml", "luming-copy.yaml"):
        (folder / name).write_text(shipped_score_text("luming"), encoding="utf-8")
    out = str(tmp_path / "x.mid")
    code, _, err = run(*(a.replace("{out}", out) for a in argv), "--scores", str(folder))
    assert code == 1, err
    assert (f"{folder / 'luming.yaml'}: id: duplicate piece id 'luming': {folder / 'luming-copy.yaml'} has it "
            "too") in err, err
    assert not Path(out).exists()


def test_a_sourced_piece_without_notes_is_an_error(run, tmp_path, shipped_score_text):
    text = shipped_score_text("luming")
    (tmp_path / "luming.yaml").write_text(text[: text.index("stanzas:")] + "stanzas: []\n", encoding="utf-8")
    code, _, err = run("score", "check", str(tmp_path / "luming.yaml"))
    assert code == 1 and "stanzas: a sourced piece with no notes" in err


@pytest.mark.parametrize("raw, where, what", [
    ("action: 賓入\x1b[2J", "28:15", "control character U+001B is not allowed in YAML"),
    ("action: \"賓入\\e[2J\\a\"", "28:13", "cues[0].action: control character U+001B in text"),
    ("action: 賓\x07入", "28:14", "control character U+0007 is not allowed in YAML"),
    ("action: 賓\x00入", "28:14", "NUL byte: not a text file"),
])
def test_control_characters_never_pass(run, tmp_path, raw, where, what):
    path = _sheet(tmp_path, _golden_with("action: 賓入", raw))
    code, out, err = run("validate", path)
    assert code == 1 and f"{path}:{where}: " in err and what in err
    assert not any(c in out + err for c in "\x1b\x07\x00")


def test_control_characters_from_the_command_line_are_escaped(run, tmp_path):
    code, _, err = run("timeline", "xiangyinjiu", "--variant", "\x1b[2J")
    assert code == 2 and "\x1b" not in err and "\\x1b[2J" in err
    code, out, _ = run("timeline", "xiangyinjiu", "-o", str(tmp_path / "a\x07b.txt"))
    assert code == 0 and "\x07" not in out and "a\\x07b.txt" in out


@pytest.mark.parametrize("encoding, where, what", [
    ("utf-16", "1:1", "not UTF-8 text: the file is UTF-16 (a byte-order mark"),
    ("utf-16-le", "1:1", "not UTF-8 text: the file is UTF-16 (a byte-order mark or a zero byte beside every letter)"),
    ("gbk", "1:84", "not UTF-8 text (bytes f1 ee 20 73; perhaps GBK or Big5): save it as UTF-8 [yaml]"),
    ("big5", "1:84", "not UTF-8 text (bytes bd a2 20 73; perhaps GBK or Big5): save it as UTF-8 [yaml]"),
])
def test_other_encodings_are_reported_with_line_and_column(run, tmp_path, encoding, where, what):
    path = tmp_path / "rite.yaml"
    path.write_bytes(GOLDEN.encode(encoding, errors="replace"))
    assert GOLDEN.splitlines()[0][83] == "耦"  # line 1, column 84: the first character that is not ASCII
    code, _, err = run("validate", str(path))
    assert code == 1 and err.startswith(f"{path}:{where}: {what}")


def test_validate_problems_go_to_stderr_and_json_to_stdout(run, tmp_path):
    path = _sheet(tmp_path, _golden_with("duration: 10s", "duration: 10"))
    code, out, err = run("validate", path)
    assert code == 1 and out == f"{path}: INVALID — 6 cues, 4 error(s), 0 warning(s)\n"
    assert err.startswith(f"{path}:30:15: cues[0].duration: bare number 10")
    code, out, err = run("validate", path, "--format", "json")
    assert code == 1 and err == "" and json.loads(out)[0]["errors"][0]["line"] == 30


def test_play_checks_from_before_opening_a_port(run, monkeypatch):
    opened = []
    monkeypatch.setattr("yuesheng.outputs.midi.open_output", lambda name: opened.append(name))
    code, _, err = run("play", str(ROOT / "tests" / "data" / "golden.yaml"), "--from", "bin-r")
    assert code == 2 and "unknown cue 'bin-r' — did you mean 'bin-ru' or 'bai-zhi'?" in err and opened == []


def test_audio_checks_the_output_folder_before_rendering(run, tmp_path, monkeypatch):
    rendered = []
    monkeypatch.setattr("yuesheng.outputs.audio.render", lambda *a, **k: rendered.append(a))
    code, _, err = run("audio", "xiangyinjiu", "-o", str(tmp_path / "none" / "x.wav"))
    assert code == 1 and "no such folder" in err and rendered == []
    code, _, err = run("audio", "xiangyinjiu", "-o", str(tmp_path))
    assert code == 2 and "expected a .flac, .wav, .ogg, .opus file" in err and rendered == []


# --- properties: any value of a numeric option ends in 0, 1 or 2, never a traceback ------------------------------

GOLDEN_PATH = str(ROOT / "tests" / "data" / "golden.yaml")
_NUMBERISH = st.text(alphabet="0123456789.-+eEinfa ²٣#bCDG", max_size=10)
_fast = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _no_traceback(run, *argv: str) -> tuple[int, str, str]:
    """Run in-process (an unexpected exception fails the test) and check the outcome is one the README documents:
    0 with output and no error line, 1 with an ``error:`` or ``file:line`` line, 2 with one ``usage error:`` line."""
    with time_limit(30):
        code, out, err = run(*argv)
    lines = err.strip().splitlines()
    if code == 0:
        assert out and not any(line.startswith(("error:", "usage error:")) for line in lines), (argv, err)
    elif code == 2:
        assert len(lines) == 1 and lines[0].startswith("usage error: "), (argv, err)
    else:
        assert code == 1 and lines and not lines[-1].startswith("usage error"), (argv, err)
    return code, out, err


def _tiny_syllable(text: str) -> bool:
    """A syllable under 50 ms asks for more events than a property test should build (a limit of its own)."""
    from yuesheng.cuesheet import parse_duration

    try:
        return parse_duration(text) < 0.05
    except InvalidValueError:
        return False


@pytest.mark.slow  # a fuzz run over many inputs
@_fast
@given(st.one_of(_NUMBERISH.map(lambda t: t + "s"), _NUMBERISH.map(lambda t: t + "ms"), _NUMBERISH))
def test_any_syllable(run, text):
    if _tiny_syllable(text):
        return
    code, out, err = _no_traceback(run, "timeline", GOLDEN_PATH, "--syllable", text)
    assert code == 0 or "--syllable" in err or "beyond the limit of the length of a rite" in err


@pytest.mark.slow  # a fuzz run over many inputs
@_fast
@given(st.one_of(_NUMBERISH, st.tuples(st.sampled_from("CDEFGAB"), st.sampled_from(["", "#", "b"]),
                                       st.integers(-3, 12)).map(lambda t: f"{t[0]}{t[1]}{t[2]}")))
def test_any_huangzhong(run, text):
    code, _, err = _no_traceback(run, "lu", "--huangzhong", text)
    assert code == 0 or "--huangzhong" in err
    _no_traceback(run, "timeline", GOLDEN_PATH, "--huangzhong", text)


@pytest.mark.slow  # a fuzz run over many inputs
@_fast
@given(st.one_of(_NUMBERISH, st.floats(allow_nan=True, allow_infinity=True).map(repr)))
def test_any_note_value(run, tmp_path, text):
    code, _, err = _no_traceback(run, "score", "export", "luming", "-o", str(tmp_path / "l.mid"), "--note-value", text)
    assert code == 0 or "--note-value" in err


@pytest.mark.slow  # a fuzz run over many inputs
@_fast
@given(st.one_of(_NUMBERISH, st.integers(-2**70, 2**70).map(str)))
def test_any_seed(run, text):
    code, _, err = _no_traceback(run, "timeline", GOLDEN_PATH, "--seed", text)
    assert code == 0 or "--seed" in err


@pytest.mark.slow  # a fuzz run over many inputs
@_fast
@given(st.one_of(_NUMBERISH, st.floats().map(repr)))
def test_any_guard(run, text):
    code, _, err = _no_traceback(run, "play", "--guard", text)
    assert code == 2  # with no CUE, after --guard is parsed


@pytest.mark.slow  # a fuzz run over many inputs
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(_NUMBERISH, st.integers(-10, 10).map(str)))
def test_any_jie_reading(run, text):
    code, _, err = _no_traceback(run, "timeline", "dashe", "--reading", f"lishou-jie={text}")
    assert code == 0 or "reading lishou-jie" in err


# -- issue 22 §6: bidirectional controls never reach the terminal raw ------------------------------------------------

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_bidi_controls_are_escaped_like_other_control_characters():
    from yuesheng.text import visible

    assert visible(f"a{BIDI}b") == "a" + "".join(f"\\u{ord(c):04x}" for c in BIDI) + "b"
    assert visible("鹿鳴 \u05d0\u05d1 ok\t\n") == "鹿鳴 \u05d0\u05d1 ok\t\n"  # right-to-left letters are text


def test_a_right_to_left_override_in_a_sheet_reaches_the_terminal_escaped(run, tmp_path):
    mini = (Path(__file__).parent / "data" / "mini_xiangyin.yaml").read_text(encoding="utf-8")
    text = mini.replace("action: 工四人二瑟 工入升自西階", "action: 工四人\u202e二瑟")
    path = tmp_path / "rtl.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("timeline", str(path))
    assert code == 0 and "\u202e" not in out + err and "工四人\\u202e二瑟" in out


# -- issue 22 §6: what was coerced or let pass is now said -----------------------------------------------------------

def test_an_alias_that_is_not_text_is_an_error_at_its_place(run, tmp_path, shipped_score_text):
    path = tmp_path / "luming.yaml"
    path.write_text(shipped_score_text("luming").replace("aliases: [", "aliases: [123, "), encoding="utf-8")
    code, out, err = run("score", "check", str(path))
    assert code == 1 and "aliases[0]: alias 123: expected text, got an integer [schema]" in out + err, out + err


def test_a_cue_with_the_same_variant_and_unless_is_an_error(run, tmp_path):
    text = (Path(__file__).parent / "data" / "mini_xiangyin.yaml").read_text(encoding="utf-8")
    path = tmp_path / "rite.yaml"
    path.write_text(text.replace("  - id: xi-dashi\n", "  - id: xi-dashi\n    unless: da-shi\n"), encoding="utf-8")
    code, out, err = run("validate", str(path))
    assert code == 1
    assert "unless 'da-shi' is on whenever variant 'da-shi' is: the cue would never be in the programme" in out + err
