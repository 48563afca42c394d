"""Each benchmark runs to its end at a tiny size and prints its RESULT lines, its ratios to its baseline among them:
a benchmark the code has left behind is found here, not when someone next measures. A smoke run measures nothing,
so the figures are only read as numbers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
NUMBER = r"\d+(?:\.\d+)?"

# name: (its arguments for a tiny run, the RESULT lines it must print), cheapest first
SMOKE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "variants": (("--repeat", "1", "--counts", "2", "4"),
                 (rf"variants_4_load_s={NUMBER} \({NUMBER}x baseline read\)",
                  rf"variants_4_validate_s={NUMBER} \({NUMBER}x baseline read\)")),
    "console_flood": (("--idle", "40", "--flooders", "1", "--rounds", "2"),
                      (rf"attacked_worst_median_ms={NUMBER} \(load average {NUMBER}\)",)),
    "hall_bounds": (("--repeat", "1", "--places", "40", "80", "--stairs", "0", "10"),
                    (rf"places_80_load_hall_ms={NUMBER} \({NUMBER}x baseline YAML parse; per place {NUMBER}x the "
                     r"first count's\)",
                     rf"via_16_route_ms={NUMBER}", rf"stairs_10_load_and_route_ms={NUMBER}")),
    "staging": (("--rites", "xiangyinjiu", "--repeat", "1"),
                (rf"staging xiangyinjiu: load \d+ ms, .* cold \d+ ms, .*\(baseline straight lines {NUMBER} ms\)",
                 r"staging all rites with a blocking: \d+ ms cold")),
    "live_jitter": (("--strokes", "40"), (rf"live_p99_ms={NUMBER}", rf"mido_play_p99_ms={NUMBER}")),
    "console_latency": (("--gos", "3", "--warm", "1"),
                        (rf"console_go_to_client_median_ms={NUMBER}", rf"console_go_to_client_max_ms={NUMBER}")),
    "view_latency": (("--gos", "2", "--warm", "1", "--views", "4"),
                     (rf"views_go_to_view_median_ms={NUMBER}", rf"views_go_to_view_p99_ms={NUMBER}")),
    "startup": (("--repeat", "1", "--only", "timeline", "--rite", "xiangyinjiu", "--edit", "--first"),
                (rf"timeline={NUMBER}", rf"import_yuesheng_vs_python_pass={NUMBER}",
                 rf"timeline_vs_python_pass={NUMBER}", rf"edit_timeline={NUMBER}", rf"edit_sheet_cpu={NUMBER}",
                 rf"timeline_first={NUMBER}")),
    "render": (("--quick",), (rf"render_speedup_vs_music21={NUMBER} \(CPU time: {NUMBER}\)",
                              rf"per_event_us_1e4={NUMBER}", rf"long_piece_growth={NUMBER} .*")),
    "audio": (("--sheet", str(DATA / "golden.yaml")),
              (r"rtf flac golden \d+x \(.*\) (ok|BELOW GOAL) \(goal >= 100x\)",
               rf"size golden wav {NUMBER} MB \(computed\) flac {NUMBER} MB \({NUMBER}% of wav\)")),
    "placed_audio": (("--sheet", str(DATA / "placed.yaml"), "--listener", "0,-3.5,south"),
                     (rf"placed_audio placed audio=\d+s seat=.* plain={NUMBER}s \(\d+x real time, cpu {NUMBER}s\) "
                      rf"placed cold={NUMBER}s \(\d+x, cpu {NUMBER}s\) warm={NUMBER}s \(\d+x, cpu {NUMBER}s\) "
                      rf"cpu warm/plain={NUMBER} \((ok|ABOVE GOAL): goal <= 3\) peak={NUMBER}",)),
    "engrave": (("--repeat", "1", "--rites", "xiangyinjiu"),
                (rf"engrave_ode_pdf_staff_s={NUMBER}", rf"engrave_songbook_xiangyinjiu_s={NUMBER}")),
    "video": (("--rite", "xiangyinjiu", "--minutes", "0.1", "--size", "320x180", "--no-audio"),
              (rf"video_render_vs_real_time={NUMBER} \((ok|SLOWER THAN REAL TIME); goal <= 1\) "
               rf"cpu_vs_real_time={NUMBER} wall_s={NUMBER} cpu_s={NUMBER} load_average={NUMBER}->{NUMBER} on \d+ "
               r"cores",)),
    "sheet": (("--rites", "xiangyinjiu", "--repeat", "1"),
              (rf"sheet_write_s\[xiangyinjiu\]={NUMBER}", rf"chromium_load_draw_warm_s\[xiangyinjiu\]={NUMBER}")),
    "page_play": (("--rite", "xiangyinjiu", "--seconds", "1"),
                  (rf"page_play_fps\[xiangyinjiu\]={NUMBER} \((ok|BELOW GOAL); goal >= 30\) frame_p95_ms={NUMBER} "
                   rf"script_ms_per_frame={NUMBER} load_average={NUMBER}->{NUMBER} on \d+ cores",)),
    "page_drift": (("--seconds", "2", "--lead", "1"),
                   (rf"page_audio_drift_max_s={NUMBER} \((ok|OVER GOAL); goal <= 0.25\) median_s={NUMBER} "
                    rf"p95_s={NUMBER} mean_signed_s=[+-]{NUMBER} sound_started_after_s={NUMBER} sound_rate={NUMBER} "
                    rf"load_average={NUMBER}->{NUMBER} on \d+ cores",)),
}
# What a benchmark runs besides Python, as the tests' markers name it; a smoke run over ten seconds is slow too.
KIND = {"audio": "synth", "placed_audio": "synth", "engrave": "engraver", "sheet": "browser", "page_play": "browser",
        "page_drift": "browser"}
ALSO = {"page_drift": "synth"}  # a second program it needs: page_drift renders its sound before the browser plays it
SLOW = {"render", "audio", "placed_audio", "engrave", "sheet", "page_play", "page_drift"}
PROGRAMS = {"synth": ("fluidsynth",), "browser": ("chromium", "chromium-browser")}


def _case(name: str) -> pytest.ParameterSet:
    marks = [getattr(pytest.mark, KIND[name])] if name in KIND else []
    return pytest.param(name, marks=marks + ([pytest.mark.slow] if name in SLOW else []), id=name)


def test_every_benchmark_has_a_smoke_run() -> None:
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_")}  # _NAME: a helper
    assert scripts == set(SMOKE)


@pytest.mark.parametrize("name", [_case(name) for name in SMOKE])
def test_a_benchmark_runs_at_a_tiny_size_and_prints_its_results(name: str, request: pytest.FixtureRequest) -> None:
    for kind in (KIND.get(name), ALSO.get(name)):
        if kind:
            _needs(kind, request)
    argv, expected = SMOKE[name]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *argv], cwd=ROOT, text=True,
                          capture_output=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-4000:]
    results = [line.removeprefix("RESULT ") for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    missing = [pattern for pattern in expected if not any(re.fullmatch(pattern, line) for line in results)]
    assert not missing, f"no RESULT line matches {missing}: {results}"


def _needs(kind: str, request: pytest.FixtureRequest) -> None:
    """Skip, saying why, where the program of *kind* is not installed."""
    if kind == "engraver":
        request.getfixturevalue("has_engraver")
    elif not any(map(shutil.which, PROGRAMS[kind])):
        pytest.skip(f"{' or '.join(PROGRAMS[kind])} is not installed")
