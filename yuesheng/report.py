"""Timeline → the run sheet: text for the people staging the rite, CSV for spreadsheets, JSON for programs.

The JSON form is the machine contract::

    {"rite": str, "duration_s": float, "events": [...], "tally": {...}, ...}

Every event has ``t`` (seconds), ``dur``, ``kind`` (action, marker, note, drum,
release, call) and ``cue``; notes add ``part``, ``midi``, ``cents``, ``text`` (the
syllable), ``piece``, ``zhong``; drums add ``round``, ``pair``, ``jie``; releases
add ``round``, ``pair``, ``archer``, ``arrow``, ``hit``, ``counted``; calls add
``part``, ``degree``, ``midi``, ``text``; actions add ``text``, ``cite``, ``who``,
``where``, ``words`` and ``section``.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata
from dataclasses import dataclass
from typing import Any

from yuesheng.timeline import CueTiming, Event, EventKind, Timeline, seconds


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}


def visible(text: str) -> str:
    """*text* with every control character but tab and newline escaped (ESC → ``\\x1b``): safe for a terminal."""
    return text.translate(_CONTROL)


def clock(tick: int) -> str:
    """Ticks → m:ss, or h:mm:ss past an hour."""
    total = round(seconds(tick))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def width(text: str) -> int:
    """Terminal cells taken by *text* (CJK characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, cells: int) -> str:
    """*text* padded to at least *cells* terminal cells."""
    return text + " " * max(0, cells - width(text))


def _cell(text: str, cells: int) -> str:
    """*text* cut or padded to *cells* terminal cells."""
    out, used = "", 0
    for c in text:
        w = width(c)
        if used + w > cells:
            return out[:-1] + "…" + " " * (cells - used) if out else ""
        out, used = out + c, used + w
    return out + " " * (cells - used)


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the rite and its span."""

    name: str
    start_tick: int
    end_tick: int
    cues: int


def sections(timeline: Timeline) -> list[Section]:
    """Runs of consecutive cues with the same section, each from its first start to its last end."""
    out: list[Section] = []
    for t in timeline.cues:
        if out and out[-1].name == t.cue.section:
            last = out[-1]
            out[-1] = Section(last.name, min(last.start_tick, t.start_tick), max(last.end_tick, t.end_tick), last.cues + 1)
        else:
            out.append(Section(t.cue.section, t.start_tick, t.end_tick, 1))
    return out


def _what(timeline_cue: CueTiming) -> str:
    cue = timeline_cue.cue
    if cue.is_music:
        pieces = " ".join(p.piece.title + (f"×{p.zhong}" if p.zhong > 1 else "") for p in cue.pieces)
        until = f" 至 {cue.end_at} (樂闋)" if cue.end_at else ""
        return f"♪{cue.music.value if cue.music else ''} {pieces}{until}".strip()
    return cue.action


def run_sheet_text(timeline: Timeline) -> str:
    """The run sheet a director rehearses from."""
    names = timeline.names
    real = timeline.realization
    lines = [f"{timeline.rite} ({timeline.rite_id}) — run sheet",
             f"variants: {', '.join(sorted(timeline.variants)) or 'none'}; readings: "
             f"{', '.join(f'{k}={v}' for k, v in sorted(timeline.readings.items())) or 'none'}; "
             f"tuning {real.tuning.value}, 黄鍾 = MIDI {real.huangzhong}",
             f"total {clock(timeline.duration_ticks)}", ""]
    head = f"{_cell('start', 8)} {_cell('dur', 7)} {_cell('section', 10)} {_cell('cue', 22)} {_cell('who', 22)} " \
           f"{_cell('where', 12)} {_cell('action / music', 40)} {_cell('words', 16)} cite"
    lines += [head, "-" * width(head)]
    for t in timeline.cues:
        cue = t.cue
        who = ", ".join(names.get(p, p) for p in (cue.who or cue.performers))
        lines.append(f"{_cell(clock(t.start_tick), 8)} {_cell(clock(t.end_tick - t.start_tick), 7)} "
                     f"{_cell(cue.section, 10)} {_cell(cue.id, 22)} {_cell(who, 22)} {_cell(names.get(cue.where, cue.where), 12)} "
                     f"{_cell(_what(t), 40)} {_cell(cue.words, 16)} {cue.cite.page} {cue.cite.quote}")
    lines += ["", "sections"]
    for s in sections(timeline):
        lines.append(f"  {_cell(s.name, 12)} {_cell(clock(s.start_tick), 8)} → {_cell(clock(s.end_tick), 8)} "
                     f"{clock(s.end_tick - s.start_tick):>8}  ({s.cues} cues)")
    if timeline.tallies:
        lines += ["", "archery (釋獲)"]
        for tally in timeline.tallies:
            lines.append(f"  {tally.round}: 右 {tally.right} 算, 左 {tally.left} 算 — {tally.announcement}")
    if timeline.notices:
        lines += ["", "notices"] + [f"  - {n}" for n in timeline.notices]
    return "\n".join(lines) + "\n"


def run_sheet_csv(timeline: Timeline) -> str:
    """One row per cue."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["start", "start_s", "duration_s", "section", "cue", "kind", "who", "where", "action_or_music",
                     "words", "cite_page", "cite_quote"])
    for t in timeline.cues:
        cue = t.cue
        writer.writerow([clock(t.start_tick), f"{seconds(t.start_tick):.3f}", f"{seconds(t.end_tick - t.start_tick):.3f}",
                         cue.section, cue.id, cue.music.value if cue.music else "action", " ".join(cue.who or cue.performers),
                         cue.where, _what(t), cue.words, cue.cite.page, cue.cite.quote])
    return buffer.getvalue()


