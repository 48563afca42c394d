"""``yuesheng video``: the plate frame by frame through FFmpeg — read back with ffprobe and ffmpeg: its length is the
excerpt's, frames change where people walk and only there, a followed person stays in frame, the sound is there and
as long as the picture; bad input is a usage error; a signal leaves no file and no FFmpeg."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import yuesheng
from yuesheng.live.resume import plan_digest
from yuesheng.outputs.audio import Tags, set_tags
from yuesheng.outputs.condense import Cut
from yuesheng.outputs.frames import Plate, Sounding
from yuesheng.outputs.tags import RenderTags, options_text
from yuesheng.outputs.video import Excerpt, excerpt_timeline
from yuesheng.timeline import EventKind, seconds

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None or shutil.which("ffprobe") is None,
                                reason="ffmpeg not installed")
SMALL = ("--size", "320x180", "--fps", "5")


@pytest.fixture(scope="module")
def rite():
    return yuesheng.produce(yuesheng.load("xiangyinjiu"))


def _probe(path: Path) -> dict[str, Any]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries",
                          "format=duration:stream=codec_type,codec_name,pix_fmt,width,height,duration",
                          "-of", "json", str(path)], capture_output=True, text=True, check=True).stdout
    probe: dict[str, Any] = json.loads(out)
    return probe


def _span(rite, first: str, last: str) -> tuple[float, float]:
    spans = {c.cue.id: (seconds(c.start_tick), seconds(c.end_tick)) for c in rite.timeline.cues}
    return spans[first][0], spans[last][1]


def test_the_video_is_as_long_as_the_excerpt_h264_yuv420p_with_its_index_first(run, rite, tmp_path):
    out = tmp_path / "v.mp4"
    code, text, err = run("video", "xiangyinjiu", "--from", "ying-bin", "--to", "xian-bin", "--speed", "10",
                          "--no-audio", *SMALL, "-o", str(out))
    assert code == 0, err
    start, end = _span(rite, "ying-bin", "xian-bin")
    probe = _probe(out)
    assert abs(float(probe["format"]["duration"]) - (end - start) / 10) <= 1 / 5
    (video,) = probe["streams"]
    assert (video["codec_name"], video["pix_fmt"], video["width"], video["height"]) == ("h264", "yuv420p", 320, 180)
    data = out.read_bytes()
    assert data.index(b"moov") < data.index(b"mdat")  # +faststart: a browser plays it before it has all of it
    assert "wrote" in text and "×10" in text


def _walk(rite, at_least: float = 4.0):
    """A leg of someone's walk that lasts *at_least* seconds."""
    motion = rite.motion
    return next(leg for m in motion.members for leg in motion.legs(m) if leg.seconds >= at_least
                and leg.route[0].distance(leg.route[-1]) > 2)


def _still(rite) -> float:
    """An instant from which no one walks or turns for 3 s, within one cue."""
    motion = rite.motion
    for cue in motion.cues:
        start, end = motion.span(cue)
        t = start + 0.5
        while t + 3 < end:
            if not any(p.walking or p.facing is None and p.heading is not None
                       for dt in (0, 1.5, 3) for p in motion.at(t + dt).values()):
                return float(t)
            t += 5
    raise AssertionError("no still moment")


def _plate_area(plate: Plate, data: bytes) -> list[bytes]:
    width, (pw, ph) = plate.layout.width, plate.layout.plate
    return [data[(y * width) * 3: (y * width + pw) * 3] for y in range(ph)]


def test_frames_differ_where_people_walk_and_not_where_no_one_does(rite):
    plate = Plate(rite.staged, rite.motion, rite.timeline, rite.sheet, (640, 360))
    leg = _walk(rite)
    a, b = plate.frame(leg.start + 1, 0.2), plate.frame(leg.start + 2, 0.2)
    assert _plate_area(plate, a) != _plate_area(plate, b)
    drawn = plate.drawn_at(leg.start + 1)[leg.member], plate.drawn_at(leg.start + 2)[leg.member]
    assert drawn[0] != drawn[1]
    t = _still(rite)
    assert _plate_area(plate, plate.frame(t, 0.2)) == _plate_area(plate, plate.frame(t + 3, 0.2))


