"""The parts' playing patterns: what ``sounds`` plays, ``count`` counts, for every part and any piece."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from yuesheng.music.instruments import PARTS, PHRASE, Pattern


@given(part=st.sampled_from(sorted(PARTS)), length=st.integers(0, 200), cut=st.integers(0, 200),
       jinzou=st.booleans())
def test_count_is_the_number_of_notes_that_sound(part, length, cut, jinzou):
    pattern, played = PARTS[part].pattern, min(cut, length)
    assert pattern.count(played, length, jinzou=jinzou) == sum(
        pattern.sounds(n, length, jinzou=jinzou) for n in range(played))


def test_the_patterns_of_the_bells_stones_and_drums():
    six = [n for n in range(6)]
    assert [n for n in six if PARTS["鐘"].pattern.sounds(n, 6, jinzou=True)] == six
    assert [n for n in six if PARTS["鑮"].pattern.sounds(n, 6, jinzou=True)] == [0, PHRASE]
    assert [n for n in six if PARTS["磬"].pattern.sounds(n, 6, jinzou=True)] == [PHRASE - 1, 5]  # and the last note
    assert [n for n in six if PARTS["鼓"].pattern.sounds(n, 6, jinzou=False)] == [0, PHRASE]
    assert [n for n in six if PARTS["鼓"].pattern.sounds(n, 6, jinzou=True)] == six
    assert {name for name, p in PARTS.items() if p.pattern.late(jinzou=True)} == {"磬", "鼓", "鼙", "鼗"}
    assert not any(p.pattern.late(jinzou=False) for p in PARTS.values())
    assert {p.pattern for p in PARTS.values() if p.is_drum} == {Pattern.DRUM}
