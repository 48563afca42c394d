"""Text helpers every layer may use: glyph folding, 'did you mean', terminal-safe and terminal-wide text.

Imports nothing from yuesheng but ``errors``-free standard library code, so that the domain, the
outputs, live playback and the CLI can all share one spelling of each.

>>> normalize(" 黃鐘 "), normalize_pinyin("Huáng-zhōng")
('黄鍾', 'huangzhong')
>>> suggest("luming", ["luming2", "guanju"]), did_you_mean("tempoo", ["tempo"])
(['luming2'], " — did you mean 'tempo'?")
>>> visible("a\\x1bb"), width("鹿鳴 ok"), pad("鳴", 4) + "|"
('a\\\\x1bb', 7, '鳴  |')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

# Glyph variants and simplified forms → the forms 瑟譜 and 儀禮集釋 print.
_VARIANTS = str.maketrans(
    {
        "黃": "黄", "鐘": "鍾", "钟": "鍾", "呂": "吕", "賔": "賓", "宾": "賓",
        "夹": "夾", "无": "無", "应": "應", "则": "則", "宮": "宫", "徴": "徵",
        "变": "變", "蔟": "簇",
    }
)
# The source's variant forms → the standard (traditional) forms a reader types, for search: 闗闗雎鳩 is found as
# 關關雎鳩, 㫖 as 旨, 夀 as 壽.
_STANDARD = str.maketrans(
    {
        "闗": "關", "㫖": "旨", "夀": "壽", "鼔": "鼓", "髙": "高", "来": "來", "徳": "德", "懐": "懷", "莱": "萊",
        "𤣥": "玄", "黄": "黃", "宫": "宮", "参": "參", "𩔖": "類", "汚": "污", "耉": "耇", "釡": "釜",
    }
)
# The standard (traditional) forms → the simplified forms a reader in the mainland types (简化字总表), for search:
# 關關雎鳩 is found as 关关雎鸠. Limited to the characters of the shipped scores' words and titles (no table of every
# character is installed; written by hand, and checked by tests/test_text.py: every key is a character of a shipped
# score, and each score's simplified title alias is its title through this table). Left as written, as most
# simplified editions print them: 絺 駪 騑 鵻 鰋 隤 豵 (the 2013 通用规范汉字表 forms lie beyond the fonts' BMP).
_SIMPLIFIED = str.maketrans(
    {
        "傷": "伤", "僕": "仆", "側": "侧", "傚": "效", "兩": "两", "則": "则", "參": "参", "啓": "启", "嘽": "啴",
        "壽": "寿", "寧": "宁", "將": "将", "岡": "冈", "師": "师", "後": "后", "懷": "怀", "時": "时", "來": "来",
        "楊": "杨", "樂": "乐", "歸": "归", "澗": "涧", "澣": "浣", "濱": "滨", "為": "为", "無": "无", "爾": "尔",
        "發": "发", "絲": "丝", "綌": "绤", "綏": "绥", "維": "维", "纍": "累", "臺": "台", "萊": "莱", "華": "华",
        "萬": "万", "葉": "叶", "蘋": "苹", "處": "处", "視": "视", "詢": "询", "誰": "谁", "諏": "诹", "諗": "谂",
        "謀": "谋", "豈": "岂", "賓": "宾", "載": "载", "輾": "辗", "轉": "转", "轡": "辔", "遲": "迟", "還": "还",
        "錡": "锜", "鐘": "钟", "關": "关", "頃": "顷", "飛": "飞", "馬": "马", "馳": "驰", "駒": "驹", "駕": "驾",
        "駰": "骃", "駱": "骆", "駸": "骎", "騏": "骐", "騶": "驺", "驅": "驱", "驟": "骤", "魚": "鱼", "魴": "鲂",
        "鯉": "鲤", "鯊": "鲨", "鱧": "鳢", "鱨": "鲿", "鳥": "鸟", "鳩": "鸠", "鳴": "鸣", "鵲": "鹊", "麗": "丽",
        "黃": "黄", "齊": "齐", "宮": "宫", "驁": "骜", "貍": "狸", "儀": "仪",
    }
)
# The characters of the shipped rites' persons' names beyond the scores' (as their names are written in the
# simplified forms (简化字总表), and the variant forms a reader may type for them: 眾 for 衆, 內 for 内, 冪 for 幂,
# 隷 for 隸, 鑮 for 鎛) → the simplified form, for ``fold``. Checked by tests/test_text.py: every key, or the form it
# folds to, is a character of a shipped rite's persons' names.
_NAME_FORMS = str.maketrans(
    {
        "勝": "胜", "執": "执", "冪": "幂", "從": "从", "擯": "摈", "獲": "获", "禦": "御", "羣": "群", "舉": "举",
        "衆": "众", "眾": "众", "觶": "觯", "諸": "诸", "負": "负", "贊": "赞", "車": "车", "釋": "释", "鍾": "钟",
        "鎛": "镈", "鑮": "镈", "長": "长", "閽": "阍", "隸": "隶", "隷": "隶", "內": "内",
    }
)
SUGGEST_CUTOFF = 0.5  # difflib similarity: two-character names that share one character still match


def normalize(text: str) -> str:
    """Fold glyph variants and simplified characters to the source's forms."""
    return text.strip().translate(_VARIANTS)


