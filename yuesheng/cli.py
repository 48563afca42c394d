"""The ``yuesheng`` command: argparse subcommands, ``main(argv) -> int``.

Exit codes: 0 ok (warnings allowed), 1 invalid input (bad file, unknown name,
failed check), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

from yuesheng.errors import InvalidInputError, Problem, UnknownNameError, YueshengError
from yuesheng.lulu import (
    DEFAULT_HUANGZHONG, LU, Pitch, Realization, Register, Tuning, lu, parse_note_name, suzi_of,
)
from yuesheng.files import write_atomic
from yuesheng.repertoire import Repertoire, data_dir, load_repertoire, score_paths
from yuesheng.score import Piece, load_piece
from yuesheng.report import pad
from yuesheng.timeline import EventKind, Options, Timeline, build_timeline, seconds

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
NOTE_NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "G#", "A", "Bb", "B")


class UsageError(YueshengError):
    """A command line that makes no sense (exit 2)."""


def note_name(key: int) -> str:
    """MIDI key → C4-style name."""
    return f"{NOTE_NAMES[key % 12]}{key // 12 - 1}"


def dump_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _realization(args: argparse.Namespace) -> Realization:
    try:
        key = parse_note_name(args.huangzhong)
    except ValueError as exc:
        raise UsageError(f"--huangzhong: {exc}") from None
    return Realization(key, Tuning(args.tuning))


def _pitch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tuning", choices=[t.value for t in Tuning], default="equal",
                        help="equal temperament (朱載堉) or 三分損益 (sanfen); default equal")
    parser.add_argument("--huangzhong", default=DEFAULT_HUANGZHONG, metavar="NOTE",
                        help=f"the pitch of 黄鍾, e.g. C4 or D4 (default {DEFAULT_HUANGZHONG})")


def _format_option(parser: argparse.ArgumentParser, *choices: str) -> None:
    parser.add_argument("--format", choices=choices or ("text", "json"), default="text")


def _scores_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", action="append", default=[], metavar="PATH",
                        help="a score file or folder of your own; replaces shipped pieces of the same id")


# --- yuesheng lu -------------------------------------------------------------------------------


def cmd_lu(args: argparse.Namespace) -> str:
    """The table of the twelve 律 in the 正 and 清 registers."""
    real = _realization(args)
    rows = []
    for register in (Register.ZHENG, Register.QING):
        for the_lu in LU:
            pitch = Pitch(the_lu, register)
            key, cents = real.midi(pitch)
            rows.append({
                "lu": pitch.name, "name": the_lu.name + ("清" if register is Register.QING else ""),
                "simplified": the_lu.simplified, "pinyin": the_lu.pinyin, "register": register.hanzi,
                "suzi": suzi_of(pitch), "midi": key, "note": note_name(key), "cents": cents,
                "hz": round(real.frequency(pitch), 3),
            })
    if args.format == "json":
        return dump_json({"tuning": real.tuning.value, "huangzhong": args.huangzhong, "lu": rows})
    head = f"律呂 — tuning {real.tuning.value}, 黄鍾 = {args.huangzhong} (MIDI {real.huangzhong}), A4 = 440 Hz\n"
    lines = [head, f"{pad('律', 8)}{pad('名', 10)}{pad('俗字', 7)}{pad('pinyin', 12)}midi  note  cents     Hz"]
    for r in rows:
        lines.append(f"{pad(str(r['lu']), 8)}{pad(str(r['name']), 10)}{pad(str(r['suzi'] or '—'), 7)}{pad(str(r['pinyin']), 12)}"
                     f"{r['midi']:>4}  {r['note']:<4}{r['cents']:>+7.2f}{r['hz']:>9.2f}")
    return "\n".join(lines) + "\n"


# --- yuesheng score ----------------------------------------------------------------------------


def _piece_summary(p: Piece) -> dict[str, Any]:
    return {"id": p.id, "title": p.title, "mode": p.mode.name if p.mode else None,
            "provenance": p.provenance_label, "stanzas": len(p.stanzas), "notes": len(p.notes)}


def cmd_score_list(args: argparse.Namespace) -> str:
    rows = [_piece_summary(p) for p in load_repertoire(args.scores)]
    if args.format == "json":
        return dump_json(rows)
    lines = [f"{pad('id', 22)}{pad('title', 10)}{pad('mode', 10)}{pad('provenance', 28)}stanzas notes"]
    for r in rows:
        lines.append(f"{pad(r['id'], 22)}{pad(r['title'], 10)}{pad(r['mode'] or '—', 10)}"
                     f"{pad(r['provenance'], 28)}{r['stanzas']:>7} {r['notes']:>5}")
    return "\n".join(lines) + "\n"


def piece_json(p: Piece, real: Realization) -> dict[str, Any]:
    """The machine-readable form of a piece (``score show --format json``)."""
    data = _piece_summary(p) | {
        "aliases": list(p.aliases), "mode_common": p.mode_common, "source": p.source, "lost": p.lost,
        "realization": {"label": p.realization.label, "rule": p.realization.rule} if p.realization else None,
        "tuning": real.tuning.value, "huangzhong_midi": real.huangzhong,
        "emendations": [vars_(e) for e in p.emendations],
        "irregularities": [vars_(i) for i in p.irregularities],
        "stanzas": [],
    }
    for s in p.stanzas:
        notes = []
        for n in s.notes:
            key, cents = real.midi(n.pitch)
            notes.append({"lyric": n.lyric.strip(), "lu": n.lu, "suzi": n.suzi, "pitch": n.pitch.name,
                          "midi": key, "cents": cents})
        data["stanzas"].append({"number": s.number, "page": s.page, "lyrics": s.lyrics,
                                "lu": s.lu_line, "suzi": s.suzi_line, "notes": notes})
    return data


def vars_(obj: Any) -> dict[str, Any]:
    """A slotted dataclass as a dict."""
    return {name: getattr(obj, name) for name in obj.__slots__}


def cmd_score_show(args: argparse.Namespace) -> str:
    p = load_repertoire(args.scores).find(args.piece)
    real = _realization(args)
    if args.format == "json":
        return dump_json(piece_json(p, real))
    out = [f"{p.title} ({p.id}) — {p.mode.name if p.mode else 'no mode'}"
           f"{f' (俗呼 {p.mode_common})' if p.mode_common else ''} — {p.provenance_label}"]
    if p.source:
        out.append(f"source: {p.source.get('text', '')}, pages {', '.join(p.source.get('pages', []))}")
    if p.lost:
        out.append(f"lost: {p.lost.get('cite')}: {p.lost.get('quote')}")
    if p.realization:
        out.append(f"{p.realization.label.upper()}: {p.realization.rule}")
    out.append(f"tuning {real.tuning.value}, 黄鍾 = {args.huangzhong}; 詞 lyric, 律, 俗 俗字, 音 pitch"
               + (", 分 cents" if real.tuning is Tuning.SANFEN else ""))
    for s in p.stanzas:
        out.append("")
        out.append(f"Stanza {s.number}" + (f" ({s.page})" if s.page else ""))
        for start in range(0, len(s.notes), 12):
            chunk = s.notes[start:start + 12]
            cells = [real.midi(n.pitch) for n in chunk]
            rows = [("詞", [n.lyric.strip() or "·" for n in chunk]), ("律", [n.lu for n in chunk]),
                    ("俗", [n.suzi for n in chunk]), ("音", [note_name(k) for k, _ in cells])]
            if real.tuning is Tuning.SANFEN:
                rows.append(("分", [f"{c:+.0f}" for _, c in cells]))
            for label, values in rows:
                out.append(f"  {label}  " + "".join(pad(v, 5) for v in values).rstrip())
            out.append("")
        out.pop()
    for e in p.emendations:
        out.append(f"\nemendation: stanza {e.stanza} {e.line} position {e.position}: {e.transmitted} → {e.adopted}. {e.reason}")
    return "\n".join(out) + "\n"


def _positive(text: str) -> float:
    """An argparse type: a number greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be greater than 0")
    return value


