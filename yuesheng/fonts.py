"""The shipped text font: a subset of 花園明朝 (Hanazono Mincho) with every character the shipped texts use.

Noto CJK, the font a page asks for first, lacks some characters of the texts (𤣥 U+248E5, in 鄭注's 𤣥端, and
others of Unicode's Extension B); a tablet may have no CJK font at all. So every page carries the characters it
shows in a font of its own: ``face_css(text)`` is a CSS ``@font-face`` rule per shipped font, each a WOFF subset of
just the characters of *text*, embedded as a data URL (a page read offline needs nothing more). LilyPond is given
the same files (``FONT_FILES``) for the PDFs.

The shipped subsets (``yuesheng/data/fonts/``) are made from Debian's ``fonts-hanazono`` (HanaMinA for the BMP and
Extension A, HanaMinB for the supplementary planes) by ``python -m yuesheng.fonts`` whenever the texts, cue sheets,
scores or code gain a character; ``missing()`` names the characters they lack. Licence: the Hanazono Font Licence
(use, copy and distribute, with or without modification), chosen of the font's two (the other is the SIL OFL);
the families are renamed ``YueshengHanaA`` and ``YueshengHanaB``. fontTools is imported only when a subset is made.
"""

from __future__ import annotations

import base64
import io
import re
import sys
from contextlib import suppress
from functools import cache
from pathlib import Path

from yuesheng import caches
from yuesheng.files import write_atomic

PACKAGE = Path(__file__).resolve().parent
FONT_DIR = PACKAGE / "data" / "fonts"
FAMILIES = ("YueshengHanaA", "YueshengHanaB")
FONT_FILES = tuple(FONT_DIR / f"{family}.ttf" for family in FAMILIES)
HANAZONO = (Path("/usr/share/fonts/truetype/hanazono/HanaMinA.ttf"),
            Path("/usr/share/fonts/truetype/hanazono/HanaMinB.ttf"))
CACHE_ENTRIES = 64  # pages' font rules kept in the cache (about 160 KB each)
FIRST = 0x2E80  # the CJK radicals onwards: what the shipped fonts are for (Latin and punctuation stay the page's)
_SHIPPED = ("texts/**/*.txt", "data/*.json", "web/templates/*.j2", "**/*.py")


def shipped_text() -> str:
    """Every text the package ships or prints: the classical texts, cue sheets, scores, data, templates and code."""
    roots = [(PACKAGE, _SHIPPED)] + [(_folder(name), ("*.yaml",)) for name in ("cues", "scores", "blocking")]
    return "".join(path.read_text(encoding="utf-8") for root, patterns in roots for pattern in patterns
                   for path in sorted(root.glob(pattern)))


def _folder(name: str) -> Path:
    """The shipped ``cues`` or ``scores`` folder (in the package when installed, beside it in a checkout)."""
    return next((p for p in (PACKAGE / name, PACKAGE.parent / name) if p.is_dir()), PACKAGE / name)


def wanted(text: str) -> list[int]:
    """The code points of *text* that the shipped fonts are for, in order."""
    return _wanted(_beyond_ascii(text.encode("utf-8", "surrogatepass")))


def _wanted(beyond: bytes) -> list[int]:
    """``wanted`` of the text whose characters beyond ASCII are *beyond* (``_beyond_ascii``)."""
    return sorted(point for point in map(ord, set(beyond.decode("utf-8", "surrogatepass"))) if point >= FIRST)


def _beyond_ascii(data: bytes) -> bytes:
    """The characters beyond ASCII of the text whose UTF-8 is *data*: a page is a million characters, nineteen in
    twenty of them ASCII, and ``set`` would take each one by one. In UTF-8 no byte of another character is below 0x80,
    so deleting those bytes leaves exactly the other characters (lone surrogates included)."""
    return data.translate(None, _ASCII)


_ASCII = bytes(range(0x80))
_FORMAT = "yuesheng-fonts-1"
MAX_RULES_BYTES = 64 << 20  # a page's rules (all the shipped characters: about 3 MB); a larger entry is not read
_RULE = (r'@font-face \{ font-family: "(?:' + "|".join(FAMILIES) + r')"; font-display: block; '
         r'src: url\(data:font/woff;base64,[A-Za-z0-9+/]*={0,2}\) format\("woff"\); \}')
_RULES = re.compile(f"(?:{_RULE}(?:\n{_RULE})*)?")


@cache
def _cmaps() -> tuple[frozenset[int], ...]:
    return tuple(map(_cmap, FONT_FILES))


def _cmap(path: Path) -> frozenset[int]:
    """The characters the font at *path* has, read from its cmap alone (the file is closed after)."""
    from fontTools.ttLib import TTFont

    with TTFont(path, lazy=True) as font:
        return frozenset(font.getBestCmap())


