"""Kin words: the relations people name their own by ("my mom", "我妈妈"), in English and Chinese.

The graph files people under them (engram.graph), and a question that names one ("what does my
sister do?") is about that person, not the user (engram.slots).
"""

from __future__ import annotations

# kin and close relations, as said after "my" (English) or before nothing (Chinese), mapped
# to one relation name: "my mom" and "我妈妈" are the same relation, "mother"
KIN_EN = {
    "mom": "mother", "mum": "mother", "mother": "mother", "mommy": "mother", "dad": "father", "father": "father",
    "daddy": "father", "parents": "parents", "sister": "sister", "sis": "sister", "brother": "brother",
    "bro": "brother", "wife": "wife", "husband": "husband", "partner": "partner", "girlfriend": "girlfriend",
    "boyfriend": "boyfriend", "fiance": "fiance", "fiancé": "fiance", "fiancee": "fiance", "son": "son",
    "daughter": "daughter", "kids": "children", "kid": "child", "children": "children", "child": "child",
    "baby": "baby", "grandma": "grandmother", "grandmother": "grandmother", "granny": "grandmother",
    "grandpa": "grandfather", "grandfather": "grandfather", "aunt": "aunt", "uncle": "uncle", "cousin": "cousin",
    "niece": "niece", "nephew": "nephew", "boss": "boss", "manager": "manager", "colleague": "colleague",
    "coworker": "colleague", "roommate": "roommate", "neighbor": "neighbour", "neighbour": "neighbour",
    "friend": "friend", "best friend": "best friend", "bff": "best friend", "mentor": "mentor", "family": "family",
    "fam": "family", "family's": "family", "teacher": "teacher", "doctor": "doctor", "therapist": "therapist",
    "co-founder": "co-founder", "cofounder": "co-founder", "teammate": "teammate", "classmate": "classmate",
    "coach": "coach", "landlord": "landlord", "landlady": "landlord", "spouse": "spouse",
    "mother-in-law": "mother-in-law", "father-in-law": "father-in-law", "sister-in-law": "sister-in-law",
    "brother-in-law": "brother-in-law", "son-in-law": "son-in-law", "daughter-in-law": "daughter-in-law",
    "stepmom": "stepmother", "step-mom": "stepmother", "stepmother": "stepmother", "stepdad": "stepfather",
    "step-dad": "stepfather", "stepfather": "stepfather", "stepson": "stepson", "stepdaughter": "stepdaughter",
    "stepbrother": "stepbrother", "stepsister": "stepsister", "half-brother": "brother", "half-sister": "sister",
    "grandson": "grandson", "granddaughter": "granddaughter", "grandkids": "grandchildren",
    "grandchildren": "grandchildren", "grandparents": "grandparents", "twins": "children", "godmother": "godmother",
    "godfather": "godfather", "ex": "ex", "ex-wife": "ex-wife", "ex-husband": "ex-husband",
    "ex-girlfriend": "ex-girlfriend", "ex-boyfriend": "ex-boyfriend",
}
KIN_ZH = {
    "妈妈": "mother", "母亲": "mother", "老妈": "mother", "妈": "mother", "爸爸": "father", "父亲": "father",
    "老爸": "father", "爸": "father", "父母": "parents", "姐姐": "sister", "妹妹": "sister", "哥哥": "brother",
    "弟弟": "brother", "老婆": "wife", "妻子": "wife", "太太": "wife", "爱人": "partner", "老公": "husband",
    "丈夫": "husband", "先生": "husband", "女朋友": "girlfriend", "男朋友": "boyfriend", "女友": "girlfriend",
    "男友": "boyfriend", "儿子": "son", "女儿": "daughter", "孩子": "children", "奶奶": "grandmother",
    "外婆": "grandmother", "姥姥": "grandmother", "爷爷": "grandfather", "外公": "grandfather", "姥爷": "grandfather",
    "阿姨": "aunt", "姑姑": "aunt", "叔叔": "uncle", "舅舅": "uncle", "表哥": "cousin", "表姐": "cousin",
    "堂哥": "cousin", "老板": "boss", "领导": "boss", "经理": "manager", "同事": "colleague", "室友": "roommate",
    "邻居": "neighbour", "朋友": "friend", "好朋友": "best friend", "闺蜜": "best friend", "导师": "mentor",
    "老师": "teacher", "家人": "family", "合伙人": "co-founder", "同学": "classmate", "队友": "teammate",
    "教练": "coach", "房东": "landlord", "岳父": "father-in-law", "公公": "father-in-law", "岳母": "mother-in-law",
    "婆婆": "mother-in-law", "嫂子": "sister-in-law", "弟媳": "sister-in-law", "姐夫": "brother-in-law",
    "妹夫": "brother-in-law", "女婿": "son-in-law", "儿媳": "daughter-in-law", "儿媳妇": "daughter-in-law",
    "孙子": "grandson", "外孙": "grandson", "孙女": "granddaughter", "外孙女": "granddaughter", "侄子": "nephew",
    "外甥": "nephew", "侄女": "niece", "外甥女": "niece", "继父": "stepfather", "继母": "stepmother",
    "后妈": "stepmother", "表妹": "cousin", "表弟": "cousin", "堂姐": "cousin", "堂妹": "cousin", "堂弟": "cousin",
    "前妻": "ex-wife", "前夫": "ex-husband", "前女友": "ex-girlfriend", "前男友": "ex-boyfriend",
    "未婚夫": "fiance", "未婚妻": "fiance", "舅妈": "aunt", "姨妈": "aunt", "婶婶": "aunt", "伯母": "aunt",
    "姑父": "uncle", "姨父": "uncle", "伯伯": "uncle",
}
# a relation's usual Chinese word ("child", one of "two kids", is a 孩子 too)
KIN_ZH_LABEL = {v: k for k, v in reversed(list(KIN_ZH.items()))} | {"child": "孩子"}

# the relations of a couple: who "we" in the next turn is, and whose ending a breakup is
COUPLE = frozenset({"wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "spouse"})
COUPLE_EN = frozenset(w for w, relation in KIN_EN.items() if relation in COUPLE) | {"spouse", "fiancée"}
COUPLE_ZH = frozenset(w for w, relation in KIN_ZH.items() if relation in COUPLE) | {"对象", "未婚夫", "未婚妻"}


def relation_of(word: str) -> str:
    """The relation a kin word names, in either language ("mom", "妈妈" → "mother"); any other
    word ("dog", "猫") as it is."""
    return KIN_EN.get(word.lower()) or KIN_ZH.get(word) or word.lower()
