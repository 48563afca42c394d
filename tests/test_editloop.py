"""The edit loop (issue 35): after a one-line edit of a cue sheet, what is staged again is the cue edited and the cues
whose stands it changed, never the rest; and no number of edits of one's own sheet evicts a shipped rite's entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import yuesheng
from yuesheng import caches, yamlload
from yuesheng.check.rules import RULES
from yuesheng.staging import ground as ground_module
from yuesheng.staging import rite as rite_module

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Caches on, in a folder of this test's own, and no blocking kept in memory from another test."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("YUESHENG_NO_CACHE", raising=False)
    monkeypatch.setattr(rite_module, "_LAST", [])
    return tmp_path / "cache"


def _copy(tmp_path: Path, rite: str) -> Path:
    """A copy of the shipped *rite*'s cue sheet with its blocking beside it, as a director keeps one."""
    (tmp_path / "rite" / "cues").mkdir(parents=True)
    shutil.copytree(ROOT / "blocking", tmp_path / "rite" / "blocking")
    return Path(shutil.copy(ROOT / "cues" / f"{rite}.yaml", tmp_path / "rite" / "cues"))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def _staged(path: Path) -> dict[str, tuple[object, ...]]:
    """Each cue's stands, duration and basis, staged in a process that has kept nothing in memory."""
    rite_module._LAST.clear()
    staged = yuesheng.produce(yuesheng.load(path)).staged
    assert staged is not None
    return {cue: (dict(c.stands), c.duration, c.basis, c.derivation) for cue, c in staged.cues.items()}


def test_an_edit_to_one_cue_derives_again_only_the_cues_it_changed(home, tmp_path, monkeypatch):
    sheet = _copy(tmp_path, "xiangshe")
    before = _staged(sheet)
    # the action of the cue where 主人 and 賓 go up reworded: the same moves, another text (rank reads it)
    action = "action: 主人以賓三揖皆行 及階三讓 主人升一等 賓升"
    _edit(sheet, f"{action}\n", f"{action} (作階)\n")
    monkeypatch.setattr(rite_module._Derived, "counts", {"kept": 0, "derived": 0})
    after = _staged(sheet)
    counts = dict(rite_module._Derived.counts)
    assert counts["derived"] == 1 and counts["kept"] >= len(after) - 1  # the edited cue alone is derived again
    assert after.keys() == before.keys()
    assert sum(after[c] != before[c] for c in after) <= 1
    monkeypatch.setenv("YUESHENG_NO_CACHE", "1")  # the same as staged from nothing
    assert _staged(sheet) == after


def test_a_cue_whose_stands_an_edit_changes_is_derived_again_and_matches_a_fresh_staging(home, tmp_path,
                                                                                            monkeypatch):
    sheet = _copy(tmp_path, "xiangshe")
    _staged(sheet)
    _edit(sheet, "    duration: 30min\n    variant: mingri\n", "    duration: 31min\n    variant: mingri\n")
    monkeypatch.setattr(rite_module._Derived, "counts", {"kept": 0, "derived": 0})
    after = _staged(sheet)
    assert rite_module._Derived.counts["derived"] == 0  # a duration staging does not read: nothing derived again
    monkeypatch.setenv("YUESHENG_NO_CACHE", "1")
    assert _staged(sheet) == after


