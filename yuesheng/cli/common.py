"""What the commands share beyond ``parsing``: pitch and sequencer options, cue-sheet lookup, building, output."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.cli.streams import say
from yuesheng.errors import InvalidValueError, UnknownNameError, UsageError
from yuesheng.files import check_output, write_atomic, writes_directly
from yuesheng.music.lulu import DEFAULT_HUANGZHONG, Realization, Tuning, lu, parse_huangzhong
from yuesheng.music.repertoire import score_paths
from yuesheng.text import decimal, whole

if TYPE_CHECKING:  # the timeline is imported by the commands that build, not by score or source
    from yuesheng.cuesheet import CueSheet
    from yuesheng.outputs.placement import Listener, Physics
    from yuesheng.production import Production
    from yuesheng.staging.paces import Paces
    from yuesheng.timeline import Options, Timeline

MAX_SECONDS = 3600.0  # the longest --guard or --syllable that makes sense
NOTE_NAMES = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "G#", "A", "Bb", "B")


def note_name(key: int) -> str:
    """MIDI key → C4-style name."""
    return f"{NOTE_NAMES[key % 12]}{key // 12 - 1}"


def realization(args: argparse.Namespace) -> Realization:
    """--huangzhong and --tuning as a Realization."""
    try:
        key = parse_huangzhong(args.huangzhong)
    except InvalidValueError as exc:
        raise UsageError(f"--huangzhong: {exc}") from None
    return Realization(key, Tuning(args.tuning))


def pitch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tuning", choices=[t.value for t in Tuning], default="equal",
                        help="equal temperament (朱載堉) or 三分損益 (sanfen); default equal")
    parser.add_argument("--huangzhong", default=DEFAULT_HUANGZHONG, metavar="NOTE",
                        help=f"the pitch of 黄鍾, e.g. C4 or D4 (default {DEFAULT_HUANGZHONG})")


def scores_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scores", action="append", default=[], metavar="PATH",
                        help="a score file or folder of your own; replaces shipped pieces of the same id")


def positive(text: str) -> float:
    """An argparse type: a finite number greater than 0 (and at most MAX_SECONDS)."""
    value = decimal(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (ASCII digits: 0.5, 2, 1e3)")
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"{text} must be greater than 0 and at most {MAX_SECONDS:g}")
    return value


def sequencer_options(parser: argparse.ArgumentParser, *, output: bool = True, cue_optional: bool = False) -> None:
    parser.add_argument("cue", metavar="CUE", nargs="?" if cue_optional else None,
                        help="a cue sheet, e.g. cues/xiangshe.yaml, or a shipped rite's id")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME",
                        help="switch on a variant (repeatable)")
    parser.add_argument("--reading", action="append", default=[], metavar="ID=OPTION",
                        help="choose another reading, e.g. heyue=li-rugui (repeatable)")
    parser.add_argument("--seed", type=int, help="seed of the random shot model (default: the cue sheet's)")
    parser.add_argument("--syllable", metavar="DURATION",
                        help="seconds per sung syllable, e.g. 1.2s (default: the cue sheet's)")
    parser.add_argument("--tuning", choices=[t.value for t in Tuning], default="equal")
    parser.add_argument("--huangzhong", metavar="NOTE", help="the pitch of 黄鍾 (default: the cue sheet's, else C4)")
    parser.add_argument("--call-jun", metavar="LU", help="the 均 whose 宫 and 商 the callers sing, e.g. 林鍾 "
                        "(default: the cue sheet's call_jun, else 黄鍾)")
    parser.add_argument("--timing", metavar="FILE", help="measured action durations from rehearsal (yuesheng retime) "
                        "in place of the cue sheet's estimates")
    paces_option(parser)
    if output:
        parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically)")
    scores_option(parser)


def paces_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paces", metavar="FILE", help="seconds a 步 on the 堂 (接武), below it (布武), at a run "
                        "(趨) and a flight of steps, in place of the shipped table's (YAML or JSON; retime --fit-paces "
                        "writes one; docs/staging.md)")


def paces_of(args: argparse.Namespace) -> Paces | None:
    """The paces of ``--paces FILE`` (None without it)."""
    if not getattr(args, "paces", None):
        return None
    from yuesheng.staging.paces import load_paces

    return load_paces(args.paces)


def _decimal(text: str) -> float:
    """A decimal number in ASCII digits (argparse's type)."""
    value = decimal(text.strip())
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number in ASCII digits")
    return value


LISTENER_NUMBER = re.compile(r"^-[0-9]+$|^-[0-9]*\.[0-9]+$|^-[0-9.]+,")  # "-4,16,north" is a value, not an option


def listener_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listener", metavar="SEAT|X,Y[,FACING]|PERSON",
                        help="hear the rite from a seat: default (the rite's own, from its row of data/rites.json: "
                             "the 賓 in 鄉飲酒 and 鄉射, the 公 in 燕禮 and 大射), a seat (賓席 公席 主人席 庭) or "
                             "placed position, or x,y in 步 (east, south of the 堂's edge) with a facing "
                             "(north south east west, 北 南 東 西, or compass degrees: 0 north, 90 east), "
                             "or a person of the cast (賓, 衆賓 2), followed as he walks; "
                             "see docs/seat.md")
    parser.add_argument("--speed-of-sound", type=float, default=None, metavar="M/S",
                        help="with --listener: metres per second (default 343, or from --temperature)")
    parser.add_argument("--chi", type=float, default=None, metavar="METRES",
                        help="with --listener: one 尺 in metres (default 0.231; a 步 is 6 尺)")
    parser.add_argument("--temperature", type=_decimal, default=None, metavar="°C",
                        help="with --listener: the air's temperature, for its absorption (ISO 9613-1) and the "
                             "speed of sound (default 20)")
    parser.add_argument("--humidity", type=_decimal, default=None, metavar="PERCENT",
                        help="with --listener: the air's relative humidity, for its absorption (default 50)")
    # argparse reads a value beginning with '-' as an option unless it looks like a negative number: x,y too
    parser._negative_number_matcher = LISTENER_NUMBER  # noqa: SLF001 - argparse's own hook for this


