"""The bounded YAML loader: YAML 1.2 scalars, places, and the same result from libyaml and pure Python."""

from __future__ import annotations

import json
import os

import pytest

from yuesheng import yamlload
from yuesheng.errors import InvalidInputError
from yuesheng.music.repertoire import data_dir


def test_scalars_are_not_guessed():
    doc = yamlload.loads("a: 1:30\nb: yes\nc: 2\nd: 1.5\ne: '3'\nf: ~\ng: true\n")
    assert doc.data == {"a": "1:30", "b": "yes", "c": 2, "d": 1.5, "e": "3", "f": None, "g": True}


def test_places_of_values_and_keys():
    doc = yamlload.loads("top:\n  list:\n    - x: 1\n")
    assert doc.where(("top", "list", 0, "x")) == (3, 10)
    assert doc.where(("top", "list")) == (2, 3)  # a block value: its key's line
    assert doc.where(("top", "missing")) == (1, 1)


@pytest.mark.parametrize("name", ["xiangshe.yaml", "yanli.yaml"])
def test_libyaml_and_pure_python_give_the_same_document(monkeypatch, name):
    text = (data_dir("cues") / name).read_text(encoding="utf-8")
    fast = yamlload.loads(text)
    monkeypatch.setattr(yamlload, "_Loader", yamlload.pure_loader())
    slow = yamlload.loads(text)
    assert (fast.data, fast.marks, fast.key_marks) == (slow.data, slow.marks, slow.key_marks)


@pytest.mark.parametrize("loader", ["libyaml", "pure"])
@pytest.mark.parametrize("text, where, what", [
    ("# 中文\na: 1\nb: 賓入\x1b[2J\n", (3, 6), "control character U+001B is not allowed in YAML"),
    ("a: \"x\\ey\"\n", (1, 4), "a: control character U+001B in text"),
    ("\"\\a\": 1\n", (1, 1), "control character U+0007 in text"),
    ("n: " + "7" * 31 + "\n", (1, 4), "n: number of 31 characters is too large (at most 30)"),
])
def test_refused_scalars_are_reported_at_their_place(monkeypatch, loader, text, where, what):
    if loader == "pure":
        monkeypatch.setattr(yamlload, "_Loader", yamlload.pure_loader())
    with pytest.raises(InvalidInputError) as caught:
        yamlload.loads(text, "f")
    (problem,) = caught.value.problems
    assert (problem.line, problem.col) == where and what in str(problem)


def test_long_numbers_that_are_quoted_or_text_stay_strings():
    doc = yamlload.loads("a: '" + "9" * 5000 + "'\nb: 1e999\nc: " + "x" * 40 + "\n")
    assert doc.data == {"a": "9" * 5000, "b": "1e999", "c": "x" * 40}


def test_an_alias_bomb_is_measured_before_it_is_built():  # 1 + 11 + 111 + … + 111,111,111 values
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{x}: &{x} [*{y}, *{y}, *{y}, *{y}, *{y}, *{y}, *{y}, *{y}, *{y}, *{y}]\n"
        for x, y in zip("bcdefgh", "abcdefg", strict=True))
    with pytest.raises(InvalidInputError,
                       match="document too large: 123,456,789 values after alias expansion"):
        yamlload.loads(bomb, "f")


