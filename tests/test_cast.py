"""``yuesheng cast``: the identities the texts state (each quote on its page), the fewest performers — a valid
doubling (no performer's parts on the ground together) and the least, against brute force — and the errors."""

from __future__ import annotations

import itertools
import json
import math
import random
import shutil
from pathlib import Path

import pytest

import yuesheng
from yuesheng.datafiles import rite_of
from yuesheng.sources import find_quote, page
from yuesheng.staging.cast import cast, fewest, most_at_once, presence

FIFTH = Path(__file__).parent / "data" / "fifth"
RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")


def _together(a, b) -> bool:
    return any(x0 < y1 and y0 < x1 for x0, x1 in a for y0, y1 in b)


def _least_by_brute_force(spans) -> int:
    """The fewest groups with no two parts together, trying every assignment of k groups for k = 1, 2, …"""
    nodes = sorted(spans)
    pairs = [(i, j) for i, j in itertools.combinations(range(len(nodes)), 2)
             if _together(spans[nodes[i]], spans[nodes[j]])]
    for k in range(1, len(nodes) + 1):
        for colours in itertools.product(range(k), repeat=len(nodes)):
            if all(colours[i] != colours[j] for i, j in pairs):
                return k
    return 0


def _valid(groups, spans) -> bool:
    return all(not _together(spans[a], spans[b]) for g in groups for a, b in itertools.combinations(g, 2))


@pytest.mark.parametrize("seed", range(40))
def test_the_fewest_performers_are_the_least_by_brute_force(seed):
    """Random parts that come on and go off (up to three times each), eight of them at most."""
    rng = random.Random(seed)
    spans = {}
    for n in range(rng.randint(2, 8)):
        times = sorted(rng.sample(range(40), 2 * rng.randint(1, 3)))
        spans[f"p{n}"] = tuple(zip(times[::2], times[1::2], strict=True))
    groups, proven = fewest(spans)
    assert sorted(p for g in groups for p in g) == sorted(spans)
    assert _valid(groups, spans)
    assert proven and len(groups) == _least_by_brute_force(spans)
    assert most_at_once(spans)[0] <= len(groups)


def test_the_exact_search_closes_a_gap_the_lower_bound_leaves():
    """A five-cycle of parts (each on the ground with the next): never three at once, yet three are needed."""
    spans = {"a": ((0, 2), (9, 11)), "b": ((1, 4),), "c": ((3, 6),), "d": ((5, 8),), "e": ((7, 10),)}
    assert most_at_once(spans)[0] == 2
    groups, proven = fewest(spans)
    assert proven and len(groups) == 3 == _least_by_brute_force(spans) and _valid(groups, spans)


def _fifth_copy(tmp_path: Path, blocking: str | None = None) -> Path:
    for folder in ("cues", "blocking"):
        shutil.copytree(FIFTH / folder, tmp_path / folder)
    if blocking is not None:
        (tmp_path / "blocking" / "nabin.yaml").write_text(blocking, encoding="utf-8")
    return tmp_path / "cues" / "nabin.yaml"


def test_a_small_rite_doubles_the_guest_gone_out_with_a_musician_come_in(tmp_path, repertoire):
    """The fifth rite with its 賓 walking out through the gate before the 工 come in: one of them can be the 賓."""
    text = (FIFTH / "blocking" / "nabin.yaml").read_text(encoding="utf-8")
    text = text.replace("{who: bin, to: bin-xi, facing: 南面, cite: {page: 7-10b, quote: 賓升筵}}",
                        '{who: bin, to: menwai-bin, estimate: "the test\'s: the 賓 goes out"}')
    production = yuesheng.produce(yuesheng.load(_fifth_copy(tmp_path, text), repertoire=repertoire))
    staged, motion = production.staged, production.motion
    assert staged is not None and motion is not None
    found = cast(production.sheet, staged, motion, None)
    assert presence(motion, staged, "jun") == ((-math.inf, math.inf),)
    assert len(found.performers) == 5 == _least_by_brute_force(found.spans) and found.proven
    assert [p.parts for p in found.doubled] == [("賓", "工 1")] or len(found.doubled) == 1
    assert _valid([p.parts for p in found.performers], found.spans)


