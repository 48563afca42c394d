"""The console's commands are one table (``live/commands.py``): every place that names a command agrees with it (the
guard, the terminal, OSC, the page and the JSON it is given, the cueing machine and its log line, resume, retime), and
a row added to it reaches them all."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pythonosc.osc_message_builder import OscMessageBuilder

from yuesheng import build, load
from yuesheng.cuesheet import CueSheet
from yuesheng.live import commands
from yuesheng.live.commands import COMMANDS, Command, Spec
from yuesheng.live.control import Control, Press, read_keyboard
from yuesheng.live.cueing import Cueing
from yuesheng.live.osc import OscListener
from yuesheng.live.player import NullPort, Player
from yuesheng.live.rehearsal import read_log
from yuesheng.live.resume import read_resume, session_fields
from yuesheng.outputs.midi import live_messages
from yuesheng.timeline import Timeline
from yuesheng.web.console import Console

from fakes import FakeClock

DATA = Path(__file__).parent / "data"
DOCS = Path(__file__).parent.parent / "docs"
CUE = "bai-zhi"  # the cue a command that names one is given
HUSH = Spec(Command.STOP, typed=("h", "hush"), key="h", osc="/yuesheng/hush", web="hush", event="hush",
            guarded=False, target=False, starts=False, said="HUSH")  # a row added: a second name for STOP ALL


@pytest.fixture(scope="module")
def sheet(repertoire) -> CueSheet:
    return load(DATA / "golden.yaml", repertoire=repertoire)


@pytest.fixture(scope="module")
def golden(sheet) -> Timeline:
    return build(sheet)


def _drain(control: Control) -> list[tuple[Command, str, str]]:
    out = []
    while not control.presses.empty():
        press = control.presses.get_nowait()
        out.append((press.command, press.source, press.cue))
    return out


def _cue(row: Spec) -> str:
    return CUE if row.target or row.sounding else ""


def test_the_table_names_each_command_once_in_each_place():
    for column in ("command", "osc", "web", "event", "said"):
        names = [getattr(row, column) for row in COMMANDS]
        assert len(set(names)) == len(names), column
    words = [word for row in COMMANDS for word in row.typed]
    keys = [row.key.lower() for row in COMMANDS if row.key]
    assert len(set(words)) == len(words) and len(set(keys)) == len(keys)
    assert Command.QUIT not in {row.command for row in COMMANDS}  # no source sends it
    assert sum(row.starts for row in COMMANDS) == 1 and sum(row.target for row in COMMANDS) == 1  # the page's GO, jump
    documented = (DOCS / "console.md").read_text(encoding="utf-8")
    assert all(f"| `{row.osc}` |" in documented for row in COMMANDS)


def test_the_cueing_machine_carries_out_every_command_and_logs_its_event(golden):
    machine = Cueing(golden, live_messages(golden)[1], manual=True)
    machine.start(0.0)
    assert {row.command for row in COMMANDS} <= set(machine.handlers)
    machine.press(Press(Command.GO, 0.0, "test"))
    for n, row in enumerate(COMMANDS, 1):
        outcome = machine.press(Press(row.command, float(n), "test", _cue(row)))
        current = machine.status(float(n)).current
        assert outcome.log == (row.event, CUE if row.target or row.sounding else current), row


def _every_place_takes(row: Spec, golden: Timeline, sheet: CueSheet, tmp_path: Path) -> None:
    """*row* reaches each place by its own name there, as its command."""
    clock = FakeClock()
    guarded = Control(clock, guard=0.5)  # the guard: a second press at once is refused when the row is guarded
    assert guarded.submit(row.command, "page", _cue(row))
    assert guarded.submit(row.command, "page", _cue(row)) is not row.guarded

    control = Control(clock, guard=0.0)  # the terminal: each of its words, a cue after it if it names one
    read_keyboard(control, [f"{word} {_cue(row)}" for word in row.typed], close_at_end=False).join(5)
    assert _drain(control) == [(row.command, "key", _cue(row))] * len(row.typed)

    notices: list[str] = []  # OSC: its address, the cue as its argument
    listener = OscListener(control, "127.0.0.1", 0, notify=notices.append)
    try:
        builder = OscMessageBuilder(row.osc)
        for arg in [_cue(row)] if row.target or row.sounding else []:
            builder.add_arg(arg)
        listener.receive(builder.build().dgram, "127.0.0.1")
    finally:
        listener.close()
    assert _drain(control) == [(row.command, "osc", _cue(row))] and not notices

    console = Console(golden, Player(golden, NullPort(), clock, control=control), control)  # the page's JSON
    assert console.command({"command": row.web, "cue": _cue(row)}) == (True, "")
    assert _drain(control) == [(row.command, "page", _cue(row))]
    page = console._page_html()
    found = re.search(r"const COMMANDS = (\[.*?\]);", page)
    assert found is not None
    table = json.loads(found[1])
    assert row.web in [c["web"] for c in table]
    button = "go" if row.starts else "jump" if row.target else row.web
    assert re.search(f'<button id="{button}"[^>]* data-command="{row.web}"', page)

    log = tmp_path / f"{row.event}.jsonl"  # its log line, read back by resume and by retime
    head = {"event": "session", **session_fields(golden, resumed=False), "wall": "2026-12-01T19:00:00+00:00",
            "mono": 0.0}
    line = {"event": row.event, "cue": CUE, "source": "page", "wall": "2026-12-01T19:00:01+00:00", "mono": 1.0}
    log.write_text(json.dumps(head) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    resume = read_resume(log, golden, datetime(2026, 12, 1, 19, 0, 2, tzinfo=UTC))
    assert [(p.command, p.cue, p.at) for p in resume.presses] == [(row.command, CUE, -1.0)] and not resume.warnings
    entries, _ = read_log(log, sheet)
    assert [(e.event, e.cue) for e in entries] == [("session", ""), (row.event, CUE)]


@pytest.mark.parametrize("row", COMMANDS, ids=[row.web for row in COMMANDS])
def test_every_place_takes_each_command_by_its_name_there(row, golden, sheet, tmp_path):
    _every_place_takes(row, golden, sheet, tmp_path)


def test_a_row_added_to_the_table_reaches_every_place(monkeypatch, golden, sheet, tmp_path):
    monkeypatch.setattr(commands, "COMMANDS", (*COMMANDS, HUSH))
    _every_place_takes(HUSH, golden, sheet, tmp_path)
    assert "/yuesheng/hush" in commands.osc_help() and "h HUSH" in commands.typed_help()


def test_a_commands_number_is_logged_and_resumed_within_its_bounds(golden, tmp_path):
    """A FADE this's seconds and the master level go in the log line as "value", and come back on resume; a number
    out of its bounds is a warning and the line skipped."""
    log = tmp_path / "values.jsonl"
    head = {"event": "session", **session_fields(golden, resumed=False), "wall": "2026-12-01T19:00:00+00:00",
            "mono": 0.0}
    lines = [head, {"event": "level", "cue": "", "source": "page", "value": 64, "wall": "2026-12-01T19:00:01+00:00",
                    "mono": 1.0},
             {"event": "fade-cue", "cue": "sixia", "source": "osc", "value": 1.5,
              "wall": "2026-12-01T19:00:01.500+00:00", "mono": 1.5},
             {"event": "level", "cue": "", "source": "page", "value": 500, "wall": "2026-12-01T19:00:02+00:00",
              "mono": 2.0}]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    resume = read_resume(log, golden, datetime(2026, 12, 1, 19, 0, 3, tzinfo=UTC))
    assert [(p.command, p.cue, p.value) for p in resume.presses] == [(Command.LEVEL, "", 64.0),
                                                                     (Command.FADE_CUE, "sixia", 1.5)]
    assert len(resume.warnings) == 1 and "master level: level 500, expected 0 to 127" in resume.warnings[0]


def test_the_player_logs_a_commands_number(golden):
    written: list[tuple[str, dict[str, Any]]] = []

    class Kept:
        def write(self, event: str, mono: float, **fields: Any) -> None:
            written.append((event, fields))

    clock = FakeClock()
    control = Control(clock, guard=0.0)
    player = Player(golden, NullPort(), clock, control=control, log=Kept(), show=lambda _: None, stay=True)
    control.submit(Command.LEVEL, "page", value=90.0)
    control.close("over")
    player.run()
    assert ("level", {"cue": "", "source": "page", "value": 90.0}) in written
