"""Numbers on the command line are ASCII digits only: Python's float and isdigit also read full-width and other
scripts' digits (１０, ²), which a user never means as a number here (issue 34)."""

import pytest

DATA_LOG = "show.jsonl"


@pytest.mark.parametrize("argv", [
    ["console", "xiangshe", "--no-midi", "--guard", "０.５"],
    ["console", "xiangshe", "--no-midi", "--listen", "127.0.0.1:８７６５"],
    ["score", "export", "luming", "-o", "{tmp}/x.musicxml", "--note-value", "１"],
])
def test_a_number_in_other_digits_is_a_usage_error(run, tmp_path, argv):
    code, _, err = run(*[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2, err
    assert "expected HOST:PORT" in err or "is not a number (ASCII digits" in err


def test_retime_exclude_takes_ascii_line_numbers_only(run, tmp_path):
    log = tmp_path / DATA_LOG
    log.write_text("", encoding="utf-8")
    for where in ("２", "²", "session２"):
        code, _, err = run("retime", "xiangshe", "--log", str(log), "--exclude", f"{log}:{where}")
        assert code == 2 and "expected LOG:LINE or LOG:sessionN (ASCII digits)" in err, err
