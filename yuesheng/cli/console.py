"""``yuesheng console``: the operator's console in the browser; ``yuesheng retime``: measured durations from logs.

The console runs until Ctrl-C or SIGTERM, then stops the show, silences the port, closes and exits 0
(``signals``).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.cli.common import (
    check_output_arg,
    cue_path,
    emit,
    inputs_of,
    positive,
    production_of,
    scores_option,
    sequencer_options,
)
from yuesheng.cli.signals import STOPS, show_stopped
from yuesheng.cli.streams import show
from yuesheng.errors import InvalidValueError, NetworkError, PortError, UnknownNameError, UsageError
from yuesheng.files import check_output
from yuesheng.live.commands import osc_help
from yuesheng.text import whole

if TYPE_CHECKING:  # socket and ipaddress are imported when the console runs, not by every command
    import socket
    from collections.abc import Callable

DEFAULT_LISTEN = "127.0.0.1:8765"


def parse_address(text: str, option: str) -> tuple[str, int]:
    """'HOST:PORT' (or '[::1]:PORT') → (host, port); UsageError naming the option."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    number = whole(port)
    if not sep or not host or number is None or not 0 <= number <= 65535:
        raise UsageError(f"{option} {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return host, number


def cmd_console(args: argparse.Namespace) -> str:
    from yuesheng.live.access import console_token
    from yuesheng.live.control import Control, Pedal
    from yuesheng.live.cueing import start_tick
    from yuesheng.live.osc import Gate, OscListener, OscSender, check_binding, check_targets, is_loopback
    from yuesheng.live.player import NullPort, Player, RealClock
    from yuesheng.live.resume import session_fields
    from yuesheng.live.showcontrol import ShowOut, msc_listener
    from yuesheng.live.showlog import Log
    from yuesheng.outputs.midi import open_input, open_output

    host, port_number = parse_address(args.listen, "--listen")
    _resume_options(args)
    if args.log:
        check_output(args.log, inputs_of(args))  # appended to, never replaced: but never one of the inputs
    osc_address = parse_address(args.osc, "--osc") if args.osc else None
    try:
        pedal = Pedal.parse(args.pedal) if args.pedal else None
    except InvalidValueError as exc:
        raise UsageError(str(exc)) from None
    production = production_of(args)
    timeline = production.timeline
    try:
        start_tick(timeline, args.start)
    except UnknownNameError as exc:
        raise UsageError(str(exc)) from None
    if args.token is not None:
        raise UsageError("--token: a token on the command line shows in ps; give it in YUESHENG_TOKEN or --token-file")
    token = console_token(os.environ, args.token_file, loopback=is_loopback(host))
    gate = Gate(token, _addresses(args.osc_allow))
    if osc_address is not None and (why := check_binding(osc_address[0], gate)):
        raise UsageError(why)
    osc_out = [parse_address(text, "--osc-out") for text in args.osc_out]
    if why := check_targets(osc_out, token):
        raise UsageError(why)
    if not 0 <= args.msc_device <= 127:
        raise UsageError(f"--msc-device {args.msc_device}: expected a device ID 0..127 (127: all-call)")
    clock = RealClock()
    resume, warning = _read_resume(args.resume, timeline, clock.now) if args.resume else (None, "")
    control = Control(clock, guard=args.guard)
    closing: list[Any] = []
    try:
        listener = _bind(host, port_number, "--listen")  # before anything is shown: a busy port is an error here
        closing.append(listener)
        port = NullPort() if args.no_midi else open_output(args.port)
        closing.append(port)
        log = Log(args.log, notify=show) if args.log else None
        if log is not None:
            log.start(clock.now(), **session_fields(timeline, resumed=bool(args.resume)))
            closing.append(log)
        if osc_address is not None:
            try:
                closing.append(OscListener(control, *osc_address, gate=gate, notify=show))
            except OSError as exc:
                raise NetworkError(f"cannot listen for OSC on {args.osc}: {exc.strerror or exc}") from None
        if pedal is not None:
            closing.append(open_input(pedal.port, pedal.listener(control)))
        player = Player(timeline, port, clock, control=control, start=args.start, preroll=0.2, log=log, stay=True,
                        show=show, follow=not args.music_on_go, resume=resume,
                        resume_warning=warning)
        if osc_out or args.msc_out:
            msc = open_output(args.msc_out) if args.msc_out else None
            if msc is not None:
                closing.append(msc)
            sender = OscSender(osc_out, token) if osc_out else None
            if sender is not None:
                closing.append(sender)
            closing.append(ShowOut(player, osc=sender, msc=msc, device=args.msc_device))
        if args.msc_in:
            closing.append(open_input(args.msc_in, msc_listener(control, args.msc_device)))
        return _serve(production, player, control, listener, token)
    finally:
        for thing in reversed(closing):
            thing.close()


def _addresses(texts: list[str]) -> list[str]:
    """The --osc-allow addresses, each checked; UsageError naming a bad one."""
    import ipaddress

    for text in texts:
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise UsageError(f"--osc-allow {text!r}: expected an IP address, e.g. 192.168.1.20") from None
    return texts


def _resume_options(args: argparse.Namespace) -> None:
    """--resume LOG goes on appending to LOG; it says where to start, so --from and another --log are refused."""
    if not args.resume:
        return
    if args.start:
        raise UsageError("--resume and --from: the log says where the show stands; give one of them")
    if args.log and Path(args.log) != Path(args.resume):
        raise UsageError("--resume LOG goes on appending to LOG: give --log the same file, or leave it out")
    args.log = args.resume


def _read_resume(path: str, timeline: Any, now: Callable[[], float]) -> tuple[tuple[Any, ...], str]:
    """The logged commands to replay, at their moments on the player's clock (*now*), and the warning the page
    shows with RESUMED (the log's clock not trusted, or ''); the log's warnings (lost lines) shown, a log of another
    show refused."""
    from datetime import UTC, datetime

    from yuesheng.live.resume import read_resume

    resume = read_resume(path, timeline, datetime.now(UTC))
    for warning in resume.warnings:
        show(f"warning: {warning}")
    return resume.on_clock(now()), resume.clock


def _bind(host: str, port: int, option: str) -> socket.socket:
    """A listening TCP socket on *host*:*port*, or NetworkError naming the option (a busy port, an unknown host)."""
    import socket

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        address = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)[0][4]
        return socket.create_server(address, family=family)
    except OSError as exc:
        raise NetworkError(f"{option} {host}:{port}: cannot listen there ({exc.strerror or exc})") from None


