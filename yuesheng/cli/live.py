"""``yuesheng play``: the rite to a MIDI port in real time."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from yuesheng.cli.common import UsageError, positive, sequencer_options, timeline_of
from yuesheng.cli.streams import show
from yuesheng.errors import UnknownNameError
from yuesheng.lulu import suggest


class Stopped(Exception):
    """SIGTERM: stop like Ctrl-C."""


def _stop(_signum: int, _frame: object) -> None:
    raise Stopped


def cmd_play(args: argparse.Namespace) -> str:
    from yuesheng.live import Player, RealClock, StdinGo
    from yuesheng.midi import PortError, open_output, output_names

    if args.list_ports:
        names = output_names()
        return "\n".join(names) + "\n" if names else "no MIDI output ports\n"
    if not args.cue:
        raise UsageError("play: give a CUE (or --list-ports)")
    timeline = timeline_of(args)
    cue_ids = [t.cue.id for t in timeline.cues]
    if args.start is not None and args.start not in cue_ids:  # before a port is opened
        raise UsageError(str(UnknownNameError("cue", args.start, suggest(args.start, cue_ids))))
    port = open_output(args.port)
    clock = RealClock()
    go = StdinGo(clock, sys.stdin) if args.manual else None
    try:
        player = Player(timeline, port, clock, go=go, start=args.start, guard=args.guard,
                        show=show, preroll=0.2)
    except UnknownNameError as exc:
        port.close()
        raise UsageError(str(exc)) from None
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        player.run()
    except (KeyboardInterrupt, Stopped):
        return f"stopped: all notes off and all sound off sent on channels {player.channels}\n"
    except (OSError, PortError, ValueError) as exc:
        raise PortError(f"the MIDI port failed ({exc}); all notes off sent where the port still answered") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
        port.close()
    return f"played {timeline.rite}: {len(player.sent)} messages\n"


def register(sub: Any) -> None:
    """Add ``play`` to the top-level subparsers."""
    p = sub.add_parser("play", help="play the rite to a MIDI port in real time; manual mode waits for GO (Enter)")
    sequencer_options(p, output=False, cue_optional=True)
    p.add_argument("--port", metavar="NAME", help="MIDI output port (default: the system's first)")
    p.add_argument("--list-ports", action="store_true", help="list the MIDI output ports and stop")
    p.add_argument("--from", dest="start", metavar="CUE_ID", help="start at this cue")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--manual", action="store_true", help="each action waits for GO (Enter)")
    mode.add_argument("--auto", action="store_true", help="follow the estimated durations (the default)")
    p.add_argument("--guard", type=positive, default=0.5, metavar="SECONDS", help="ignore GO presses closer than this")
    p.set_defaults(func=cmd_play)