def standard_forms(text: str) -> str:
    """*text* with the source's variant forms replaced by the standard ones (for a searchable text layer).

    >>> standard_forms("闗闗雎鳩 㫖且多 眉夀")
    '關關雎鳩 旨且多 眉壽'
    """
    return text.translate(_STANDARD)


def simplified_forms(text: str) -> str:
    """*text* in simplified characters, for a searchable text layer (the source's variants first made standard).

    >>> simplified_forms("闗闗雎鳩 呦呦鹿鳴")
    '关关雎鸠 呦呦鹿鸣'
    """
    return standard_forms(text).translate(_SIMPLIFIED)


def fold(text: str) -> str:
    """*text* as a name is matched however it is written: full-width forms as ASCII (NFKC), lower case, and glyph
    variants, traditional and simplified forms of a character all as one (its simplified form: 樂正, 乐正 → 乐正;
    衆賓, 眾賓, 众宾 → 众宾). Character by character (``fold_table`` gives the page the same).

    >>> fold("眾賓 2") == fold("衆宾 2") == fold("众宾 2")
    True
    """
    return simplified_forms(normalize(unicodedata.normalize("NFKC", text))).translate(_NAME_FORMS).lower()


def fold_table(texts: Sequence[str]) -> dict[str, str]:
    """Every character of the tables of forms that ``fold`` changes to one found in *texts* folded: what a page
    needs to fold a name as ``fold`` does (after NFKC, before lower case)."""
    wanted = set("".join(fold(t) for t in texts))
    tables = (_VARIANTS, _STANDARD, _SIMPLIFIED, _NAME_FORMS)
    chars = {chr(k) for table in tables for k in table} | {str(v) for table in tables for v in table.values()}
    return {c: f for c in sorted(chars) if (f := fold(c)) != c and f in wanted}


def normalize_pinyin(text: str) -> str:
    """Lower-case pinyin without tone marks, spaces or hyphens; ü and v become u."""
    folded = unicodedata.normalize("NFKD", text.lower()).replace("ü", "u").replace("v", "u")
    return re.sub(r"[^a-z0-9]", "", folded)


def suggest(name: str, candidates: Sequence[str], n: int = 2) -> list[str]:
    """The nearest spellings of *name* among *candidates* (for 'did you mean'), nearest first."""
    import difflib  # only when a name is wrong: not at every start-up

    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=SUGGEST_CUTOFF)


def hint(suggestions: Sequence[str]) -> str:
    """' — did you mean 'a' or 'b'?' for *suggestions*, or '' when there are none."""
    return f" — did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""


def did_you_mean(name: str, candidates: Sequence[str], n: int = 2) -> str:
    """The 'did you mean' hint for *name* among *candidates*, or ''."""
    return hint(suggest(name, candidates, n))


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))} | {
    c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}  # and the bidirectional controls, which reorder what a terminal shows (U+202E RIGHT-TO-LEFT OVERRIDE)


_DECIMAL = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def decimal(text: str) -> float | None:
    """*text* as a number if it is one in ASCII digits (``-4``, ``0.5``, ``1e3``), else None: Python's ``float`` also
    reads full-width and other scripts' digits (U+FF11 U+FF10, a full-width 10), which a user never means as a
    number here.

    >>> decimal("-4.5"), decimal("\\uff11\\uff10"), decimal("nan"), decimal("\\u00b2")
    (-4.5, None, None, None)
    """
    return float(text) if _DECIMAL.fullmatch(text) else None


def whole(text: str) -> int | None:
    """*text* as a whole number if it is ASCII digits only (``42``), else None (full-width digits, a superscript
    two and ``-1`` are not).

    >>> whole("42"), whole("\\uff14\\uff12"), whole("\\u00b2"), whole("")
    (42, None, None, None)
    """
    return int(text) if text.isascii() and text.isdigit() else None


def visible(text: str) -> str:
    """*text* with every control character but tab and newline, and every bidirectional control, escaped
    (ESC → ``\\x1b``, U+202E → ``\\u202e``): safe for a terminal."""
    return text.translate(_CONTROL)


def width(text: str) -> int:
    """Terminal cells taken by *text* (CJK characters take two)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, cells: int) -> str:
    """*text* padded to at least *cells* terminal cells."""
    return text + " " * max(0, cells - width(text))
