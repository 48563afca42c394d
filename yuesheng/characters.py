"""The Kanseki Repository's private-use codes (``&KRnnnn;``, characters outside Unicode's common planes) and the
standard characters they stand for: ``display`` shows a text as people read it.

Apart from ``sources`` (the shipped texts and their pages) so that what displays the cue sheets' text — the reader,
the run sheets, the MIDI lyrics — does not load the texts' machinery.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

UNRESOLVED = "〓"


@dataclass(frozen=True, slots=True)
class PrivateUse:
    """A Kanseki Repository private-use code, the standard character it stands for (None: not established), why."""

    code: str
    char: str | None
    source: str


# "image": the glyph image of the code in the Kanseki Repository's list of characters outside Unicode,
# "charlist": that list's Unicode column (both in GAIJI_SOURCE); then the passage that fixes the reading. A glyph
# that no Unicode character matches is shown as an ideographic description sequence (⿰ left-right, ⿻ overlaid).
GAIJI_SOURCE = ("github.com/kanripo/KR-Gaiji, commit 662fd61d3f564e26c62810329aff3b9bae9fff99 (2019-11-30): "
                "charlist.org.txt, images/KRnnnn.png")
PRIVATE_USE: dict[str, PrivateUse] = {p.code: p for p in (
    PrivateUse("KR0615", "朄", "image: 巾+柬, the form of 朄 (Noto CJK draws 朄 so); zhouli:23-22b 鄭注 quotes "
               "詩 應朄縣鼓, 音義 朄音𦙍"),
    PrivateUse("KR0621", "芒", "image: 艹 over 亾 (亾 = 亡), a form of 芒; sepu:2-2a 叶音 鳴(一章叶芒二章同…)"),
    PrivateUse("KR0764", "霤", "image: 雨 over a form of 留; 4-44a 磬階間縮… (儀禮 鄉飲酒禮記 縮霤), 鄭注 縮從也"),
    PrivateUse("KR0795", "毄", "image: 毄 as Noto CJK draws it; zhouli:24-34a 占人 …幣以比其命, 音義 …音係 (毄 = 繫)"),
    PrivateUse("KR0871", "⿰月巽", "image: 月 left, 巽 right, shown as the ideographic description ⿰月巽 (no Unicode "
               "character matched); 8-10a and 10-25b 鄭注 謂…肝膋狗胾醢 (a meat among the 庶羞)"),
    PrivateUse("KR0925", "楣", "image: 木+眉, a form of 楣; 6-29b 鄭注 正中曰棟次曰… (楣), 4-7a 鄭注 …前梁也"),
    PrivateUse("KR1055", "篴", "image: 竹 over 遂 = 篴; zhouli:23-26a 小師 鄭注 管如篴而小"),
    PrivateUse("KR1131", "徒", "image: 彳+走, a form of 徒; 10-17a 鄭注 服不負侯其徒居乏"),
    PrivateUse("KR1168", "冔", "charlist: 𠳲 (口+冔), a form of 冔; sepu:4-6a quotes 詩 文王 常服黼冔"),
    PrivateUse("KR1969", "⿻凵⿰丰丰", "image: 曲 drawn with doubled strokes, the top of 豐 (丰丰 in 凵), shown as the "
               "ideographic description ⿻凵⿰丰丰 (no Unicode character matched); 9-5b 鄭注 on 豐 其為字從豆…聲"),
    PrivateUse("KR2239", "⿰阝几", "image: 阝 left, 几 right, shown as the ideographic description ⿰阝几 (no Unicode "
               "character matched); zhouli:24-10a 音義 伊耆又作帆…二皆音耆, a variant spelling of 耆"),
    PrivateUse("KR2503", "⿰木兩", "image: 木 left, 兩 right, shown as the ideographic description ⿰木兩 (no Unicode "
               "character matched); zhouli:30-37b 音義 掚監本訛…, the 監本's miswriting of 掚 (扌 read as 木)"),
    PrivateUse("KR2691", "兆", "image: an old form of 兆; zhouli:24-15a 大卜 三…之灋, 音義 …音兆亦作兆"),
    PrivateUse("KR2852", "夢", "image: 艹 over a form of 夢; zhouli:24-19a 占夢 三…之灋, 音義 …音夢本多作夢"),
)}
_CODE = r"&(KR\d{4});"


@cache
def _code() -> re.Pattern[str]:
    return re.compile(_CODE)


def display(text: str) -> str:
    """*text* with every private-use code as its standard character; an unknown code marked ``〓KRnnnn``."""
    if "&" not in text:
        return text
    return _code().sub(_standard, text)


def private_use_codes(text: str) -> list[str]:
    """The private-use codes in *text* ('KR0925'…), in order of first use."""
    return list(dict.fromkeys(_code().findall(text)))


def _standard(match: re.Match[str]) -> str:
    known = PRIVATE_USE.get(match.group(1))
    return known.char if known and known.char else UNRESOLVED + match.group(1)
