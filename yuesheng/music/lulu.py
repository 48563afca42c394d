"""律呂: the twelve 律, their registers, the 俗字 of 瑟譜, 五聲 and 二變, 宮調, tunings.

Pitch is modelled as a 律 (pitch class, 黄鍾 = 0, one semitone apart) plus a
register: 倍 (octave below), 正 (the base octave), 清 (octave above).

>>> lu("黃鐘").short, lu("huangzhong").short, lu("应").name
('黄', '黄', '應鍾')
>>> resolve("南", "工"), resolve("黄", "六")
(Pitch(lu='南', register='正'), Pitch(lu='黄', register='清'))
>>> m = parse_mode("黄鍾羽"); m.final.name, m.jun.name
('南吕', '黄鍾')
>>> round(cents_offset(lu("仲"), Tuning.SANFEN), 2)
21.51
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from yuesheng.errors import InvalidValueError, UnknownNameError
from yuesheng.text import normalize, normalize_pinyin, suggest


@dataclass(frozen=True, slots=True)
class Lu:
    """One of the twelve 律; index 0 is 黄鍾, each a semitone above the last."""

    index: int
    name: str
    short: str
    pinyin: str
    simplified: str

    def __repr__(self) -> str:
        return repr(self.short)


LU: tuple[Lu, ...] = tuple(
    Lu(i, name, name[0], py, simp)
    for i, (name, py, simp) in enumerate(
        [
            ("黄鍾", "huangzhong", "黄钟"),
            ("大吕", "dalu", "大吕"),
            ("太簇", "taicu", "太簇"),
            ("夾鍾", "jiazhong", "夹钟"),
            ("姑洗", "guxian", "姑洗"),
            ("仲吕", "zhonglu", "仲吕"),
            ("蕤賓", "ruibin", "蕤宾"),
            ("林鍾", "linzhong", "林钟"),
            ("夷則", "yize", "夷则"),
            ("南吕", "nanlu", "南吕"),
            ("無射", "wuyi", "无射"),
            ("應鍾", "yingzhong", "应钟"),
        ]
    )
)

# Every spelling a user may type, already normalized, → index.
_LU_SPELLINGS: dict[str, int] = {}
for _l in LU:
    for _s in (_l.name, _l.short, _l.simplified, normalize(_l.simplified), _l.pinyin):
        _LU_SPELLINGS[normalize(_s)] = _l.index
_LU_SPELLINGS.update({"中吕": 5, "zhonglv": 5, "dalv": 1, "nanlv": 9, "wushe": 10})


def lu(name: str | int | Lu) -> Lu:
    """The 律 named *name* in any spelling (黄鍾 黃鐘 黄钟 huangzhong 黄), or by index."""
    if isinstance(name, Lu):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        if 0 <= name < 12:
            return LU[name]
        raise InvalidValueError("律 index", name, "0..11", message=f"律 index {name} out of range, expected 0..11")
    key = normalize(str(name))
    index = _LU_SPELLINGS.get(key, _LU_SPELLINGS.get(normalize_pinyin(key)))
    if index is None:
        raise UnknownNameError("律", str(name), suggest(key, list(_LU_SPELLINGS)))
    return LU[index]


class Register(Enum):
    """Octave register of a 律: 倍 below, 正 the base octave, 清 above."""

    BEI = -1
    ZHENG = 0
    QING = 1

    @property
    def hanzi(self) -> str:
        return {-1: "倍", 0: "正", 1: "清"}[self.value]


@dataclass(frozen=True, slots=True)
class Pitch:
    """An absolute pitch of the 律呂 system: a 律 in a register."""

    lu: Lu
    register: Register = Register.ZHENG

    @property
    def semitones(self) -> int:
        """Semitones above 正 黄鍾."""
        return self.lu.index + 12 * self.register.value

    def up(self, semitones: int) -> Pitch:
        """The pitch *semitones* higher (商 of a 均 is its 宫 up 2): 應 up 2 is 大清."""
        octave, index = divmod(self.semitones + semitones, 12)
        return Pitch(LU[index], Register(octave))

    @property
    def name(self) -> str:
        """E.g. 黄, 黄清, 南倍."""
        return self.lu.short + ("" if self.register is Register.ZHENG else self.register.hanzi)

    def __repr__(self) -> str:
        return f"Pitch(lu={self.lu.short!r}, register={self.register.hanzi!r})"


# 瑟譜 卷一 雅律通俗譜例 (001-10b–11a): 俗字 with its qualifier → 律 and register.
SUZI_TABLE: tuple[tuple[str, int, Register], ...] = (
    ("合", 0, Register.ZHENG),
    ("四下", 1, Register.ZHENG),
    ("四上", 2, Register.ZHENG),
    ("一下", 3, Register.ZHENG),
    ("一上", 4, Register.ZHENG),
    ("上", 5, Register.ZHENG),
    ("勾", 6, Register.ZHENG),
    ("尺", 7, Register.ZHENG),
    ("工下", 8, Register.ZHENG),
    ("工上", 9, Register.ZHENG),
    ("凡下", 10, Register.ZHENG),
    ("凡上", 11, Register.ZHENG),
    ("六", 0, Register.QING),
    ("五下", 1, Register.QING),
    ("五上", 2, Register.QING),
    ("五緊", 3, Register.QING),
)
SUZI_SYMBOLS = "合四一上勾尺工凡六五"


def suzi_of(pitch: Pitch) -> str | None:
    """The qualified 俗字 of a pitch (太 → 四上, 黄清 → 六), or None if it has none."""
    for full, index, register in SUZI_TABLE:
        if index == pitch.lu.index and register is pitch.register:
            return full
    return None


def pitches_of_suzi(symbol: str) -> tuple[Pitch, ...]:
    """The pitches a 俗字 may stand for: bare 四 → 大 and 太; qualified 四上 → 太 only."""
    symbol = normalize(symbol).replace("𦂳", "緊")
    exact = tuple(Pitch(LU[i], r) for f, i, r in SUZI_TABLE if f == symbol)
    if exact:
        return exact
    bare = tuple(Pitch(LU[i], r) for f, i, r in SUZI_TABLE if len(f) == 2 and f[0] == symbol)
    if bare:
        return bare
    raise UnknownNameError("俗字", symbol, suggest(symbol, [f for f, _, _ in SUZI_TABLE]))


def resolve(lu_name: str | Lu, suzi: str) -> Pitch:
    """The absolute pitch of a note: the 律 line gives its class, the 俗字 its register.

    Raises InvalidValueError when the two disagree under the 雅律通俗譜例.
    """
    the_lu = lu(lu_name)
    for pitch in pitches_of_suzi(suzi):
        if pitch.lu == the_lu:
            return pitch
    allowed = "".join(p.lu.short for p in pitches_of_suzi(suzi))
    raise InvalidValueError("俗字", suzi, f"one of {allowed}",
                            message=f"律 {the_lu.short} disagrees with 俗字 {suzi} (which stands for {allowed})")


class Degree(Enum):
    """五聲 and 二變: the degree of a note in its 均, by semitones above 宮."""

    GONG = 0
    SHANG = 2
    JUE = 4
    BIANZHI = 6
    ZHI = 7
    YU = 9
    BIANGONG = 11

    @property
    def hanzi(self) -> str:
        return _DEGREE_HANZI[self]

    @property
    def is_zhengsheng(self) -> bool:
        """True for the 五聲 (正聲), False for the 二變."""
        return self not in (Degree.BIANZHI, Degree.BIANGONG)


_DEGREE_HANZI = {
    Degree.GONG: "宫", Degree.SHANG: "商", Degree.JUE: "角", Degree.BIANZHI: "變徵",
    Degree.ZHI: "徵", Degree.YU: "羽", Degree.BIANGONG: "變宫",
}
_DEGREE_SPELLINGS: dict[str, Degree] = {normalize(h): d for d, h in _DEGREE_HANZI.items()}
_DEGREE_SPELLINGS.update(
    {
        "少徵": Degree.BIANZHI, "少宫": Degree.BIANGONG, "gong": Degree.GONG, "shang": Degree.SHANG,
        "jue": Degree.JUE, "zhi": Degree.ZHI, "yu": Degree.YU, "bianzhi": Degree.BIANZHI,
        "biangong": Degree.BIANGONG,
    }
)


def degree(name: str | Degree) -> Degree:
    """A degree by name: 宫 商 角 徵 羽 變徵 變宫 (少徵, 少宫; pinyin)."""
    if isinstance(name, Degree):
        return name
    key = normalize(name)
    found = _DEGREE_SPELLINGS.get(key) or _DEGREE_SPELLINGS.get(normalize_pinyin(key))
    if found is None:
        raise UnknownNameError("degree", name, suggest(key, list(_DEGREE_SPELLINGS)))
    return found


SCALE_DEGREES: tuple[Degree, ...] = tuple(Degree)  # 宫 商 角 變徵 徵 羽 變宫


@dataclass(frozen=True, slots=True)
class Mode:
    """A 宮調: the 均 (the 律 on which 宫 stands) and the degree the melody rests on.

    ``qing`` marks the 清 forms (黄鍾清宫, 無射清商), which end in the upper octave.
    """

    jun: Lu
    degree: Degree
    qing: bool = False

    @property
    def name(self) -> str:
        return self.jun.name + ("清" if self.qing else "") + self.degree.hanzi

    @property
    def final(self) -> Lu:
        """The 律 the mode ends on (畢曲): 黄鍾羽 → 南吕, 無射商 → 黄鍾."""
        return LU[(self.jun.index + self.degree.value) % 12]

    @property
    def scale(self) -> tuple[Lu, ...]:
        """The seven 律 of the 均 in the order 宫 商 角 變徵 徵 羽 變宫."""
        return tuple(LU[(self.jun.index + d.value) % 12] for d in SCALE_DEGREES)

    def degree_of(self, the_lu: Lu) -> Degree | None:
        """The degree of *the_lu* in this 均, or None if it is not in the scale."""
        for d in SCALE_DEGREES:
            if (self.jun.index + d.value) % 12 == the_lu.index:
                return d
        return None

    def pitch_of(self, d: Degree) -> Lu:
        """The 律 of degree *d* in this 均 (宫 of 黄鍾 → 黄, 商 → 太)."""
        return LU[(self.jun.index + d.value) % 12]


def parse_mode(name: str) -> Mode:
    """Parse a 宮調 name as 瑟譜 writes it: 黄鍾宫, 黄鍾清宫, 無射清商, 蕤賔角, 中吕徴…"""
    text = normalize(name)
    for length in (2, 1):
        head, rest = text[:length], text[length:]
        if head not in _LU_SPELLINGS:
            continue
        qing = rest.startswith("清")
        found = _DEGREE_SPELLINGS.get(rest.removeprefix("清"))
        if found is not None and found.is_zhengsheng:
            return Mode(LU[_LU_SPELLINGS[head]], found, qing)
    every = [the_lu.name + d.hanzi for the_lu in LU for d in SCALE_DEGREES if d.is_zhengsheng]
    raise UnknownNameError("宮調", name, suggest(text, every))


class Tuning(Enum):
    """Equal temperament (朱載堉 新法密率, 1584) or 三分損益 (the cycle of fifths from 黄鍾)."""

    EQUAL = "equal"
    SANFEN = "sanfen"


def _sanfen_ratios() -> dict[int, Fraction]:
    """三分損益 from 黄鍾: ×2/3 (損一) and ×4/3 (益一) of the pipe, folded into one octave."""
    ratios: dict[int, Fraction] = {}
    freq = Fraction(1)
    index = 0
    for _ in range(12):
        while freq >= 2:
            freq /= 2
        ratios[index] = freq
        freq *= Fraction(3, 2)  # the next 律 a fifth up (pipe ×2/3 or ×4/3, same pitch class)
        index = (index + 7) % 12
    return ratios


_SANFEN = _sanfen_ratios()


def cents_offset(the_lu: Lu, tuning: Tuning) -> float:
    """Deviation in cents of *the_lu* from equal temperament anchored on 黄鍾."""
    if tuning is Tuning.EQUAL:
        return 0.0
    return 1200 * math.log2(_SANFEN[the_lu.index]) - 100 * the_lu.index


_NOTE = re.compile(r"^([A-Ga-g])([#b♯♭]?)(-?\d)$")
_STEP = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def parse_note_name(name: str) -> int:
    """MIDI key of a note name such as C4 (60), D4, F#3, Eb4."""
    match = _NOTE.match(name.strip())
    if not match:
        raise InvalidValueError("note name", name, "a letter, optional # or b, and an octave, e.g. C4 or D4")
    step, accidental, octave = match.groups()
    key = 12 * (int(octave) + 1) + _STEP[step.upper()] + {"#": 1, "♯": 1, "b": -1, "♭": -1}.get(accidental, 0)
    if not 0 <= key <= 127:
        raise InvalidValueError("note", name, "a MIDI key 0..127", message=f"note {name!r} is outside the MIDI range")
    return key


