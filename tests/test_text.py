"""The text layer's tables of forms: the simplified forms a reader types, limited to the shipped scores' characters
and held to the simplified title each score names among its aliases."""

from __future__ import annotations

from pathlib import Path

import yaml

from yuesheng.music.repertoire import data_dir
from yuesheng.text import _NAME_FORMS, _SIMPLIFIED, fold, fold_table, simplified_forms, standard_forms


def _characters(repertoire) -> set[str]:
    found: set[str] = set()
    for piece in repertoire:
        found |= set(standard_forms(piece.title))
        for note in piece.notes:
            found |= set(standard_forms(note.lyric.strip()))
    return found


def test_every_simplified_form_is_of_a_character_the_scores_sing_or_name(repertoire) -> None:
    """The table is limited to the shipped scores: no character of it that no score has."""
    table = {chr(k): v for k, v in _SIMPLIFIED.items()}
    assert set(table) <= _characters(repertoire)
    assert not set(table) & set(map(str, table.values()))  # each form made once: simplified_forms is idempotent
    assert simplified_forms("呦呦鹿鳴食野之苹") == "呦呦鹿鸣食野之苹"
    assert simplified_forms("闗闗雎鳩在河之洲") == "关关雎鸠在河之洲"  # the variant made standard first


def test_each_scores_simplified_title_is_its_title_through_the_table() -> None:
    """Each score's first alias is its title as a mainland reader writes it (关雎, 鹿鸣, 南山有台, 采苹): an
    independent check of the table on every title."""
    for path in sorted(Path(data_dir("scores")).glob("*.yaml")):
        score = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert simplified_forms(score["title"]) == score["aliases"][0], path.name


def _persons_characters() -> set[str]:
    """Every character of the shipped rites' persons' names."""
    import yuesheng

    return {c for path in Path(data_dir("cues")).glob("*.yaml") for m in yuesheng.load(path.stem).performers.values()
            for c in m.name}


def test_every_form_of_a_name_is_of_a_character_the_rites_persons_are_named_by() -> None:
    """The names' table is limited to the shipped rites' persons: each key, or the form it folds to, is a character
    of their names; no key is a form of the scores' table too, nor a form another key folds to (one step)."""
    names = _persons_characters()
    table = {chr(k): str(v) for k, v in _NAME_FORMS.items()}
    assert all(c in names or fold(c) in {fold(n) for n in names} for c in table)
    assert not set(table) & {chr(k) for k in _SIMPLIFIED}
    assert not set(table) & set(table.values())


def test_a_name_folds_alike_in_every_form_and_the_pages_table_folds_it_the_same() -> None:
    for forms in (("樂正", "乐正"), ("衆賓 ２", "眾賓 2", "众宾 2", "衆宾 2"), ("鍾人", "鐘人", "钟人"),
                  ("隸僕人", "隶仆人", "隷僕人"), ("內小臣", "内小臣"), ("執冪者", "执幂者", "執幂者"),
                  ("ZhongBin", "zhongbin")):
        assert len({fold(f) for f in forms}) == 1, forms
    table = fold_table(["樂正", "衆賓"])
    for name in ("乐正", "眾賓", "樂正"):  # the page's way: NFKC, each character through the table, lower case
        assert "".join(table.get(c, c) for c in name).lower() == fold(name)
    assert fold("後") != fold("樂正") and "後" not in table  # only what the names need
