"""The command line, in-process: output, JSON contracts, exit codes."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


def test_lu_table_text(run):
    code, out, _ = run("lu")
    assert code == 0
    assert "黄鍾 = C4 (MIDI 60)" in out
    row = next(line for line in out.splitlines() if line.startswith("南 "))
    assert "工上" in row and " 69 " in row and "440.00" in row


def test_lu_table_json_sanfen_on_d(run):
    code, out, _ = run("lu", "--tuning", "sanfen", "--huangzhong", "D4", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["tuning"] == "sanfen"
    rows = {r["lu"]: r for r in data["lu"]}
    assert rows["黄"]["midi"] == 62 and rows["黄清"]["suzi"] == "六"
    assert rows["仲"]["cents"] == 21.51 and rows["仲"]["midi"] == 67
    assert len(data["lu"]) == 24


def test_bad_huangzhong_is_a_usage_error(run):
    code, _, err = run("lu", "--huangzhong", "H9")
    assert code == 2 and "--huangzhong" in err


def test_unknown_subcommand_is_a_usage_error(run):
    code, _, err = run("scor")
    assert code == 2 and "usage error" in err


def test_score_list_json(run):
    code, out, _ = run("score", "list", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 26
    luming = next(r for r in rows if r["id"] == "luming")
    assert luming == {"id": "luming", "title": "鹿鳴", "mode": "黄鍾宫", "provenance": "sourced", "stanzas": 3,
                      "notes": 103}
    assert next(r for r in rows if r["id"] == "nangai")["provenance"] == "lost (modern realization)"


def test_score_show_text_rows(run):
    code, out, _ = run("score", "show", "鹿鸣")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("鹿鳴 (luming) — 黄鍾宫")
    assert any(line.startswith("  詞  呦   呦   鹿   鳴") for line in lines)
    assert any(line.startswith("  音  C5   A4   F#4  E4") for line in lines)


def test_score_show_json_contract(run):
    code, out, _ = run("score", "show", "luming", "--format", "json", "--huangzhong", "D4", "--tuning", "sanfen")
    data = json.loads(out)
    assert code == 0
    assert {"id", "title", "mode", "provenance", "source", "emendations", "stanzas"} <= set(data)
    first = data["stanzas"][0]
    assert first["lyrics"].startswith("呦呦鹿鳴")
    assert first["notes"][0] == {"lyric": "呦", "lu": "黄", "suzi": "六", "pitch": "黄清", "midi": 74, "cents": 0.0}
    assert first["notes"][6]["cents"] == 3.91  # 太簇 in 三分損益
    assert data["emendations"][0]["adopted"] == "太"


def test_score_show_a_lost_piece_says_so(run):
    code, out, _ = run("score", "show", "南陔")
    assert code == 0 and "Modern realization: " in out and "今亡" in out


def test_score_show_keeps_the_case_of_a_realization_label(run, tmp_path, shipped_score_text):
    (tmp_path / "nangai.yaml").write_text(shipped_score_text("nangai").replace(
        "label: modern realization", "label: after ZHU Zaiyu"), encoding="utf-8")
    code, out, _ = run("score", "show", "nangai", "--scores", str(tmp_path))
    assert code == 0 and "After ZHU Zaiyu: " in out


def test_score_show_unknown_piece_exits_1_with_a_suggestion(run):
    code, _, err = run("score", "show", "鹿明")
    assert code == 1 and "did you mean" in err


def test_score_check_is_clean(run):
    code, out, _ = run("score", "check")
    assert code == 0
    assert "26 of 26 scores pass" in out
    assert "emendation: stanza 1 lu position 31: 大 → 太" in out


def test_score_check_a_broken_file_exits_1_and_names_it(run, tmp_path, shipped_score_text):
    bad = tmp_path / "simu.yaml"
    bad.write_text(shipped_score_text("simu").replace("lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑南黄"), encoding="utf-8")
    code, out, err = run("score", "check", str(bad))
    assert code == 1
    assert f"{bad}:" in err and "[agree]" in err and "0 of 1 scores pass" in out


def test_score_check_by_title(run):
    code, out, _ = run("score", "check", "采蘋", "yuli")
    assert code == 0 and "2 of 2 scores pass" in out


def test_a_users_score_replaces_the_shipped_realization(run, tmp_path, shipped_score_text):
    mine = tmp_path / "nangai.yaml"
    mine.write_text(shipped_score_text("nangai").replace("label: modern realization", "label: my realization"),
                    encoding="utf-8")
    code, out, _ = run("score", "list", "--scores", str(tmp_path), "--format", "json")
    assert code == 0
    assert next(r for r in json.loads(out) if r["id"] == "nangai")["provenance"] == "lost (my realization)"


def test_missing_user_score_path_exits_1(run, tmp_path):
    code, _, err = run("score", "list", "--scores", str(tmp_path / "nope"))
    assert code == 1 and "no such score file" in err


def test_export_refuses_an_unknown_suffix(run, tmp_path):
    code, _, err = run("score", "export", "luming", "-o", str(tmp_path / "x.pdf"))
    assert code == 2 and ".musicxml" in err
    assert not (tmp_path / "x.pdf").exists()


def test_export_midi_with_lyrics(run, tmp_path):
    import mido

    out = tmp_path / "luming.mid"
    code, _, _ = run("score", "export", "鹿鳴", "-o", str(out), "--tuning", "sanfen")
    assert code == 0
    midi = mido.MidiFile(out, charset="utf-8")
    lyrics = [m.text for t in midi.tracks for m in t if m.type == "lyrics"]
    assert "".join(lyrics).startswith("呦呦鹿鳴") and len(lyrics) == 103
    assert any(m.type == "sysex" for m in midi.tracks[0])


@pytest.mark.parametrize(("value", "seconds"), [("1", 1.5), ("0.5", 0.75), ("2", 3.0)])
def test_export_midi_sounds_at_the_engraved_tempo(run, tmp_path, value: str, seconds: float):
    """The engraved score says ♩ = 40 (a syllable every 1.5 s); the MIDI export sounded a syllable a second."""
    import mido

    out = tmp_path / "luming.mid"
    assert run("score", "export", "鹿鳴", "-o", str(out), "--note-value", value)[0] == 0
    midi, now, onsets = mido.MidiFile(out, charset="utf-8"), 0.0, []
    for message in midi:  # playback order, each message's time in seconds since the one before
        now += message.time
        if message.type == "note_on" and message.velocity:
            onsets.append(now)
    steps = {round(b - a, 3) for a, b in zip(onsets, onsets[1:], strict=False)}
    assert len(onsets) == 103 and steps == {seconds}


@pytest.mark.parametrize("argv", [("--help",), ("score", "--help")])
def test_help_exits_0(run, argv):
    assert run(*argv)[0] == 0


def test_timeline_text_by_rite_id(run):
    code, out, _ = run("timeline", "xiangyinjiu")
    assert code == 0 and out.startswith("鄉飲酒禮 (xiangyinjiu) — run sheet") and "sections" in out


def test_timeline_json_to_file(run, tmp_path):
    path = tmp_path / "run.json"
    code, out, _ = run("timeline", "cues/xiangshe.yaml", "--format", "json", "-o", str(path), "--seed", "3")
    assert code == 0 and "wrote" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["rite"] == "鄉射禮" and set(data["tally"]) == {"round-2", "round-3"}


def test_timeline_csv(run):
    code, out, _ = run("timeline", "yanli", "--format", "csv", "--variant", "yi-yue-na-bin")
    assert code == 0 and out.splitlines()[0].startswith("start,start_s,duration_s,section,cue")


@pytest.mark.parametrize("argv", [("--variant", "nosuch"), ("--reading", "heyue"), ("--reading", "heyue=nosuch"),
                                  ("--syllable", "1:30"), ("--huangzhong", "X9"), ("--tuning", "just"),
                                  ("--call-jun", "黄中")])
def test_timeline_bad_options_are_usage_errors(run, argv):
    code, _, err = run("timeline", "yanli", *argv)
    assert code == 2, err


def test_timeline_of_a_missing_file_exits_1(run, tmp_path):
    code, _, err = run("timeline", str(tmp_path / "none.yaml"))
    assert code == 1 and "cannot read file" in err


def test_render_writes_midi_with_default_name(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("render", "xiangyinjiu", "--tuning", "sanfen", "--huangzhong", "D4")
    assert code == 0 and (tmp_path / "xiangyinjiu.mid").stat().st_size > 1000


def test_render_refuses_a_non_midi_name(run, tmp_path):
    code, _, err = run("render", "xiangyinjiu", "-o", str(tmp_path / "x.wav"))
    assert code == 2 and not (tmp_path / "x.wav").exists()


@pytest.mark.parametrize("argv", [("render", "xiangyinjiu"), ("timeline", "xiangshe"), ("score", "export", "luming")])
def test_an_unwritable_output_is_a_clear_error(run, tmp_path, argv):
    target = tmp_path / "no-such-folder" / ("out.mid" if argv[0] != "timeline" else "out.txt")
    code, _, err = run(*argv, "-o", str(target))
    assert code == 1 and err.startswith(f"error: cannot write {target}")


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_note_value_must_be_positive(run, tmp_path, value):
    assert run("score", "export", "luming", "-o", str(tmp_path / "a.mid"), "--note-value", value)[0] == 2


def test_score_check_holds_a_score_to_its_page(run, tmp_path, shipped_score_text):
    path = tmp_path / "simu.yaml"
    path.write_text(shipped_score_text("simu").replace("周道倭遲", "周道逶遲", 2), encoding="utf-8")
    code, out, err = run("score", "check", str(path))
    assert code == 1 and "is not on 瑟譜 2-2b as transmitted [source]" in err  # problems on stderr, as documented
    assert "0 of 1 scores pass" in out


# Each command's group module (yuesheng.cli.GROUP): the only one a command may import (``score engrave`` the
# engraving group too, for its arguments and its work).
GROUP_OF = {"lu": "score", "score": "score", "validate": "rite", "timeline": "rite", "render": "rite",
            "source": "source", "audio": "audio", "play": "live", "console": "console", "retime": "console",
            "songbook": "engrave", "sheet": "web", "plan": "plan"}
GROUPS = sorted(set(GROUP_OF.values()))


def _imported(argv: list[str]) -> tuple[list[str], list[str]]:
    """Run ``yuesheng ARGV`` in a fresh process: (the heavy modules it imported of those a command that builds
    nothing must leave alone, the command group modules it imported)."""
    probe = ("import json, sys; from yuesheng.cli import main; code = main(sys.argv[1:]); "
             "print(json.dumps([sorted(m for m in sys.modules if m.split('.')[1:2] in (['timeline'], ['cuesheet'], "
             "['check']) or m in ('socket', 'secrets', 'tempfile')), "
             f"sorted(m.rpartition('.')[2] for m in sys.modules if m in {['yuesheng.cli.' + g for g in GROUPS]})])); "
             "sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    heavy, groups = json.loads(done.stdout.splitlines()[-1])
    return heavy, groups


@pytest.mark.parametrize("argv", [["score", "list"], ["score", "show", "luming"], ["source", "9-31b"], ["lu"]])
def test_commands_that_build_nothing_import_no_timeline(argv):
    """Start-up: score, source and lu leave the cue sheet, the timeline, the checks, the console's sockets, the
    temporary files of a write and every other command's module unimported."""
    assert _imported(argv) == ([], [GROUP_OF[argv[0]]])