def test_a_frame_the_same_as_the_one_before_is_not_encoded_again_and_the_video_keeps_its_length(rite, tmp_path):
    """Only the pictures that change go to the encoder, each at its time on the --fps grid: a still stretch is one
    picture (the last frame is sent too, for the length), and the video lasts the excerpt's frames to the frame."""
    from yuesheng.outputs.video import render_video

    t = _still(rite)
    plate = Plate(rite.staged, rite.motion, rite.timeline, rite.sheet, (160, 120))
    excerpt = Excerpt(t, t + 3, 1.0, 10)
    written = render_video(plate, excerpt, tmp_path / "still.mp4", timeline=rite.timeline, audio=None)
    assert written.frames == 30 and written.pictures <= 1 + 2 + 2  # the clock changes at most twice in 3 s
    sent = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                           "-of", "csv=p=0", str(tmp_path / "still.mp4")], capture_output=True, text=True, check=True)
    assert int(sent.stdout) == written.pictures
    probe = _probe(tmp_path / "still.mp4")
    assert float(probe["format"]["duration"]) == pytest.approx(3.0, abs=0.01)


def test_the_video_itself_moves_where_people_walk(run, rite, tmp_path):
    leg = _walk(rite)
    out = tmp_path / "w.mp4"
    cue = leg.cue
    code, _, err = run("video", "xiangyinjiu", "--from", cue, "--to", cue, "--speed", "4", "--no-audio", *SMALL,
                       "-o", str(out))
    assert code == 0, err
    start = rite.motion.span(cue)[0]

    def frame(t: float) -> bytes:
        return subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{(t - start) / 4:.2f}", "-i", str(out),
                               "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                              capture_output=True, check=True).stdout

    a, b = frame(leg.start + 0.5), frame(leg.end - 0.5)
    changed = sum(abs(x - y) > 40 for x, y in zip(a, b, strict=True))
    assert changed > 20  # the walker's mark and label moved (H.264's noise is under the threshold)


def test_a_followed_person_stays_in_frame_with_his_track(rite):
    motion = rite.motion
    plate = Plate(rite.staged, motion, rite.timeline, rite.sheet, (640, 360), ("zhuren",))
    pw, ph = plate.layout.plate
    legs = motion.legs("zhuren")
    assert plate.legs == list(legs) and plate.scale > Plate(rite.staged, motion, rite.timeline, rite.sheet,
                                                            (640, 360)).scale
    for leg in legs[:12]:
        for t in (leg.start, (leg.start + leg.end) / 2, leg.end):
            x, y = plate.drawn_at(t)["zhuren"]
            assert 0 <= x < pw and 0 <= y < ph, (leg.number, t, x, y)


def test_names_are_put_where_they_cover_no_other_name_nor_mark_and_left_out_where_none_is(rite):
    """A crowd a few px apart (the whole of 大射儀's ground is 6 px a 步): each name placed clear of every other and
    of every dot and facing tick, the followed person's first; those that do not fit left out."""
    from PIL import Image

    from yuesheng.outputs.frames import Boxes

    plate = Plate(rite.staged, rite.motion, rite.timeline, rite.sheet, (640, 360), ("zhuren",))
    crowd = tuple((100, 40 + 6 * n, (108, 40 + 6 * n), f"衆賓 {n}", (), n == 20, f"zhongbin#{n}")
                  for n in range(1, 40))
    taken = Boxes()
    plate._draw_marks(Image.new("RGB", (640, 360)), crowd, taken)
    dots, names = taken.boxes[:len(crowd)], taken.boxes[len(crowd):]

    Box = tuple[float, float, float, float]

    def apart(a: Box, b: Box) -> bool:
        return a[2] <= b[0] or a[0] >= b[2] or a[3] <= b[1] or a[1] >= b[3]

    assert 5 <= len(names) < len(crowd)
    assert all(apart(a, b) for i, a in enumerate(names) for b in names[i + 1:] + dots)
    assert "zhongbin#20" in plate._spots and names[0][1] < crowd[19][1] < names[0][3]  # his name first, beside him


def test_the_caption_names_the_line_sung(rite):
    sounding = Sounding(rite.timeline, rite.sheet)
    first = sounding.syllables[0]
    assert first.piece == "鹿鳴" and first.stanza == 1 and first.line == "呦呦鹿鳴" and first.index == 0
    playing = sounding.playing(first.start)
    assert playing is not None and playing.text.startswith("升歌 鹿鳴")
    later = sounding.sung(first.start + 4 * (first.end - first.start) + 0.01)
    assert later is not None and (later.line, later.index) == ("食野之苹", 0)


@pytest.mark.slow
def test_the_caption_names_the_calls_as_they_sound():
    dashe = yuesheng.produce(yuesheng.load("dashe"))
    heard = Sounding(dashe.timeline, dashe.sheet)
    call = next(e for e in dashe.timeline.events if e.kind is EventKind.CALL)
    assert f"{call.part} {call.text} {call.degree}" in heard.heard(seconds(call.start_tick) + 0.2, 0.04)