def _serve(production: Any, player: Any, control: Any, listener: socket.socket, token: str | None) -> str:
    """Run the player in its own thread and the web server in this one, on *listener*, until Ctrl-C or SIGTERM."""
    import secrets

    import uvicorn

    from yuesheng.cli.addresses import shown_hosts, url
    from yuesheng.live.control import read_keyboard
    from yuesheng.live.player import NullPort
    from yuesheng.web.console import MAX_BODY, Console
    from yuesheng.web.sockets import room
    from yuesheng.web.views import Views

    failure: list[BaseException] = []
    timeline = production.timeline
    host = listener.getsockname()[0]
    views, view_token = Views(production), secrets.token_urlsafe(18)  # the views' own token: they only show
    everyone = sum(m.count for m in production.sheet.performers.values())
    console = Console(timeline, player, control, token=token, hosts=(host,), log=player.log, views=views,
                      view_token=view_token, sockets=room(everyone), notify=show)
    server = uvicorn.Server(uvicorn.Config(console.app(), log_level="warning", lifespan="off",
                                           ws_max_size=MAX_BODY))

    def play() -> None:
        try:
            player.run()
        except BaseException as exc:  # the port failed: the player has silenced what it could
            failure.append(exc)
        server.should_exit = True

    thread = threading.Thread(target=play, name="yuesheng-player", daemon=True)
    try:
        thread.start()
        threading.Thread(target=lambda: views.staged, name="yuesheng-staging", daemon=True).start()  # warm
        read_keyboard(control, sys.stdin, notify=show, close_at_end=False)
        host, port = listener.getsockname()[:2]
        query = f"?token={token}" if token else ""
        urls = [url(h, port) + query for h in shown_hosts(host)]
        show(f"console of {timeline.rite}: {urls[0]}  (Ctrl-C to stop)" + "".join(f"\n  also {u}" for u in urls[1:]))
        base = url(shown_hosts(host)[0], port)
        show(f"  observe (read only, for the stage manager): {base}observe?token={view_token}\n"
             f"  cast (a performer's phone; any person, e.g. 主人 or 衆賓 2): {base}cast/PERSON?token={view_token}")
        server.run(sockets=[listener])  # uvicorn raises the signal it handled again once it has shut down
    except STOPS as stop:
        show_stopped(stop)
    finally:
        control.close("the console was closed")
        thread.join(timeout=5)
        player.panic()
    if failure:
        raise failure[0] if not isinstance(failure[0], OSError) else _port_failed(failure[0])
    if isinstance(player.port, NullPort):
        return "console closed (no MIDI port: nothing was sounding to silence)\n"
    return f"console closed: all notes off and all sound off sent on channels {player.channels}\n"