def missing(text: str) -> list[str]:
    """The characters of *text* (from U+2E80 on) that no shipped font has."""
    cmaps = _cmaps()
    return [chr(c) for c in wanted(text) if not any(c in cmap for cmap in cmaps)]


def face_css(text: str) -> str:
    """``@font-face`` rules for the shipped families, each embedding a WOFF of the characters of *text* it has."""
    return face_css_utf8(text.encode("utf-8", "surrogatepass"))


def face_css_utf8(data: bytes) -> str:
    """``face_css`` of the text whose UTF-8 is *data* (a page encoded for its file, not encoded again here)."""
    return _faces(tuple(_wanted(_beyond_ascii(data))))


def _rules(kept: bytes | None) -> str | None:
    """Kept rules, if they are rules as ``_make_faces`` writes them (they go into a page as they are)."""
    with suppress(UnicodeDecodeError):
        if kept is not None and _RULES.fullmatch(text := kept.decode("ascii")):
            return text
    return None


@cache
def _faces(points: tuple[int, ...]) -> str:
    """The rules for *points*, from the font cache where a page of the same characters was made before (cutting the
    subset reads the whole 1.3 MB font: most of the page's time), else made and kept there."""
    folder = caches.folder("fonts")
    name = _name(points)
    if folder is not None and (kept := _rules(folder.read(name, limit=MAX_RULES_BYTES))) is not None:
        return kept
    rules = _make_faces(points)
    if folder is not None:
        folder.write(name, rules.encode("ascii"), entries=CACHE_ENTRIES)
    return rules


def _name(points: tuple[int, ...]) -> str:
    """The name of a page's rules in the font cache: ``caches.key`` of the characters, fontTools and the package
    (whose shipped fonts it cuts), and how they are cut (``_CUT``)."""
    return f"{caches.key(_FORMAT, str(_CUT), caches.library('fontTools'), ','.join(map(str, points)))[:32]}.css"


_CUT = 2  # raised when a cut of the same characters comes out otherwise (2: the shipped font's date, not the cut's)


def _make_faces(points: tuple[int, ...]) -> str:
    rules = []
    for family, path, cmap in zip(FAMILIES, FONT_FILES, _cmaps(), strict=True):
        mine = [c for c in points if c in cmap]
        if mine:
            data = base64.b64encode(_subset(path, mine, flavor="woff")).decode("ascii")
            rules.append(f'@font-face {{ font-family: "{family}"; font-display: block; '
                         f'src: url(data:font/woff;base64,{data}) format("woff"); }}')
    return "\n".join(rules)


def _subset(path: Path, points: list[int], *, flavor: str | None, family: str = "") -> bytes:
    """The font at *path* cut down to *points*, as *flavor* (None: TrueType); renamed *family* if given."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features, options.name_IDs, options.notdef_outline = [], ["*"], True
    options.drop_tables += ["FFTM"]
    out = io.BytesIO()
    with TTFont(path, recalcTimestamp=False) as font:  # the shipped font's date, not now: the same cut every run
        cutter = subset.Subsetter(options)
        cutter.populate(unicodes=points)
        cutter.subset(font)
        if family:
            _rename(font, family)
        font.flavor = flavor
        font.save(out)
    return out.getvalue()


def _rename(font: object, family: str) -> None:
    """Name the subset *family*: the family, full and PostScript names, and a note of where it comes from."""
    table = font["name"]  # type: ignore[index]
    for name_id, value in ((1, family), (4, family), (6, family),
                           (3, f"{family}: a subset of Hanazono Mincho (GlyphWiki Project) made for yuesheng")):
        table.setName(value, name_id, 3, 1, 0x409)
        table.setName(value, name_id, 1, 0, 0)


def build(sources: tuple[Path, ...] = HANAZONO) -> list[str]:
    """Write the shipped subsets from the Hanazono fonts *sources*: every character of ``shipped_text()`` each has
    (A first, B for the rest). Returns the characters neither has."""
    points = wanted(shipped_text())
    FONT_DIR.mkdir(parents=True, exist_ok=True)
    taken: set[int] = set()
    for family, source, target in zip(FAMILIES, sources, FONT_FILES, strict=True):
        cmap = _cmap(source)
        mine = [c for c in points if c in cmap and c not in taken]
        taken.update(mine)
        write_atomic(target, _subset(source, mine, flavor=None, family=family))
    _cmaps.cache_clear()
    return [chr(c) for c in points if c not in taken]


def main() -> int:
    """``python -m yuesheng.fonts``: remake the shipped subsets (needs Debian's fonts-hanazono)."""
    lacking = build()
    for path in FONT_FILES:
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    if lacking:
        print(f"no Hanazono glyph for: {''.join(lacking)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
