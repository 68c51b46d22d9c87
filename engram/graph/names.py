"""How names compare: one key per way of writing a name (case, spacing, "the", traditional or
simplified Chinese). The kin words that name a person by their relation to someone are in
engram.relatives.

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
