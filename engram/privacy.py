"""Detect secrets and personal data in text, and apply a per-category policy.

Runs on every memory before it is stored and on everything returned, so it is
built for the common case: a short message with no secret leaves after one
cheap pre-check. Detectors prefer structure over guessing (Luhn for cards, the
ISO 7064 checksum and a real birth date for Chinese ID numbers, known key
prefixes); the generic high-entropy detector is the last resort.

Nothing here keeps or logs a secret: a `Finding` is a category and two offsets.

Choices worth knowing:

* Cards: 13-19 digits, optional single spaces/dashes, first digit 2-6 (every
  major network: Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay,
  Maestro, Mir), valid by Luhn. The first-digit rule keeps ms timestamps,
  ISBN-13s (978/979) and many order numbers out. RuPay 8x and UATP 1x are not
  covered. Dots or double spaces only between groups (4111.1111.1111.1111), so
  decimals and versions stay out.
* Chinese IDs: 18 characters with a province code, a real past birth date and
  the ISO 7064 MOD 11-2 check character; the old 15-digit form with a real
  date. An 18-digit number valid as both ID and card is an ID.
* A number is not a card, ID or phone when it is an amount (`¥…`, `…元`) or
  when the nearest keyword before it in the same clause says order, tracking,
  invoice, ISBN… (EN/ZH) rather than card/phone. With no keyword at all, a count
  is not one either: a count noun after it ("… views", "… grains", "…次/个/粒")
  or "there are / about / 约有" before it.
* IBANs: country code, length for that country, ISO 7064 mod-97 check; spaced
  in fours or compact. US SSNs: the issued ranges only (no 000/666/9xx area, 00
  group, 0000 serial, nor the published examples); dashed alone, spaced or bare
  only after an SSN word. Passports (`E12345678`, 9 digits): only within 40
  characters of "passport"/"护照".
* A key stated in prose ("the api key is 9f86…", "密钥是…"): 20+ characters,
  hex or random, right after a key/token/secret phrase; `0x` addresses are public.
* Hex strings (git SHAs, checksums, digests), UUIDs and `0x` addresses are not
  secrets on their own: in a developer conversation they are identifiers.
  Hex secrets are still caught with a known prefix (`sk-…`) or a key=value
  context (`api_key=…`, `token: …`). Neither are SSH public keys, SRI hashes
  (`sha512-…`), data URIs, paths and slugs made of words, or tokens in a URL.
* Generic tokens: 24+ characters mixing letters and digits, entropy near that
  of a random string of that length, and not made of English/pinyin words.
* International phones need a leading `+`; North-American numbers are
  accepted without it only in the `(415) 555-0132` / `415-555-0132` shapes;
  Chinese landlines need a separator after the area code.
* URL credentials (`scheme://user:pass@host`) are a `password`; query values
  after `token=`, `key=`, `sig=`… an `api_key`.
* Passwords: only the value is replaced, the sentence stays. A value that is a
  function word, a description ("…is wrong", "…is stored in the vault"), a
  type or a code reference (`password: str`, `os.environ[…]`) is not one.
* Every pattern runs in linear time (tests/test_privacy_timing.py): no two
  unbounded repeats that can match the same characters in a row, named values
  read 128 characters at a time, look-backs bounded.
* Placeholders are never detected, so applying twice changes nothing. One
  limit: in text glued without spaces, a redacted value may have swallowed the
  context that excused its neighbour (`…密码: Root!234ssh-rsa AAAA…`).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from itertools import accumulate

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Filtered",
    "Finding",
    "Policy",
    "PrivacyPolicy",
    "SecretKind",
    "apply",
    "placeholder",
    "redact",
    "scan",
]


class SecretKind(StrEnum):
    CARD = "card"
    CN_ID = "cn_id"
    PHONE = "phone"
    EMAIL = "email"
    API_KEY = "api_key"
    PASSWORD = "password"
    IBAN = "iban"
    SSN = "ssn"
    PASSPORT = "passport"


class Policy(StrEnum):
    REDACT = "redact"  # replace the span with a typed placeholder
    DROP = "drop"  # do not store the text at all
    ALLOW = "allow"  # leave it as is


@dataclass(frozen=True, slots=True)
class Finding:
    """Where a secret is: offsets into the scanned text, never the text itself."""

    kind: SecretKind
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Filtered:
    """Result of `apply`. `text` is None when the policy says drop."""

    text: str | None = field(repr=False)  # may still hold `allow`ed values
    findings: tuple[Finding, ...]
    dropped: bool
    kinds: frozenset[SecretKind]


class PrivacyPolicy(BaseModel):
    """One action per category; a category left unset follows `default`.

    `PrivacyPolicy(card="drop")`, `PrivacyPolicy(default="allow", password="redact")`,
    or `PrivacyPolicy.model_validate(config_dict)`. Unknown keys are an error so
    a typo in a config file cannot silently let secrets through.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    default: Policy = Policy.REDACT
    card: Policy | None = None
    cn_id: Policy | None = None
    phone: Policy | None = None
    email: Policy | None = None
    api_key: Policy | None = None
    password: Policy | None = None
    iban: Policy | None = None
    ssn: Policy | None = None
    passport: Policy | None = None

    def action(self, kind: SecretKind) -> Policy:
        value = getattr(self, kind.value)
        return self.default if value is None else value


_DEFAULT_POLICY = PrivacyPolicy()
_PLACEHOLDERS = {kind: f"[REDACTED:{kind.value}]" for kind in SecretKind}
_PLACEHOLDER_TUPLE = tuple(_PLACEHOLDERS.values())


def placeholder(kind: SecretKind) -> str:
    """The typed marker that replaces a redacted span (never detected itself)."""
    return _PLACEHOLDERS[kind]


