"""The director's page kept between runs (``web/pages.py``): read back byte for byte as it was made, under a key of
the values it is made from (any change of one is another page, the same values in another process or another file
are the same page), and an entry that is not one whole page is a miss."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from yuesheng import Production, caches, load, produce
from yuesheng.cli import main
from yuesheng.cli.common import cue_path
from yuesheng.staging.paces import shipped, with_values
from yuesheng.timeline import Measurement, Options
from yuesheng.web import pages, sheet
from yuesheng.web.pages import entry

ROOT = Path(__file__).resolve().parent.parent
RITE = "xiangyinjiu"


@pytest.fixture(scope="module")
def production(repertoire) -> Production:
    return produce(load(cue_path(RITE), repertoire=repertoire))


@pytest.fixture(scope="module")
def plate(production: Production) -> str:
    """A cue of the rite that no plate shows: a plate at it is another page."""
    staged = production.staged
    assert staged is not None
    return next(t.cue.id for t in production.timeline.cues[5:] if t.cue.id in staged.cues
                and t.cue.id not in staged.plates)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, empty."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "yuesheng" / "pages"


def _uncached(production: Production, **options: Any) -> bytes:
    """The page made with every cache off: nothing read, nothing kept."""
    caches.disable()
    try:
        return sheet.sheet_file(production, **options)
    finally:
        caches.enable()


def _no_making(monkeypatch) -> None:
    """From now on a page that is not kept cannot be made: a page returned was read back."""
    def refused(*_: Any) -> str:
        raise AssertionError("the page was made again")

    monkeypatch.setattr(sheet, "_page", refused)


def _copy(rite: str, folder: Path) -> Path:
    """A copy of a shipped rite's sheet with its blocking in *folder*: one's own files, named apart."""
    (folder / "cues").mkdir(parents=True)
    shutil.copytree(ROOT / "blocking", folder / "blocking")
    return Path(shutil.copy(cue_path(rite), folder / "cues" / f"{rite}.yaml"))


def test_a_kept_page_is_read_back_byte_for_byte_the_page_made_without_a_cache(production, plate, cache, monkeypatch):
    audio = {"src": "x.ogg", "map": None, "rite": RITE, "digest": "0" * 16}
    fresh = {(): _uncached(production), (plate,): _uncached(production, plate_at=[plate])}
    heard = _uncached(production, audio=audio)
    assert not cache.exists()
    made = sheet.sheet_file(production)
    [kept] = list(cache.iterdir())
    assert kept.name == entry(production, ())
    with_plate = sheet.sheet_file(production, plate_at=[plate])  # another page, kept beside it
    assert with_plate != made and len(list(cache.iterdir())) == 2
    _no_making(monkeypatch)
    assert sheet.sheet_file(production) == made == fresh[()]
    assert sheet.sheet_file(production, plate_at=[plate]) == with_plate == fresh[plate,]
    assert sheet.sheet_file(production, audio=audio) == heard and b'id="audio-data"' in heard

def test_every_value_the_page_is_made_of_makes_another_page(production, plate, repertoire, tmp_path):
    timeline, doc = production.timeline, production.sheet
    cue = next(t.cue for t in timeline.cues if t.cue.words)
    action = next(t.cue.id for t in timeline.cues if not t.cue.is_music)
    sung = next(t.cue for t in timeline.cues if t.cue.pieces)
    piece = sung.pieces[0].piece
    performer = next(iter(doc.performers))
    n = next(k for k, e in enumerate(timeline.events) if e.cents == 0)

    def with_cue(old: Any, new: Any) -> Any:
        return replace(doc, cues=tuple(new if c is old else c for c in doc.cues))

    def built(options: Options) -> Production:
        return produce(doc, options)

    changed = {
        "an event's pitch": replace(production, timeline=replace(timeline, events=timeline.events[:n] + (
            timeline.events[n]._replace(cents=1.0),) + timeline.events[n + 1:])),
        "a cue's words": replace(production, timeline=replace(timeline, cues=tuple(
            replace(t, cue=replace(t.cue, words=t.cue.words + "。")) if t.cue is cue else t for t in timeline.cues))),
        "a cue's timing's basis": replace(production, timeline=replace(timeline, cues=(
            replace(timeline.cues[0], basis=timeline.cues[0].basis + " "),) + timeline.cues[1:])),
        "a notice": replace(production, timeline=replace(timeline, notices=(*timeline.notices, "x"))),
        "a name": replace(production, timeline=replace(timeline, names={**timeline.names, performer: "某"})),
        "the cast's name": replace(production, sheet=replace(doc, performers={
            **doc.performers, performer: replace(doc.performers[performer], name="某")})),
        "a piece's words": replace(production, sheet=with_cue(sung, replace(sung, pieces=(
            replace(sung.pieces[0], piece=replace(piece, title=piece.title + "之二")),)))),
        "the syllable": built(Options(syllable=Fraction(2))),
        "a variant": built(Options(variants=frozenset({"dashi"}))),
        "a reading": built(Options(readings={"heyue": "li-rugui"})),
        "a measured duration": built(Options(timing={action: Measurement(Fraction(77))})),
        "the paces": built(Options(paces=with_values(shipped(), {"堂下": Fraction(3, 2)}, "mine.yaml"))),
    }
    names = {what: entry(p, ()) for what, p in changed.items()}
    names |= {"a plate at a cue": entry(production, [plate]), "as made": entry(production, ())}
    names["the blocking"] = entry(_with_blocking_edit(tmp_path, repertoire), ())
    keys = {what: name.removeprefix(caches.SHIPPED) for what, name in names.items() if name is not None}
    assert len(set(keys.values())) == len(names), names  # a shipped rite's and a copy's differ in their key too
    assert entry(production, ()) == entry(produce(load(cue_path(RITE), repertoire=repertoire)), ())  # built again
    assert entry(production, [plate, plate]) == names["a plate at a cue"]


def _with_blocking_edit(folder: Path, repertoire: Any) -> Production:
    """The rite copied with a blocking that puts one more line in its hall's name."""
    path = _copy(RITE, folder / "edited")
    hall = folder / "edited" / "blocking" / f"{RITE}.hall.yaml"
    hall.write_text(hall.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")
    return produce(load(path, repertoire=repertoire))


def test_the_same_values_from_other_files_are_the_same_page_and_a_copys_pages_never_evict_the_shipped(
        production, repertoire, tmp_path, cache):
    copies = [produce(load(_copy(RITE, tmp_path / name), repertoire=repertoire)) for name in ("a", "b")]
    shipped_name, *copied = (entry(p, ()) for p in (production, *copies))
    assert shipped_name is not None and shipped_name.startswith(caches.SHIPPED)
    assert copied[0] == copied[1] == shipped_name.removeprefix(caches.SHIPPED)  # no file's name in the key
    assert _uncached(copies[0]) == _uncached(copies[1]) == _uncached(production)  # nor in the page
    sheet.sheet_file(production)
    for n in range(pages.CACHE_ENTRIES + 2):  # more pages of one's own than a folder keeps
        pages.kept(copies[0], [str(n)], lambda: "<!DOCTYPE html>\n<html><head></head></html>\n")
    kept = sorted(p.name for p in cache.iterdir())
    assert shipped_name in kept and len(kept) == pages.CACHE_ENTRIES + 1


def test_paces_from_another_file_with_the_same_values_are_the_same_page(production):
    doc = production.sheet
    mine, theirs = (produce(doc, Options(paces=with_values(shipped(), {"堂下": Fraction(3, 2)}, source)))
                    for source in ("mine.yaml", "theirs.yaml"))
    assert entry(mine, ()) == entry(theirs, ())


def test_the_key_is_the_same_in_every_process_whatever_its_hashes(tmp_path):
    """The variants are a set, whose order follows the hashes of its strings: the key sorts them."""
    script = ("import yuesheng; from yuesheng.web.pages import entry; "
              "p = yuesheng.produce(yuesheng.load('xiangyinjiu'), "
              "yuesheng.Options(variants=frozenset({'dashi', 'mingri', 'zunzhe-dafu'}))); print(entry(p, ['b', 'a']))")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path)}
    names = {subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env | {"PYTHONHASHSEED": str(seed)},
                            capture_output=True, text=True, check=True).stdout.strip() for seed in range(1, 5)}
    assert len(names) == 1 and names.pop().endswith(".html")


