"""The bounded YAML loader: YAML 1.2 scalars, places, and the same result from libyaml and pure Python."""

from __future__ import annotations

import pytest

from yuesheng import yamlload
from yuesheng.repertoire import data_dir


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