# --------------------------------------------------------------------------
# Regexes. ASCII mode: Chinese characters are "\w" in Unicode mode, which
# would break the boundaries in "电话13812345678".

_A = re.ASCII
_X = re.ASCII | re.VERBOSE

_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")
# A stretch of digits with the separators phone/card/ID numbers use; only
# stretches with enough digits are handed to the number detectors.
_NUM_RUN = re.compile(r"[0-9](?:[ ()./+-]{0,3}[0-9]){6,}")

# A number must not continue a longer run of digits or a word on either side.
_NUM_HEAD = r"(?<![A-Za-z0-9_+./])(?<![0-9][ -])"
_NUM_TAIL = r"(?![ -]?[0-9])(?![A-Za-z0-9_])"

_CARD = re.compile(_NUM_HEAD + r"[2-6][0-9](?:[ -]?[0-9]){11,17}" + _NUM_TAIL, _A)
# Cards grouped with dots or double spaces (4111.1111.1111.1111, 4111  1111 …):
# only in groups, so a decimal or a version number is not read as one.
_CARD_GROUPED = re.compile(
    r"(?<![A-Za-z0-9_+./])(?<![0-9][ -])(?<![0-9]  )"
    r"[2-6][0-9]{3}(?:(?:\.[0-9]{4,6}){1,2}\.[0-9]{1,7}|(?: {2}[0-9]{4,6}){1,2} {2}[0-9]{1,7})"
    r"(?![ .]{0,2}[0-9])(?![A-Za-z0-9_])",
    _A,
)
# US SSN: area 001-899 but 666, group 01-99, serial 0001-9999; one separator
# throughout. Dashed it stands alone; spaced or bare it needs an SSN word before.
_SSN = re.compile(
    _NUM_HEAD + r"(?!000|666|9)[0-9]{3}([ -]?)(?!00)[0-9]{2}\1(?!0000)[0-9]{4}" + _NUM_TAIL, _A
)
_SSN_ADVERTISED = frozenset({"078051120", "219099999", "123456789"})  # published examples
_SSN_CONTEXT = re.compile(r"ssn|social\s*security|社会安全|社會安全|社保号", re.I)
_SSN_REACH = 40  # characters between the SSN word and a spaced/bare number
# Passports: letters then digits (E12345678, G…, C0…) or 9 digits (US, UK),
# only with a passport word close before or after.
_PASSPORT_CONTEXT = re.compile(r"passport|护照|護照", re.I)
_PASSPORT = re.compile(r"(?<![A-Za-z0-9_+./-])(?:[A-Z]{1,2}[0-9]{7,8}|[0-9]{9})(?![A-Za-z0-9_]|[ .-]?[0-9])", _A)
_PASSPORT_REACH = 40  # characters between the word and the number
# IBAN (ISO 13616): country, two check digits, 11-30 letters/digits, in groups of
# four or compact; checked by length per country and the mod-97 checksum.
_IBAN = re.compile(
    # the look-behind after the first letter: the engine then skips ahead to capitals
    r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])", _A
)
_IBAN_LENGTHS = {
    code: int(size)
    for code, size in (
        item.split(":")
        for item in (
            "AD:24 AE:23 AL:28 AT:20 AZ:28 BA:20 BE:16 BG:22 BH:22 BR:29 BY:28 CH:21 CR:22 CY:28 CZ:24 "
            "DE:22 DK:18 DO:28 EE:20 EG:29 ES:24 FI:18 FO:18 FR:27 GB:22 GE:22 GI:23 GL:18 GR:27 GT:28 "
            "HR:21 HU:28 IE:22 IL:23 IQ:23 IS:26 IT:27 JO:30 KW:30 KZ:20 LB:28 LC:32 LI:21 LT:20 LU:20 "
            "LV:21 MC:27 MD:24 ME:22 MK:19 MR:27 MT:31 MU:30 NL:18 NO:15 PK:24 PL:28 PS:29 PT:25 QA:29 "
            "RO:24 RS:22 SA:24 SC:31 SE:24 SI:19 SK:24 SM:27 ST:25 SV:28 TL:23 TN:24 TR:26 UA:29 VA:22 "
            "VG:24 XK:20"
        ).split()
    )
}
_CN_ID18 = re.compile(
    _NUM_HEAD + r"([1-8][0-9]{5})[ -]?((?:18|19|20)[0-9]{2})([01][0-9])([0-3][0-9])"
    r"[ -]?([0-9]{3}[0-9Xx])" + _NUM_TAIL,
    _A,
)
_CN_ID15 = re.compile(
    _NUM_HEAD + r"([1-8][0-9]{5})([0-9]{2})([01][0-9])([0-3][0-9])[0-9]{3}" + _NUM_TAIL, _A
)
_PHONE_CN = re.compile(
    r"(?<![A-Za-z0-9_+./])(?<![0-9][ -])"
    r"(?:(?:\+|00)86[ -]?|\(\+?86\)[ ]?|86[ -])?1[3-9][0-9][ -]?[0-9]{4}[ -]?[0-9]{4}" + _NUM_TAIL,
    _A,
)
_PHONE_INTL = re.compile(
    r"(?<![A-Za-z0-9_+])\+[1-9][0-9]{0,2}(?:[ .-]?\(?[0-9]{1,4}\)?){2,6}"
    r"(?![ .-]?[0-9])(?![A-Za-z0-9_%])",
    _A,
)
_PHONE_NANP = re.compile(
    r"(?<![A-Za-z0-9_+./(-])(?<![0-9][ .-])"
    r"(?:\([2-9][0-9]{2}\)[ -]?|[2-9][0-9]{2}[.-])[2-9][0-9]{2}[.-][0-9]{4}"
    r"(?![ .-]?[0-9])(?![A-Za-z0-9_])",
    _A,
)
_PHONE_LANDLINE_CN = re.compile(
    _NUM_HEAD + r"(?:\(0[1-9][0-9]{1,2}\)[ -]?|0[1-9][0-9]{1,2}[ -])[2-9][0-9]{2,3}[ -]?[0-9]{4}" + _NUM_TAIL,
    _A,
)
# Keywords before a number (matched on lower case): the nearest one decides
# whether it may be a secret.
_NUM_CONTEXT = re.compile(
    r"(order|tracking|invoice|ref\b|reference|part\s*(?:no\b|number|#)|transaction|txn|serial|isbn|sku\b|parcel|shipment|"
    r"waybill|订单|单号|运单|快递|物流|流水|编号|交易号|序列号|发票|型号|批号|工单)"
    r"|(card|visa|master|amex|卡|身份证|phone|mobile|\bcell|\btel\b|call|whatsapp|"
    r"电话|手机|联系|微信)"
)