def _check_targets(names: list[str], extra: list[str]) -> list[Path]:
    """Score files to check: all of them, or those named (by path, id or title)."""
    paths = score_paths(extra)
    if not names:
        return paths
    repertoire = Repertoire()
    for path in paths:
        try:
            repertoire.add(load_piece(path))
        except InvalidInputError:
            continue  # still reachable by its path
    return [Path(n) if Path(n).is_file() else Path(repertoire.find(n).path) for n in names]


def cmd_score_check(args: argparse.Namespace) -> tuple[str, int]:
    paths = _check_targets(args.pieces, args.scores)
    out: list[str] = []
    failed = 0
    for path in paths:
        try:
            p = load_piece(path)
        except InvalidInputError as exc:
            failed += 1
            out.extend(str(problem) for problem in exc.problems)
            continue
        out.append(f"{p.id} {p.title}: ok — {len(p.stanzas)} stanzas, {len(p.notes)} notes, {p.provenance_label}, "
                   f"emendations {len(p.emendations)}, recorded irregularities {len(p.irregularities)}")
        for e in p.emendations:
            out.append(f"  emendation: stanza {e.stanza} {e.line} position {e.position}: {e.transmitted} → {e.adopted} — {e.reason}")
        for i in p.irregularities:
            out.append(f"  irregularity: stanza {i.stanza} {i.check}: {i.reason} ({i.cite})")
    out.append(f"\n{len(paths) - failed} of {len(paths)} scores pass their cross-checks")
    return "\n".join(out) + "\n", EXIT_INVALID if failed else EXIT_OK