def test_the_excerpts_sound_is_the_rites_from_its_start(rite):
    start, end = _span(rite, "shengge", "shengge")
    cut = excerpt_timeline(rite.timeline, start + 10, end)
    notes = [e for e in cut.events if e.kind is EventKind.NOTE]
    whole = [e for e in rite.timeline.events if e.kind is EventKind.NOTE and start + 10 <= seconds(e.start_tick) < end]
    assert len(notes) >= len(whole) and min(e.start_tick for e in notes) >= 0
    assert seconds(cut.duration_ticks) == pytest.approx(end - start - 10, abs=1e-3)


def _silence(path: Path, length: float, tags: RenderTags | None) -> None:
    """*length* seconds of silence at 8 kHz in FLAC, tagged as a render of *tags* (None: untagged)."""
    import numpy as np
    import soundfile

    with soundfile.SoundFile(path, "w", 8000, 1, "PCM_16") as sound:
        set_tags(sound, Tags("yuesheng", tags.document()) if tags else None)
        frames = round(length * 8000)
        for n in range(0, frames, 1 << 20):
            sound.write(np.zeros(min(1 << 20, frames - n), dtype=np.int16))


@pytest.mark.slow
def test_an_audio_file_of_the_rite_is_cut_to_the_excerpt_and_another_is_refused(run, rite, tmp_path):
    whole = seconds(rite.timeline.duration_ticks) + 2  # audio.TAIL
    audio = tmp_path / "rite.flac"
    tags = RenderTags(rite="xiangyinjiu", options=options_text(rite.options, rite.timeline),
                      plan=plan_digest(rite.timeline), length=rite.timeline.duration_ticks)
    _silence(audio, whole, tags)
    out = tmp_path / "a.mp4"
    code, _, err = run("video", "xiangyinjiu", "--from", "ying-bin", "--to", "bai-zhi", "--audio", str(audio),
                       *SMALL, "-o", str(out))
    assert code == 0, err
    streams = {s["codec_type"]: s for s in _probe(out)["streams"]}
    start, end = _span(rite, "ying-bin", "bai-zhi")
    assert streams["audio"]["codec_name"] == "aac"
    assert float(streams["audio"]["duration"]) == pytest.approx(end - start, abs=0.1)
    assert float(streams["video"]["duration"]) == pytest.approx(end - start, abs=0.25)
    short = tmp_path / "short.flac"
    _silence(short, 30, tags)
    code, _, err = run("video", "xiangyinjiu", "--audio", str(short), *SMALL, "-o", str(tmp_path / "b.mp4"))
    assert code == 2 and "30.00 s long" in err and "鄉飲酒禮" in err and not (tmp_path / "b.mp4").exists()
    other = (dataclasses.replace(tags, options={**tags.options, "tuning": "sanfen"}), "tuning: sanfen in the file")
    music_only = (dataclasses.replace(tags, gap=960, cuts=(Cut(0, 2000, 1000),)), "--music-only render")
    for made, why in (other, music_only, (None, "no yuesheng tags")):
        _silence(short, whole, made)
        code, _, err = run("video", "xiangyinjiu", "--audio", str(short), *SMALL, "-o", str(tmp_path / "b.mp4"))
        assert code in (1, 2) and why in err and not (tmp_path / "b.mp4").exists(), err


def test_at_another_speed_the_sound_is_left_out_and_said_so(run, tmp_path):
    out = tmp_path / "s.mp4"
    code, _, err = run("video", "xiangyinjiu", "--from", "ying-bin", "--to", "bai-zhi", "--speed", "2", *SMALL,
                       "-o", str(out))
    assert code == 0 and "no sound at ×2" in err
    assert [s["codec_type"] for s in _probe(out)["streams"]] == ["video"]


@pytest.mark.synth
@pytest.mark.skipif(shutil.which("fluidsynth") is None, reason="fluidsynth not installed")
def test_the_rites_own_sound_is_rendered_for_the_excerpt(run, rite, tmp_path):
    out = tmp_path / "m.mp4"
    code, _, err = run("video", "xiangyinjiu", "--from", "shengge", "--to", "shengge", "--size", "160x120",
                       "--fps", "2", "-o", str(out))
    assert code == 0, err
    start, end = _span(rite, "shengge", "shengge")
    streams = {s["codec_type"]: s for s in _probe(out)["streams"]}
    assert float(streams["audio"]["duration"]) == pytest.approx(end - start, abs=0.1)
    level = subprocess.run(["ffmpeg", "-i", str(out), "-t", "30", "-af", "volumedetect", "-f", "null", "-"],
                           capture_output=True, text=True).stderr
    mean = float(level.split("mean_volume:")[1].split("dB")[0])
    assert mean > -50  # the 升歌 is heard, not silence


