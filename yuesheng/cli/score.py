"""``yuesheng lu`` and ``yuesheng score list|show|check|export|engrave``: the 律 table and the scores."""

from __future__ import annotations

import argparse
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.cli.common import (
    check_output_arg,
    count_in,
    decibels,
    note_name,
    pitch_options,
    realization,
    scores_option,
    wrote,
)
from yuesheng.cli.parsing import EXIT_INVALID, EXIT_OK, Parser, dump_json, format_option
from yuesheng.cli.streams import say
from yuesheng.errors import InvalidInputError, Problem, UsageError
from yuesheng.music.lulu import LU, Pitch, Realization, Register, Tuning, suzi_of
from yuesheng.music.repertoire import Repertoire, data_dir, duplicate_ids, load_repertoire, score_paths
from yuesheng.music.score import Piece, check_source, load_piece, read_piece
from yuesheng.text import decimal, pad
from yuesheng.yamlload import load as load_yaml

if TYPE_CHECKING:
    from yuesheng.timeline import Timeline

NOTE_VALUES = (1 / 64, 64.0)  # --note-value: the shortest and longest, in beats


def cmd_lu(args: argparse.Namespace) -> str:
    """The table of the twelve 律 in the 正 and 清 registers."""
    real = realization(args)
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
        lines.append(f"{pad(str(r['lu']), 8)}{pad(str(r['name']), 10)}{pad(str(r['suzi'] or '—'), 7)}"
                     f"{pad(str(r['pinyin']), 12)}{r['midi']:>4}  {r['note']:<4}{r['cents']:>+7.2f}{r['hz']:>9.2f}")
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
        "aliases": list(p.aliases), "mode_common": p.mode_common, "source": p.source.as_dict() if p.source else {},
        "lost": p.lost.as_dict() if p.lost else None,
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
    real = realization(args)
    if args.format == "json":
        return dump_json(piece_json(p, real))
    out = [f"{p.title} ({p.id}) — {p.mode.name if p.mode else 'no mode'}"
           f"{f' (俗呼 {p.mode_common})' if p.mode_common else ''} — {p.provenance_label}"]
    if p.source:
        out.append(f"source: {p.source.text}, pages {', '.join(p.source.pages)}")
    if p.lost:
        out.append(f"lost: {p.lost.citation()}")
    if p.realization:
        out.append(f"{p.realization.heading}: {p.realization.rule}")
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
        out.append(f"\nemendation: stanza {e.stanza} {e.line} position {e.position}: "
                   f"{e.transmitted} → {e.adopted}. {e.reason}")
    return "\n".join(out) + "\n"


def _declared_id(path: Path) -> str | None:
    """The ``id:`` a score file gives, if its YAML reads at all."""
    try:
        data = load_yaml(path).data
    except InvalidInputError:
        return None
    return data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None


def _check_targets(names: list[str], extra: list[str]) -> list[Path]:
    """Score files to check: all of them, or those named (by path, id or title).

    A user's file replaces the shipped piece of its id even when it fails its checks (then it is
    the one checked, and fails); a failing file that replaces nothing is always checked.
    """
    paths = score_paths(extra)
    if not names:
        return paths
    repertoire, chosen, unreadable = Repertoire(), {}, []
    for path in paths:
        try:
            piece = load_piece(path)
        except InvalidInputError:
            pid = _declared_id(path)
            if pid is not None and pid in repertoire.pieces:
                chosen[pid] = path
            else:
                unreadable.append(path)
            continue
        repertoire.add(piece)
        chosen[piece.id] = path
    named = [Path(n) if Path(n).is_file() else chosen[repertoire.find(n).id] for n in names]
    return list(dict.fromkeys(named + unreadable))


def cmd_score_check(args: argparse.Namespace) -> tuple[str, int]:
    paths = _check_targets(args.pieces, args.scores)
    duplicates = _duplicates(args.scores)
    out: list[str] = []
    failed = 0
    for path in paths:
        try:
            doc = load_yaml(path)
            p = read_piece(doc)
            problems = check_source(doc, p)  # the file read once: its checks, then its text against the pages
        except InvalidInputError as exc:
            problems = list(exc.problems)
        problems += duplicates.pop(str(path), [])
        if problems:
            failed += 1
            for problem in problems:
                say(str(problem))
            continue
        out.append(f"{p.id} {p.title}: ok — {len(p.stanzas)} stanzas, {len(p.notes)} notes, {p.provenance_label}, "
                   f"emendations {len(p.emendations)}, recorded irregularities {len(p.irregularities)}")
        for e in p.emendations:
            out.append(f"  emendation: stanza {e.stanza} {e.line} position {e.position}: "
                       f"{e.transmitted} → {e.adopted} — {e.reason}")
        for i in p.irregularities:
            out.append(f"  irregularity: stanza {i.stanza} {i.check}: {i.reason} ({i.cite})")
    for problem in (p for found in duplicates.values() for p in found):  # files not checked here: still said
        say(str(problem))
    out.append(f"\n{len(paths) - failed} of {len(paths)} scores pass their cross-checks")
    return "\n".join(out) + "\n", EXIT_INVALID if failed or duplicates else EXIT_OK


