"""Timeline → markers that audio tools read: an Audacity label track and a CUE sheet.

Both give times from the start of the audio rendered from the same Timeline
(tick 0 is frame 0), so they land on their cues in a full render and, from the
condensed Timeline, in a ``--music-only`` one.

Audacity label track (UTF-8, one label per cue, seconds with six decimals)::

    0.000000<TAB>12.500000<TAB>gongru: 工入
    12.500000<TAB>167.000000<TAB>shengge: ♪升歌 鹿鳴 四牡 皇皇者華

CUE sheet (UTF-8 with a byte-order mark, so players detect the hanzi; one
TRACK per music cue (cues that start together share one), ``WAVE`` for any
audio file as the format has it; INDEX in minutes:seconds:frames at 75 frames
a second, minutes past 99 for long rites; a first track that does not start at
0 gets its pre-gap as INDEX 00)::

    TITLE "鄉飲酒禮"
    FILE "xiangyinjiu.flac" WAVE
      TRACK 01 AUDIO
        TITLE "升歌 鹿鳴 四牡 皇皇者華"
        REM CUE shengge
        INDEX 00 00:00:00
        INDEX 01 00:12:37
"""

from __future__ import annotations

from yuesheng.cuesheet.zhong import programme
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Timeline

CD_FRAMES = 75  # CUE-sheet frames a second


def _what(timing: CueTiming) -> str:
    cue = timing.cue
    if cue.is_music:
        return f"{cue.music.value if cue.music else ''} {programme(cue) or cue.words}".strip()
    return cue.action


def audacity_labels(timeline: Timeline) -> str:
    """One label a cue: start, end (seconds) and the cue's id and what happens, tab-separated."""
    lines = []
    for t in timeline.cues:
        music = "♪" if t.cue.is_music else ""
        lines.append(f"{t.start_tick / TICKS_PER_SECOND:.6f}\t{t.end_tick / TICKS_PER_SECOND:.6f}\t"
                     f"{t.cue.id}: {music}{_what(t)}")
    return "\n".join(lines) + "\n" if lines else ""


def cue_time(tick: int) -> str:
    """Ticks → the CUE sheet's mm:ss:ff (75 frames a second, rounded down: never before the cue)."""
    frames = tick * CD_FRAMES // TICKS_PER_SECOND
    minutes, rest = divmod(frames, 60 * CD_FRAMES)
    return f"{minutes:02d}:{rest // CD_FRAMES:02d}:{rest % CD_FRAMES:02d}"


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def cue_sheet(timeline: Timeline, audio_name: str) -> str:
    """A CUE sheet of *audio_name* with one track per music cue of *timeline*."""
    lines = ["\ufeffREM COMMENT \"yuesheng: one track per music cue\"", f"TITLE {_quoted(timeline.rite)}",
             f"FILE {_quoted(audio_name)} WAVE"]
    for n, group in enumerate(tracks(timeline), 1):
        lines += [f"  TRACK {n:02d} AUDIO", f"    TITLE {_quoted(' / '.join(_what(t) for t in group))}",
                  f"    REM CUE {' '.join(t.cue.id for t in group)}"]
        if n == 1 and group[0].start_tick > 0:
            lines.append("    INDEX 00 00:00:00")
        lines.append(f"    INDEX 01 {cue_time(group[0].start_tick)}")
    return "\n".join(lines) + "\n"


def tracks(timeline: Timeline) -> list[list[CueTiming]]:
    """The music cues as CUE tracks: cues that start on the same CUE frame share one (a track cannot be empty)."""
    out: list[list[CueTiming]] = []
    for t in timeline.cues:
        if not t.cue.is_music:
            continue
        if out and cue_time(out[-1][0].start_tick) == cue_time(t.start_tick):
            out[-1].append(t)
        else:
            out.append([t])
    return out