def _port_failed(exc: OSError) -> BaseException:
    return PortError(f"the MIDI port failed ({exc}); all notes off sent where the port still answered")


def cmd_retime(args: argparse.Namespace) -> str:
    from yuesheng.cli.streams import say
    from yuesheng.live.rehearsal import format_seconds, mixed_plans, read_log, retime, timing_yaml
    from yuesheng.production import load, produce
    from yuesheng.timeline import Options

    check_output_arg(args)
    if args.fit_paces:
        check_output_arg(args, args.fit_paces)
    exclusions = [_exclusion(text, args.log) for text in args.exclude]
    sheet = load(cue_path(args.cue), scores=args.scores)
    read = [read_log(path, sheet) for path in args.log]
    programmes = {programme for _, programme in read}
    if len(programmes) > 1:
        raise UsageError("--log: these logs played different programmes (variants, readings): retime each apart")
    if (why := mixed_plans([(str(path), entries) for path, (entries, _) in zip(args.log, read, strict=True)])) \
            and not args.mixed_plans:
        raise UsageError(f"--log: {why}; retime each apart, or give --mixed-plans to pool them")
    programme = programmes.pop()  # the plan the GOs followed: the durations are measured against it
    options = Options(frozenset(programme.variants), dict(programme.readings))
    used: set[str] = set()

    def excluded(take: Any) -> bool:
        hits = {text for text, (log, kind, number) in zip(args.exclude, exclusions, strict=True)
                if take.log == log and number == (take.line if kind == "line" else take.session)}
        used.update(hits)
        return bool(hits)

    def void(take: Any) -> None:
        say(f"retime: {take.cue}: dropped the take of {format_seconds(take.seconds)} ({take.log}:{take.line}, "
            f"session {take.session}): no time or less, so not a measurement (the next GO came before the music "
            "the plan puts after the action had ended)")

    durations = retime(produce(sheet, options).timeline, [entries for entries, _ in read],
                       names=[str(path) for path in args.log], excluded=excluded, void=void)
    if unused := [text for text in args.exclude if text not in used]:
        raise UsageError(f"--exclude {unused[0]}: no take of an action begins there (a take is named by the line "
                         "of its action's GO, or by its session's number)")
    for cue, measured in durations.items():
        for take in measured.dropped:
            say(f"retime: {cue}: dropped the take of {format_seconds(take.seconds)} ({take.log}:{take.line}, "
                f"session {take.session}), far from the median {format_seconds(measured.duration)} of the others")
    what = f"{len(durations)} measured actions from {len(read)} log(s)"
    if args.fit_paces:
        _fit_paces(args.fit_paces, produce(sheet, options), {cue: m.duration for cue, m in durations.items()})
    return emit(args, timing_yaml(sheet.rite_id, durations), what)


def _fit_paces(path: str, production: Any, measured: dict[str, Any]) -> None:
    """Write to *path* the paces that fit the measured walks of *production*'s rite (``staging.paces.fit``)."""
    from yuesheng.cli.streams import say
    from yuesheng.files import write_atomic
    from yuesheng.staging.paces import fit, observed, paces_yaml, shipped

    rite = production.staged
    if rite is None:
        raise InvalidValueError("--fit-paces", path, "a rite whose blocking stages: there is no walk to fit to")
    timed = {cid: c.derivation for cid, c in rite.cues.items() if c.duration is not None}  # not an estimate kept
    seen = observed(rite.hall, timed, measured)
    try:
        paces, notes = fit(seen, shipped(), path)
    except ValueError as exc:
        raise InvalidValueError("--fit-paces", path, "walks that tell the paces apart", message=str(exc)) from None
    for note in notes:
        say(f"retime --fit-paces: {note}")
    write_atomic(path, paces_yaml(paces, f"fitted by yuesheng retime to {len(seen)} measured walk(s) of "
                                        f"{production.sheet.rite_id}"))
    say(f"wrote {path}: paces fitted to {len(seen)} measured walk(s) (" + ", ".join(
        f"{k} {float(paces.of(k)):.2f} s" for k in ("堂上", "堂下", "趨", "階")) + ")")


