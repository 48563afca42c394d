"""The text layer's tables of forms: the simplified forms a reader types, limited to the shipped scores' characters
and held to the simplified title each score names among its aliases."""

from __future__ import annotations

from pathlib import Path

import yaml

from yuesheng.music.repertoire import data_dir
from yuesheng.text import _SIMPLIFIED, simplified_forms, standard_forms


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