@pytest.mark.parametrize("argv", [[command, "--help"] for command in GROUP_OF] + [["timeline", "xiangshe"]])
def test_a_command_imports_no_other_commands_module(argv):
    """Start-up: each command's arguments come from its own group's module, the only one imported."""
    assert _imported(argv)[1] == [GROUP_OF[argv[0]]]


def test_source_imports_no_music():
    """Start-up: ``source`` reads the shipped texts only; the parser and --format come without the music."""
    probe = ("import sys; from yuesheng.cli import main; code = main(sys.argv[1:]); "
             "print([m for m in sys.modules if m.startswith(('yuesheng.music', 'yaml'))]); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", probe, "source", "9-31b"], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "[]"


def test_score_engrave_takes_its_arguments_from_the_engraving_commands():
    assert _imported(["score", "engrave", "--help"])[1] == ["engrave", "score"]


def test_the_command_list_imports_no_command_module(run):
    assert _imported(["--help"])[1] == []
    code, out, _ = run("--help")
    assert code == 0 and all(f"    {command} " in out for command in GROUP_OF)


# -- signals: a real child process, signalled once it says it is ready -------------------------------------------

ROOT = Path(__file__).parent.parent
GOLDEN = str(ROOT / "tests" / "data" / "golden.yaml")

# The child: yuesheng's own main, with a MIDI port that says on stdout when it is silenced and closed, and an
# fsync that says on stderr that a file is being written, then waits to be interrupted.
CHILD = """\
import os, sys, time
import yuesheng.outputs.midi as midi

class Port:
    def send(self, message):
        if message.type == "control_change" and message.control == 123 and message.channel == 0:
            print("port: all notes off", flush=True)
    def close(self):
        print("port: closed", flush=True)

def fsync(fd):
    print("writing", file=sys.stderr, flush=True)
    time.sleep(60)

midi.open_output = lambda name: Port()
os.fsync = fsync
from yuesheng.cli import main_exit
sys.argv = ["yuesheng"] + sys.argv[1:]
main_exit()
"""


