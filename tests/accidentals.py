"""What LilyPond draws, read back: a Scheme engraver put into a book's source logs every bar line and every note head
of each staff, with the accidental drawn on it (none, plain, or in parentheses: a cautionary sign), and this module
compares those with what common practice needs of a reader: a sign holds to the next bar line, in its own octave.

The rule is computed from what is drawn, not from the source: the bar lines LilyPond drew, the pitches of the heads it
drew and the key signature in force at each. A staff whose stanza were one long measure (``\\cadenzaOn``, where
``\\bar "|"`` starts none) draws its bars all the same, so a sign missing after one is found.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from yuesheng.outputs.engrave import find_lilypond, run_tool

_LOG = "yuesheng-acc"
_LOGGER = r"""
#(define (yueshengAccidentalLog context)
  (let ((heads '()) (bars '()))
    (make-engraver
      ((initialize engraver) (ly:message "yuesheng-acc start"))
      (acknowledgers
        ((note-head-interface engraver grob source-engraver) (set! heads (cons grob heads)))
        ((bar-line-interface engraver grob source-engraver) (set! bars (cons grob bars))))
      ((stop-translation-timestep engraver)
        (for-each (lambda (bar) (ly:message "yuesheng-acc bar ~a" (ly:grob-property bar 'glyph ""))) bars)
        (for-each
          (lambda (head)
            (let* ((pitch (ly:event-property (event-cause head) 'pitch))
                   (name (ly:pitch-notename pitch))
                   (acc (ly:grob-object head 'accidental-grob))
                   (in-key (assv name (ly:context-property context 'keyAlterations '()))))
              (ly:message "yuesheng-acc note ~a ~a ~a ~a ~a" name (ly:pitch-octave pitch) (ly:pitch-alteration pitch)
                (if (pair? in-key) (cdr in-key) 0)
                (cond ((not (ly:grob? acc)) "none")
                      ((not (ly:grob-property-data acc 'stencil)) "none")
                      ((ly:grob-property acc 'parenthesized #f) "cautionary")
                      (else "plain")))))
          (reverse heads))
        (set! heads '())
        (set! bars '())))))
\layout { \context { \Staff \consists #yueshengAccidentalLog } }
"""


@dataclass(frozen=True, slots=True)
class Head:
    """A note head as drawn: its letter (0 = C) and octave (0: middle C's), its alteration in semitones, the
    alteration the key signature gives its letter, and the sign drawn on it: none, plain or cautionary."""

    letter: int
    octave: int
    alteration: Fraction
    in_key: Fraction
    drawn: str


Staff = list[Head | None]  # the heads of one staff in order, None where a bar line is drawn


def with_logger(source: str) -> str:
    """*source* with the logging engraver in every staff (after its ``\\version`` line)."""
    head, _, rest = source.partition("\n")
    return f"{head}\n{_LOGGER}\n{rest}"


def _fraction(text: str) -> Fraction:
    return Fraction(text) * 2  # LilyPond counts alterations in whole tones


def drawn(source: str) -> list[Staff]:
    """Engrave *source* (output thrown away) and read back each staff: its heads, and None at each bar line."""
    with tempfile.TemporaryDirectory(prefix="yuesheng-acc-") as tmp:
        folder = Path(tmp)
        (folder / "score.ly").write_text(with_logger(source), encoding="utf-8")
        log = run_tool([find_lilypond(), "-dbackend=cairo", "--pdf", "-dno-point-and-click", "-o", "out", "score.ly"],
                       cwd=folder)
    staves: list[Staff] = []
    for line in log.splitlines():
        words = line.split()
        if not words or words[0] != _LOG:
            continue
        if words[1] == "start":
            staves.append([])
        elif words[1] == "bar" and len(words) > 2 and words[2].split("[")[0] not in ("", "()"):
            staves[-1].append(None)
        elif words[1] == "note":
            letter, octave, alteration, in_key, sign = words[2:7]
            sign = sign.split("[")[0]  # LilyPond may write its progress ([8]: bar 8) on the same line
            staves[-1].append(Head(int(letter), int(octave), _fraction(alteration), _fraction(in_key), sign))
    return staves


@dataclass(frozen=True, slots=True)
class Reading:
    """A staff compared with common practice: the signs it needs, those drawn, and what is wrong."""

    needed: int
    drawn: int
    missing: list[str]  # a needed sign not drawn (or drawn only as cautionary), an expected courtesy sign not drawn
    unexplained: list[str]  # a sign drawn where none is needed and none is expected (not a courtesy)


def read(staff: Staff, where: str = "") -> Reading:
    """Compare the signs drawn on *staff* with common practice: a sign is needed where a head's alteration differs
    from the one in force (the key signature's, or the last sign on that letter and octave in the bar); a courtesy
    sign is expected where the same letter was altered otherwise in the bar before, or in another octave in this
    bar, and is drawn in parentheses."""
    needed = drawn_count = 0
    missing: list[str] = []
    unexplained: list[str] = []
    bar = 1
    here: dict[tuple[int, int], Fraction] = {}
    before: dict[tuple[int, int], Fraction] = {}
    for head in staff:
        if head is None:
            bar, before, here = bar + 1, here, {}
            continue
        spot = (head.letter, head.octave)
        force = here.get(spot, head.in_key)
        need = head.alteration != force
        courtesy = (before.get(spot, head.alteration) != head.alteration
                    or any(letter == head.letter and alt != head.alteration for (letter, _), alt in here.items()))
        name = f"{where} bar {bar}: {'CDEFGAB'[head.letter]}{head.octave:+d} {_sign(head.alteration)}"
        needed += need
        drawn_count += head.drawn != "none"
        if need and head.drawn != "plain":
            missing.append(f"{name} needs its sign, drawn {head.drawn}")
        elif not need and courtesy and head.drawn != "cautionary":
            missing.append(f"{name} expects a courtesy sign, drawn {head.drawn}")
        elif not need and head.drawn != "none" and not courtesy:
            unexplained.append(f"{name}: a {head.drawn} sign no reader needs")
        here[spot] = head.alteration
    return Reading(needed, drawn_count, missing, unexplained)


def _sign(alteration: Fraction) -> str:
    return {-2: "𝄫", -1: "♭", 0: "♮", 1: "♯", 2: "𝄪"}.get(int(alteration), str(alteration))
