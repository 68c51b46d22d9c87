"""Pet words: the breeds people name their pets by, and the animal each one is, in English and
Chinese ("golden retriever" and 金毛 are dogs).

Why: a user says "a golden retriever called Biscuit" or "一只金毛，叫豆豆" and later asks "what's
my dog's name?" / "我的狗叫什么？". The rules keep the pet with its owner (engram.extract), the
graph files it under "dog" (engram.graph), and the lexical index also holds the animal's word
beside the breed (`animal_words`), so the question's "dog" finds the memory.
"""

from __future__ import annotations

import re

BREEDS_EN = {
    "retriever": "dog", "labrador": "dog", "beagle": "dog", "poodle": "dog", "corgi": "dog", "husky": "dog",
    "shepherd": "dog", "bulldog": "dog", "chihuahua": "dog", "dachshund": "dog", "pug": "dog", "terrier": "dog",
    "spaniel": "dog", "collie": "dog", "doodle": "dog", "labradoodle": "dog", "goldendoodle": "dog", "schnauzer": "dog",
    "rottweiler": "dog", "greyhound": "dog", "pomeranian": "dog", "shiba": "dog", "samoyed": "dog",
    "siamese": "cat", "persian": "cat", "ragdoll": "cat", "tabby": "cat", "sphynx": "cat", "bengal": "cat",
}
BREEDS_ZH = {
    "灰狗": "狗", "金毛": "狗", "柯基": "狗", "泰迪": "狗", "哈士奇": "狗", "拉布拉多": "狗", "比熊": "狗", "博美": "狗",
    "萨摩耶": "狗", "边牧": "狗", "柴犬": "狗", "布偶猫": "猫", "英短": "猫", "橘猫": "猫", "狸花猫": "猫", "暹罗猫": "猫",
}
# the words people call a pet by, singular and plural, and the animal each one is: what the rules
# read as a pet (engram.extract), the fact keys they file it under and the graph's animals
PETS_EN = {
    **dict.fromkeys("dog dogs puppy puppies pup pups".split(), "dog"),
    **dict.fromkeys("cat cats kitten kittens kitty".split(), "cat"),
    **dict.fromkeys(("pet", "pets"), "pet"), **dict.fromkeys(("bird", "birds"), "bird"),
    **dict.fromkeys(("parrot", "parrots"), "parrot"), **dict.fromkeys(("rabbit", "rabbits", "bunny"), "rabbit"),
    **dict.fromkeys(("hamster", "hamsters"), "hamster"), **dict.fromkeys(("fish", "goldfish"), "fish"),
    **dict.fromkeys(("horse", "horses", "pony"), "horse"), **dict.fromkeys(("turtle", "tortoise"), "turtle"),
    **dict.fromkeys(("guinea pig", "guinea pigs"), "guinea pig"), **dict.fromkeys(("pig", "pigs"), "pig"),
    "snake": "snake", "lizard": "lizard", "gecko": "lizard", "ferret": "ferret",
}
# the animal's Chinese word, for a pet filed in English ("dog of user") and named in Chinese
ANIMALS_ZH = {"dog": "狗", "puppy": "小狗", "cat": "猫", "kitten": "小猫", "pet": "宠物"}
# each animal by the words that call it one, singular ("a dog named Rex", "my hamster Oscar")
PETS_EN_ONE = frozenset(w for w in PETS_EN if w in ("fish", "goldfish") or not w.endswith("s"))
_BREED_ENDS = frozenset(breed.split()[-1] for breed in BREEDS_EN)
_EN_BREED_RE = re.compile(r"\b(" + "|".join(sorted(BREEDS_EN, key=len, reverse=True)) + r")s?\b", re.I)
_ZH_BREED_RE = re.compile("|".join(sorted(BREEDS_ZH, key=len, reverse=True)))


def animal_words(text: str) -> list[str]:
    """The animal of each breed `text` names ("Biscuit is a golden retriever" → ["dog"])."""
    low = text.lower()  # (one test of the breeds' last words first: the alternation of them all is slow)
    found = [BREEDS_EN[m.group(1).lower()] for m in _EN_BREED_RE.finditer(text)] \
        if any(word in low for word in _BREED_ENDS) else []
    return found + [BREEDS_ZH[m.group(0)] for m in _ZH_BREED_RE.finditer(text)] if not text.isascii() else found
