"""The bounded YAML loader: YAML 1.2 scalars, places, and the same result from libyaml and pure Python."""

from __future__ import annotations

import os

import pytest

from yuesheng import yamlload
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
    monkeypatch.setattr(yamlload, "_Loader", yamlload._PureLoader)
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
        monkeypatch.setattr(yamlload, "_Loader", yamlload._PureLoader)
    with pytest.raises(yamlload.InvalidInputError) as caught:
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
    with pytest.raises(yamlload.InvalidInputError,
                       match="document too large: 123,456,789 values after alias expansion"):
        yamlload.loads(bomb, "f")


def test_only_regular_files_are_read(tmp_path):
    fifo = tmp_path / "f.yaml"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), (tmp_path, "a directory"), ("/dev/zero", "a device or socket")):
        with pytest.raises(yamlload.InvalidInputError, match=rf"not a regular file \({kind}\)"):
            yamlload.load(path)
