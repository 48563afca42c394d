"""終: how the pieces of a music cue make up the 終 the texts count.

- Each performance of a piece is one 終 (升歌 鹿鳴 四牡 皇皇者華: three; 鹿鳴三終: three).
- An ode sung and the 笙 piece that answers it are one 終 (間歌, and the 間 of a
  無算樂): 釋曰 4-26a 間歌每間爲一終.
- A 周南 ode and the 召南 ode matched with it are one 終 (合樂, 鄉樂): 釋曰 4-26a
  鵲巢合關雎采蘩合葛蕈采蘋合卷耳每合爲一終, so 合樂 is three 終 as 鄭注 8-7a counts
  it (合樂三終). The 召南 ode may stand anywhere after its 周南 ode in the cue: the
  經 lists the three 周南 odes, then the three 召南 odes.

How the pieces of one 終 sound (in turn, or a 合 pair together) is the
timeline's business and a reading; the count is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from yuesheng.cuesheet.model import Cue, MusicKind, PieceRef
from yuesheng.datafiles import data_table

SUNG, BLOWN = "歌", "笙"  # a piece's part: sung to the 瑟, or blown on the 笙; no part: all the cue's parts


@dataclass(frozen=True, slots=True)
class Zhong:
    """One 終: its pieces in the order they begin; *he* when it is a 周南 ode with its 召南 ode (合, all parts)."""

    pieces: tuple[PieceRef, ...]
    he: bool = False


def _pairs_he(kind: MusicKind | None) -> bool:
    return kind in (MusicKind.HEYUE, MusicKind.WUSUAN)


def _pairs_jian(kind: MusicKind | None) -> bool:
    return kind in (MusicKind.JIANGE, MusicKind.WUSUAN)


def zhong_of(cue: Cue) -> list[Zhong]:
    """The 終 of *cue* once through its pieces, in order (a piece with ``zhong: N`` gives N 終)."""
    refs = list(cue.pieces)
    used: set[int] = set()
    out: list[Zhong] = []
    for n, ref in enumerate(refs):
        if n in used:
            continue
        used.add(n)
        partner = _partner(cue.music, refs, n, used)
        if partner is not None:
            used.add(partner)
            out.append(Zhong((ref, refs[partner]), he=not ref.part))
        else:
            out += [Zhong((ref,))] * ref.zhong
    return out


def _partner(kind: MusicKind | None, refs: list[PieceRef], n: int, used: set[int]) -> int | None:
    """The index of the piece that makes one 終 with refs[n], if any."""
    ref = refs[n]
    if ref.zhong != 1:
        return None
    if _pairs_jian(kind) and ref.part == SUNG and n + 1 < len(refs) and refs[n + 1].part == BLOWN \
            and refs[n + 1].zhong == 1:
        return n + 1
    pairs: dict[str, str] = data_table("music")["he"]["pairs"]  # 周南 ode → its 召南 ode (4-26a 每合爲一終)
    if _pairs_he(kind) and not ref.part and ref.piece.id in pairs:
        return next((m for m in range(n + 1, len(refs)) if m not in used and refs[m].zhong == 1
                     and refs[m].piece.id == pairs[ref.piece.id] and not refs[m].part), None)
    return None


def zhong_count(cue: Cue) -> int:
    """How many 終 the cue sounds once through its pieces."""
    return len(zhong_of(cue))


def programme(cue: Cue) -> str:
    """The pieces of a music cue by 終: '鹿鳴 四牡 皇皇者華', '鹿鳴×3', '關雎+鵲巢 葛覃+采蘩 卷耳+采蘋'."""
    runs: list[tuple[str, int]] = []  # (name, times in a row)
    for zhong in zhong_of(cue):
        name = "+".join(ref.piece.title for ref in zhong.pieces)
        if runs and runs[-1][0] == name:
            runs[-1] = (name, runs[-1][1] + 1)
        else:
            runs.append((name, 1))
    return " ".join(name + (f"×{n}" if n > 1 else "") for name, n in runs)