def test_no_number_of_edits_evicts_the_shipped_rites_entries(home, tmp_path, monkeypatch):
    assert yuesheng.produce(yuesheng.load("xiangshe")).staged is not None
    shipped = {folder: {p.name for p in (home / "yuesheng" / folder).iterdir() if p.name.startswith(caches.SHIPPED)}
               for folder in ("staging", "yaml")}
    assert all(shipped.values())
    # folders just large enough for what the shipped rite keeps: a few edits would fill them
    monkeypatch.setattr(ground_module, "CACHE_ENTRIES", len(shipped["staging"]))
    monkeypatch.setattr("yuesheng.yamlload.CACHE_ENTRIES", len(shipped["yaml"]))
    sheet = _copy(tmp_path, "xiangshe")
    for n in range(8):  # each a new cue id: another ground, another kept rite, another YAML entry
        _edit(sheet, f"id: xi-sizheng-yue{n or ''}\n", f"id: xi-sizheng-yue{n + 1}\n")
        assert yuesheng.produce(yuesheng.load(sheet)).staged is not None
    for folder, names in shipped.items():
        kept = {p.name for p in (home / "yuesheng" / folder).iterdir()}
        assert names <= kept
        assert len(kept - names) <= len(names)  # one's own entries are still bounded


# --- a sheet whose blocking is not found says so -------------------------------------------------------------------

@pytest.mark.parametrize("command", [("timeline", "-o", "{out}/r.txt"), ("validate",)])
def test_a_copy_without_its_blocking_says_where_it_looked(run, tmp_path, command):
    (tmp_path / "cues").mkdir()
    sheet = Path(shutil.copy(ROOT / "cues" / "xiangshe.yaml", tmp_path / "cues"))
    code, _, err = run(command[0], str(sheet), *(a.format(out=tmp_path) for a in command[1:]))
    assert code == 0
    assert f"no blocking for xiangshe beside {sheet}: looked for {tmp_path / 'blocking' / 'xiangshe.yaml'}" in err
    assert "estimated durations are used" in err


def test_a_sheet_with_its_blocking_or_of_a_rite_with_none_says_nothing_of_it(run, tmp_path):
    code, _, err = run("timeline", str(_copy(tmp_path, "xiangshe")), "-o", str(tmp_path / "r.txt"))
    assert code == 0 and "blocking" not in err
    code, _, err = run("timeline", str(ROOT / "tests" / "data" / "golden.yaml"), "-o", str(tmp_path / "g.txt"))
    assert code == 0 and "blocking" not in err


# --- an edit re-parses the cue it changed, and the pieces make the document the whole file makes -------------------

def _same(doc: yamlload.Document, text: str) -> None:
    whole = yamlload.loads(text, doc.file)
    assert doc.data == whole.data
    assert list(doc.marks.items()) == list(whole.marks.items())
    assert list(doc.key_marks.items()) == list(whole.key_marks.items())