class Child:
    """A child process whose stdout and stderr are read line by line (in threads), so a test can wait for a line."""

    def __init__(self, *argv: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", CHILD, *argv], cwd=ROOT, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [threading.Thread(target=self._read, args=(name, stream), daemon=True)
                        for name, stream in (("out", self.process.stdout), ("err", self.process.stderr))]
        for reader in self.readers:
            reader.start()

    def _read(self, name: str, stream) -> None:
        for line in stream:
            (self.out if name == "out" else self.err).append(line.rstrip("\n"))
            self.lines.put((name, line))

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        """Until a line holding *text* comes on either stream; fails, saying what came, at the deadline."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                _, line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} in {timeout} s: {self.out} {self.err}") from None
            if text in line:
                return

    def finish(self, timeout: float = 30.0) -> int:
        """The exit code, once the process has ended and its streams are read to the end."""
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            self.process.kill()
            for reader in self.readers:
                reader.join(timeout=5)
            with self.process:  # closes its three streams
                pass
        return code


@pytest.mark.parametrize("signum, name", [(signal.SIGTERM, "terminated (SIGTERM)"),
                                          (signal.SIGINT, "interrupted (Ctrl-C)")])
@pytest.mark.parametrize("argv, ready, code, last_line", [
    (("render", GOLDEN, "-o", "{tmp}/x.mid"), "writing", None, ": stopped, nothing half-written left behind"),
    (("play", GOLDEN, "--manual"), "next GO 1/", 0, ": the show stopped, all notes off and all sound off sent"),
    (("console", GOLDEN, "--listen", "127.0.0.1:0", "--log", "{tmp}/c.jsonl"), "console of ", 0,
     ": the show stopped, all notes off and all sound off sent"),
], ids=["render", "play", "console"])
def test_a_signal_stops_a_batch_command_with_its_code_and_a_show_cleanly_with_0(tmp_path, signum, name, argv, ready,
                                                                                code, last_line):
    child = Child(*(a.format(tmp=tmp_path) for a in argv))
    try:
        child.wait_for(ready)
        child.process.send_signal(signum)
    finally:
        got = child.finish()
    expected = code if code is not None else {signal.SIGTERM: 143, signal.SIGINT: 130}[signum]
    seen = f"stdout {child.out}, stderr {child.err}"
    assert got == expected, seen
    assert child.err[-1] == name + last_line and not any("Traceback" in line for line in child.err), seen
    if argv[0] == "render":
        assert list(tmp_path.iterdir()) == []  # nothing half-written
    else:  # the show stopped: the port silenced, then closed
        assert child.out[-3:-1] == ["port: all notes off", "port: closed"] and child.out[-1].endswith(
            "all notes off and all sound off sent on channels [0, 1, 4, 8, 9]"), seen
    if argv[0] == "console":
        assert json.loads((tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()[0])["event"] == "session"


def test_ctrl_c_stops_yuesheng_even_when_it_was_started_with_sigint_ignored(tmp_path):
    """``nohup``, ``&``: the shell starts a program with SIGINT ignored; yuesheng takes it back (an operator's
    Ctrl-C must always work)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the child
    try:
        child = Child("play", GOLDEN, "--manual")
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        child.wait_for("next GO 1/")
        child.process.send_signal(signal.SIGINT)
    finally:
        got = child.finish()
    assert got == 0 and child.err[-1].startswith("interrupted (Ctrl-C): the show stopped"), (child.out, child.err)