_CLAUSE_TAIL = re.compile(r"[^，。；！？,;!?\n]*$")
_AMOUNT_BEFORE = re.compile(r"(?:[¥￥$€£]|rmb|usd|cny|eur)\s*$", re.I)
_AMOUNT_AFTER = re.compile(
    r"\s{0,3}(?:元|块|万|亿|美元|円|圆|次|yuan|dollars|usd|rmb|cny|eur|euros|bytes)", re.I
)
# A count, not a number to dial or charge: "15912345678 views", "4111… grains of
# sand", "有…粒沙子". Decides only when no card/phone word comes before it.
_COUNT_AFTER = re.compile(
    r"\s{0,3}(?:(?:views?|visits?|visitors?|clicks?|impressions?|likes?|followers?|fans|subscribers?|"
    r"downloads?|installs?|plays|streams|listens|shares|comments|replies|requests|hits|times|steps|"
    r"grains?|stars|people|persons|users|members|customers|years?|days|hours|minutes|seconds|"
    r"km|miles|meters|words|characters|tokens|rows|records|items|units|pieces|copies|votes|points|"
    r"combinations|possibilities|particles|atoms|molecules|cells|calories|tons|grams|kg|light|"
    r"iterations|runs|epochs|cycles|loops|operations|samples|trials|games|messages|posts|pages|files|lines)(?![A-Za-z])"
    # not 张/只/本/台, and not 个人/位置: a surname, "only", 本人, 台湾 follow phone numbers
    r"|个(?!人)|粒|颗|人|名|位(?!置)|件|条|份|种|年|天|遍|步|米|公里|字|行|票|赞|粉丝|下载|播放|浏览|阅读|点击|篇)",
    re.I,
)
_COUNT_BEFORE = re.compile(
    r"(?:there\s+(?:are|were|is|was)|total\s+of|about|around|approximately|roughly|nearly|almost|"
    r"more\s+than|over|up\s+to|约有?|大约有?|共有?|总共|超过|将近|多达)\s{0,3}$"
)

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![A-Za-z0-9_-])",
    _A,
)
_FILE_EXT = frozenset("png jpg jpeg gif svg webp ico bmp tif tiff pdf js css".split())

_USERINFO = re.compile(r"[A-Za-z0-9._~%+!$&'()*,;=:-]*")
_URL_CRED = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[A-Za-z0-9._~%!$&'()*+,;=-]{1,256}:([A-Za-z0-9._~%!$&'()*+,;=:-]{1,128})@", _A
)

_API_PREFIXED = re.compile(
    r"""
    (?<![A-Za-z0-9_-])
    (?:
        (sk-(?:proj-|ant-(?:api|admin)[0-9]{2}-|svcacct-|admin-)?)[A-Za-z0-9_-]{20,}
      | (?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}
      | gh[pousr]_[A-Za-z0-9]{30,}
      | github_pat_[A-Za-z0-9_]{30,}
      | xox[abposr]-[A-Za-z0-9-]{10,}
      | (?:AKIA|ASIA)[A-Z0-9]{16}
      | AIza[A-Za-z0-9_-]{35}
      | glpat-[A-Za-z0-9_-]{20,}
      | hf_[A-Za-z0-9]{30,}
      | npm_[A-Za-z0-9]{36}
      | pypi-[A-Za-z0-9_-]{50,}
      | eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}
    )
    (?![A-Za-z0-9_-])
    """,
    _X,
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    re.S,
)
_BEARER = re.compile(r"(?i)(?<![A-Za-z0-9])bearer\s+([A-Za-z0-9._~+/-]{12,}=*)", _A)
# A key stated in prose, without ":"/"=": "the api key is 9f86…", "my token
# 7c4a…", "密钥是…". Only long values (>= 20) that are hex or random.
_KEY_STATED = re.compile(
    r"""(?ix)
    (?:
        (?<![A-Za-z0-9])
        (?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|secret
           |(?:access|auth|refresh|api|bearer|session)[ _-]?token|token|key)
        \s{1,3}(?:(?:is|was|will\s+be)\s{1,3})?
      | (?:密钥|秘钥|令牌)\s{0,3}(?:是|为|為)?\s{0,3}
    )
    ["'“]?([A-Za-z0-9_+/=.~-]{20,128})
    """
)
_KEY_VALUE = re.compile(
    r"""(?ix)
    (?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_.-])?
    (?:api[_-]?key|apikey|client[_-]?secret|secret[_-]?access[_-]?key|access[_-]?key(?:[_-]?id)?
       |secret(?:[_-]?key)?|private[_-]?key|(?:access|auth|refresh|api|session|bearer)?[_-]?token
       |sig|signature|key|密钥|秘钥|令牌)
    ["']?\s*(?:[:=：]|是|为)\s*["']?
    ([A-Za-z0-9_+/=.~-]{12,128})
    """
)
# Named values are read up to 128 characters (a search restarts inside a rejected
# value, so an unbounded read is quadratic on "key=key=key=…"); an accepted one
# that goes on is extended to the end of its run.
_VALUE_CAP = 128
_VALUE_RUN = re.compile(r"[A-Za-z0-9_+/=.~-]*")
_WORDY_PREFIX = 64  # whether a named value is made of words shows in its start