def cmd_score_export(args: argparse.Namespace) -> str:
    p = load_repertoire(args.scores).find(args.piece)
    if not p.playable:
        raise UsageError(f"{p.id} has no notes to export")
    suffix = Path(args.output).suffix.lower()
    real = _realization(args)
    if suffix in (".mid", ".midi"):
        from yuesheng.midi import write_midi
        from yuesheng.timeline import piece_timeline

        write_midi(piece_timeline(p, realization=real, syllable=Fraction(args.note_value)), args.output)
    elif suffix in (".musicxml", ".xml"):
        from yuesheng.m21 import write_musicxml

        write_musicxml(p, args.output, realization=real, note_value=args.note_value)
    else:
        raise UsageError(f"-o {args.output}: expected a .musicxml, .xml or .mid file")
    label = f" ({p.provenance_label}: {p.realization.rule})" if p.realization else ""
    return f"wrote {args.output}: {p.title}, {len(p.notes)} notes, one {args.note_value:g}-beat note per syllable{label}\n"


# --- yuesheng validate -------------------------------------------------------------------------


def _problem_json(p: Problem) -> dict[str, Any]:
    return {"line": p.line, "col": p.col, "path": p.path, "message": p.message, "rule": p.rule}


def cmd_validate(args: argparse.Namespace) -> tuple[str, int]:
    from yuesheng.validate import check_cuesheet

    repertoire = load_repertoire(args.scores)
    results: list[dict[str, Any]] = []
    out: list[str] = []
    failed = False
    for path in args.cues:
        sheet, problems = check_cuesheet(cue_path(path), repertoire)
        errors = [p for p in problems if p.severity == "error"]
        warnings = [p for p in problems if p.severity != "error"]
        failed |= bool(errors) or sheet is None
        results.append({"file": path, "valid": not errors and sheet is not None, "rite": sheet.rite_name if sheet else None,
                        "cues": len(sheet.cues) if sheet else 0,
                        "errors": [_problem_json(p) for p in errors], "warnings": [_problem_json(p) for p in warnings]})
        out.extend(str(p) for p in problems)
        verdict = "valid" if not errors and sheet else "INVALID"
        out.append(f"{path}: {verdict} — {len(sheet.cues) if sheet else 0} cues, {len(errors)} error(s), "
                   f"{len(warnings)} warning(s)")
    code = EXIT_INVALID if failed else EXIT_OK
    if args.format == "json":
        return dump_json(results), code
    return "\n".join(out) + "\n", code


# --- yuesheng timeline / render ------------------------------------------------------------------


def _sequencer_options(parser: argparse.ArgumentParser, *, output: bool = True, cue_optional: bool = False) -> None:
    parser.add_argument("cue", metavar="CUE", nargs="?" if cue_optional else None,
                        help="a cue sheet, e.g. cues/xiangshe.yaml, or a shipped rite's id")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME", help="switch on a variant (repeatable)")
    parser.add_argument("--reading", action="append", default=[], metavar="ID=OPTION",
                        help="choose another reading, e.g. heyue=li-rugui (repeatable)")
    parser.add_argument("--seed", type=int, help="seed of the random shot model (default: the cue sheet's)")
    parser.add_argument("--syllable", metavar="DURATION", help="seconds per sung syllable, e.g. 1.2s (default: the cue sheet's)")
    parser.add_argument("--tuning", choices=[t.value for t in Tuning], default="equal")
    parser.add_argument("--huangzhong", metavar="NOTE", help="the pitch of 黄鍾 (default: the cue sheet's, else C4)")
    parser.add_argument("--call-jun", metavar="LU", help="the 均 whose 宫 and 商 the callers sing, e.g. 林鍾 "
                        "(default: the cue sheet's call_jun, else 黄鍾)")
    if output:
        parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically)")
    _scores_option(parser)