def _duplicates(extra: list[str]) -> dict[str, list[Problem]]:
    """By file, the duplicate piece ids among the user's score files (``repertoire.duplicate_ids``)."""
    shipped = data_dir("scores").resolve()
    loaded = []
    for path in score_paths(extra):
        if path.resolve().parent != shipped:
            try:
                loaded.append((path, load_piece(path)))
            except InvalidInputError:  # its own problems are said where it is checked
                continue
    found: dict[str, list[Problem]] = {}
    for problem in duplicate_ids(loaded):
        found.setdefault(problem.file, []).append(problem)
    return found


def note_value(text: str) -> float:
    """An argparse type: a number of beats from 1/64 to 64."""
    value = decimal(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (ASCII digits: 0.5, 1, 1.5)")
    if not NOTE_VALUES[0] <= value <= NOTE_VALUES[1]:
        raise argparse.ArgumentTypeError(f"{text} beats: expected from 1/64 (a 256th note) to {NOTE_VALUES[1]:g}")
    return value


def cmd_score_export(args: argparse.Namespace) -> str:
    suffix = Path(args.output).suffix.lower()
    if suffix not in (".mid", ".midi", ".musicxml", ".xml"):
        raise UsageError(f"-o {args.output}: expected a .musicxml, .xml or .mid file")
    if suffix in (".musicxml", ".xml") and (args.count_in or args.part or args.others is not None or args.rite):
        raise UsageError("--count-in, --part, --rite and --others are for a practice MIDI file (-o FILE.mid)")
    if (args.rite or args.others is not None) and not args.part:
        raise UsageError(f"{'--rite' if args.rite else '--others'} goes with --part (the part's book in a rite)")
    if suffix in (".musicxml", ".xml") and args.note_value > 4:
        raise UsageError(f"--note-value {args.note_value:g}: a MusicXML note is at most a bar of 4/4 (4 beats)")
    real = realization(args)
    check_output_arg(args)
    p = load_repertoire(args.scores).find(args.piece)
    if not p.playable:
        raise UsageError(f"{p.id} has no notes to export")
    if suffix in (".mid", ".midi"):
        from yuesheng.cuesheet import DEFAULT_SYLLABLE
        from yuesheng.outputs.midi import write_midi
        from yuesheng.outputs.practice import with_count_in
        from yuesheng.timeline import piece_timeline

        if args.part:
            played, how = _part_practice(p, args, real)
            write_midi(played, args.output)
            return wrote(args.output, f"{p.title}, {len(p.notes)} notes, {how}")
        # a beat is the crotchet the engraved score marks (♩ = 40: DEFAULT_SYLLABLE), not a second
        beat = Fraction(args.note_value) * DEFAULT_SYLLABLE
        played = with_count_in(piece_timeline(p, realization=real, syllable=beat), p, beats=args.count_in,
                               beat=DEFAULT_SYLLABLE)
        write_midi(played, args.output)
    elif suffix in (".musicxml", ".xml"):
        from yuesheng.outputs.musicxml import write_musicxml

        write_musicxml(p, args.output, realization=real, note_value=args.note_value)
    label = f" ({p.provenance_label}: {p.realization.rule})" if p.realization else ""
    return wrote(args.output, f"{p.title}, {len(p.notes)} notes, one {args.note_value:g}-beat note per syllable{label}")


def _part_practice(piece: Piece, args: argparse.Namespace, real: Realization) -> tuple[Timeline, str]:
    """*piece* as the book of ``--part`` gives it in ``--rite`` (else the first shipped rite in which that part plays
    it), at that book's tempo, with the count-in and, with ``--others``, the parts that play it with it softer; and
    what it is, for the message."""
    from yuesheng.datafiles import rites
    from yuesheng.errors import UnknownNameError
    from yuesheng.outputs.practice import songbook_timeline
    from yuesheng.outputs.songbook import part_name, playing_parts, songbook
    from yuesheng.production import build, load
    from yuesheng.timeline import Options

    try:
        part = part_name(args.part)
    except UnknownNameError as exc:
        raise UsageError(f"--part: {exc}") from None
    for rite in [args.rite] if args.rite else list(rites()):
        timeline = build(load(rite, scores=args.scores), Options(realization=real))
        try:
            book = songbook(timeline, part=part)
        except UnknownNameError:  # the part plays nothing in this rite
            continue
        entry = next((e for e in book.entries if e.piece.id == piece.id), None)
        if entry is not None and any(s.key is not None for s in entry.slots):
            break
    else:
        where = f"{args.rite}" if args.rite else "any shipped rite"
        raise UsageError(f"--part {part}: it does not play {piece.title} in {where}")
    others = {} if args.others is None else {
        name: songbook(timeline, part=name) for name in playing_parts(timeline)}
    played = songbook_timeline(replace(book, entries=(entry,)), timeline, beats=args.count_in, others=others,
                               others_db=args.others if args.others is not None else 0.0)
    tempo = round(60 / float(entry.syllable)) if entry.syllable else 40
    return played, f"{part} as its book of {timeline.rite} gives it, ♩ = {tempo}" + (
        f", the other parts at {args.others:+g} dB" if others else "")


def _add_lu(p: argparse.ArgumentParser) -> None:
    pitch_options(p)
    format_option(p)
    p.set_defaults(func=cmd_lu)


def _add_score(score: argparse.ArgumentParser) -> None:
    ssub = score.add_subparsers(dest="score_command", required=True, parser_class=Parser)
    p = ssub.add_parser("list", help="every piece: id, title, mode, provenance, stanza and note counts")
    format_option(p)
    scores_option(p)
    p.set_defaults(func=cmd_score_list)
    p = ssub.add_parser("show", help="a piece, stanza by stanza: lyric, 律, 俗字, pitch")
    p.add_argument("piece", help="id or title (traditional or simplified), e.g. luming, 鹿鳴, 鹿鸣")
    format_option(p)
    pitch_options(p)
    scores_option(p)
    p.set_defaults(func=cmd_score_show)
    p = ssub.add_parser("check", help="run the cross-checks and list every emendation (exit 1 on a problem)")
    p.add_argument("pieces", nargs="*", help="ids, titles or score files (default: all)")
    scores_option(p)
    p.set_defaults(func=cmd_score_check)
    p = ssub.add_parser("export", help="MusicXML with the lyrics, 律 and 俗字 under the notes")
    p.add_argument("piece")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.musicxml or FILE.mid")
    p.add_argument("--note-value", type=note_value, default=1.0, metavar="BEATS",
                   help="length of each syllable's note in beats (the sources give none; default 1; a beat is "
                        "a crotchet, at the engraved score's ♩ = 40 in MIDI: 1.5 s)")
    p.add_argument("--count-in", type=count_in, default=0, metavar="BEATS",
                   help="MIDI only, for practice: the mode's 宫 for a beat, then BEATS drum strokes, before the "
                        "piece (default 0: none; at most 16)")
    p.add_argument("--part", metavar="PART", help="MIDI only, for practice: the piece as this part's book gives it "
                   "(歌 瑟 笙 和 鐘 鑮 磬 管) in --rite, at that book's tempo")
    p.add_argument("--rite", choices=_rite_ids(), help="with --part: the rite whose book to follow (default: the "
                   "first in which the part plays the piece)")
    p.add_argument("--others", type=decibels, nargs="?", const=-12.0, metavar="DB", help="with --part: the parts "
                   "that play the piece with it, DB below their own level (default -12; without, the part alone)")
    pitch_options(p)
    scores_option(p)
    p.set_defaults(func=cmd_score_export)
    ssub.add_parser("engrave", help="engrave a piece with LilyPond: PDF, SVG, PNG or the .ly source",
                    fill=_add_score_engrave)


def _rite_ids() -> list[str]:
    from yuesheng.datafiles import rites

    return list(rites())


def _add_score_engrave(p: argparse.ArgumentParser) -> None:
    """``score engrave``'s arguments, from the module of the engraving commands, imported only when it runs."""
    from yuesheng.cli.engrave import add_score_engrave

    add_score_engrave(p)


ARGUMENTS = {"lu": _add_lu, "score": _add_score}