# Long random strings that are public by nature: SSH public keys, data URIs,
# subresource-integrity / content hashes.
_NOT_SECRET_BEFORE = re.compile(
    r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]+|base64,|integrity=[\"']?)\s*$"
)
_NOT_SECRET_PREFIX = re.compile(r"(?:sha(?:1|224|256|384|512)|md5)[-_:=]", re.I)
_TOKEN = re.compile(r"(?<![A-Za-z0-9_+/=-])[A-Za-z0-9_+/=-]{24,}(?![A-Za-z0-9_+/=-])", _A)
_SEPARATORS = re.compile(r"[-_/]+")
_HEXLIKE = re.compile(r"(?:0x)?[0-9a-fA-F]+|[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# Pieces of an identifier: lower/upper words, acronyms, digit runs.
_PIECES = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# Letter pairs common in English words and pinyin syllables: words are made of
# them, random strings mostly are not (about 1 pair in 3).
_BIGRAMS = frozenset(
    (
        "ab ac ad ag ai ak al am an ao ap ar as at au ay ba be bi bl bo br bs bu ca ce ch "
        "ci ck cl co cr ct cu da dd de di dl do dr ds du ea ec ed ee ef eg ei el em en ep "
        "eq er es et ev ew ex ey fa fe ff fi fl fo fr fu ga ge gh gi go gr gs gu ha he hi "
        "ho ht hu ia ib ic id ie if ig il im in io ip ir is it iu iv ix iz ja je ji jo ju "
        "ka ke ki ko ku la ld le li ll lo ls lt lu ly ma me mi mm mo mp ms mu na nc nd ne "
        "nf ng ni nn no ns nt nu nv oa ob oc od og ok ol om on oo op or os ot ou ov ow pa "
        "pe pi pl po pp pr ps pt pu py qa qe qi qo qu ra rc rd re rg ri rl rm rn ro rr rs "
        "rt ru ry sa sc se sh si sl so sp ss st su sy ta tc td te th ti tl to tp tr ts tt "
        "tu ty ua ub ue ui ul um un uo up ur us ut va ve vi wa we wi wo wu xa xe xi xo xt "
        "xu ya ye yi yo yp ys yu za ze zh zi zo zu"
    ).split()
)
_WORDY_PAIRS = 0.7  # share of common pairs that makes a piece a word

# Passwords. Value: quoted anything, or an ASCII run (a Chinese sentence
# goes on right after it: "密码是abc123你记一下").
_QUOTED = (
    r"""(?:"([^"\n]{1,128})"|'([^'\n]{1,128})'|“([^”\n]{1,128})”"""
    r"""|「([^」\n]{1,128})」|`([^`\n]{1,128})`)"""
)
_BARE = r"([\x21-\x7e]{1,128})"
_PW_KEYWORD_PROSE = r"(?:pass(?:word|code|phrase)|passwd|pwd)"
_PW_PROSE = re.compile(
    r"(?i)(?<![A-Za-z0-9])" + _PW_KEYWORD_PROSE
    # "for …" starts and ends on a non-blank and has bounded blanks around it: with \s+
    # and blanks at its ends, a run of tabs after "password to" was cubic
    + r"(?:\s{1,3}(?:for|to|of|on)\s{1,3}[^\s.,;:!?\"'“][^.,;:!?\n\"'“]{0,39}?(?<!\s))?"
    + r"\s+(?:is|was|will\s+be|=)\s*(?:[:：]\s*)?"
    + r"(?:" + _QUOTED + r"|" + _BARE + r")",
)
_PW_SET = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:set|change|changed|reset|update|updated)\s+(?:(?:my|the|your|our|his|her)\s+)?"
    + _PW_KEYWORD_PROSE + r"\s+to\s+(?:" + _QUOTED + r"|" + _BARE + r")",
)
_PW_ASSIGN = re.compile(
    r"(?i)(?<![A-Za-z0-9])"
    r"(?:(?:[A-Za-z0-9]+[_.-])?(?:pass(?:word|code|phrase)|passwd|pwd|pw)|[A-Za-z0-9]+[_.-]pass)"
    r"[\"']?\s*[:=：]\s*(?:" + _QUOTED + r"|" + _BARE + r")",
)
# Keyword then the value with nothing between ("wifi password 88886666",
# "密码123456"): only values with a digit, 6+ characters.
_PW_BARE = re.compile(
    r"(?i)(?:(?<![A-Za-z0-9])(?:password|passwd|passcode|pwd)\s+|(?:密码|密碼|口令)\s*)"
    r"([\x21-\x7e]{6,64})"
)
_PW_PIN = re.compile(r"(?i)(?<![A-Za-z0-9])pin(?:\s*code)?\s*(?:is|[:=：])\s*([0-9]{4,8})(?![0-9])")
_PW_ZH = re.compile(
    r"(?:密码|密碼|口令)\s*"
    r"(?:就是|是|为|為|改成了?|改为|设为|设置为|设成|[:：=])\s*(?:[:：]\s*)?"
    r"(?:" + _QUOTED + r"|" + _BARE + r")",
)
_PW_TRAIL = ".,;:)]}>\"'，。；：）】」』"
_PW_OPENER = {")": "(", "]": "[", "}": "{", ">": "<"}
# Words that follow "password is/:" without being one: function words, states
# ("…is wrong"), type names in code ("password: str").
_PW_STOP = frozenset(
    """password passwd pwd pass str string int bool bytes any text varchar char true false
    optional secretstr field secret redacted masked example changeme
    is was the a an my your our his her their its this that these those it there here
    and or but not no never too very so also still just now then
    in on at of for to from by with as into about after before below above under
    required wrong incorrect correct invalid valid expired same different reset changed
    empty missing blank weak strong secure safe saved stored set hidden sent forgotten
    what which who where when how why none null nil undefined unknown see
    needed necessary case-sensitive long short simple easy hard complicated
    protected encrypted unchanged something anything nothing""".split()
)
_PW_SUFFIX = ("ed", "ing", "ly", "able", "ible", "ive", "ous")
# A reference in code, not a value: os.environ["X"], getpass(), self.password, /home/me.
_PW_CODE = re.compile(
    r"[A-Za-z_$][\w$.]*[(\[]|[A-Za-z_$]+(?:\.[A-Za-z_$]+)+$|[/~]|\./", re.A
)


