"""Hostile and arbitrary input: never a traceback, never an exit code other than 0, 1 or 2, and fast failure."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yuesheng.repertoire import data_dir
from yuesheng.yamlload import MAX_BYTES

SHEET = (data_dir("cues") / "xiangshe.yaml").read_text(encoding="utf-8")
LINES = SHEET.splitlines()


def _validate(run, tmp_path, text: str | bytes, name: str = "input.yaml") -> tuple[int, str]:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    code, out, err = run("validate", str(path))
    return code, out + err


def test_alias_bomb_fails_fast(run, tmp_path):
    bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for x, y in zip("bcdefghij", "abcdefghi"):
        bomb += f"{x}: &{x} [*{y},*{y},*{y},*{y},*{y},*{y},*{y},*{y},*{y}]\n"
    started = time.monotonic()
    code, out = _validate(run, tmp_path, bomb)
    assert time.monotonic() - started < 1.0
    assert code == 1 and "document too large" in out and "[yaml]" in out


def test_recursive_alias_fails_cleanly(run, tmp_path):
    code, out = _validate(run, tmp_path, "a: &a [*a]\n")
    assert code == 1 and "Traceback" not in out


def test_multi_megabyte_file_fails_fast(run, tmp_path):
    started = time.monotonic()
    code, out = _validate(run, tmp_path, "cues:\n" + "  - x\n" * (3 * MAX_BYTES // 6))
    assert time.monotonic() - started < 1.0
    assert code == 1 and "file larger than" in out


def test_python_object_tag_is_rejected(run, tmp_path):
    code, out = _validate(run, tmp_path, "format: !!python/object/apply:os.system ['echo pwned']\n")
    assert code == 1 and "YAML tag" in out and "not allowed" in out


def test_not_utf8(run, tmp_path):
    code, out = _validate(run, tmp_path, b"format: \xff\xfe\n")
    assert code == 1 and "not UTF-8" in out


@pytest.mark.parametrize("text", ["", "[]", "42", "cues: 3", "format: yuesheng-cues/1\ncues: [1, 2]",
                                  "---\na: 1\n---\nb: 2\n", "? [a, b]\n: c\n"])
def test_odd_documents_are_invalid_not_crashes(run, tmp_path, text):
    code, out = _validate(run, tmp_path, text)
    assert code == 1 and "Traceback" not in out


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(run, tmp_path, text):
    code, out = _validate(run, tmp_path, text)
    assert code in (0, 1, 2)


_mutation = st.tuples(st.integers(0, len(LINES) - 1), st.sampled_from(["delete", "duplicate", "truncate", "replace", "indent"]),
                      st.text(alphabet="abc: -[]{}&*!1\t宫商", max_size=12))


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_shipped_sheet_never_crashes(run, tmp_path, mutations):
    lines = list(LINES)
    for index, kind, junk in mutations:
        index %= len(lines)
        if kind == "delete":
            del lines[index]
        elif kind == "duplicate":
            lines.insert(index, lines[index])
        elif kind == "truncate":
            lines[index] = lines[index][: len(lines[index]) // 2]
        elif kind == "replace":
            key, _, _ = lines[index].partition(":")
            lines[index] = f"{key}: {junk}"
        else:
            lines[index] = " " + lines[index]
        if not lines:
            lines = [""]
    code, out = _validate(run, tmp_path, "\n".join(lines))
    assert code in (0, 1, 2)
    assert "Traceback" not in out