PHYSICS_RANGES = (("speed_of_sound", 100.0, 2000.0), ("chi", 0.1, 0.5), ("temperature", -20.0, 50.0),
                  ("humidity", 10.0, 100.0))  # ISO 9613-1 holds for −20 to 50 °C and 10 to 100 %


def placement_of(args: argparse.Namespace, production: Production) -> tuple[Listener, Physics] | None:
    """The listener and physics that --listener and the options of the air ask for, or None without
    --listener."""
    extra = [name for name, _, _ in PHYSICS_RANGES if getattr(args, name, None) is not None]
    if args.listener is None:
        if extra:
            raise UsageError(f"--{extra[0].replace('_', '-')} goes with --listener")
        return None
    from yuesheng.outputs.placement import Physics, sound_speed, with_hall

    for name, low, high in PHYSICS_RANGES:
        value = getattr(args, name, None)
        if value is not None and not low <= value <= high:  # NaN too
            raise UsageError(f"--{name.replace('_', '-')} {value:g}: expected {low:g} to {high:g}")
    speed = args.speed_of_sound if args.speed_of_sound is not None else \
        sound_speed(args.temperature) if args.temperature is not None else None
    given = {"chi_m": args.chi, "speed_m_s": speed, "temperature_c": args.temperature,
             "humidity_pct": args.humidity}
    physics = Physics(**{field: value for field, value in given.items() if value is not None})
    return _listener_of(args.listener, production), with_hall(physics, production.staged)


def _listener_of(text: str, production: Production) -> Listener:
    """--listener's seat, point or person: a seat's (or placed position's) name first; a person of the cast
    (``staging.persons``) who is followed through his walks; a name that is both is a usage error."""
    from yuesheng.errors import AmbiguousNameError
    from yuesheng.outputs.placement import following, listener
    from yuesheng.staging.persons import person

    timeline, rite = production.timeline, production.staged
    try:
        seat, refused = listener(text, timeline, rite), None
    except UsageError as exc:
        seat, refused = None, exc
    try:
        found = person(text, production.sheet, rite.same if rite is not None else None) if "," not in text else None
    except UnknownNameError:
        found = None
    except AmbiguousNameError as exc:
        raise UsageError(f"--listener {text}: {exc}") from None
    if seat is not None and found is not None:
        raise UsageError(f"--listener {text}: both a seat ({seat.describe()}) and a person ({found.label}, "
                         f"{found.role}): name the seat by its id, or the person by his id or number")
    if seat is not None:
        return seat
    if found is None:
        assert refused is not None
        raise refused
    motion = production.motion
    if motion is None:
        raise UsageError(f"--listener {text}: a person is followed on the ground of a staged rite; "
                         f"{timeline.rite} has no blocking in force (docs/staging.md)")
    if len(found.members) > 1:
        raise UsageError(f"--listener {text}: {found.name} are {len(found.members)}; name one "
                         f"({found.name} 1 … {found.name} {len(found.members)})")
    try:
        return following(found.label, found.members[0], motion)
    except KeyError:
        raise UsageError(f"--listener {text}: {found.label} never stands on the ground of this rite") from None


