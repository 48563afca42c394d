"""``yuesheng play``: the rite to a MIDI port in real time; Ctrl-C or SIGTERM stops it cleanly (exit 0: ``signals``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from yuesheng.cli.common import positive, sequencer_options, timeline_of
from yuesheng.cli.signals import STOPS, show_stopped
from yuesheng.cli.streams import show
from yuesheng.errors import InputClosedError, PortError, UnknownNameError, UsageError

if TYPE_CHECKING:
    from yuesheng.live.player import Player


def cmd_play(args: argparse.Namespace) -> str:
    from yuesheng.live.control import Control, read_keyboard
    from yuesheng.live.cueing import start_tick
    from yuesheng.live.player import Player, RealClock
    from yuesheng.outputs.midi import open_output, output_names

    if args.list_ports:
        names = output_names()
        return "\n".join(names) + "\n" if names else "no MIDI output ports\n"
    if not args.cue:
        raise UsageError("play: give a CUE (or --list-ports)")
    timeline = timeline_of(args)
    try:
        start_tick(timeline, args.start)
    except UnknownNameError as exc:
        raise UsageError(str(exc)) from None
    port = open_output(args.port)
    try:
        clock = RealClock()
        control = Control(clock, guard=args.guard) if args.manual else None
        if control is not None:
            read_keyboard(control, sys.stdin, notify=show)
        player = Player(timeline, port, clock, control=control, start=args.start, show=show, preroll=0.2,
                        follow=not args.music_on_go)
        return _perform(player, timeline.rite)
    finally:
        port.close()


def _perform(player: Player, rite: str) -> str:
    """Run the show; a signal stops it cleanly (the player has silenced the port), a failing port is an error."""
    try:
        player.run()
    except STOPS as stop:
        show_stopped(stop)
        return f"stopped: all notes off and all sound off sent on channels {player.channels}\n"
    except (OSError, PortError, ValueError) as exc:
        raise PortError(f"the MIDI port failed ({exc}); all notes off sent where the port still answered") from None
    finally:
        if player.ended:
            player.panic()
    if player.ended:  # the terminal closed: what was playing has played out, and no GO can come
        raise InputClosedError(f"standard input ended (end of file): no GO can come; manual mode reads Enter from a "
                               f"terminal ({len(player.sent)} messages were played)")
    return f"played {rite}: {len(player.sent)} messages\n"


def _add_play(p: argparse.ArgumentParser) -> None:
    sequencer_options(p, output=False, cue_optional=True)
    p.add_argument("--port", metavar="NAME", help="MIDI output port (default: the system's first)")
    p.add_argument("--list-ports", action="store_true", help="list the MIDI output ports and stop")
    p.add_argument("--from", dest="start", metavar="CUE_ID", help="start at this cue")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--manual", action="store_true", help="each action waits for GO (Enter)")
    mode.add_argument("--auto", action="store_true", help="follow the estimated durations (the default)")
    p.add_argument("--guard", type=positive, default=0.5, metavar="SECONDS", help="ignore GO presses closer than this")
    p.add_argument("--music-on-go", action="store_true",
                   help="--manual: music after an action waits for its own GO (default: it follows its pre-wait)")
    p.set_defaults(func=cmd_play)


ARGUMENTS = {"play": _add_play}
