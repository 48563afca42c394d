"""The console's token: long enough to be about 128 bits, and never one that is guessed first (issue 34)."""

import secrets

import pytest

from yuesheng.errors import UsageError
from yuesheng.live.access import MIN_LENGTH, check_token, console_token


@pytest.mark.parametrize(("token", "why"), [
    ("a" * 40, "one character repeated"),
    ("abcdefghijklmnopqrstuvwxyz", "a run"),
    ("zyxwvutsrqponmlkjihgfedcba", "a run"),
    ("0123456789012345678901234", "a run"),
    ("9876543210987654321098", "a run"),
    ("abababababababababababab", "a short pattern repeated"),
    ("abc-abc-abc-abc-abc-abc-", "a short pattern repeated"),
])
def test_a_guessable_token_is_refused_whatever_its_length_and_never_shown(token, why):
    with pytest.raises(UsageError, match=f"YUESHENG_TOKEN: the token is {why}, guessed first") as caught:
        check_token(token, "YUESHENG_TOKEN")
    assert token not in str(caught.value)


def test_a_token_needs_22_characters_about_128_bits():
    assert MIN_LENGTH == 22 == len(secrets.token_urlsafe(16))
    with pytest.raises(UsageError, match="a token of 21 characters; at least 22 are needed, about 128 bits"):
        check_token(secrets.token_urlsafe(16)[:21], "--token-file t")


def test_random_tokens_and_the_generated_one_pass():
    for _ in range(200):
        token = secrets.token_urlsafe(16)
        assert check_token(token, "t") == token
    generated = console_token({}, None, loopback=False)
    assert generated is not None and check_token(generated, "generated") == generated
