"""The public API of ``yuesheng``: every name of ``__all__`` there, each imported only when first asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import yuesheng

HOMES = {"yuesheng.errors": ["InvalidInputError", "Problem", "UnknownNameError", "YueshengError"],
         "yuesheng.music.lulu": ["LU", "Degree", "Mode", "Pitch", "Realization", "Register", "Tuning", "lu",
                                 "parse_mode", "resolve"],
         "yuesheng.music.repertoire": ["Repertoire", "load_repertoire"],
         "yuesheng.music.score": ["Piece", "Provenance", "load_piece"],
         "yuesheng.cuesheet.model": ["CueSheet"],
         "yuesheng.production": ["Production", "build", "load", "produce"],
         "yuesheng.timeline.model": ["Event", "EventKind", "Timeline", "clock", "seconds"],
         "yuesheng.timeline.state": ["Options"],
         "yuesheng.outputs.midi": ["midi_bytes", "write_midi"]}


@pytest.mark.parametrize("name", sorted(yuesheng.__all__))
def test_each_public_name_is_its_modules_object(name: str) -> None:
    (home,) = [module for module, names in HOMES.items() if name in names]
    namespace: dict[str, object] = {}
    exec(f"from yuesheng import {name}", namespace)
    assert namespace[name] is getattr(importlib.import_module(home), name) is getattr(yuesheng, name)
    assert name in dir(yuesheng)


def test_the_public_names_are_the_documented_ones() -> None:
    assert sorted(yuesheng.__all__) == sorted(n for names in HOMES.values() for n in names)
    assert {"__version__", "__all__"} <= set(dir(yuesheng))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'load_cuesheet'"):
        yuesheng.load_cuesheet  # noqa: B018
    with pytest.raises(ImportError):
        exec("from yuesheng import nothing_here", {})


def test_import_yuesheng_imports_no_module_of_it() -> None:
    code = "import sys, yuesheng; print(sorted(m for m in sys.modules if m.startswith('yuesheng.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
    code = "from yuesheng import *; print(sorted(n for n in dir() if not n.startswith('_')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == repr(sorted(yuesheng.__all__)) + "\n"
