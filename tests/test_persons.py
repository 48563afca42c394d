"""The one lookup of persons: hanzi name, id, a numbered member of a group, the blocking's same, and the errors."""

import pytest

import yuesheng
from yuesheng.errors import AmbiguousNameError, UnknownNameError
from yuesheng.staging.persons import person, persons


@pytest.fixture(scope="module")
def xiangshe():
    production = yuesheng.produce(yuesheng.load(yuesheng.production.cue_path("xiangshe")))
    assert production.staged is not None
    return production.sheet, production.staged.same


@pytest.mark.parametrize("query", ["衆賓 2", "衆賓2", "衆賓#2", "zhongbin#2", "zhongbin 2", "ZhongBin 2", "衆賓 ２",
                                   "衆宾 2", "眾賓 2", "众宾 2", "众宾2"])
def test_a_member_of_a_group_is_found_by_every_form_of_his_name(xiangshe, query):
    found = person(query, *xiangshe)
    assert (found.role, found.number, found.members, found.label) == ("zhongbin", 2, ("zhongbin#2",), "衆賓 2")


def test_a_group_named_without_a_number_is_all_its_members(xiangshe):
    found = person("衆賓", *xiangshe)
    assert found.members == tuple(f"zhongbin#{n}" for n in range(1, 9)) and found.label == "衆賓"


def test_a_role_the_blocking_names_as_another_is_that_one(xiangshe):
    sheet, same = xiangshe
    assert same["dashi"] == "gong#1"
    assert person("大師", sheet, same).members == ("gong#1",)
    assert person("dashi", sheet, same).label == "工 1"


@pytest.mark.parametrize(("query", "words"), [
    ("衆賓 9", "衆賓 (zhongbin) are 8, numbered 1 to 8"),
    ("衆賓 0", "numbered 1 to 8"),
    ("主人 2", "主人 (zhuren) is one person, not a group"),
    ("zhurn", "did you mean 'zhuren'"),
])
def test_an_unknown_person_names_what_is_known(xiangshe, query, words):
    with pytest.raises(UnknownNameError, match="unknown person") as info:
        person(query, *xiangshe)
    assert words in str(info.value)


def test_a_name_two_roles_share_names_both_ids(xiangshe):
    sheet, same = xiangshe
    doubled = {**sheet.performers, "zhuren2": sheet.performers["zhuren"]}
    twice = type(sheet)(**{**{f: getattr(sheet, f) for f in sheet.__dataclass_fields__}, "performers": doubled})
    with pytest.raises(AmbiguousNameError, match="zhuren, zhuren2"):
        person("主人", twice, same)


def test_every_person_one_by_one_and_each_found_by_his_label(xiangshe):
    sheet, same = xiangshe
    everyone = persons(sheet, same)
    assert sum(1 for p in everyone if p.role == "zhongbin") == 8
    assert not any(p.role in same for p in everyone)
    for p in everyone:
        assert person(p.label, sheet, same) == p



@pytest.mark.parametrize(("rite", "query", "role"), [
    ("dashe", "小乐正", "xiaoyuezheng"), ("dashe", "隶仆人", "lipuren"), ("dashe", "隷僕人", "lipuren"),
    ("dashe", "摈者", "binzhe"), ("dashe", "执冪者", "zhimizhe"), ("dashe", "负侯者 2", "fuhouzhe"),
    ("dashe", "钟人", "zhongren"), ("dashe", "镈人", "boren"), ("dashe", "御人", "yueren"),
    ("dashe", "群工", "qungong"),
    ("dashe", "胜者之弟子", "dizi"), ("dashe", "內小臣", "neixiaochen"), ("dashe", "阍人", "hunren"),
    ("yanli", "钟人", "zhongren"), ("yanli", "鎛人", "boren"), ("yanli", "释获者", "shihuozhe"),
    ("yanli", "执散爵者", "zhi-sanjue"), ("xiangshe", "举觯者 1", "juzhizhe"), ("xiangshe", "赞者", "zanzhe"),
    ("xiangyinjiu", "众宾之长 3", "zhongbin-zhang"), ("xiangyinjiu", "眾賓之長", "zhongbin-zhang"),
    ("xiangyinjiu", "从者", "congzhe"), ("xiangyinjiu", "诸公", "zhugong"), ("xiangyinjiu", "乐正", "yuezheng"),
])
def test_a_role_is_found_by_its_name_in_simplified_or_variant_characters(rite, query, role):
    assert person(query, yuesheng.load(rite)).role == role