def excerpt_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="excerpt_from", metavar="CUE|TIME",
                        help="render from this cue's start (its id) or time (e.g. 12min30s)")
    parser.add_argument("--to", dest="excerpt_to", metavar="CUE|TIME",
                        help="render to this cue's end (its id) or time (e.g. 14min)")


def excerpt_span(args: argparse.Namespace, timeline: Timeline) -> tuple[int, int] | None:
    """The ticks --from and --to ask for (None without them); a usage error for an unknown cue, a time past the
    end, or an empty span."""
    start, end = getattr(args, "excerpt_from", None), getattr(args, "excerpt_to", None)
    if start is None and end is None:
        return None
    timings = {t.cue.id: t for t in timeline.cues}
    whole = timeline.duration_ticks

    def tick(text: str | None, option: str, default: int) -> int:
        from yuesheng.cuesheet import parse_duration
        from yuesheng.text import did_you_mean
        from yuesheng.timeline import ticks

        if text is None:
            return default
        if text in timings:
            return timings[text].start_tick if option == "--from" else timings[text].end_tick
        try:
            at = ticks(parse_duration(text))
        except InvalidValueError:
            raise UsageError(f"{option} {text}: no such cue in {timeline.rite}{did_you_mean(text, list(timings))}, "
                             "nor a time such as 12min30s") from None
        if at > whole:
            raise UsageError(f"{option} {text}: past the end of {timeline.rite}")
        return at

    first, last = tick(start, "--from", 0), tick(end, "--to", whole)
    if last <= first:
        raise UsageError(f"--from {start or 0} --to {end or 'the end'}: an empty excerpt")
    return first, last


def timeline_of(args: argparse.Namespace) -> Timeline:
    return production_of(args).timeline


def production_of(args: argparse.Namespace) -> Production:
    """The cue sheet that *args* name, loaded, and built with *args*' options (``yuesheng.production``)."""
    from yuesheng.production import load, produce

    readings = readings_of(args)
    sheet = load(cue_path(args.cue), scores=args.scores, variants=args.variant, readings=readings)
    options = options_of(args, sheet, readings)
    try:
        production = produce(sheet, options)
    except UnknownNameError as exc:  # a --variant or --reading that the cue sheet does not have
        raise UsageError(str(exc)) from None
    if production.ground is None:
        say_blocking_not_found(sheet)
    return production


def say_blocking_not_found(sheet: CueSheet) -> None:
    """A note on stderr where *sheet*'s rite ships a blocking but none is beside it, naming where it looked."""
    from yuesheng.staging.paths import not_found

    if why := not_found(sheet):
        say(f"note: {why}")


def options_of(args: argparse.Namespace, sheet: CueSheet, readings: dict[str, str]) -> Options:
    """The build options *args* ask for (UsageError for a value out of range or not of its form)."""
    from yuesheng.cuesheet import parse_duration
    from yuesheng.timeline import Options

    try:
        syllable = parse_duration(args.syllable) if args.syllable is not None else None
    except InvalidValueError as exc:
        raise UsageError(f"--syllable: {exc}") from None
    try:
        huangzhong = parse_huangzhong(args.huangzhong) if args.huangzhong is not None else sheet.huangzhong
    except InvalidValueError as exc:
        raise UsageError(f"--huangzhong: {exc}") from None
    if syllable is not None and not 0 < syllable <= MAX_SECONDS:
        raise UsageError(f"--syllable {args.syllable}: expected longer than 0s and at most {MAX_SECONDS:g}s")
    try:
        call_jun = lu(args.call_jun) if args.call_jun is not None else None
    except UnknownNameError as exc:
        raise UsageError(f"--call-jun: {exc}") from None
    timing = {}
    if args.timing:  # the rehearsal module only when a --timing file is given
        from yuesheng.live.rehearsal import load_timing

        timing = load_timing(args.timing, sheet)
    return Options(frozenset(args.variant), readings, syllable, Realization(huangzhong, Tuning(args.tuning)),
                   args.seed, call_jun, timing, paces_of(args))