def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (tmp_path, "a directory"), ("/dev/zero", "a device or socket")):
        with pytest.raises(InvalidInputError, match=rf"not a regular file \({kind}\)"):
            yamlload.load(path)


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """A cache folder of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "yuesheng" / "yaml"


def _parse_fails(monkeypatch):
    def fail(text, file="<string>"):
        raise AssertionError("parsed again")
    monkeypatch.setattr(yamlload, "loads", fail)


@pytest.mark.parametrize("folder", ["cues", "scores"])
def test_a_file_read_again_comes_from_the_cache_unchanged(monkeypatch, cache, folder):
    for path in sorted(data_dir(folder).glob("*.yaml")):
        fresh = yamlload.loads(path.read_text(encoding="utf-8"), str(path))
        first = yamlload.load(path)
        with monkeypatch.context() as m:
            _parse_fails(m)
            again = yamlload.load(path)
        for doc in (first, again):
            assert (doc.file, doc.data, doc.marks, doc.key_marks) == (fresh.file, fresh.data, fresh.marks,
                                                                      fresh.key_marks)
            assert repr(doc.data) == repr(fresh.data)  # 1 stays 1, 1.0 stays 1.0
            assert (list(doc.marks), list(doc.key_marks)) == (list(fresh.marks), list(fresh.key_marks))
    wholes = [p for p in cache.iterdir() if not p.name.endswith(".pieces.json")]
    assert len(wholes) == len(list(data_dir(folder).glob("*.yaml")))
    pieces = len(list(cache.glob("*.pieces.json")))  # a cue sheet's cues kept one by one too (test_editloop.py)
    assert pieces == (len(wholes) if folder == "cues" else 0)


def test_a_changed_file_is_parsed_again(cache, tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert yamlload.load(path).data == {"a": 1}
    path.write_text("a: 2\n", encoding="utf-8")  # same size, perhaps the same mtime
    assert yamlload.load(path).data == {"a": 2}
    path.write_text("a: [1\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="YAML syntax error"):
        yamlload.load(path)


@pytest.mark.parametrize("content", ["", "{", "[]", '{"format": 1}', "{\"format\": \"x\", \"text\": 3}", "\udcff",
                                     "wrong marks", "marks not numbers"])
@pytest.mark.parametrize("whole", [True, False])
def test_a_broken_cache_entry_is_ignored(cache, tmp_path, content, whole):
    """An entry damaged on disk fails its digest (*whole* False); one written whole with the wrong content fails
    its checks (the folder is the user's own: only a bug or the user could write it)."""
    from yuesheng import caches

    path = tmp_path / "a.yaml"
    path.write_text("a: {b: 1}\n", encoding="utf-8")
    yamlload.load(path)
    (entry,) = cache.iterdir()
    folder = caches.folder("yaml")
    assert folder is not None
    good = json.loads(folder.read(entry.name, limit=1 << 20) or b"")
    if content == "wrong marks":  # the right text, one mark short
        content = json.dumps({**good, "marks": good["marks"][:-2]})
    elif content == "marks not numbers":
        content = json.dumps({**good, "marks": [str(n) for n in good["marks"]]})
    data = content.encode("utf-8", "surrogateescape")
    if whole:
        folder.write(entry.name, data, entries=10)
    else:
        entry.write_bytes(entry.read_bytes()[:80] + data)
    assert yamlload.load(path).where(("a", "b")) == (1, 8)


def test_a_cache_that_cannot_be_written_is_silent(monkeypatch, tmp_path):
    (tmp_path / "file").write_text("", encoding="utf-8")
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    for base in (str(tmp_path / "file"), "relative/cache"):  # a file where the folder should be; not a path to use
        monkeypatch.setenv("XDG_CACHE_HOME", base)
        assert yamlload.load(path).data == {"a": 1}
    assert not (tmp_path / "relative").exists()


def test_importing_the_loader_does_not_import_pyyaml():
    import subprocess
    import sys

    code = "import sys, yuesheng.yamlload; print('yaml' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_the_cache_keeps_at_most_its_bound_and_drops_the_oldest(tmp_path, monkeypatch):
    import os

    from yuesheng import yamlload

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(yamlload, "CACHE_ENTRIES", 3)
    files = []
    for n in range(5):
        path = tmp_path / f"f{n}.yaml"
        path.write_text(f"n: {n}\n", encoding="utf-8")
        yamlload.load(path)
        files.append(path)
        folder = tmp_path / "cache" / "yuesheng" / "yaml"
        for k, entry in enumerate(sorted(folder.glob("*.json"), key=lambda e: e.stat().st_mtime)):
            os.utime(entry, (k, k))  # distinct, ordered times: the file system's may tie
    folder = tmp_path / "cache" / "yuesheng" / "yaml"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    kept = sorted(folder.glob("*.json"))
    assert len(kept) == 3
    assert folder / yamlload._cache_entry(files[0].read_bytes()) not in kept
    assert folder / yamlload._cache_entry(files[4].read_bytes()) in kept
    assert yamlload.load(files[4]).data == {"n": 4}