DEFAULT_HUANGZHONG = "C4"
# 黄鍾's key must leave every pitch of the system, 倍黄鍾 (12 below) to 應鍾清 (23 above), a MIDI key 0..127.
HUANGZHONG_KEYS = range(0 + 12, 127 - 23 + 1)


def parse_huangzhong(name: str) -> int:
    """MIDI key of 黄鍾 from a note name, within ``HUANGZHONG_KEYS`` (C0…G#7). Raises InvalidValueError."""
    key = parse_note_name(name)
    if key not in HUANGZHONG_KEYS:
        raise InvalidValueError("黄鍾", name, "a note from C0 to G#7",
                                message=f"黄鍾 = {name.strip()} (MIDI {key}) puts the 律 outside the MIDI keys 0–127 "
                                "(倍黄鍾 is 12 below, 應鍾清 23 above): choose a note from C0 to G#7")
    return key


@dataclass(frozen=True, slots=True)
class Realization:
    """How 律 become sounding pitches: the key of 黄鍾 and the tuning."""

    huangzhong: int = 60
    tuning: Tuning = Tuning.EQUAL

    def __post_init__(self) -> None:
        if self.huangzhong not in HUANGZHONG_KEYS:
            expected = f"{HUANGZHONG_KEYS.start}..{HUANGZHONG_KEYS.stop - 1}"
            raise InvalidValueError("黄鍾", self.huangzhong, expected,
                                    message=f"黄鍾 at MIDI key {self.huangzhong}: expected {expected}")

    def midi(self, pitch: Pitch) -> tuple[int, float]:
        """MIDI key and cents offset (from that key in equal temperament, to 0.01) of *pitch*."""
        return self.huangzhong + pitch.semitones, round(cents_offset(pitch.lu, self.tuning), 2)

    def frequency(self, pitch: Pitch) -> float:
        """Frequency in Hz, with A4 = 440 Hz."""
        key = self.huangzhong + pitch.semitones
        return 440.0 * 2 ** ((key - 69) / 12 + cents_offset(pitch.lu, self.tuning) / 1200)