def test_a_batch_command_on_the_longest_rite_never_runs_the_cyclic_collector(tmp_path):
    """``main_exit`` raises the collector's thresholds (GC_THRESHOLDS): at Python's default the collector rescans the
    rite's objects about 80–200 times a command (tens of ms); a batch command, its caches filled by the run before,
    now ends before it collects."""
    script = ("import gc, sys\n"
              "runs = []\n"
              "def seen(phase, info):  # from main_exit on\n"
              "    if phase == 'stop' and gc.get_threshold()[0] > 700:\n"
              "        runs.append(info)\n"
              "gc.callbacks.append(seen)\n"
              "sys.argv = ['yuesheng'] + sys.argv[1:]\n"
              "from yuesheng.cli import main_exit\n"
              "try:\n"
              "    main_exit()\n"
              "finally:\n"
              "    print('collections', len(runs), gc.get_threshold(), file=sys.stderr)\n")
    for argv in (["timeline", "dashe", "-o", str(tmp_path / "t.txt")],
                 ["sheet", "dashe", "-o", str(tmp_path / "s.html")]):
        for _ in range(2):  # the first run fills the caches
            done = subprocess.run([sys.executable, "-c", script, *argv], cwd=ROOT, capture_output=True, text=True,
                                  encoding="utf-8", timeout=120)
            assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines()[-1] == "collections 0 (200000, 30, 30)", done.stderr