def _timeline(args: argparse.Namespace) -> Timeline:
    from yuesheng.cuesheet import parse_duration
    from yuesheng.validate import load_cuesheet

    repertoire = load_repertoire(args.scores)
    sheet = load_cuesheet(cue_path(args.cue), repertoire)
    readings = {}
    for item in args.reading:
        rid, sep, option = item.partition("=")
        if not sep:
            raise UsageError(f"--reading {item!r}: expected ID=OPTION, e.g. heyue=li-rugui")
        readings[rid] = option
    try:
        syllable = parse_duration(args.syllable) if args.syllable else None
        huangzhong = parse_note_name(args.huangzhong) if args.huangzhong else sheet.huangzhong
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if syllable is not None and syllable <= 0:
        raise UsageError("--syllable must be longer than 0s")
    try:
        call_jun = lu(args.call_jun) if args.call_jun else None
    except KeyError as exc:
        raise UsageError(f"--call-jun: {exc}") from None
    options = Options(frozenset(args.variant), readings, syllable, Realization(huangzhong, Tuning(args.tuning)),
                      args.seed, call_jun)
    try:
        return build_timeline(sheet, options)
    except UnknownNameError as exc:  # a --variant or --reading that the cue sheet does not have
        raise UsageError(str(exc)) from None


def cue_path(name: str) -> Path:
    """A cue-sheet file, or the shipped sheet of a rite id (xiangyinjiu xiangshe yanli dashe)."""
    path = Path(name)
    shipped = data_dir("cues") / f"{name}.yaml"
    return shipped if not path.exists() and shipped.exists() else path


def _emit(args: argparse.Namespace, data: str | bytes, what: str) -> str:
    if args.output:
        write_atomic(args.output, data)
        return f"wrote {args.output}: {what}\n"
    return data if isinstance(data, str) else ""


def cmd_timeline(args: argparse.Namespace) -> str:
    from yuesheng.report import run_sheet_csv, run_sheet_json, run_sheet_text

    timeline = _timeline(args)
    render = {"text": run_sheet_text, "csv": run_sheet_csv, "json": run_sheet_json}[args.format]
    return _emit(args, render(timeline), f"run sheet of {timeline.rite}, {len(timeline.cues)} cues")


def cmd_render(args: argparse.Namespace) -> str:
    from yuesheng.midi import midi_bytes

    timeline = _timeline(args)
    if not args.output:
        args.output = f"{timeline.rite_id}.mid"
    if Path(args.output).suffix.lower() not in (".mid", ".midi"):
        raise UsageError(f"-o {args.output}: expected a .mid file")
    data = midi_bytes(timeline)
    notes = sum(1 for e in timeline.events if e.kind is EventKind.NOTE)
    return _emit(args, data, f"{timeline.rite}, {len(data)} bytes, {notes} notes, {seconds(timeline.duration_ticks) / 60:.1f} min")


# --- yuesheng audio -------------------------------------------------------------------------------


def _progress_bar(fraction: float) -> None:
    if sys.stderr.isatty():
        filled = int(fraction * 30)
        sys.stderr.write(f"\rrendering [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}")
        if fraction >= 1:
            sys.stderr.write("\n")
        sys.stderr.flush()


def cmd_audio(args: argparse.Namespace) -> str:
    from yuesheng.audio import describe, render_wav

    timeline = _timeline(args)
    output = args.output or f"{timeline.rite_id}.wav"
    if Path(output).suffix.lower() != ".wav":
        raise UsageError(f"-o {output}: expected a .wav file")
    rendered = render_wav(timeline, output, soundfont=args.soundfont, progress=_progress_bar)
    return describe(rendered, timeline) + "\n"