_EVENT_FIELDS = {
    EventKind.NOTE: ("part", "midi", "cents", "text", "piece", "zhong"),
    EventKind.DRUM: ("part", "midi", "round", "pair", "jie", "piece"),
    EventKind.RELEASE: ("round", "pair", "jie", "archer", "arrow", "hit", "counted", "text"),
    EventKind.CALL: ("part", "degree", "midi", "cents", "text", "round", "pair", "arrow"),
    EventKind.MARKER: ("text",),
    EventKind.ACTION: ("text",),
}


def event_json(event: Event, cue: CueTiming | None = None) -> dict[str, Any]:
    """The JSON object of one event."""
    out: dict[str, Any] = {"t": round(seconds(event.start_tick), 3), "dur": round(seconds(event.length_ticks), 3),
                           "kind": event.kind.value, "cue": event.cue}
    for name in _EVENT_FIELDS[event.kind]:
        out[name] = event.key if name == "midi" else getattr(event, name)
    if event.kind is EventKind.ACTION and cue is not None:
        c = cue.cue
        out |= {"cite": f"{c.cite.page} {c.cite.quote}", "who": list(c.who), "where": c.where, "words": c.words,
                "section": c.section}
    return out


def run_sheet_json(timeline: Timeline) -> str:
    """The machine contract (see the module docstring)."""
    by_id = {t.cue.id: t for t in timeline.cues}
    real = timeline.realization
    data = {
        "rite": timeline.rite, "rite_id": timeline.rite_id, "duration_s": round(seconds(timeline.duration_ticks), 3),
        "variants": sorted(timeline.variants), "readings": timeline.readings, "tuning": real.tuning.value,
        "huangzhong_midi": real.huangzhong, "notices": list(timeline.notices),
        "sections": [{"section": s.name, "start_s": round(seconds(s.start_tick), 3),
                      "duration_s": round(seconds(s.end_tick - s.start_tick), 3)} for s in sections(timeline)],
        "cues": [{"cue": t.cue.id, "section": t.cue.section, "start_s": round(seconds(t.start_tick), 3),
                  "duration_s": round(seconds(t.end_tick - t.start_tick), 3), "what": _what(t), "words": t.cue.words,
                  "cite": f"{t.cue.cite.page} {t.cue.cite.quote}"} for t in timeline.cues],
        "events": [event_json(e, by_id.get(e.cue)) for e in timeline.events],
        "tally": {t.round: {"right": t.right, "left": t.left, "announcement": t.announcement} for t in timeline.tallies},
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