def _exclusion(text: str, logs: list[Path]) -> tuple[str, str, int]:
    """'FILE:LINE' or 'FILE:sessionN' → (the --log it names, 'line' | 'session', N); UsageError otherwise."""
    file, _, where = text.rpartition(":")
    kind, number = ("session", where[7:]) if where.startswith("session") else ("line", where)
    log = next((str(p) for p in logs if file and (str(p) == file or Path(file).resolve() == p.resolve())), None)
    n = whole(number)
    if log is None or n is None or n < 1:
        raise UsageError(f"--exclude {text!r}: expected LOG:LINE or LOG:sessionN (ASCII digits), LOG one of the --log "
                         "files")
    return log, kind, n


def _add_console(p: argparse.ArgumentParser) -> None:
    sequencer_options(p, output=False)
    p.add_argument("--port", metavar="NAME", help="MIDI output port (default: the system's first)")
    p.add_argument("--no-midi", action="store_true", help="run without a MIDI output (planning, tests)")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where the web page is served (default {DEFAULT_LISTEN}; any other address needs a token)")
    p.add_argument("--osc", metavar="HOST:PORT", help=f"listen for OSC {osc_help()} "
                   "(off loopback: senders put the token first, or are named by --osc-allow)")
    p.add_argument("--osc-allow", nargs="+", default=[], metavar="ADDR",
                   help="OSC senders taken without the token (IP addresses)")
    p.add_argument("--osc-out", nargs="+", default=[], metavar="HOST:PORT",
                   help="send the state (/yuesheng/cue, number, elapsed, armed) on every change to these OSC targets "
                        "(off loopback only with the token, sent first)")
    p.add_argument("--msc-out", metavar="PORT", help="send MIDI Show Control GO (with the cue's number) and STOP to "
                   "this MIDI output port")
    p.add_argument("--msc-in", metavar="PORT", help="take MIDI Show Control GO and STOP from this MIDI input port "
                   "(guarded as every GO is)")
    p.add_argument("--msc-device", type=int, default=127, metavar="ID",
                   help="the MSC device ID sent to and answered to (default 127: all-call)")
    p.add_argument("--pedal", metavar="PORT[:noteN|:ccN]", help="a MIDI input whose note or CC means GO")
    p.add_argument("--log", metavar="FILE.jsonl", help="append every GO, stop, fade and jump to this log")
    p.add_argument("--token", help=argparse.SUPPRESS)  # refused: it would show in ps
    p.add_argument("--token-file", metavar="FILE",
                   help="require the token on this file's first line on every request and OSC message; or set "
                        "YUESHENG_TOKEN (default: generated when not on loopback; at least 16 characters)")
    p.add_argument("--from", dest="start", metavar="CUE_ID", help="start at this cue")
    p.add_argument("--resume", metavar="LOG", help="restart where LOG says the show stands, and go on appending to it")
    p.add_argument("--guard", type=positive, default=0.5, metavar="SECONDS",
                   help="ignore a GO closer than this to the last, from any source (default 0.5)")
    p.add_argument("--music-on-go", action="store_true",
                   help="music after an action waits for its own GO (default: armed, it follows its pre-wait)")
    p.set_defaults(func=cmd_console)


def _add_retime(p: argparse.ArgumentParser) -> None:
    p.add_argument("cue", metavar="CUE", help="the cue sheet the logs were made with")
    p.add_argument("--log", action="append", required=True, metavar="LOG", type=Path, help="a console log (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="LOG:LINE|LOG:sessionN",
                   help="leave out the take whose action's GO is on this line, or every take of this session "
                        "(1 = the log's first; repeatable)")
    p.add_argument("--mixed-plans", action="store_true",
                   help="pool logs played with different plans (other --timing files); refused without it")
    p.add_argument("-o", "--output", metavar="FILE", help="write the timing file here (atomically)")
    p.add_argument("--fit-paces", metavar="FILE", help="also fit the paces (堂上, 堂下, 趨, 階) to the walks measured "
                   "and write them to FILE, for --paces (atomically)")
    scores_option(p)
    p.set_defaults(func=cmd_retime)


ARGUMENTS = {"console": _add_console, "retime": _add_retime}