@pytest.fixture(scope="module")
def casts(repertoire):
    out = {}
    for rite in RITES:
        production = yuesheng.produce(yuesheng.load(rite, repertoire=repertoire))
        assert production.staged is not None and production.motion is not None
        out[rite] = (production, cast(production.sheet, production.staged, production.motion,
                                      rite_of(production.sheet.rite_id, production.sheet.rite_name)))
    return out


@pytest.mark.parametrize("rite", RITES)
def test_every_rites_doubling_is_valid_and_proven(casts, rite):
    production, found = casts[rite]
    assert _valid([p.parts for p in found.performers], found.spans)
    assert found.proven and len(found.performers) >= found.most_at_once
    on = {part for p in found.performers for part in p.parts}
    assert on == set(found.spans)
    heads = sum(len(r.members) for r in found.roles if not set(r.members) <= set(production.staged.same))
    assert len(found.performers) <= heads


@pytest.mark.parametrize("rite", RITES)
def test_every_identity_is_cited_on_its_page_or_an_estimate_and_covers_the_blockings_same(casts, rite):
    production, found = casts[rite]
    for held in found.identities:
        identity = held.identity
        assert identity.page or identity.estimate
        if identity.page:
            assert find_quote(identity.quote, page(identity.page)) is not None, identity
        assert "no page in data/rites.json" not in identity.estimate, identity
    pairs = {frozenset((h.identity.same[0], other)) for h in found.identities for other in h.identity.same[1:]}
    for role, target in production.staged.same.items():
        assert frozenset((target, role)) in pairs


def test_dashe_names_its_roles_one_with_their_names_and_the_dasheizheng_as_the_binzhe(casts):
    _, found = casts["dashe"]
    roles = {r.id: r for r in found.roles}
    assert dict(roles["sheren"].names) == {"sishe": "司射"}
    assert dict(roles["simazheng"].names) == {"sima": "司馬"}
    assert dict(roles["binzhe"].names) == {"sizheng": "司正", "dashezheng": "大射正"}
    held = next(h for h in found.identities if "dashezheng" in h.identity.same)
    assert (held.identity.page, held.identity.quote) == ("9-8b", "大射正擯")
    assert held.how == "apart"  # the blocking stands the 大射正 as well as the 擯者 from the start: said, not hidden
    groups = {r.id: r.group for r in found.roles if r.group}
    assert {"shi", "qungong", "baiguan", "qing", "dafu"} <= set(groups)


def test_cast_prints_text_and_json(run):
    code, out, _ = run("cast", "dashe")
    assert code == 0 and "擯者 = 大射正: 儀禮集釋 9-8b 大射正擯" in out and "the fewest performers" in out
    code, out, _ = run("cast", "xiangshe", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["performers"]["least"] == len(data["performers"]["each"])
    assert {"same": ["xiang", "sima"], "source": "儀禮集釋 5-20b 司正為司馬"}.items() <= next(
        i for i in data["identities"] if i["same"] == ["xiang", "sima"]).items()


def test_a_rite_whose_blocking_is_incomplete_names_the_cues_that_lack_one(tmp_path, run):
    text = (FIFTH / "blocking" / "nabin.yaml").read_text(encoding="utf-8")
    text = text.replace('  - {who: gong, to: menwai-gong, file: 東上, estimate: "the 工 wait outside the gate"}\n', "")
    sheet = _fifth_copy(tmp_path, text.replace("{who: gong, to: gong-wei", "{who: bin, to: gong-wei"))  # 工 unplaced
    for command in (("cast", str(sheet)), ("sides", str(sheet), "--all", "--format", "json")):
        code, _, err = run(*command)
        assert code == 1, err
        assert "the blocking is not complete" in err and "the cues that lack one: " in err
        named = err.split("the cues that lack one: ")[1].splitlines()[0]
        assert named.startswith("gong-ru, shengge"), named
