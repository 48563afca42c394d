"""What a render says of itself in its file's tags, and the map from the rite's time to the file's.

``yuesheng audio`` writes one JSON document (ASCII) into every file it renders (``audio.set_tags``: Vorbis comments
for FLAC and Ogg, the LIST/INFO chunk for WAV), read back from the file's header without decoding its sound
(``audio.read_tags``):

- ``yuesheng``: the document's format (``FORMAT``);
- ``rite``: the rite's id; ``options``: every option that changes the plan or the sound, name → text ('' for the
  cue sheet's own);
- ``plan``: the digest of the whole rite's plan, ``live/resume.plan_digest`` (given by the caller: one definition);
- ``span``: ``[start, end]`` in ticks of the rite, where ``--from``/``--to`` cut an excerpt, else null;
- ``length``: ticks of what was rendered (the rite or the excerpt) before it was condensed;
- ``gap`` and ``cuts``: with ``--music-only``, the longest silence kept and condense's cuts ``[[start, length,
  removed], …]`` (ticks of what was rendered: which silences were shortened, and by how much), else null;
- ``render``: what else the file is that does not move its time (a stem's part, the listener), for people.

``rite_map`` makes of span and cuts the piecewise-linear map ``[[rite seconds, file seconds], …]`` the director's page
plays the file by: null for a plain render (file time = rite time); between two points the times go linearly,
before the first and after the last the file has no sound of the rite.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yuesheng.errors import AudioError
from yuesheng.outputs.condense import Cut
from yuesheng.timeline import Options, Timeline, seconds

FORMAT = 1


@dataclass(frozen=True, slots=True)
class RenderTags:
    """What a render of a rite was made from (see the module's docstring)."""

    rite: str
    options: Mapping[str, str]
    plan: str
    length: int
    span: tuple[int, int] | None = None
    gap: int | None = None
    cuts: tuple[Cut, ...] | None = None
    render: Mapping[str, str] = field(default_factory=dict)

    def document(self) -> str:
        """The tags as the file holds them: compact ASCII JSON."""
        cuts = [[c.start_tick, c.length_ticks, c.removed_ticks] for c in self.cuts] if self.cuts is not None else None
        return json.dumps({"yuesheng": FORMAT, "rite": self.rite, "options": dict(self.options), "plan": self.plan,
                           "length": self.length, "span": list(self.span) if self.span else None, "gap": self.gap,
                           "cuts": cuts, "render": dict(self.render)}, separators=(",", ":"))


def options_text(options: Options, timeline: Timeline) -> dict[str, str]:
    """Every option of a build that changes its plan or its sound, as text ('' where the cue sheet's own holds)."""
    timing = "".join(f"{cue}={m.duration}/{m.takes}/{m.spread};" for cue, m in sorted(options.timing.items()))
    return {"variants": " ".join(sorted(timeline.variants)),
            "readings": " ".join(f"{k}={v}" for k, v in sorted(timeline.readings.items())),
            "syllable": f"{options.syllable}s" if options.syllable is not None else "",
            "tuning": timeline.realization.tuning.value,
            "huangzhong": f"MIDI {timeline.realization.huangzhong}",
            "seed": str(options.seed) if options.seed is not None else "",
            "call-jun": options.call_jun.name if options.call_jun is not None else "",
            "timing": hashlib.sha256(timing.encode()).hexdigest()[:12] if timing else "",
            "paces": options.paces.key() if options.paces is not None else ""}


def parse(document: str, path: str) -> RenderTags:
    """The tags of the file at *path* from its *document*; AudioError for a file without yuesheng's tags."""
    try:
        data: Any = json.loads(document) if document else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("yuesheng") != FORMAT:
        raise AudioError(f"{path}: no yuesheng tags (not a render of `yuesheng audio`, or one made before renders "
                         "were tagged): render it again")
    try:
        span, cuts = data["span"], data["cuts"]
        return RenderTags(rite=str(data["rite"]), options={str(k): str(v) for k, v in data["options"].items()},
                          plan=str(data["plan"]), length=int(data["length"]),
                          span=(int(span[0]), int(span[1])) if span else None,
                          gap=int(data["gap"]) if data["gap"] is not None else None,
                          cuts=tuple(Cut(int(a), int(b), int(c)) for a, b, c in cuts) if cuts is not None else None,
                          render={str(k): str(v) for k, v in data.get("render", {}).items()})
    except (KeyError, TypeError, ValueError, AttributeError):
        raise AudioError(f"{path}: its yuesheng tags are damaged: render it again") from None


def differences(tags: RenderTags, rite: str, options: Mapping[str, str], plan: str) -> list[str]:
    """How the render *tags* describe differs from the rite *rite* built with *options* to the plan *plan* (empty:
    the same), each named."""
    if tags.rite != rite:
        return [f"a render of {tags.rite}, not of {rite}"]
    unset = "(not given)"
    named = [f"{name}: {tags.options.get(name) or unset} in the file, {options.get(name) or unset} here"
             for name in sorted(set(tags.options) | set(options))
             if tags.options.get(name, "") != options.get(name, "")]
    if not named and tags.plan != plan:
        named.append(f"plan: {tags.plan} in the file, {plan} here (the cue sheet, its blocking or the program "
                     "changed since it was rendered)")
    return named


def rite_map(tags: RenderTags) -> list[list[float]] | None:
    """Rite seconds → file seconds as points of a piecewise-linear map; None where the file's time is the rite's."""
    if tags.span is None and tags.cuts is None:
        return None
    offset = tags.span[0] if tags.span else 0
    points = [(0, 0)]
    removed = 0
    for cut in tags.cuts or ():
        points.append((cut.start_tick, cut.start_tick - removed))
        removed += cut.removed_ticks
        points.append((cut.end_tick, cut.end_tick - removed))
    points.append((tags.length, tags.length - removed))
    unique = [p for n, p in enumerate(points) if n == 0 or p != points[n - 1]]
    return [[seconds(offset + rite), seconds(file)] for rite, file in unique]


def checked(path: str | Path, timeline: Timeline, options: Options, plan: str) -> RenderTags:
    """The tags of the render at *path*, read from its header (not its sound); AudioError for a file without
    yuesheng's tags, or of another rite than *timeline*'s, other *options* or another *plan* (each difference
    named)."""
    from yuesheng.outputs.audio import read_tags

    tags = parse(read_tags(path), str(path))
    named = differences(tags, timeline.rite_id, options_text(options, timeline), plan)
    if named:
        raise AudioError(f"{path}: not a render of this rite with these options: {'; '.join(named)}")
    return tags