def test_an_edit_to_one_cue_parses_that_cue_alone_and_the_document_is_the_whole_files(home, tmp_path, monkeypatch):
    sheet = _copy(tmp_path, "dashe")
    yamlload.load(sheet)
    text = sheet.read_text(encoding="utf-8")
    lines = text.split("\n")
    line = next(n for n, s in enumerate(lines) if n > len(lines) // 2 and s.startswith("    duration: "))
    lines[line] = "    duration: 61s"
    lines.insert(line, "    # a note added by the director: the lines below move down")
    sheet.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(yamlload, "parsed_pieces", [0])
    doc = yamlload.load(sheet)
    assert yamlload.parsed_pieces[0] == 2  # the cue edited, and the frame (whose lines moved)
    _same(doc, sheet.read_text(encoding="utf-8"))
    monkeypatch.setattr(yamlload, "parsed_pieces", [0])
    yuesheng.produce(yuesheng.load(sheet))
    assert yamlload.parsed_pieces[0] == 0  # the whole is kept now
    cue = "\n".join(lines[next(n for n in range(line, 0, -1) if lines[n].startswith("  - id: ")):line + 1])
    first = next(n for n, s in enumerate(lines) if s.startswith("  - id: "))
    lines.insert(first, cue.replace("  - id: ", "  - id: new-"))
    sheet.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(yamlload, "parsed_pieces", [0])
    _same(yamlload.load(sheet), sheet.read_text(encoding="utf-8"))
    assert yamlload.parsed_pieces[0] == 2  # a cue added: it and the frame; the cues after it are where they were


@pytest.mark.parametrize("old, new", [
    ("  - id: zai-jie-baiguan\n", "  - id: &same zai-jie-baiguan\n"),  # an anchor used in a later cue
    ("    action: 宰戒百官有事于射者\n", '    action: "宰戒百官有事于射者\n'),  # a quote that runs on: an error
    ("cues:\n", "cues: # the cues\n"),
])
def test_a_sheet_the_pieces_cannot_make_is_parsed_whole(home, tmp_path, old, new):
    sheet = _copy(tmp_path, "dashe")
    yamlload.load(sheet)
    text = sheet.read_text(encoding="utf-8").replace(old, new, 1)
    if "&same" in new:
        text = text.replace("    who: [sheren, sishi]\n", "    who: [sheren, sishi]\n    note: *same\n", 1)
    sheet.write_text(text, encoding="utf-8")
    try:
        yamlload.loads(text, str(sheet))
    except yuesheng.InvalidInputError as exc:
        with pytest.raises(yuesheng.InvalidInputError) as raised:
            yamlload.load(sheet)
        assert [str(p) for p in raised.value.problems] == [str(p) for p in exc.problems]
        return
    _same(yamlload.load(sheet), text)


# --- a warm run reads the cites' layers from a table, parsing no page (issue 29's leftover) -------------------------

def test_a_cites_layer_is_kept_so_that_the_next_process_parses_no_page(tmp_path):
    import os
    import subprocess
    import sys

    script = ("from yuesheng import sources; print(sources.layer('9-1a', '大射之儀君有命戒射'), "
              "sources.layer('9-1a', '將有祭祀之事'), sources.pages.cache_info().currsize)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    env.pop("YUESHENG_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["經", "鄭目録", "1"], ["經", "鄭目録", "0"]]  # the same layers, the second without the pages


# --- the templates are compiled into the package ------------------------------------------------------------------

def test_every_template_is_precompiled_from_its_text_as_it_is():
    from yuesheng.web import sheet

    stale = [p.name for p in sorted(sheet.TEMPLATES.glob("*.j2")) if sheet._precompiled(p.name) is None]
    assert not stale, (f"templates/compiled/ is not compiled from {', '.join(stale)} as it is: run "
                       'python -c "from yuesheng.web.sheet import precompile; precompile()"')


def test_a_page_from_the_precompiled_templates_is_the_page_compiled_from_their_text(tmp_path, monkeypatch):
    from yuesheng.web import sheet

    production = yuesheng.produce(yuesheng.load(ROOT / "tests" / "data" / "golden.yaml"))
    monkeypatch.setenv("YUESHENG_NO_CACHE", "1")  # each page made from its templates, not read back (web/pages.py)
    sheet.environment.cache_clear()
    precompiled = sheet.sheet_file(production)
    stale = tmp_path / "compiled"
    stale.mkdir()
    for path in sheet.PRECOMPILED.iterdir():  # each compiled from another text: its stamp does not match
        (stale / path.name).write_text(path.read_text(encoding="utf-8").replace("precompiled from ", "from "))
    monkeypatch.setattr(sheet, "PRECOMPILED", stale)
    sheet.environment.cache_clear()
    try:
        assert sheet._precompiled("sheet.html.j2") is None  # compiled from the template now
        assert sheet.sheet_file(production) == precompiled
    finally:
        sheet.environment.cache_clear()


# --- an edit checks again the cue it changed: its schema, references, rules of one cue and quotes --------------------

def _validate(path: Path) -> list[str]:
    """``validate``'s problems of *path*, each as printed, with the cues checked (not kept) by kind."""
    from yuesheng.check import kept
    from yuesheng.check.validate import check_cuesheet
    from yuesheng.music.repertoire import load_repertoire

    kept.counted.clear()
    return [str(p) for p in check_cuesheet(path, load_repertoire())[1]]


def _uncached(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with monkeypatch.context() as m:
        m.setenv("YUESHENG_NO_CACHE", "1")
        return _validate(path)


def test_an_edit_to_one_cue_checks_that_cue_alone_and_finds_what_a_fresh_check_finds(home, tmp_path, monkeypatch):
    from yuesheng.check import kept

    sheet = _copy(tmp_path, "dashe")
    cues = sheet.read_text(encoding="utf-8").count("\n  - id: ")
    first = _validate(sheet)
    assert kept.counted["read"] == kept.counted["declared"] == kept.counted["quotes"] == cues
    assert kept.counted["rules"] >= cues  # each rule of one cue on each cue of a programme, once
    assert _validate(sheet) == first and sum(kept.counted.values()) == 0  # nothing checked again
    yamlload.parsed_pieces[0] = 0
    _edit(sheet, "    duration: 25min\n", "    duration: 26min\n")  # 無算爵: the wine goes round a while longer
    after = _validate(sheet)
    of_cue = len([rule for rule in RULES if rule.of_cue is not None])
    assert dict(kept.counted) == {"read": 1, "declared": 1, "rules": of_cue, "quotes": 1}
    assert yamlload.parsed_pieces[0] == 1  # and the edited cue alone parsed again
    assert after == first == _uncached(sheet, monkeypatch)


def test_problems_kept_with_a_cue_are_placed_where_it_stands_after_lines_move(home, tmp_path, monkeypatch):
    from yuesheng.check import kept

    sheet = Path(shutil.copy(ROOT / "tests" / "data" / "mini_xiangshe.yaml", tmp_path / "mini.yaml"))
    _edit(sheet, "    calls: [宫, 商]\n", "    calls: [商, 宫]\n")  # a rule of one cue broken ([calls])
    _edit(sheet, "    who: [a1, a2]\n", "    who: [a1, a9]\n    colour: red\n")  # a reference, and the schema
    _edit(sheet, "quote: 乃射}", "quote: 乃射箭}")  # a quote not on its page
    first = _validate(sheet)
    rules = {line.rsplit("[", 1)[-1] for line in first}
    assert {"calls]", "reference]", "schema]", "quote]"} <= rules
    assert first == _uncached(sheet, monkeypatch)
    _edit(sheet, "  - id: heyue\n", "  - id: heyue-note\n    section: 樂賓\n    action: 樂正先升\n"
          "    duration: 10s\n    cite: {page: 5-15b, quote: 乃合樂}\n  - id: heyue\n")  # six lines before them
    moved = _validate(sheet)
    assert kept.counted["read"] == 1 and kept.counted["quotes"] == 1  # the new cue alone: the others as kept
    assert moved == _uncached(sheet, monkeypatch) and moved != first  # each problem on its new line
    assert len(moved) == len(first)


def test_a_kept_cue_that_is_not_what_was_kept_is_checked_again(home, tmp_path, monkeypatch):
    from yuesheng.check import kept

    sheet = Path(shutil.copy(ROOT / "tests" / "data" / "mini_xiangshe.yaml", tmp_path / "mini.yaml"))
    first = _validate(sheet)
    folder = caches.folder("checks")
    assert folder is not None
    entries = [name for name, _, _ in folder.entries()]
    assert len(entries) == 1
    entry = folder.read_json(entries[0], limit=1 << 20)
    damaged = [{"cue": "x", "read": []}, {"cue": {"cue": {}, "pieces": [["nopiece", 1, "", None]]}, "read": []},
               {"read": [[["id"], 1, "", "error", False]], "cue": None}, [],
               {"read": [], "cue": None, "declared": "x", "rules": ["x"], "quotes": {"a": 1}}]
    for n, digest in enumerate(entry["cues"]):
        entry["cues"][digest] = damaged[n % len(damaged)]
    folder.write_json(entries[0], entry, entries=8)
    assert _validate(sheet) == first
    assert kept.counted["read"] == len(entry["cues"])  # every cue read again (a cue kept as not reading, no error)