def test_export_midi_count_in_sounds_the_gong_then_the_beats(run, tmp_path):
    """Practice: the mode's 宫 (鹿鳴, 黄鍾宫: C4) for a beat, then four drum strokes, then the piece, ♩ = 40."""
    import mido

    out = tmp_path / "luming.mid"
    assert run("score", "export", "鹿鳴", "-o", str(out), "--count-in", "4")[0] == 0
    now, onsets = 0.0, []
    for message in mido.MidiFile(out, charset="utf-8"):
        now += message.time
        if message.type == "note_on" and message.velocity:
            onsets.append((round(now, 3), message.channel, message.note))
    assert onsets[:5] == [(0.0, 0, 60), (1.5, 9, 35), (3.0, 9, 35), (4.5, 9, 35), (6.0, 9, 35)]
    assert onsets[5] == (7.5, 0, 72) and len(onsets) == 5 + 103  # the piece on the next beat: 黄清
    assert run("score", "export", "鹿鳴", "-o", str(tmp_path / "x.musicxml"), "--count-in", "4")[0] == 2
    assert run("score", "export", "鹿鳴", "-o", str(out), "--count-in", "17")[0] == 2


def test_export_part_follows_its_book_at_its_tempo_with_a_count_in_and_the_others_soft(run, tmp_path):
    """score export 由庚 --part 笙: the 笙's line of the 鄉飲酒禮 book (由庚 is the 笙's alone there) at the book's
    tempo; 鹿鳴 --part 瑟 --others -12: the 瑟 at its level, the voice at half its velocity (−12 dB by FluidSynth's
    velocity curve), after the 宫 and two beats. Read back with mido."""
    import mido

    from yuesheng import build
    from yuesheng.music.instruments import PARTS
    from yuesheng.outputs.songbook import songbook

    book = songbook(build("xiangyinjiu"), part="瑟")
    entry = next(e for e in book.entries if e.piece.title == "鹿鳴")
    assert entry.syllable is not None
    beat = float(entry.syllable)
    out = tmp_path / "se.mid"
    code, text, err = run("score", "export", "鹿鳴", "-o", str(out), "--part", "瑟", "--rite", "xiangyinjiu",
                          "--count-in", "2", "--others", "-12")
    assert code == 0 and "瑟 as its book of 鄉飲酒禮 gives it" in text, err
    now, onsets = 0.0, []
    for message in mido.MidiFile(out, charset="utf-8"):
        now += message.time
        if message.type == "note_on" and message.velocity:
            onsets.append((round(now, 3), message.channel, message.note, message.velocity))
    se, voice = PARTS["瑟"], PARTS["歌"]
    assert onsets[0][:2] == (0.0, se.channel) and [o[:2] for o in onsets[1:3]] == [
        (round(beat, 3), 9), (round(2 * beat, 3), 9)]  # the 宫 on the 瑟, then two beats
    mine = [o for o in onsets[3:] if o[1] == se.channel]
    sung = [o for o in onsets[3:] if o[1] == voice.channel]
    assert [o[2] for o in mine] == [s.key for s in entry.slots if s.key is not None]
    assert [o[0] for o in mine[:3]] == [round(3 * beat + n * beat, 3) for n in range(3)]
    assert {o[3] for o in mine} == {se.velocity} and {o[3] for o in sung} == {round(voice.velocity / 10 ** 0.3)}
    assert len(sung) == len(entry.piece.notes)
    code, _, err = run("score", "export", "由庚", "-o", str(out), "--part", "笙")
    assert code == 0 and {m.channel for m in mido.MidiFile(out) if m.type == "note_on"} == {PARTS["笙"].channel}
    code, _, err = run("score", "export", "鹿鳴", "-o", str(out), "--part", "鐘")
    assert code == 2 and "--part 鐘: it does not play 鹿鳴 in any shipped rite" in err
    assert run("score", "export", "鹿鳴", "-o", str(out), "--others", "-12")[0] == 2  # --others goes with --part
    assert run("score", "export", "鹿鳴", "-o", str(tmp_path / "x.musicxml"), "--part", "瑟")[0] == 2
