"""The error model: one root, every class in errors.py, caught by name (an UnknownNameError is no KeyError)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import yuesheng
from yuesheng import errors
from yuesheng.cuesheet import parse_duration, parse_reading
from yuesheng.errors import InvalidValueError, UnknownNameError, YueshengError
from yuesheng.music.lulu import lu
from yuesheng.music.repertoire import Repertoire, load_repertoire

PACKAGE = Path(yuesheng.__file__).parent


def test_every_exception_in_errors_py_is_a_yuesheng_error() -> None:
    """All but Terminated: a signal, not an error, unwinding like KeyboardInterrupt past any ``except Exception``."""
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, BaseException) and c.__module__ == errors.__name__ and c is not errors.Terminated]
    assert len(classes) > 10
    assert all(issubclass(c, YueshengError) for c in classes)
    assert not issubclass(errors.Terminated, Exception)


def test_no_exception_class_is_defined_outside_errors_py() -> None:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error"):
                found.add((path.relative_to(PACKAGE).as_posix(), node.name))
    assert {f for f in found if f[0] != "errors.py"} == set()


def test_an_unknown_name_is_not_a_key_error() -> None:
    with pytest.raises(UnknownNameError) as caught:
        lu("huangzong")
    assert not isinstance(caught.value, KeyError)
    assert str(caught.value) == "unknown 律 'huangzong' — did you mean 'huangzhong' or 'yingzhong'?"


def test_a_key_error_inside_a_lookup_propagates_as_the_bug_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    repertoire = load_repertoire()

    def broken(self: Repertoire, name: str) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(Repertoire, "find", broken)
    monkeypatch.setenv("YUESHENG_NO_CACHE", "1")  # the cues read, not taken as kept (check/kept.py)
    from yuesheng import load
    from yuesheng.cli.common import cue_path

    with pytest.raises(KeyError, match="a bug"):
        load(cue_path("xiangyinjiu"), repertoire=repertoire)


def test_an_invalid_value_names_its_field_value_and_what_was_expected() -> None:
    with pytest.raises(InvalidValueError) as caught:
        parse_duration("1m")
    exc = caught.value
    assert (exc.field, exc.value) == ("duration", "1m")
    assert str(exc) == f"bad duration '1m': expected {exc.expected}"


@pytest.mark.parametrize(("text", "expected"), [("heyue=li-rugui", ("heyue", "li-rugui")), ("a=", ("a", ""))])
def test_a_reading_is_an_id_and_an_option(text: str, expected: tuple[str, str]) -> None:
    assert parse_reading(text) == expected


def test_a_reading_without_an_equals_sign_says_what_is_expected() -> None:
    with pytest.raises(InvalidValueError, match=r"bad reading 'heyue': expected ID=OPTION, e\.g\. heyue=li-rugui"):
        parse_reading("heyue")
