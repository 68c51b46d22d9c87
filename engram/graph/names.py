"""How names compare: one key per way of writing a name (case, spacing, "the", traditional or
simplified Chinese), and the kin words that name a person by their relation to someone.

The traditional → simplified table is small on purpose (the characters of common surnames,
given names, kin words, places and organisations). OpenCC-class converters were checked: the
pure-Python ones on PyPI carry megabytes of dictionaries for phrase-level conversion, which a
name's key does not need; a character table keeps engram dependency-free offline.
"""

from __future__ import annotations

import re
import unicodedata

_TRADITIONAL = (
    "媽妈 爺爷 兒儿 孫孙 婦妇 親亲 們们 個个 這这 裡里 張张 陳陈 劉刘 楊杨 黃黄 趙赵 吳吴 鄭郑 鄧邓 馮冯 韓韩 錢钱 "
    "鄒邹 蔣蒋 謝谢 盧卢 顧顾 龔龚 譚谭 賈贾 閻阎 鍾钟 歐欧 陽阳 喬乔 費费 紀纪 葉叶 許许 羅罗 蘇苏 陸陆 蕭萧 "
    "華华 東东 車车 馬马 門门 國国 學学 會会 師师 長长 員员 書书 龍龙 鳳凤 麗丽 蘭兰 雲云 貓猫 灣湾 臺台 廣广 "
    "島岛 區区 縣县 鎮镇 莊庄 聯联 繫系 係系 絡络 業业 產产 專专 項项 開开 發发 語语 樂乐 歡欢 愛爱 習习 醫医 "
    "劃划 計计 設设 網网 機机 際际 貿贸 銀银 鐵铁 飛飞 場场 館馆 園园 藝艺 術术 體体 經经 濟济 衛卫 訊讯 應应 "
    "溫温 暉晖 偉伟 傑杰 強强 軍军 紅红 綠绿 靜静 剛刚 輝辉 鵬鹏 濤涛 慶庆 寧宁 興兴 順顺 賢贤 曉晓 嬌娇 鳥鸟 "
    "魚鱼 貝贝 寶宝 萬万 與与 為为 點点 時时 間间 見见 說说 話话 認认 識识 對对 給给 過过 還还 進进 運运 動动 "
    "導导 夢梦 雙双 貴贵 鄉乡 農农 號号 樓楼 層层 條条 關关 幫帮 戶户 團团 隊队 組组 織织 協协 總总 務务 處处 "
    "辦办 節节 氣气 電电 腦脑 視视 聽听 讀读 寫写 畫画 筆笔 紙纸 鐘钟 輛辆 嗎吗 狀状 況况 義义 門门 問问 聞闻 "
    "鮮鲜 紐纽 約约 倫伦 敦敦 澳澳 漢汉 滬沪 寧宁 晉晋 鄂鄂 陝陕 遼辽 黑黑 滿满 蒙蒙 齊齐 魯鲁 燕燕 趙赵 韋韦 "
    "湯汤 馮冯 鄔邬 龐庞 聶聂 嚴严 戴戴 賴赖 傅傅 蔡蔡 戰战 鄺邝 區区 盤盘 詹詹 閔闵 麥麦 黎黎 範范 "
)
T2S = str.maketrans({pair[0]: pair[1] for pair in _TRADITIONAL.split()})

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
    "老师": "teacher", "家人": "family",
}
KIN_ZH_LABEL = {v: k for k, v in reversed(list(KIN_ZH.items()))}  # a relation's usual Chinese word

_SPACE = re.compile(r"\s+")
_EDGE = re.compile(r"^(?:the|a|an|my|our)\s+|['’]s$", re.I)


def key(name: str) -> str:
    """The key a name is compared by: NFKC, case-folded, simplified Chinese, single-spaced,
    without a leading article or a trailing possessive ("The Louvre" = "louvre", "張三" = "张三")."""
    text = unicodedata.normalize("NFKC", name).translate(T2S).casefold().strip(" \t\n.,!?;:\"'“”‘’()[]")
    text = _SPACE.sub(" ", text)
    return _EDGE.sub("", text).strip()


def kin_key(owner: str, relation: str) -> str:
    """The key of "someone's <relation>": the owner entity's id and the relation ("my wife" of
    the user and "Melanie's kids" are keys of this kind, until a name joins them)."""
    return f"{relation}@{owner}"
