"""English number words: the one table every reader of "seven" or "twenty-one" uses."""

from __future__ import annotations

__all__ = ["EN_NUMBERS", "en_number", "en_small_numbers"]

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

EN_NUMBERS: dict[str, int] = {w: n for n, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}


def en_small_numbers(upto: int, *, article: bool = True) -> dict[str, int]:
    """Number words from one to `upto` ("a"/"an" count as one unless `article` is False)."""
    out = {"a": 1, "an": 1} if article else {}
    return out | {w: n for w, n in EN_NUMBERS.items() if 1 <= n <= upto}


def en_number(word: str) -> int | None:
    """Digits or words up to 99: "7", "seven", "twenty-one", "twenty one"; else None."""
    w = word.lower().replace("-", " ").strip()
    if w.isdigit():
        return int(w)
    parts = w.split()
    if len(parts) == 1:
        return EN_NUMBERS.get(w)
    if len(parts) == 2 and parts[0] in _TENS and 1 <= EN_NUMBERS.get(parts[1], 0) <= 9:
        return EN_NUMBERS[parts[0]] + EN_NUMBERS[parts[1]]
    return None