# --- yuesheng play --------------------------------------------------------------------------------


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
    timeline = _timeline(args)
    port = open_output(args.port)
    clock = RealClock()
    go = StdinGo(clock, sys.stdin) if args.manual else None
    try:
        player = Player(timeline, port, clock, go=go, start=args.start, guard=args.guard,
                        show=lambda line: print(line, flush=True), preroll=0.2)
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


# --- the parser --------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="yuesheng", description="樂聲: the music of the 儀禮 rites — scores, cue sheets, sequencer.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("lu", help="the table of the twelve 律: names, 俗字, MIDI key, cents, frequency")
    _pitch_options(p)
    _format_option(p)
    p.set_defaults(func=cmd_lu)

    score = sub.add_parser("score", help="list, show, check and export the scores")
    ssub = score.add_subparsers(dest="score_command", required=True, parser_class=_Parser)
    p = ssub.add_parser("list", help="every piece: id, title, mode, provenance, stanza and note counts")
    _format_option(p)
    _scores_option(p)
    p.set_defaults(func=cmd_score_list)
    p = ssub.add_parser("show", help="a piece, stanza by stanza: lyric, 律, 俗字, pitch")
    p.add_argument("piece", help="id or title (traditional or simplified), e.g. luming, 鹿鳴, 鹿鸣")
    _format_option(p)
    _pitch_options(p)
    _scores_option(p)
    p.set_defaults(func=cmd_score_show)
    p = ssub.add_parser("check", help="run the cross-checks and list every emendation (exit 1 on a problem)")
    p.add_argument("pieces", nargs="*", help="ids, titles or score files (default: all)")
    _scores_option(p)
    p.set_defaults(func=cmd_score_check)
    p = ssub.add_parser("export", help="MusicXML with the lyrics, 律 and 俗字 under the notes")
    p.add_argument("piece")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.musicxml or FILE.mid")
    p.add_argument("--note-value", type=_positive, default=1.0, metavar="BEATS",
                   help="length of each syllable's note in beats (the sources give none; default 1; a beat is "
                        "a crotchet in MusicXML and a second in MIDI)")
    _pitch_options(p)
    _scores_option(p)
    p.set_defaults(func=cmd_score_export)
    p = sub.add_parser("timeline", help="the run sheet: every cue with its time, duration, cast, words and citation")
    _sequencer_options(p)
    _format_option(p, "text", "csv", "json")
    p.set_defaults(func=cmd_timeline)
    p = sub.add_parser("render", help="a Standard MIDI File of the rite, with lyrics, markers, calls and the 節 drum")
    _sequencer_options(p)
    p.set_defaults(func=cmd_render)
    p = sub.add_parser("audio", help="a WAV of the rite through FluidSynth and a General MIDI SoundFont")
    _sequencer_options(p)
    p.add_argument("--soundfont", metavar="PATH", help="a .sf2/.sf3 SoundFont (default: Debian's fluid-soundfont-gm)")
    p.set_defaults(func=cmd_audio)
    p = sub.add_parser("play", help="play the rite to a MIDI port in real time; manual mode waits for GO (Enter)")
    _sequencer_options(p, output=False, cue_optional=True)
    p.add_argument("--port", metavar="NAME", help="MIDI output port (default: the system's first)")
    p.add_argument("--list-ports", action="store_true", help="list the MIDI output ports and stop")
    p.add_argument("--from", dest="start", metavar="CUE_ID", help="start at this cue")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--manual", action="store_true", help="each action waits for GO (Enter)")
    mode.add_argument("--auto", action="store_true", help="follow the estimated durations (the default)")
    p.add_argument("--guard", type=_positive, default=0.5, metavar="SECONDS", help="ignore GO presses closer than this")
    p.set_defaults(func=cmd_play)
    p = sub.add_parser("validate", help="check cue sheets: YAML, schema, references, ritual rules")
    p.add_argument("cues", nargs="+", metavar="CUE", help="cue sheet files (YAML) or shipped rite ids")
    _format_option(p)
    _scores_option(p)
    p.set_defaults(func=cmd_validate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 invalid input, 2 usage)."""
    try:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], str | tuple[str, int]] = args.func
        result = func(args)
    except UsageError as exc:
        print(f"usage error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except InvalidInputError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    except YueshengError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    text, code = result if isinstance(result, tuple) else (result, EXIT_OK)
    sys.stdout.write(text)
    return code


def main_exit() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    main_exit()
