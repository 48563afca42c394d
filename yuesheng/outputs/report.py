"""Timeline → the run sheet: text for the people staging the rite, CSV for spreadsheets, JSON for programs.

The JSON form is the machine contract::

    {"rite": str, "duration_s": float, "events": [...], "tally": {...}, ...}

Every event has ``t`` (seconds), ``dur``, ``kind`` (action, marker, note, drum,
release, call) and ``cue``; notes add ``part``, ``midi``, ``cents``, ``text`` (the
syllable), ``piece``, ``zhong``; drums add ``round``, ``pair``, ``jie``; releases
add ``round``, ``pair``, ``archer``, ``arrow``, ``hit``, ``pierced``, ``counted``; calls add
``part``, ``degree``, ``midi``, ``text``; actions add ``text``, ``cite``, ``cite_layer``
(the quote's layer on its page, read from the page's parse: 經, 記, 鄭注, 釋曰), ``who``,
``where``, ``words`` and ``section``. Each of ``cues`` has its start, duration, words,
``cite`` and ``cite_layer`` (the CSV's too); an action measured in rehearsal (``--timing``) adds ``estimate_s``,
``takes`` and ``spread_s`` (the longest take less the shortest). In a staged rite (its blocking complete,
docs/staging.md) an action adds ``basis`` (its walks and formulas, or ``estimate: why``), and
every cue ``blocking``: who stands where after it (``who``, ``place`` and its ``name``, ``x`` and
``y`` in 步 east and south of the middle of the 堂's edge, ``facing``).

Kanripo private-use codes (``&KR0925;``) are shown as their standard characters
(``characters.display``) in the text and CSV run sheets and in the JSON's human
fields (``what``, ``words``, ``text``, notices); the JSON's ``cite`` keeps the
quote as the cue sheet and the shipped text write it, so a program can find it
on its page.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yuesheng.characters import display
from yuesheng.cuesheet import Cue
from yuesheng.cuesheet.zhong import programme
from yuesheng.text import width
from yuesheng.timeline import CueTiming, Event, EventKind, Timeline, clock, seconds

if TYPE_CHECKING:
    from yuesheng.staging.rite import StagedRite


def _cell(text: str, cells: int) -> str:
    """*text* (private-use codes shown as characters) cut or padded to *cells* terminal cells."""
    shown = display(text)
    if (whole := width(shown)) <= cells:
        return shown + " " * (cells - whole)
    out, used = "", 0
    for c in shown:
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
            out[-1] = Section(last.name, min(last.start_tick, t.start_tick), max(last.end_tick, t.end_tick),
                              last.cues + 1)
        else:
            out.append(Section(t.cue.section, t.start_tick, t.end_tick, 1))
    return out


def says_que(cue: Cue, ender: Cue | None) -> bool:
    """Whether the text writes 樂闋 for this music: in the music's own quote or in the action that stops it.

    The 經 writes it only for 肆夏 (8-24a, 9-12a, 9-14b); other music that runs until an action just ends.
    """
    texts = (cue.cite.quote, ender.action if ender else "", ender.cite.quote if ender else "")
    return any("樂闋" in text for text in texts)


def what_of(timeline_cue: CueTiming, by_id: dict[str, Cue]) -> str:
    """A cue as the run sheets name it: the action, or the music with its 終 and what stops it."""
    cue = timeline_cue.cue
    if cue.is_music:
        until = ""
        if cue.end_at:
            until = f" 至 {cue.end_at} ({'樂闋' if says_que(cue, by_id.get(cue.end_at)) else 'music ends'})"
        return f"♪{cue.music.value if cue.music else ''} {programme(cue)}{until}".strip()
    return cue.action


def cues_by_id(timeline: Timeline) -> dict[str, Cue]:
    return {t.cue.id: t.cue for t in timeline.cues}


def run_sheet_text(timeline: Timeline) -> str:
    """The run sheet a director rehearses from."""
    by_cue = cues_by_id(timeline)
    names = timeline.names
    real = timeline.realization
    lines = [f"{timeline.rite} ({timeline.rite_id}) — run sheet",
             f"variants: {', '.join(sorted(timeline.variants)) or 'none'}; readings: "
             f"{', '.join(f'{k}={v}' for k, v in sorted(timeline.readings.items())) or 'none'}; "
             f"tuning {real.tuning.value}, 黄鍾 = MIDI {real.huangzhong}",
             f"total {clock(timeline.duration_ticks)}", ""]
    measured = any(t.estimate_ticks is not None for t in timeline.cues)
    if measured:
        lines.insert(-1, "dur: measured in rehearsal where 'est' gives the estimate it replaced (--timing); 'takes' "
                         "gives how many takes the median is of, and their range (longest less shortest)")
    if staged := any(t.basis for t in timeline.cues):
        lines.insert(-1, "dur: an action's duration derived from the blocking: its longest walk and its formulas "
                         "(the line under it), or the cue sheet's estimate and why it is kept")
    est = f"{_cell('est', 7)} {_cell('takes', 14)} " if measured else ""
    head = f"{_cell('start', 8)} {_cell('dur', 7)} {est}{_cell('section', 10)} {_cell('cue', 22)} {_cell('who', 22)} " \
           f"{_cell('where', 12)} {_cell('action / music', 40)} {_cell('words', 16)} cite"
    lines += [head, "-" * width(head)]
    for t in timeline.cues:
        cue = t.cue
        who = ", ".join(names.get(p, p) for p in (cue.who or cue.performers))
        est = (f"{_cell(clock(t.estimate_ticks) if t.estimate_ticks is not None else '', 7)} "
               f"{_cell(takes(t), 14)} ") if measured else ""
        lines.append(f"{_cell(clock(t.start_tick), 8)} {_cell(clock(t.end_tick - t.start_tick), 7)} {est}"
                     f"{_cell(cue.section, 10)} {_cell(cue.id, 22)} {_cell(who, 22)} "
                     f"{_cell(names.get(cue.where, cue.where), 12)} {_cell(what_of(t, by_cue), 40)} "
                     f"{_cell(cue.words, 16)} {cue.cite.page} {cue.cite.layer} {display(cue.cite.quote)}")
        if staged and t.basis:
            lines.append(f"{'':17}{'':{len(est)}}  = {display(t.basis)}")
    lines += ["", "sections"]
    for s in sections(timeline):
        lines.append(f"  {_cell(s.name, 12)} {_cell(clock(s.start_tick), 8)} → {_cell(clock(s.end_tick), 8)} "
                     f"{clock(s.end_tick - s.start_tick):>8}  ({s.cues} cues)")
    if timeline.tallies:
        lines += ["", "archery (釋獲)"]
        for tally in timeline.tallies:
            lines.append(f"  {tally.round}: 右 {tally.right} 算, 左 {tally.left} 算 — {tally.announcement}")
    if timeline.notices:
        lines += ["", "notices"] + [f"  - {display(n)}" for n in timeline.notices]
    return "\n".join(lines) + "\n"


def takes(timing: CueTiming) -> str:
    """A measured action's takes and their range (longest less shortest), e.g. ``3 range 2.4s``; '' where it was
    not measured."""
    m = timing.measured
    return f"{m.takes} range {float(m.spread):.1f}s" if m else ""


def run_sheet_csv(timeline: Timeline) -> str:
    """One row per cue."""
    by_cue = cues_by_id(timeline)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["start", "start_s", "duration_s", "section", "cue", "kind", "who", "where", "action_or_music",
                     "words", "cite_page", "cite_layer", "cite_quote", "estimate_s", "takes", "spread_s",
                     "duration_basis"])
    for t in timeline.cues:
        cue = t.cue
        estimate = f"{seconds(t.estimate_ticks):.3f}" if t.estimate_ticks is not None else ""
        m = t.measured
        row = (clock(t.start_tick), f"{seconds(t.start_tick):.3f}", f"{seconds(t.end_tick - t.start_tick):.3f}",
               cue.section, cue.id, cue.music.value if cue.music else "action", " ".join(cue.who or cue.performers),
               cue.where, what_of(t, by_cue), cue.words, cue.cite.page, cue.cite.layer, cue.cite.quote, estimate,
               m.takes if m else "", f"{float(m.spread):.3f}" if m else "", t.basis)
        writer.writerow([display(str(v)) for v in row])
    return buffer.getvalue()


_EVENT_FIELDS = {
    EventKind.NOTE: ("part", "midi", "cents", "text", "piece", "zhong"),
    EventKind.DRUM: ("part", "midi", "round", "pair", "jie", "piece"),
    EventKind.RELEASE: ("round", "pair", "jie", "archer", "arrow", "hit", "pierced", "counted", "text"),
    EventKind.CALL: ("part", "degree", "midi", "cents", "text", "round", "pair", "arrow"),
    EventKind.MARKER: ("text",),
    EventKind.ACTION: ("text",),
}


def event_json(event: Event, cue: CueTiming | None = None) -> dict[str, Any]:
    """The JSON object of one event."""
    out: dict[str, Any] = {"t": round(seconds(event.start_tick), 3), "dur": round(seconds(event.length_ticks), 3),
                           "kind": event.kind.value, "cue": event.cue}
    for name in _EVENT_FIELDS[event.kind]:
        value = event.key if name == "midi" else getattr(event, name)
        out[name] = display(value) if name == "text" and isinstance(value, str) else value
    if event.kind is EventKind.ACTION and cue is not None:
        c = cue.cue
        out |= {"cite": f"{c.cite.page} {c.cite.quote}", "cite_layer": c.cite.layer, "who": list(c.who),
                "where": c.where, "words": display(c.words), "section": c.section}
    return out


def cue_blocking(rite: StagedRite, cue: str) -> list[dict[str, Any]]:
    """Who stands where after *cue* in a staged rite, facing which way: member, place (id and name), x and y in 步."""
    if cue not in rite.cues:
        return []
    places = rite.hall.places
    return [{"who": s.who, "place": s.place, "name": places[s.place].name, "x": s.point.x, "y": s.point.y,
             "facing": f"{s.facing.hanzi}面" if s.facing else None} for s in rite.cues[cue].stands.values()]


def run_sheet_json(timeline: Timeline, rite: StagedRite | None = None) -> str:
    """The machine contract (see the module docstring); with the staged *rite*, who stands where after each cue."""
    by_id = {t.cue.id: t for t in timeline.cues}
    by_cue = cues_by_id(timeline)
    real = timeline.realization
    data = {
        "rite": timeline.rite, "rite_id": timeline.rite_id, "duration_s": round(seconds(timeline.duration_ticks), 3),
        "variants": sorted(timeline.variants), "readings": timeline.readings, "tuning": real.tuning.value,
        "huangzhong_midi": real.huangzhong, "notices": [display(n) for n in timeline.notices],
        "sections": [{"section": s.name, "start_s": round(seconds(s.start_tick), 3),
                      "duration_s": round(seconds(s.end_tick - s.start_tick), 3)} for s in sections(timeline)],
        "cues": [{"cue": t.cue.id, "section": t.cue.section, "start_s": round(seconds(t.start_tick), 3),
                  "duration_s": round(seconds(t.end_tick - t.start_tick), 3), "what": display(what_of(t, by_cue)),
                  "words": display(t.cue.words), "cite": f"{t.cue.cite.page} {t.cue.cite.quote}",
                  "cite_layer": t.cue.cite.layer}
                 | ({"estimate_s": round(seconds(t.estimate_ticks), 3)} if t.estimate_ticks is not None else {})
                 | ({"takes": t.measured.takes, "spread_s": round(float(t.measured.spread), 3)} if t.measured else {})
                 | ({"basis": display(t.basis)} if t.basis else {})
                 | ({"blocking": cue_blocking(rite, t.cue.id)} if rite is not None else {})
                 for t in timeline.cues],
        "events": [event_json(e, by_id.get(e.cue)) for e in timeline.events],
        "tally": {t.round: {"right": t.right, "left": t.left, "announcement": t.announcement}
                  for t in timeline.tallies},
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"
