"""``yuesheng score engrave`` and ``yuesheng songbook``: printed scores through LilyPond."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from yuesheng.cli.common import (
    check_output_arg,
    count_in,
    decibels,
    note_name,
    pitch_options,
    production_of,
    realization,
    scores_option,
    sequencer_options,
)
from yuesheng.errors import UsageError
from yuesheng.files import writes_directly
from yuesheng.music.repertoire import load_repertoire

_FORMATS = (".pdf", ".svg", ".png", ".ly")


def _output(args: argparse.Namespace) -> str:
    """-o, checked before any work: a format LilyPond writes, and a path that destroys nothing."""
    if Path(args.output).suffix.lower() not in _FORMATS:
        raise UsageError(f"-o {args.output}: expected a .pdf, .svg, .png or .ly file")
    check_output_arg(args)
    return str(args.output)


def _practice_output(args: argparse.Namespace, book: str) -> None:
    """--midi, checked before any work as -o is: a MIDI file (or a device or FIFO), none of the inputs, not the book."""
    if Path(args.midi).suffix.lower() not in (".mid", ".midi") and not writes_directly(args.midi):
        raise UsageError(f"--midi {args.midi}: expected a .mid file")
    if os.path.abspath(args.midi) == os.path.abspath(book):
        raise UsageError(f"--midi {args.midi}: the book itself (-o)")
    check_output_arg(args, args.midi)


def _written(paths: list[Path]) -> str:
    return str(paths[0]) + (f" (+{len(paths) - 1} more pages: {paths[1].name} …)" if len(paths) > 1 else "")


def cmd_score_engrave(args: argparse.Namespace) -> str:
    from yuesheng.cuesheet import DEFAULT_SYLLABLE
    from yuesheng.outputs.engrave import KeySignature, Notation, Setting, engrave, score_source

    output = _output(args)
    piece = load_repertoire(args.scores).find(args.piece)
    if not piece.playable:
        raise UsageError(f"{piece.id} has no notes to engrave (lost: {piece.lost.cite if piece.lost else ''})")
    setting = Setting(Notation(args.notation), realization(args), args.huangzhong, syllable=DEFAULT_SYLLABLE,
                      key=KeySignature(args.key), breath=args.breath)
    written = engrave(score_source(piece, setting), output)
    label = f", {piece.realization.label}" if piece.realization else ""
    return f"wrote {_written(written)}: {piece.title}, {len(piece.stanzas)} stanzas, {len(piece.notes)} notes, " \
           f"{args.notation}{label}\n"


def cmd_songbook(args: argparse.Namespace) -> str:
    from yuesheng.outputs.engrave import SE, KeySignature, Notation, Setting, check_notes, find_cjk_font
    from yuesheng.outputs.songbook import engrave_songbook, playing_parts, songbook

    output = _output(args)
    if args.midi:
        _practice_output(args, output)
    elif args.count_in or args.others is not None:
        raise UsageError(f"{'--count-in' if args.count_in else '--others'} is for the practice file: give it with "
                         "--midi FILE.mid")
    production = production_of(args)
    sheet, timeline = production.sheet, production.timeline
    labels = {**{v.id: v.name for v in sheet.variants.values()}, **{r.id: r.name for r in sheet.readings.values()}}
    book = songbook(timeline, part=args.part or "", labels=labels)
    if args.qing_zhong and book.part != SE:
        raise UsageError(f"--qing-zhong is how the 瑟 plays (清中雙彈): give it with --part {SE}")
    check_notes(sum(len(e.slots) for e in book.entries), f"the songbook of {timeline.rite}")
    setting = Setting(Notation(args.notation), timeline.realization, note_name(timeline.realization.huangzhong),
                      key=KeySignature(args.key), doubled=args.qing_zhong, breath=args.breath)
    written = engrave_songbook(book, setting, output, font=find_cjk_font())
    part = f", part {book.part}" if book.part else ""
    practice = ""
    if args.midi:
        from yuesheng.outputs.midi import write_midi
        from yuesheng.outputs.practice import songbook_timeline

        others = {} if args.others is None else {
            name: songbook(timeline, part=name) for name in playing_parts(timeline)}
        write_midi(songbook_timeline(book, timeline, beats=args.count_in, breath=args.breath, others=others,
                                     others_db=args.others or 0.0, doubled=args.qing_zhong), args.midi)
        practice = f"; practice file {args.midi}" + (f" (count-in of {args.count_in})" if args.count_in else "") \
            + (f" (the other parts at {args.others:+g} dB)" if others else "")
    return f"wrote {_written(written)}: {timeline.rite} songbook{part}, {len(book.entries)} pieces " \
           f"({' '.join(e.piece.title for e in book.entries)}), {args.notation}{practice}\n"


def _notation_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--notation", choices=("staff", "jianpu"), default="staff",
                        help="staff notation or 簡譜 with the 宫 of the mode as 1 (default staff)")
    parser.add_argument("--breath", action="store_true", help="editorial breath marks (’) at the ends of the lines "
                        "(the sources give none), marked editorial; with songbook --midi, a breath there too")
    parser.add_argument("--key", choices=("gong", "used"), default="gong",
                        help="staff key signature: the major key of the mode's 宫 (default), or the one the notes "
                             "used fit best (fewest accidentals)")


def add_score_engrave(p: argparse.ArgumentParser) -> None:
    """The arguments of ``score engrave`` (its parser is made, with its help, by the ``score`` group)."""
    p.add_argument("piece")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.pdf, .svg, .png or .ly")
    _notation_option(p)
    pitch_options(p)
    scores_option(p)
    p.set_defaults(func=cmd_score_engrave)


def _add_songbook(p: argparse.ArgumentParser) -> None:
    sequencer_options(p, output=False)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.pdf (or .svg, .png, .ly)")
    p.add_argument("--part", metavar="PART", help="only the pieces this part plays, as it plays them: "
                   "歌 (voice, with lyrics), 瑟 (with its string numbers), 笙, 和, 鐘, 鑮, 磬, 管")
    p.add_argument("--midi", metavar="FILE.mid", help="also write a practice MIDI file: each piece as the book "
                   "gives it (the part's line with --part), at the tempo where it is first heard, a marker at each "
                   "piece and stanza")
    p.add_argument("--count-in", type=count_in, default=0, metavar="BEATS", help="with --midi: before each piece "
                   "the mode's 宫 for a beat, then BEATS drum strokes (default 0; at most 16)")
    p.add_argument("--others", type=decibels, nargs="?", const=-12.0, metavar="DB", help="with --midi: the other "
                   "parts that play each piece sound with it, DB below their own level (default -12; without "
                   "--others the book's line alone)")
    p.add_argument("--qing-zhong", action="store_true", help="with --part 瑟: each 正律 note on its 中 and 清 "
                   "strings together, an octave apart (清中雙彈, 瑟譜 001-12b), in the book and its --midi")
    _notation_option(p)
    p.set_defaults(func=cmd_songbook)


ARGUMENTS = {"songbook": _add_songbook}
