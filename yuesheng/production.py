"""A production of a rite: the one way from files and options to a CueSheet, its Timeline and its staging.

Every command, the console, the tests and the benchmarks build a rite here, and the public API is made of it
(``yuesheng.load``, ``yuesheng.build``, ``yuesheng.produce``; ``yuesheng.write_midi`` is ``outputs.midi``'s)::

    import yuesheng
    sheet = yuesheng.load("xiangshe")                      # a shipped rite's id, or a cue-sheet file
    timeline = yuesheng.build(sheet, yuesheng.Options(variants=frozenset({"..."})))
    yuesheng.write_midi(timeline, "xiangshe.mid")

``load`` reads and checks a cue sheet (YAML, schema, references, the ritual rules). ``produce`` builds it: it finds
what each action lasts on the ground where a blocking stands beside the sheet (``staging.ground``), builds the
Timeline on that (a value: the builder reads no file), and stages the whole rite only when an output draws it
(``Production.staged``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.check.validate import build_located, load_cuesheet
from yuesheng.music.repertoire import Repertoire, data_dir, load_repertoire
from yuesheng.timeline import Options

if TYPE_CHECKING:
    from yuesheng.cuesheet import CueSheet
    from yuesheng.staging.ground import Ground
    from yuesheng.staging.motion import Motion
    from yuesheng.staging.rite import StagedRite
    from yuesheng.timeline import Timeline


@dataclass(frozen=True)
class Production:
    """A rite built: its cue sheet, the options, the Timeline, and the ground its blocking gives (None: the sheet's
    estimates), with everyone's stands at every cue staged on first use."""

    sheet: CueSheet
    options: Options
    timeline: Timeline
    ground: Ground | None = None

    @cached_property
    def staged(self) -> StagedRite | None:
        """The rite on the ground (kept between runs, ``staging.ground``), None where no blocking is in force."""
        return self.ground.rite(self.sheet) if self.ground is not None else None

    @cached_property
    def motion(self) -> Motion | None:
        """Where every member is at any instant (``staging.motion``): the staged rite on the Timeline's cue spans;
        None where no blocking is in force."""
        from yuesheng.staging.motion import Motion
        from yuesheng.timeline.model import seconds

        staged = self.staged
        if staged is None:
            return None
        return Motion(staged, {c.cue.id: (seconds(c.start_tick), seconds(c.end_tick)) for c in self.timeline.cues})


def cue_path(name: str | Path) -> Path:
    """A cue-sheet file, or the shipped sheet of a rite id (xiangyinjiu xiangshe yanli dashe) where no such file
    exists."""
    path = Path(name)
    shipped = data_dir("cues") / f"{name}.yaml"
    return shipped if not path.exists() and shipped.exists() else path


def load(cue: str | Path, *, scores: Sequence[str | Path] = (), repertoire: Repertoire | None = None,
         variants: Iterable[str] | None = None, readings: Mapping[str, str] | None = None) -> CueSheet:
    """The cue sheet *cue* (a file, or a shipped rite's id), read and checked: YAML, schema, references and the
    ritual rules, on the programme of *variants* and *readings* if either is given, else on every programme
    (InvalidInputError holding every error with its file:line:col). Its pieces come from *repertoire*, else the
    shipped scores with *scores* (files or folders) replacing pieces of the same id."""
    known = repertoire if repertoire is not None else load_repertoire([str(s) for s in scores])
    programme = None if variants is None and readings is None else (frozenset(variants or ()), dict(readings or {}))
    return load_cuesheet(cue_path(cue), known, programme)


def produce(sheet: CueSheet, options: Options = Options()) -> Production:
    """*sheet* built with *options*: the ground of its programme, where a blocking beside it stages, and the Timeline
    on it (InvalidInputError located in the file for a limit broken or a cycle of anchors; UnknownNameError for a
    variant or reading the sheet lacks)."""
    from yuesheng.staging.ground import ground_of

    ground, notice = ground_of(sheet, *sheet.programme(options.variants, options.readings))
    return Production(sheet, options, build_located(sheet, options, ground, notice), ground)


def build(sheet: CueSheet | str | Path, options: Options = Options()) -> Timeline:
    """The Timeline of *sheet* (a CueSheet, or what ``load`` takes) with *options*: ``produce``'s Timeline."""
    if isinstance(sheet, (str, Path)):
        sheet = load(sheet, variants=options.variants, readings=options.readings)
    return produce(sheet, options).timeline
