"""Regex safety (issue #13 item 1): extraction stays fast on adversarial text."""

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.extract import extract_candidates

BOUND_S = 1.0  # generous: a busy 2-core machine must not make this flaky; the bug took > 10 s


def _timed(text):
    t0 = time.perf_counter()
    extract_candidates(text)
    return time.perf_counter() - t0


def test_issue_13_reproducers_finish_quickly():
    for text in ("I passed my exam " + "😂" * 24 + " :-(", "!" * 24 + "a§", "我今天升职了" + "🎉" * 24 + "（"):
        assert _timed(text) < BOUND_S, text


def test_long_runs_finish_quickly():
    for unit in ("😂", "!", " ", ",", "，", "（", "haha ", " lol", "I ", "我", "~", ":-)", "\u200d"):
        assert _timed("I love tea " + unit * 400 + "§") < BOUND_S, unit


def test_a_sentence_saying_what_something_is_with_long_runs_finishes_quickly():
    """`with_it_named` ("Clay is incredible, it brings me joy"): its first pattern was cubic in a run of spaces."""
    for unit in (" ", "\t", ", ", " -", "a "):
        assert _timed("Tea is " + unit * 1000 + "it helps") < BOUND_S, unit
        assert _timed("Tea is " + unit * 280 + "it helps") < BOUND_S, unit


_PIECES = st.sampled_from(["😂", "🎉", "!", "?", ".", ",", "，", "。", "（", "(", ")", " ", "lol", "haha", ":-)", ":-(",
                           "I ", "我", "的", "了", "啊", "~", "§", "a", "and ", "my ", "\u200d", "\ufe0f", "…"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=60), st.integers(min_value=1, max_value=30), _PIECES)
def test_adversarial_strings_finish_quickly(pieces, times, tail):
    text = "".join(pieces) + tail * times + "".join(reversed(pieces))
    assert _timed(text) < BOUND_S