@pytest.mark.parametrize(("argv", "said"), [
    (("--follow", "主仁"), "主人"),
    (("--from", "ying-bim"), "ying-bin"),
    (("--to", "xian-bim"), "xian-bin"),
    (("--from", "xian-bin", "--to", "ying-bin"), "comes after"),
    (("--speed", "0"), "--speed"),
    (("--speed", "-2"), "--speed"),
    (("--speed", "1e9"), "--speed"),
    (("--speed", "nan"), "--speed"),
    (("--size", "0x0"), "--size"),
    (("--size", "99999x720"), "--size"),
    (("--size", "321x180"), "even"),
    (("--fps", "0"), "--fps"),
    (("--fps", "61"), "--fps"),
    (("--audio", "nowhere.flac"), "no such file"),
    (("--audio", "x.flac", "--no-audio"), "not allowed"),
])
def test_bad_input_is_a_usage_error(run, tmp_path, argv, said):
    out = tmp_path / "x.mp4"
    code, _, err = run("video", "xiangyinjiu", *argv, "-o", str(out))
    assert code == 2 and said in err and "Traceback" not in err, err
    assert not out.exists()


def test_an_output_that_is_not_mp4_is_a_usage_error(run, tmp_path):
    code, _, err = run("video", "xiangyinjiu", "-o", str(tmp_path / "x.avi"))
    assert code == 2 and ".mp4" in err


def test_a_rite_without_a_complete_blocking_names_the_cues_that_lack_one(run, tmp_path):
    (tmp_path / "cues").mkdir()
    shutil.copytree(ROOT / "blocking", tmp_path / "blocking")
    shutil.copy(ROOT / "cues" / "xiangyinjiu.yaml", tmp_path / "cues")
    blocking = tmp_path / "blocking" / "xiangyinjiu.yaml"
    text = blocking.read_text(encoding="utf-8")
    move = "{who: zhuren, to: jie-jia, offset: [-1, 0],"
    assert move in text
    blocking.write_text(text.replace(move, "{who: zhuren, to: jie-jia,"), encoding="utf-8")  # onto the 介
    code, _, err = run("video", str(tmp_path / "cues" / "xiangyinjiu.yaml"), "-o", str(tmp_path / "x.mp4"))
    assert code == 1 and "the cues that lack one: jie-jie" in err
    assert not (tmp_path / "x.mp4").exists()


def test_a_whole_rite_at_sixty_times_its_pace_is_drawn_and_encoded(rite):
    plate = Plate(rite.staged, rite.motion, rite.timeline, rite.sheet, (320, 180))
    excerpt = Excerpt(0.0, seconds(rite.timeline.duration_ticks), 60, 1)
    sizes = {len(plate.frame(excerpt.at(n), 60)) for n in range(0, excerpt.frames, 7)}
    assert sizes == {320 * 180 * 3}


# --- signals ----------------------------------------------------------------------------------------------------


def _ffmpeg_children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1: stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if name == "ffmpeg" and int(rest[1]) == pid:
                found.append(int(entry.name))
    return found


def _gone(pid: int, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().split(")")[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """`python -m yuesheng video` of a whole rite, once FFmpeg is writing its file."""
    (tmp_path / "out").mkdir()
    (tmp_path / "tmp").mkdir()
    process = subprocess.Popen([sys.executable, "-m", "yuesheng", "video", "xiangyinjiu", "--no-audio",
                                "--size", "320x180", "-o", str(tmp_path / "out" / "x.mp4")], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        children = _ffmpeg_children(process.pid)
        if children and any(f.stat().st_size > 0 for f in (tmp_path / "out").iterdir()):
            return process, children[0]
        time.sleep(0.05)
    process.kill()
    raise AssertionError("FFmpeg did not start")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_leaves_no_file_and_no_ffmpeg(tmp_path, signum):
    process, encoder = _start(tmp_path)
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    expected = {signal.SIGTERM: (143, "terminated (SIGTERM)"), signal.SIGINT: (130, "interrupted (Ctrl-C)")}[signum]
    assert (process.returncode, err.strip().splitlines()[-1].split(":")[0]) == expected and "Traceback" not in err
    assert _gone(encoder)
    assert list((tmp_path / "out").iterdir()) == [] and list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_ffmpeg_dies_with_a_killed_yuesheng(tmp_path):
    process, encoder = _start(tmp_path)
    process.kill()
    process.communicate(timeout=30)
    assert _gone(encoder)