def test_an_entry_that_is_not_one_whole_page_is_a_miss(production, cache, monkeypatch):
    made = sheet.sheet_file(production)
    [path] = list(cache.iterdir())
    whole = path.read_bytes()
    folder = caches.folder("pages")
    assert folder is not None
    page = folder.read(path.name, limit=1 << 26)
    assert page is not None and page.startswith(b"yuesheng-page-1\n<!DOCTYPE html>")
    head, body = page.split(b"\n", 1)
    for damaged in (page[: len(page) // 2],  # cut short, written whole
                    b"yuesheng-page-0\n" + body,  # another format
                    body,  # no format
                    head + b"\n" + body.replace(b"</head>", b"</hea>"),  # no end of its head for the font
                    head + b"\n" + body.replace("儀".encode(), b"\xff\xfe", 1),  # not UTF-8
                    b""):
        folder.write(path.name, damaged, entries=pages.CACHE_ENTRIES)
        assert sheet.sheet_file(production) == made, damaged[:40]
        assert path.read_bytes() == whole  # made again, and kept again
    path.write_bytes(whole[: len(whole) - 1000])  # cut short on disk: not what its digest says
    assert sheet.sheet_file(production) == made and path.read_bytes() == whole
    _no_making(monkeypatch)
    assert sheet.sheet_file(production) == made


def test_cache_info_lists_the_pages(cache, tmp_path, capsys):
    assert main(["sheet", RITE, "-o", str(tmp_path / "page.html")]) == 0
    capsys.readouterr()
    assert main(["cache", "info", "--format", "json"]) == 0
    folders = {f["name"]: f for f in json.loads(capsys.readouterr().out)["folders"]}
    assert folders["pages"]["entries"] == 1 and folders["pages"]["bytes"] > 100_000


def test_the_key_is_the_same_whether_the_cues_were_read_or_made_again_from_their_kept_checks(cache, monkeypatch):
    for rite in ("xiangshe", "dashe"):
        read = produce(load(cue_path(rite)))  # an empty cache: every cue read (and its checks kept)
        kept = produce(load(cue_path(rite)))  # every cue made again from what was kept
        assert kept.sheet.cues == read.sheet.cues
        assert entry(kept, []) == entry(read, [])
        with monkeypatch.context() as m:
            m.setenv("YUESHENG_NO_CACHE", "1")
            assert entry(produce(load(cue_path(rite))), []) == entry(read, [])
