"""Cue sheets: the shipped four validate; a table of broken sheets, each with its rule and line."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from yuesheng import load
from yuesheng.check.validate import check_cuesheet
from yuesheng.cuesheet import parse_duration
from yuesheng.datafiles import DATA_DIR
from yuesheng.errors import InvalidInputError, InvalidValueError
from yuesheng.music.repertoire import data_dir

DATA = Path(__file__).parent / "data"
SHIPPED = sorted(data_dir("cues").glob("*.yaml"))


def test_four_rites_are_shipped():
    assert [p.stem for p in SHIPPED] == ["dashe", "xiangshe", "xiangyinjiu", "yanli"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_cue_sheets_validate_without_errors(repertoire, path):
    sheet, problems = check_cuesheet(path, repertoire)
    assert sheet is not None
    assert [str(p) for p in problems if p.severity == "error"] == []
    assert all(c.cite.page and c.cite.quote for c in sheet.cues)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_cue_sheets_match_the_json_schema(path):
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    schema = json.loads((DATA_DIR / "cuesheet.schema.json").read_text())
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)] == []


@pytest.mark.parametrize("path", sorted(DATA.glob("mini_*.yaml")), ids=lambda p: p.stem)
def test_the_small_fixtures_are_valid(repertoire, path):
    assert load(path, repertoire=repertoire).cues


@pytest.mark.parametrize(("text", "seconds"), [("45s", 45), ("1.5s", 1.5), ("2min", 120), ("1min30s", 90),
                                              ("1h5min", 3900), ("250ms", 0.25)])
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("value", "message"), [("1:30", "ambiguous"), (90, "bare number"), ("90", "bad duration"),
                                                ("1m", "bad duration"), ("s", "bad duration"), (None, "expected")])
def test_bad_durations(value, message):
    with pytest.raises(InvalidValueError, match=message):
        parse_duration(value)


def _line_of(text: str, marker: str) -> int:
    """The line of *marker*; 'A>>B' is the first line with B after the first line with A."""
    after, _, marker = marker.rpartition(">>")
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if after in line) if after else 0
    return next(n for n, line in enumerate(lines[start:], start + 1) if marker in line)


# (case, base file, text to replace, replacement, rule expected, marker of the line expected)
CASES = [
    # YAML syntax and loading
    ("syntax-unclosed-flow", "x", "  gong: {name: 工, count: 4}", "  gong: {name: 工, count: 4", "yaml", "  sheng: {name: 笙"),
    ("syntax-bad-indent", "x", "    section: 樂賓\n    action: 獻工", "    section: 樂賓\n   action: 獻工", "yaml", "   action: 獻工"),
    ("duplicate-key", "x", "    duration: 2min\n", "    duration: 2min\n    duration: 3min\n", "yaml", "duration: 3min"),
    ("python-tag", "x", "estimates: a test sheet", "estimates: !!python/object:os.system x", "yaml", "estimates:"),
    ("tab-indent", "x", "  bin: {name: 賓}", "\tbin: {name: 賓}", "yaml", "\tbin"),
    # schema: keys
    ("unknown-top-key", "x", "estimates: a test sheet", "estimate: a test sheet", "schema", "estimate:"),
    ("unknown-cue-key", "x", "    duration: 2min\n", "    duratoin: 2min\n", "schema", "duratoin"),
    ("unknown-rite-key", "x", "  rank: 大夫", "  rnak: 大夫", "schema", "rnak"),
    ("unknown-default-key", "x", "  syllable: 1.5s", "  syllabe: 1.5s", "schema", "syllabe"),
    ("missing-cite", "x", "    cite: {page: 4-21b, quote: 主人獻工}\n", "", "cite", "- id: xi-gong"),
    ("missing-duration", "x", "    duration: 2min\n", "", "schema", "- id: xi-gong"),
    ("missing-section", "x", "    section: 樂賓\n    action: 獻工", "    action: 獻工", "schema", "- id: xi-gong"),
    ("both-action-and-music", "x", "    action: 獻工\n", "    action: 獻工\n    music: 升歌\n", "schema", "- id: xi-gong"),
    ("wrong-format", "x", "format: yuesheng-cues/1", "format: yuesheng-cues/2", "schema", "format:"),
    # schema: types and values
    ("who-not-a-list", "x", "    who: [zhuren, gong]", "    who: zhuren", "schema", "    who: zhuren"),
    ("count-not-int", "x", "  gong: {name: 工, count: 4}", "  gong: {name: 工, count: four}", "schema", "count: four"),
    ("count-zero", "x", "  gong: {name: 工, count: 4}", "  gong: {name: 工, count: 0}", "schema", "count: 0"),
    ("bad-id", "x", "  - id: xi-gong", "  - id: Xi Gong", "schema", "Xi Gong"),
    ("sexagesimal-duration", "x", "    duration: 2min\n", "    duration: 1:30\n", "duration", "duration: 1:30"),
    ("bare-number-duration", "x", "    duration: 2min\n", "    duration: 90\n", "duration", "duration: 90"),
    ("bad-page", "x", "{page: 4-21b, quote: 主人獻工}", "{page: 4.21b, quote: 主人獻工}", "cite", "4.21b"),
    ("unknown-music-kind", "x", "    music: 升歌", "    music: 唱歌", "schema", "music: 唱歌"),
    ("zhong-zero", "x", "      - {piece: luming}", "      - {piece: luming, zhong: 0}", "schema", "zhong: 0"),
    ("bad-delay", "x", "delay: 2s}", "delay: soon}", "duration", "delay: soon"),
    ("start-needs-one-anchor", "x", "start: {after: bin-xing, delay: 2s}", "start: {delay: 2s}", "schema", "start: {delay"),
    ("end-both", "x", "    end: {at: bin-chu}", "    end: {at: bin-chu, zhong: true}", "schema", "end: {at: bin-chu, zhong"),
    ("bad-huangzhong", "x", "  huangzhong: C4", "  huangzhong: H4", "schema", "huangzhong: H4"),
    ("bad-call-jun", "x", "  call_jun: 黄鍾", "  call_jun: 黄中", "schema", "call_jun: 黄中"),
    ("reading-chosen-unknown", "x", "    chosen: zheng", "    chosen: zhu", "reference", "chosen: zhu"),
    ("bad-call", "s", "    calls: [不絶]", "    calls: [角]", "schema", "calls: [角]"),
    ("bad-arrow", "s", "[H, M, H+100ms, h, M, M, H-300ms, H]", "[H, X, H+100ms, h, M, M, H-300ms, H]", "schema", "[H, X"),
    ("nine-arrows", "s", "[H, M, H+100ms, h, M, M, H-300ms, H]", "[H, M, H, h, M, M, H, H, M]", "schema", "[H, M, H, h"),
    ("rate-out-of-range", "s", "    hit: 0.5", "    hit: 1.5", "schema", "hit: 1.5"),
    ("bad-count", "s", "      count: pierce", "      count: always", "schema", "count: always"),
    # references
    ("unknown-piece", "x", "      - {piece: simu}", "      - {piece: simuu}", "reference", "simuu"),
    ("ambiguous-piece", "s", "      - {piece: zouyu-huangzhong-yu, zhong: 5}", "      - {piece: 騶虞, zhong: 5}", "reference", "騶虞, zhong"),
    ("unknown-performer", "x", "    who: [zhuren, gong]", "    who: [zhuren, gongg]", "reference", "[zhuren, gongg]"),
    ("unknown-instrument", "x", "    instruments: [se]", "    instruments: [sse]", "reference", "[sse]"),
    ("unknown-position", "x", "    where: tang", "    where: tangg", "reference", "where: tangg"),
    ("unknown-player", "x", "player: gong, position", "player: gongren, position", "reference", "player: gongren"),
    ("unknown-variant", "x", "    variant: da-shi", "    variant: dashi", "reference", "variant: dashi"),
    ("unknown-cue-reading", "x", "    variant: da-shi", "    reading: heyue=zhu", "reference", "reading: heyue=zhu"),
    ("cue-reading-unknown-id", "x", "    variant: da-shi", "    reading: heyu=zheng", "reference", "reading: heyu=zheng"),
    ("unknown-anchor", "x", "start: {after: bin-xing, delay: 2s}", "start: {after: bin-xin, delay: 2s}", "reference", "bin-xin,"),
    ("unknown-end-anchor", "x", "    end: {at: bin-chu}", "    end: {at: bin-chuu}", "reference", "bin-chuu"),
    ("end-before-start", "x", "    end: {at: bin-chu}", "    end: {at: gong-ru}", "reference", "end: {at: gong-ru}"),
    ("end-at-music", "s", "    end: {at: she-yi}", "    end: {at: she-san}", "reference", "end: {at: she-san}"),
    ("duplicate-id", "x", "  - id: xi-dashi", "  - id: xi-gong", "reference", "  - id: xi-gong\n    section: 樂賓\n    variant"),
    ("anchor-cycle", "x", "  - id: shengge\n    section: 樂賓\n", "  - id: shengge\n    section: 樂賓\n    start: {after: xi-gong}\n",
     "cycle", "start: {after: xi-gong}"),
    ("unknown-round-pair", "s", "      pairs: [san-ou]\n", "      pairs: [san-ouu]\n", "archery-reference", "pairs: [san-ouu]"),
    ("unknown-round-cue", "s", "      cue: she-yi", "      cue: she-yii", "archery-reference", "cue: she-yii"),
    ("pair-unknown-archer", "s", "upper: a1, lower: a2", "upper: a1, lower: a3", "archery-reference", "    san-ou: {"),
    # ritual rules
    ("zhengge-before-jiange", "x", "  - id: jiange\n", "  - id: jiange\n    variant: da-shi\n", "zhengge-bei", "- id: zhengge-bei"),
    ("shengge-two-zhong", "x", "      - {piece: simu}\n", "", "zhengge-bei", "- id: shengge>>pieces:"),
    # six odes are three 終 only as three 周南+召南 pairs: two pairs and two odes of one side are four
    ("heyue-four-zhong", "x", "      - {piece: caipin}\n", "      - {piece: guanju}\n", "zhengge-bei", "- id: heyue>>pieces:"),
    ("heyue-two-zhong", "x", "      - {piece: juaner}\n      - {piece: queshao}\n      - {piece: caifan}\n      - {piece: caipin}\n",
     "      - {piece: queshao}\n      - {piece: caifan}\n", "zhengge-bei", "- id: heyue>>pieces:"),
    ("xiangshe-heyue-one-zhong", "s", "      - {piece: guanju, zhong: 3}", "      - {piece: guanju}", "zhengge-bei",
     "- id: heyue>>pieces:"),
    ("jiange-not-alternating", "x", "      - {piece: yougeng, part: 笙}", "      - {piece: yougeng, part: 歌}", "jiange-alternation",
     "- id: jiange>>pieces:"),
    ("jinzou-without-que", "x", "    end: {at: bin-chu}\n", "", "jinzou-que", "  - id: gai"),
    ("xiangshe-sings-before-shooting", "s", "    music: 合樂", "    music: 升歌", "xiangshe-bu-ge", "music: 升歌"),
    ("round-order", "s", "      count: none", "      count: pierce", "three-rounds", "  rounds:"),
    ("jie-six", "s", "    total: 5", "    total: 6", "jie", "  jie:"),
    ("jie-listen-two", "s", "    listen: 1", "    listen: 2", "jie", "  jie:"),
    ("zouyu-four-zhong", "s", "      - {piece: zouyu-huangzhong-yu, zhong: 5}", "      - {piece: zouyu-huangzhong-yu, zhong: 4}",
     "music-round", "  - id: round-3"),
    ("xiangshe-wrong-ode", "s", "      - {piece: caipin, zhong: 5}", "      - {piece: luming, zhong: 5}", "music-round",
     "  - id: round-3"),
    ("xiangshe-xunuo-on-gong", "s", "    calls: [不絶]", "    calls: [宫]", "calls", "calls: [宫]"),
    ("hit-call-on-shang-only", "s", "    calls: [宫, 商]", "    calls: [商]", "calls", "calls: [商]"),
    ("call-without-calls", "s", "    calls: [不絶]\n", "", "calls", "  - id: xunuo"),
    ("hit-call-outside-rounds", "s", "    end: {at: she-er}\n", "", "calls-hits", "  - id: huo-1"),
    ("drum-round-without-music", "s", "      music: {piece: zouyu-huangzhong-yu, zhong: 5}\n", "", "archery-reference",
     "  - id: round-3"),
    # held calls, the shooting order, an archery section under a variant, reading shihuo
    ("hold-on-music", "s", "    performers: [gong]\n    cite: {page: 5-15b", "    performers: [gong]\n    hold: 3s\n"
     "    cite: {page: 5-15b", "schema", "hold: 3s"),
    ("hold-until-unknown", "s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: {until: she-yii}\n", "reference",
     "hold: {until: she-yii}"),
    ("hold-until-music", "s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: {until: she-san}\n", "reference",
     "hold: {until: she-san}"),
    ("hold-zero", "s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: 0s\n", "duration", "hold: 0s"),
    ("hold-bare-number", "s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: 5\n", "duration", "hold: 5"),
    ("hold-unknown-key", "s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: {untill: she-yi}\n", "schema",
     "hold: {untill"),
    ("pair-first-bad", "s", "upper: a1, lower: a2}", "upper: a1, lower: a2, first: a2}", "schema", "    san-ou: {"),
    ("archery-variant-unknown", "s", "  tolerance: 250ms", "  variant: shee\n  tolerance: 250ms", "reference",
     "variant: shee"),
    ("archery-variant-cue-not-of-it", "s", "  tolerance: 250ms", "  variant: caipin\n  tolerance: 250ms",
     "archery-reference", "cue: she-yi"),
    ("shihuo-unknown-option", "s", "performers:\n", "readings:\n  shihuo:\n    name: 釋獲如初\n    chosen: ru-chu\n"
     "    options:\n      ru-chu: {text: a}\n      drum-ony: {text: b}\nperformers:\n", "archery-reference",
     "    options:"),
    ("pair-cue-not-a-pair", "s", "      pairs: [san-ou, bin-zhuren]\n      count: pierce",
     "      pairs: [san-ou, bin-zhuren]\n      pair_cues: {san-ouu: she-yi}\n      count: pierce", "archery-reference",
     "pair_cues: {san-ouu"),
    ("pair-cue-music", "s", "      pairs: [san-ou, bin-zhuren]\n      count: pierce",
     "      pairs: [san-ou, bin-zhuren]\n      pair_cues: {bin-zhuren: she-san}\n      count: pierce", "archery-reference",
     "pair_cues: {bin-zhuren"),
    ("any-hit-unknown-performer", "s", "      count: drum\n", "      count: drum\n      any_hit: [gongg]\n",
     "archery-reference", "any_hit: [gongg]"),
    ("xunuo-only-words", "s", "    action: 三耦射\n    who: [a1, a2]", "    action: 三耦射 獲者許諾\n    who: [a1, a2, huozhe]",
     "xunuo-sounds", "  - id: she-yi"),
]


def _mutated(base: str, old: str, new: str) -> str:
    text = (DATA / ("mini_xiangyin.yaml" if base == "x" else "mini_xiangshe.yaml")).read_text(encoding="utf-8")
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize(("case", "base", "old", "new", "rule", "marker"), CASES, ids=[c[0] for c in CASES])
def test_broken_cue_sheet_reports_rule_and_line(repertoire, tmp_path, run, case, base, old, new, rule, marker):
    text = _mutated(base, old, new)
    path = tmp_path / f"{case}.yaml"
    path.write_text(text, encoding="utf-8")
    code, report, problems = run("validate", str(path))
    out = problems + report  # problems on stderr, the verdict on stdout
    assert code == 1, out
    line = _line_of(text, marker.split("\n")[0]) if "\n" not in marker else text[: text.index(marker)].count("\n") + 1
    errors = [e for e in out.splitlines() if e.startswith(f"{path}:") and "warning:" not in e and "INVALID" not in e]
    wanted = [e for e in errors if e.endswith(f"[{rule}]")]
    assert wanted, errors
    assert any(e.startswith(f"{path}:{line}:") for e in wanted), (line, wanted)


def test_there_are_at_least_forty_broken_cases():
    assert len(CASES) >= 40


def test_every_problem_of_a_file_is_reported_in_one_run(run, tmp_path):
    text = _mutated("x", "    who: [zhuren, gong]", "    who: [zhuren, gongg]")
    text = text.replace("      - {piece: simu}", "      - {piece: simuu}").replace("    duration: 30s", "    duration: 30")
    path = tmp_path / "many.yaml"
    path.write_text(text, encoding="utf-8")
    code, report, problems = run("validate", str(path))
    out = problems + report  # problems on stderr, the verdict on stdout
    assert code == 1
    for expected in ("unknown piece 'simuu'", "unknown performer 'gongg'", "bare number 30"):
        assert expected in out
    lines = [int(e.split(":")[1]) for e in out.splitlines() if e.startswith(str(path) + ":") and "INVALID" not in e]
    assert lines == sorted(lines)


def test_a_lost_piece_without_realization_is_a_warning_only(run, tmp_path, shipped_score_text):
    scores = tmp_path / "scores"
    scores.mkdir()
    dropped = ("mode:", "realization:", "  label", "  rule", "    Placeholder", "stanzas:", "  - lines", "    lu",
               "    suzi")
    bare = "\n".join(line for line in shipped_score_text("gaixia").splitlines() if not line.startswith(dropped))
    (scores / "gaixia.yaml").write_text(bare + "\n", encoding="utf-8")
    code, report, problems = run("validate", str(DATA / "mini_xiangyin.yaml"), "--scores", str(scores))
    out = problems + report  # problems on stderr, the verdict on stdout
    assert code == 0, out
    assert "warning:" in out and "[lost-realization]" in out and "1 warning(s)" in out


def test_missing_file_exits_1(run, tmp_path):
    code, report, problems = run("validate", str(tmp_path / "none.yaml"))
    out = problems + report  # problems on stderr, the verdict on stdout
    assert code == 1 and "cannot read file" in out


def test_validate_json(run):
    code, report, problems = run("validate", str(DATA / "mini_xiangshe.yaml"), "--format", "json")
    out = problems + report  # problems on stderr, the verdict on stdout
    (result,) = json.loads(out)
    assert code == 0 and result["valid"] and result["rite"] == "鄉射禮" and result["errors"] == []


def test_validate_without_files_is_a_usage_error(run):
    assert run("validate")[0] == 2


def test_variant_requirements_switch_on_together(repertoire):
    sheet = load(data_dir("cues") / "yanli.yaml", repertoire=repertoire)
    assert sheet.with_requirements(frozenset({"wu-shao"})) == {"wu-shao", "yi-yue-na-bin"}


def test_load_cuesheet_raises_with_every_error(repertoire, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(_mutated("x", "      - {piece: simu}", "      - {piece: simuu}"), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="unknown piece 'simuu'"):
        load(path, repertoire=repertoire)


def test_a_call_held_until_a_cue_of_another_programme_is_an_error(tmp_path, run):
    text = _mutated("s", "    calls: [不絶]\n", "    calls: [不絶]\n    hold: {until: bin-chu}\n")
    text = text.replace("    action: 賓出\n", "    action: 賓出\n    variant: caipin\n")
    path = tmp_path / "held.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("validate", str(path))
    out += err  # problems on stderr, the verdict on stdout
    assert code == 1 and "not in every programme" in out and "[reference]" in out
    assert f"{path}:{_line_of(text, 'hold: {until: bin-chu}')}:" in out


@pytest.mark.parametrize(("old", "new", "rule", "marker"), [
    ("    hold: {until: fuhou-zhi-fa}\n", "", "calls", "    calls: [商]"),  # 至乏聲止: the 商 is held
    ("    calls: [宫]\n    start: {with: fuhou-qu-fa-2}\n", "    calls: [宫]\n", "xunuo-sounds",
     "  - id: fuhou-qu-fa-2"),  # the 許諾如初 of 10-4a no longer sounds with its walk
])
def test_dashe_xunuo_must_sound_and_hold_its_shang(tmp_path, run, old, new, rule, marker):
    text = (data_dir("cues") / "dashe.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1
    text = text.replace(old, new)
    path = tmp_path / "dashe.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("validate", str(path))
    out += err  # problems on stderr, the verdict on stdout
    assert code == 1 and f"[{rule}]" in out
    assert f"{path}:{_line_of(text, marker)}:" in out, out


def test_dashe_gong_stepping_on_the_mark_before_the_music_is_an_error(repertoire, tmp_path, run):
    text = (data_dir("cues") / "dashe.yaml").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "action: 公樂作而後就物" in line) - 2
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("  - id:"))
    block = lines[start:end]
    del lines[start:end]
    music = next(i for i, line in enumerate(lines) if line.startswith("  - id: lishou-she"))
    lines[music:music] = block
    path = tmp_path / "dashe.yaml"
    path.write_text("".join(lines), encoding="utf-8")
    code, report, problems = run("validate", str(path))
    out = problems + report  # problems on stderr, the verdict on stdout
    assert code == 1 and "[gong-after-music]" in out
    assert f"{path}:{music + 1}:" in out


def test_yanli_archery_rules_apply_under_its_variant(tmp_path, run):
    text = (data_dir("cues") / "yanli.yaml").read_text(encoding="utf-8")
    old = "      count: pierce\n      cite: {page: 5-33a"
    assert text.count(old) == 1
    path = tmp_path / "yanli.yaml"
    path.write_text(text.replace(old, "      count: none\n      cite: {page: 5-33a"), encoding="utf-8")
    code, out, err = run("validate", str(path))
    out += err  # problems on stderr, the verdict on stdout
    assert code == 1 and "[three-rounds]" in out and "(with variant yan-she)" in out
    assert f"{path}:{_line_of(text, '  rounds:')}:" in out


def test_a_build_is_refused_for_a_rule_broken_in_its_own_programme_only(tmp_path, run):
    text = (data_dir("cues") / "yanli.yaml").read_text(encoding="utf-8")
    path = tmp_path / "yanli.yaml"
    path.write_text(text.replace("      count: pierce\n      cite: {page: 5-33a", "      count: none\n      cite: "
                                 "{page: 5-33a", 1), encoding="utf-8")
    plain = run("timeline", str(path), "-o", str(tmp_path / "plain.txt"))
    assert plain[0] == 0, plain  # the 燕射's rule is validate's to report while the 燕射 is not built
    code, out, err = run("timeline", str(path), "--variant", "yan-she", "-o", str(tmp_path / "she.txt"))
    assert code == 1 and "[three-rounds]" in err and f"{path}:{_line_of(text, '  rounds:')}:" in err
    assert not (tmp_path / "she.txt").exists()


def test_a_round_with_music_under_a_variant_needs_its_music(tmp_path, run):
    text = (data_dir("cues") / "yanli.yaml").read_text(encoding="utf-8")
    old = "      music: {piece: zouyu-huangzhong-yu, zhong: 5}\n"
    path = tmp_path / "yanli.yaml"
    path.write_text(text.replace(old, ""), encoding="utf-8")
    code, out, err = run("validate", str(path))
    out += err  # problems on stderr, the verdict on stdout
    assert code == 1 and "[archery-reference]" in out


def test_a_cue_of_a_reading_option_not_chosen_is_held_to_the_rules(run, tmp_path):
    text = (data_dir("cues") / "yanli.yaml").read_text(encoding="utf-8")
    old = "    reading: yiyue-luming=san-zhong\n    music: 升歌\n"
    assert text.count(old) == 1
    path = tmp_path / "yanli.yaml"
    path.write_text(text.replace(old, "    reading: yiyue-luming=san-zhong\n    music: 間歌\n"), encoding="utf-8")
    code, out, err = run("validate", str(path))
    assert code == 1 and "[jiange-alternation]" in err
    assert "yi-yue-na-bin; reading yiyue-luming=san-zhong) — 儀禮集釋 4-23b" in err  # checked only with it chosen


# -- one shape: the reader's keys are the JSON Schema's ------------------------------------------------------------

SCHEMA = Path(__file__).resolve().parent.parent / "yuesheng" / "data" / "cuesheet.schema.json"
CUES = "/properties/cues/items/oneOf"
SCHEMA_PLACES = {  # reader.KEYS name → the schema's objects at that level (several: the union of their properties)
    "": [""], "$defs/cite": ["/$defs/cite"], "$defs/piece": ["/$defs/piece"],
    "rite": ["/properties/rite"], "defaults": ["/properties/defaults"],
    "readings/*": ["/properties/readings/additionalProperties"],
    "readings/*/options/*": ["/properties/readings/additionalProperties/properties/options/additionalProperties"],
    "performers/*": ["/properties/performers/additionalProperties"],
    "instruments/*": ["/properties/instruments/additionalProperties"],
    "positions/*": ["/properties/positions/additionalProperties"],
    "variants/*": ["/properties/variants/additionalProperties"],
    "cues/action": [f"{CUES}/0"], "cues/music": [f"{CUES}/1"],
    "cues/start": [f"{CUES}/0/properties/start", f"{CUES}/1/properties/start"],
    "cues/end": [f"{CUES}/1/properties/end/oneOf/0", f"{CUES}/1/properties/end/oneOf/1"],
    "cues/hold": [f"{CUES}/1/properties/hold/oneOf/0"],
    "archery": ["/properties/archery"], "archery/jie": ["/properties/archery/properties/jie"],
    "archery/pairs/*": ["/properties/archery/properties/pairs/additionalProperties"],
    "archery/rounds/*": ["/properties/archery/properties/rounds/items"],
    "archery/shots": ["/properties/archery/properties/shots"],
}


def _at(schema: dict[str, Any], pointer: str) -> Any:
    node: Any = schema
    for part in filter(None, pointer.split("/")):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _objects(node, pointer: str = ""):
    """The pointer of every object with properties in the schema."""
    if isinstance(node, dict):
        if "properties" in node:
            yield pointer
        for key, value in node.items():
            yield from _objects(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for n, value in enumerate(node):
            yield from _objects(value, f"{pointer}/{n}")


def test_the_readers_keys_at_every_level_are_the_schemas_properties():
    from yuesheng.cuesheet.reader import KEYS

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert set(KEYS) == set(SCHEMA_PLACES)
    for name, pointers in SCHEMA_PLACES.items():
        nodes = [_at(schema, p) for p in pointers]
        assert all(n.get("additionalProperties") is False for n in nodes), name
        assert set(KEYS[name]) == {k for n in nodes for k in n["properties"]}, name
        assert len(set(KEYS[name])) == len(KEYS[name]), name
    # and no level of the schema that the reader does not check
    assert set(_objects(schema)) == {p for ps in SCHEMA_PLACES.values() for p in ps}


# -- issue 22 §6: durations are read strictly ---------------------------------------------------------------------

@pytest.mark.parametrize("text, reason", [
    ("٣٠s", "ASCII digits"),  # Arabic-Indic digits: int() reads them, a reader of the sheet may not
    ("３０s", "ASCII digits"),  # full-width
    ("30 s", "no spaces"),
    ("1min 30s", "no spaces"),
    ("1h1h1h", "each unit at most once, largest first"),
    ("30s1min", "each unit at most once, largest first"),
    ("5ms5ms", "each unit at most once, largest first"),
])
def test_lenient_durations_are_refused_with_the_reason(text, reason):
    with pytest.raises(InvalidValueError, match=reason):
        parse_duration(text)


@pytest.mark.parametrize("text, seconds", [("45s", 45), ("1.5s", Fraction(3, 2)), ("1h5min", 3900),
                                           ("1min30s", 90), ("2s500ms", Fraction(5, 2)), (" 90s ", 90), ("0s", 0)])
def test_durations_as_written_are_read(text, seconds):
    assert parse_duration(text) == seconds


def test_an_arrow_offset_in_unicode_digits_is_refused(run, tmp_path):
    text = (Path(__file__).parent / "data" / "mini_xiangshe.yaml").read_text(encoding="utf-8")
    path = tmp_path / "rite.yaml"
    path.write_text(text.replace("H+100ms", "H+١٠٠ms"), encoding="utf-8")
    code, out, err = run("validate", str(path))
    assert code == 1 and "bad arrow 'H+١٠٠ms'" in out + err
