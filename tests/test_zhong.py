"""終: how a music cue's pieces make up the 終 the texts count."""

from __future__ import annotations

import pytest

from yuesheng.cuesheet import Cite, Cue, MusicKind, PieceRef
from yuesheng.cuesheet.zhong import zhong_count, zhong_of


def _cue(repertoire, kind: MusicKind, *pieces: str) -> Cue:
    """A music cue from 'id', 'id:歌', 'id×3' items."""
    refs = []
    for item in pieces:
        name, _, part = item.partition(":")
        name, _, times = name.partition("×")
        refs.append(PieceRef(repertoire.find(name), int(times or 1), part))
    return Cue("c", 0, "s", Cite("4-24b", "q"), music=kind, pieces=tuple(refs))


def _titles(cue: Cue) -> list[str]:
    return ["+".join(r.piece.title for r in z.pieces) for z in zhong_of(cue)]


def test_heyue_six_odes_are_three_zhong_each_zhounan_ode_with_its_shaonan_ode(repertoire):
    cue = _cue(repertoire, MusicKind.HEYUE, "guanju", "getan", "juaner", "queshao", "caifan", "caipin")
    assert _titles(cue) == ["關雎+鵲巢", "葛覃+采蘩", "卷耳+采蘋"]
    assert all(z.he for z in zhong_of(cue)) and zhong_count(cue) == 3


def test_an_ode_without_its_partner_is_a_zhong_of_its_own(repertoire):
    cue = _cue(repertoire, MusicKind.HEYUE, "guanju", "getan", "queshao", "guanju")
    assert _titles(cue) == ["關雎+鵲巢", "葛覃", "關雎"]


def test_jiange_an_ode_and_its_sheng_piece_are_one_zhong(repertoire):
    cue = _cue(repertoire, MusicKind.JIANGE, "yuli:歌", "yougeng:笙", "nanyoujiayu:歌", "chongqiu:笙",
               "nanshanyoutai:歌", "youyi:笙")
    assert _titles(cue) == ["魚麗+由庚", "南有嘉魚+崇丘", "南山有臺+由儀"]
    assert not any(z.he for z in zhong_of(cue))


@pytest.mark.parametrize(("kind", "pieces", "expected"), [
    (MusicKind.SHENGGE, ("luming:歌", "simu:歌", "huanghuangzhehua:歌"), ["鹿鳴", "四牡", "皇皇者華"]),
    (MusicKind.SHENGGE, ("luming×3:歌",), ["鹿鳴", "鹿鳴", "鹿鳴"]),
    (MusicKind.XIAGUAN, ("xingong×3",), ["新宮", "新宮", "新宮"]),
    # 升歌, 間 and 合 mixed in a 無算樂
    (MusicKind.WUSUAN, ("luming:歌", "yuli:歌", "yougeng:笙", "guanju", "queshao"), ["鹿鳴", "魚麗+由庚", "關雎+鵲巢"]),
    # 房中之樂 is not 合: each ode its own 終
    (MusicKind.FANGZHONG, ("guanju", "queshao"), ["關雎", "鵲巢"]),
    # an ode sung alone (歌) is not paired with its 召南 ode: 合 is all the instruments
    (MusicKind.WUSUAN, ("guanju:歌", "queshao"), ["關雎", "鵲巢"]),
])
def test_zhong_of_each_kind(repertoire, kind, pieces, expected):
    assert _titles(_cue(repertoire, kind, *pieces)) == expected