# --------------------------------------------------------------------------
# Validators.

_CN_REGIONS = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 "
    "50 51 52 53 54 61 62 63 64 65 71 81 82 83".split()
)
_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"
_LUHN_DOUBLED = (0, 2, 4, 6, 8, 1, 3, 5, 7, 9)


def _luhn(digits: str) -> bool:
    rev = digits[::-1]
    total = sum(map(int, rev[0::2])) + sum(_LUHN_DOUBLED[int(c)] for c in rev[1::2])
    return total % 10 == 0


def _valid_date(year: int, month: int, day: int) -> bool:
    if year < 1900:
        return False
    try:
        born = date(year, month, day)
    except ValueError:
        return False
    return born <= date.today()


def _cn_id18_valid(number: str) -> bool:
    """Region, birth date and ISO 7064 MOD 11-2 check character."""
    if number[:2] not in _CN_REGIONS:
        return False
    if not _valid_date(int(number[6:10]), int(number[10:12]), int(number[12:14])):
        return False
    total = sum(int(c) * w for c, w in zip(number[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == number[17].upper()


def _iban_checksum_ok(iban: str) -> bool:
    """ISO 13616 / ISO 7064 mod 97-10: the rearranged number mod 97 is 1."""
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _wordy(token: str) -> bool:
    """Made of words (identifiers, paths, pinyin), not random characters."""
    letters = wordy = 0
    for piece in _PIECES.findall(token):
        if not piece[0].isalpha():
            continue
        letters += len(piece)
        if len(piece) >= 3:
            low = piece.lower()
            common = sum(low[i : i + 2] in _BIGRAMS for i in range(len(low) - 1))
            if common >= _WORDY_PAIRS * (len(low) - 1):
                wordy += len(piece)
    return wordy >= 0.5 * letters


def _looks_random(token: str) -> bool:
    """Letters and digits mixed, high entropy, not hex, and not made of words."""
    if not _mixed(token) or _HEXLIKE.fullmatch(token):
        return False
    # A uniformly random base62 string of length n has entropy close to
    # log2(n) for short n; demand most of it (capped for long tokens).
    if _entropy(token) < min(0.8 * math.log2(len(token)), 4.0):
        return False
    return not _wordy(token)


def _mixed(s: str) -> bool:
    return _DIGIT.search(s) is not None and _LETTER.search(s) is not None


# --------------------------------------------------------------------------
# Detection.

# Candidate = (tier, rank, start, end, kind). Lower tier wins an overlap, then
# the longer span, then the lower rank: structured/prefixed > contextual >
# phone > generic token.
_Cand = tuple[int, int, int, int, SecretKind]


_CONTEXT_WORDS = 6  # words before a number that may say what it is
_EARLIER_NUMBER = re.compile(r"\d{3,}|\[REDACTED:[a-z_]+\]")  # a placeholder hides one
_CONTEXT_READ = 200  # characters read to find them (bounded: long texts stay linear)


def _numbers_context_ok(text: str, start: int, end: int) -> bool:
    """False for an amount (¥15000000000, 15000000000元) or when the nearest
    keyword before the number, in the same clause, calls it an order/tracking
    number; with no keyword at all, False for a count ("15912345678 views")."""
    if _AMOUNT_BEFORE.search(text, max(0, start - 6), start) or _AMOUNT_AFTER.match(text, end):
        return False
    # the last words before it (about 32 characters), in the same clause and after any earlier
    # number; counted in words, not characters, so a redaction nearby (which changes lengths and
    # ends where the number it hides ended) moves nothing in or out: redacting twice changes nothing
    before = text[max(0, start - _CONTEXT_READ) : start]
    # a keyword said of an earlier number (or what a placeholder now hides) is not this one's
    earlier = None
    for earlier in _EARLIER_NUMBER.finditer(before):  # noqa: B007 (the last match is wanted)
        pass
    if earlier is not None:
        before = before[earlier.end() :]
    clause = _CLAUSE_TAIL.search(before)
    window = " ".join(clause.group().lower().split()[-_CONTEXT_WORDS:]) if clause else ""
    last = None
    for m in _NUM_CONTEXT.finditer(window):
        last = m
    if last is not None:
        return last.group(1) is None
    return not (_COUNT_AFTER.match(text, end) or _COUNT_BEFORE.search(window))


_URL_REACH = 2048  # a URL longer than this before a token is not looked for


def _in_url(text: str, start: int) -> bool:
    """Inside a whitespace-delimited chunk that has a scheme before `start`."""
    floor = max(0, start - _URL_REACH)  # bounded: one long unspaced text stays linear
    chunk_start = max(text.rfind(" ", floor, start), text.rfind("\n", floor, start), text.rfind("\t", floor, start))
    return text.find("://", max(chunk_start + 1, floor), start) != -1


def _number_windows(text: str) -> list[tuple[int, int]]:
    """Merged spans around digit stretches long enough to be a phone/card/ID."""
    windows: list[tuple[int, int]] = []
    for m in _NUM_RUN.finditer(text):
        # room for a "+86 "/"(+86) " prefix before and a look-ahead after
        start, end = max(0, m.start() - 6), min(len(text), m.end() + 3)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def _numeric(text: str, out: list[_Cand]) -> None:
    """Cards, ID numbers and phones, looked for only around long digit stretches."""
    for pos, endpos in _number_windows(text):
        chunk = text[pos:endpos]
        digits = len(_DIGIT.findall(chunk))
        if digits >= 15:
            for m in _CN_ID18.finditer(text, pos, endpos):
                number = m.group(1) + m.group(2) + m.group(3) + m.group(4) + m.group(5)
                if _cn_id18_valid(number) and _numbers_context_ok(text, m.start(), m.end()):
                    out.append((0, 0, m.start(), m.end(), SecretKind.CN_ID))
            for m in _CN_ID15.finditer(text, pos, endpos):
                if (
                    m.group(1)[:2] in _CN_REGIONS
                    and _valid_date(1900 + int(m.group(2)), int(m.group(3)), int(m.group(4)))
                    and _numbers_context_ok(text, m.start(), m.end())
                ):
                    out.append((0, 2, m.start(), m.end(), SecretKind.CN_ID))
        if digits >= 13:
            for rx in (_CARD, _CARD_GROUPED):
                for m in rx.finditer(text, pos, endpos):
                    number = "".join(_DIGIT.findall(m.group()))
                    if 13 <= len(number) <= 19 and _luhn(number) and _numbers_context_ok(text, m.start(), m.end()):
                        out.append((0, 1, m.start(), m.end(), SecretKind.CARD))
        if digits >= 9 and ("-" in chunk or _SSN_CONTEXT.search(text, max(0, pos - _SSN_REACH), endpos)):
            _ssns(text, pos, endpos, out)
        phones: list[re.Pattern[str]] = []
        if digits >= 11 and "1" in chunk:
            phones.append(_PHONE_CN)
        if digits >= 10 and "0" in chunk:
            phones.append(_PHONE_LANDLINE_CN)
        if digits >= 10 and ("-" in chunk or "." in chunk or "(" in chunk):
            phones.append(_PHONE_NANP)
        if "+" in chunk:
            phones.append(_PHONE_INTL)
        for rx in phones:
            for m in rx.finditer(text, pos, endpos):
                if rx is _PHONE_INTL and not 8 <= len(_DIGIT.findall(m.group())) <= 15:
                    continue
                if _numbers_context_ok(text, m.start(), m.end()):
                    out.append((2, 0, m.start(), m.end(), SecretKind.PHONE))


def _ssns(text: str, pos: int, endpos: int, out: list[_Cand]) -> None:
    """US social security numbers: dashed, or spaced/bare after an SSN word."""
    for m in _SSN.finditer(text, pos, endpos):
        number = "".join(_DIGIT.findall(m.group()))
        if number in _SSN_ADVERTISED:
            continue
        if m.group(1) != "-" and not _SSN_CONTEXT.search(text, max(0, m.start() - _SSN_REACH), m.start()):
            continue
        if _numbers_context_ok(text, m.start(), m.end()):
            out.append((1, 0, m.start(), m.end(), SecretKind.SSN))


def _passports(text: str, out: list[_Cand]) -> None:
    """Passport numbers within reach of a passport word (EN/ZH), before or after."""
    seen = -1
    for word in _PASSPORT_CONTEXT.finditer(text):
        lo = max(seen, word.start() - _PASSPORT_REACH)
        hi = min(len(text), word.end() + _PASSPORT_REACH)
        # endpos leaves room for the look-ahead of a number starting before `hi`
        for m in _PASSPORT.finditer(text, max(0, lo), min(len(text), hi + 12)):
            if hi > m.start() >= seen and _numbers_context_ok(text, m.start(), m.end()):
                out.append((1, 0, m.start(), m.end(), SecretKind.PASSPORT))
        seen = max(seen, hi)


def _ibans(text: str, out: list[_Cand]) -> None:
    """IBANs valid by country length and mod-97; a trailing group that is not
    part of it ("… 19 ABCD") is tried off."""
    for m in _IBAN.finditer(text):
        candidate = m.group()
        while True:
            compact = candidate.replace(" ", "")
            if _IBAN_LENGTHS.get(compact[:2]) == len(compact) and _iban_checksum_ok(compact):
                out.append((0, 0, m.start(), m.start() + len(candidate), SecretKind.IBAN))
                break
            cut = candidate.rfind(" ")
            if cut <= 4:
                break
            candidate = candidate[:cut]


def _emails(text: str, out: list[_Cand]) -> None:
    """Addresses, and passwords in URL userinfo (both need an "@")."""
    for m in _EMAIL.finditer(text):
        if m.group(1).lower() in _FILE_EXT:  # icon@2x.png
            continue
        start = m.start()
        if text.startswith(":", m.end()) and not text[m.end() + 1 : m.end() + 2].isspace():
            continue  # git@github.com:org/repo.git, an ssh remote
        scheme = text.rfind("://", max(0, start - 256), start)
        if scheme != -1 and _USERINFO.fullmatch(text, scheme + 3, start):
            continue  # user@host in a URL's authority, not an address
        out.append((0, 3, start, m.end(), SecretKind.EMAIL))
    for m in _URL_CRED.finditer(text):
        if not _is_placeholder_value(m.group(1)):
            out.append((0, 0, m.start(1), m.end(1), SecretKind.PASSWORD))


def _is_placeholder_value(value: str) -> bool:
    """Our own placeholder, a template variable or a mask: nothing to hide."""
    return (
        "[REDACTED:" in value
        or value.startswith(("<", "${", "{{", "%", "$"))
        or set(value) <= {"*", "x", "X", "•", "·", "."}
    )


def _named_values(
    rx: re.Pattern[str], text: str, value_span: Callable[[re.Match[str]], tuple[int, int] | None]
) -> Iterator[tuple[int, int]]:
    """The value spans `value_span` accepts among the matches of `rx`. The next
    search starts after an accepted value (it is hidden whole), and at the start
    of a rejected one, so a keyword inside it ("password is token: client_secret:
    …") is seen."""
    pos = 0
    while (m := rx.search(text, pos)) is not None:
        span = value_span(m)
        if span is not None:
            yield span
            pos = max(span[1], m.start() + 1)
        else:
            value = next((m.start(i) for i in range(1, rx.groups + 1) if m.start(i) != -1), m.end())
            pos = max(value, m.start() + 1)


def _touches_placeholder(text: str, start: int, end: int) -> bool:
    """Glued to a placeholder: the rest of a value redacted before, not a new one."""
    return text.startswith("[REDACTED:", end) or (
        start > 0 and text[start - 1] == "]" and text.endswith(_PLACEHOLDER_TUPLE, 0, start)
    )


def _password_value(m: re.Match[str], mode: str) -> tuple[int, int] | None:
    """Span of the stated password, or None when what follows is not a value.

    mode: "prose" ("my password is …"), "assign" ("password: …", "密码是…"),
    "bare" ("password 88886666").
    """
    for i in range(1, m.re.groups + 1):
        value = m.group(i)
        if value is None:
            continue
        start, end = m.start(i), m.end(i)
        quoted = i < m.re.groups
        if not quoted:
            while end > start and value[end - start - 1] in _PW_TRAIL:
                closer = value[end - start - 1]
                if closer in _PW_OPENER and _PW_OPENER[closer] in value[: end - start - 1]:
                    break  # P@ss(w0rd): the bracket is part of it
                end -= 1
            value = value[: end - start]
        low = value.lower()
        if (
            len(value.strip()) < 4
            or _is_placeholder_value(value)
            or low in _PW_STOP
            or (not quoted and _PW_CODE.match(value) is not None)
        ):
            return None
        if mode == "prose" and not quoted and low == value and low.isalpha() and low.endswith(_PW_SUFFIX):
            return None  # "…is encrypted", "…is expiring"
        if mode == "bare" and not any(c.isdigit() for c in value):
            return None
        return start, end
    return None


_PW_RULES = (
    (_PW_PROSE, "prose"),
    (_PW_SET, "prose"),
    (_PW_ASSIGN, "assign"),
    (_PW_ZH, "assign"),
    (_PW_BARE, "bare"),
)


def _passwords(text: str, out: list[_Cand], words: bool, pin: bool) -> None:
    """Stated passwords (EN/ZH): the value only."""
    if words:
        for rx, mode in _PW_RULES:
            for start, end in _named_values(rx, text, lambda m, mode=mode: _password_value(m, mode)):
                out.append((1, 0, start, end, SecretKind.PASSWORD))
    if pin:
        for m in _PW_PIN.finditer(text):
            out.append((1, 0, m.start(1), m.end(1), SecretKind.PASSWORD))


def _contextual_keys(text: str, lower: str, out: list[_Cand]) -> None:
    """`Bearer <token>`, `api_key=…`, `token: …`: values named as secrets."""
    if "bearer" in lower:
        for m in _BEARER.finditer(text):
            if _named_value_ok(m.group(1)):
                out.append((1, 0, m.start(1), m.end(1), SecretKind.API_KEY))
    if (
        "key" in lower or "secret" in lower or "token" in lower or "sig" in lower
        or "密钥" in text or "秘钥" in text or "令牌" in text
    ):
        for rx in (_KEY_VALUE, _KEY_STATED):
            for start, end in _named_values(rx, text, _key_value):
                out.append((1, 0, start, end, SecretKind.API_KEY))


def _key_value(m: re.Match[str]) -> tuple[int, int] | None:
    """Span of the key named by a `_KEY_VALUE`/`_KEY_STATED` match, or None."""
    text, start = m.string, m.start(1)
    value = m.group(1).rstrip(".")
    end = start + len(value)
    if (
        len(value) < (12 if m.re is _KEY_VALUE else 20)
        or (m.re is _KEY_STATED and value.lower().startswith("0x"))  # an address, public
        or not _named_value_ok(value)
        or _touches_placeholder(text, start, end)
    ):
        return None
    if m.end(1) - start == _VALUE_CAP:  # cut by the cap: the value goes on to the end of its run
        end = _VALUE_RUN.match(text, m.end(1)).end()
        while text[end - 1] == ".":
            end -= 1
    return start, end


def _named_value_ok(value: str) -> bool:
    """A value after a key/token keyword: mixed, 12+ chars, hex allowed, not words."""
    if len(value) < 12 or not _mixed(value):
        return False
    return _HEXLIKE.fullmatch(value) is not None or not _wordy(value[:_WORDY_PREFIX])


def _plain_part(part: str) -> bool:
    return part.isdigit() or len(part) <= 3 or (len(part) >= 7 and bool(_HEXLIKE.fullmatch(part))) or _wordy(part)


def _structured(token: str) -> bool:
    """A path or slug (a/b/c, draft-madden-jose-04) whose parts are mostly words,
    numbers or hashes; random tokens have few separators and random parts."""
    parts = [p for p in _SEPARATORS.split(token) if p]
    if len(parts) < (2 if "/" in token else 3):
        return False
    plain = sum(1 for p in parts if _plain_part(p))
    return plain * 2 > len(parts) or (token.count("/") >= 3 and plain >= 2)


def _generic_tokens(text: str, out: list[_Cand]) -> None:
    """Long random-looking tokens not already inside a structured finding."""
    claimed = sorted((c[2], c[3]) for c in out if c[0] <= 1)
    claimed_starts = [s for s, _ in claimed]
    reach = list(accumulate((e for _, e in claimed), max))  # furthest end so far
    for m in _TOKEN.finditer(text):
        start, token = m.start(), m.group()
        i = bisect_left(claimed_starts, m.end())
        if i and reach[i - 1] > start:
            continue  # inside or around a key already found: never its leftovers
        if _touches_placeholder(text, start, m.end()):
            continue
        eq = token.rstrip("=").rfind("=")
        if eq != -1:  # name=value: only the value
            start += eq + 1
            token = token[eq + 1 :]
        if len(token) < 24:
            continue
        lead = len(token) - len(token.lstrip("/+-_="))
        start += lead
        token = token[lead:]
        if _in_url(text, start) or _NOT_SECRET_BEFORE.search(text, max(0, m.start() - 24), m.start()):
            continue
        if _NOT_SECRET_PREFIX.match(token) or _structured(token):
            continue
        if _looks_random(token):
            out.append((3, 0, start, start + len(token), SecretKind.API_KEY))


def _prefixed_keys(text: str, out: list[_Cand]) -> None:
    """Keys whose vendor prefix makes them unambiguous."""
    for m in _API_PREFIXED.finditer(text):
        if m.group(1) is not None and not _mixed(m.group()[len(m.group(1)) :]):
            continue  # "sk-" followed by words, not a key
        out.append((0, 0, m.start(), m.end(), SecretKind.API_KEY))


def _resolve(cands: list[_Cand]) -> list[Finding]:
    """Keep the best candidate of each overlapping group, in text order."""
    if len(cands) > 1:
        cands.sort(key=lambda c: (c[0], c[2] - c[3], c[1], c[2]))
    starts: list[int] = []  # kept spans are disjoint: sorted starts, sorted ends
    ends: list[int] = []
    found: list[Finding] = []
    for _tier, _rank, start, end, kind in cands:
        i = bisect_left(starts, end)
        if i and ends[i - 1] > start:
            continue
        starts.insert(i, start)
        ends.insert(i, end)
        found.append(Finding(kind, start, end))
    found.sort(key=lambda f: f.start)
    return found


def _may_have_prefixed_key(text: str) -> bool:
    # Every prefix in _API_PREFIXED has "_" or one of these.
    return (
        "_" in text or "sk-" in text or "xox" in text or "glpat-" in text or "pypi-" in text
        or "AKIA" in text or "ASIA" in text or "AIza" in text or "eyJ" in text
    )


def scan(text: str) -> list[Finding]:
    """Every secret in `text`, non-overlapping, in order of position."""
    if not text:
        return []
    lower = text.lower()  # keyword presence only, never offsets
    has_digit = _DIGIT.search(text) is not None
    has_at = "@" in text
    has_pw = "pass" in lower or "pw" in lower or "密码" in text or "密碼" in text or "口令" in text
    has_pin = has_digit and "pin" in lower
    has_key = _may_have_prefixed_key(text)
    has_pem = "PRIVATE KEY" in text
    if not (has_digit or has_at or has_pw or has_key or has_pem):
        return []
    cands: list[_Cand] = []
    if has_digit:
        _numeric(text, cands)
        if lower != text:  # an IBAN has capitals
            _ibans(text, cands)
        if "passport" in lower or "护照" in text or "護照" in text:
            _passports(text, cands)
    if has_at:
        _emails(text, cands)
    if has_pw or has_pin:
        _passwords(text, cands, has_pw, has_pin)
    if has_key:
        _prefixed_keys(text, cands)
    if has_pem:
        for m in _PRIVATE_KEY.finditer(text):
            cands.append((0, 0, m.start(), m.end(), SecretKind.API_KEY))
    if has_digit:
        _contextual_keys(text, lower, cands)
        _generic_tokens(text, cands)
    return _resolve(cands) if cands else []


def _replace(text: str, findings: Sequence[Finding], policy: PrivacyPolicy) -> str:
    """Every finding not allowed by `policy` replaced by its placeholder."""
    parts: list[str] = []
    pos = 0
    for f in findings:
        if policy.action(f.kind) is Policy.ALLOW:
            continue
        parts.append(text[pos : f.start])
        parts.append(_PLACEHOLDERS[f.kind])
        pos = f.end
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def apply(text: str, policy: PrivacyPolicy | None = None) -> Filtered:
    """Apply `policy` before storing: redact, or drop the whole text, or allow.

    `findings` and `kinds` list everything detected, allowed categories
    included, so callers can tag what they keep.
    """
    policy = policy or _DEFAULT_POLICY
    findings = tuple(scan(text))
    if not findings:
        return Filtered(text, (), False, frozenset())
    kinds = frozenset(f.kind for f in findings)
    if any(policy.action(k) is Policy.DROP for k in kinds):
        return Filtered(None, findings, True, kinds)
    return Filtered(_replace(text, findings, policy), findings, False, kinds)


def redact(text: str, policy: PrivacyPolicy | None = None) -> str:
    """Text safe to return: every non-`allow` finding replaced (`drop` redacts here)."""
    findings = scan(text)
    if not findings:
        return text
    return _replace(text, findings, policy or _DEFAULT_POLICY)