def readings_of(args: argparse.Namespace) -> dict[str, str]:
    """The ``--reading ID=OPTION`` of *args* (UsageError for one that is not of that form)."""
    from yuesheng.cuesheet import parse_reading

    readings = {}
    for item in args.reading:
        try:
            rid, option = parse_reading(item)
        except InvalidValueError as exc:
            raise UsageError(f"--reading {item!r}: expected {exc.expected}") from None
        readings[rid] = option
    return readings


def cue_path(name: str) -> Path:
    """A cue-sheet file, or the shipped sheet of a rite id (xiangyinjiu xiangshe yanli dashe)."""
    from yuesheng.production import cue_path as found

    if not name.strip():
        raise UsageError("an empty cue-sheet name")
    return found(name)


def inputs_of(args: argparse.Namespace) -> list[Path]:
    """The files a command reads: its cue sheets, the score files under --scores, a SoundFont, a --timing file,
    a SOFA file (--binaural), rehearsal logs (retime)."""
    cues = [args.cue] if getattr(args, "cue", None) else list(getattr(args, "cues", []))
    paths = [cue_path(c) for c in cues] + score_paths(getattr(args, "scores", []))
    extra = [getattr(args, name, None) for name in ("soundfont", "timing", "binaural", "paces")]
    logs = getattr(args, "log", None)
    extra += logs if isinstance(logs, list) else []
    return paths + [Path(p) for p in extra if p]


def check_output_arg(args: argparse.Namespace, output: str | None = None) -> None:
    """Refuse -o (or *output*) before any work if it cannot be written safely or names one of the inputs."""
    target = output if output is not None else args.output
    if target == "":
        raise UsageError("-o: an empty file name")
    if target is not None:
        check_output(target, inputs_of(args))


def production_for_output(args: argparse.Namespace, suffixes: tuple[str, ...], what: str) -> Production:
    """The rite of a command that writes one file: -o checked first (its suffix, unless it is a device or a
    FIFO, and that it destroys nothing), then the rite built; without -o, RITE + the first suffix, checked too."""
    if args.output and Path(args.output).suffix.lower() not in suffixes and not writes_directly(args.output):
        raise UsageError(f"-o {args.output}: expected {what}")
    check_output_arg(args)
    production = production_of(args)
    if not args.output:
        args.output = f"{production.timeline.rite_id}{suffixes[0]}"
        check_output_arg(args)
    return production


def wrote(path: str, what: str) -> str:
    """The line saying what was written: the result on stdout, or on stderr if stdout may be the output itself."""
    line = f"wrote {path}: {what}\n"
    if writes_directly(path):
        say(line.rstrip("\n"))
        return ""
    return line


def emit(args: argparse.Namespace, data: str | bytes, what: str) -> str:
    if args.output:
        write_atomic(args.output, data)
        return wrote(args.output, what)
    return data if isinstance(data, str) else ""


COUNT_IN_BEATS = 16  # --count-in (score export, songbook --midi): the most beats before a piece


def count_in(text: str) -> int:
    """An argparse type: the beats of a practice file's count-in, 0 to ``COUNT_IN_BEATS``."""
    if (beats := whole(text)) is None or beats > COUNT_IN_BEATS:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of beats from 0 to {COUNT_IN_BEATS}")
    return int(text)


QUIETEST_DB = -60.0  # the softest the others may be made: FluidSynth's velocity curve reaches velocity 4 there


def decibels(text: str) -> float:
    """An argparse type: a level below one's own part, in dB, from ``QUIETEST_DB`` to 0 (``-12``)."""
    value = decimal(text.removesuffix("dB"))
    if value is None or not QUIETEST_DB <= value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected decibels from {QUIETEST_DB:g} to 0, e.g. -12")
    return value
