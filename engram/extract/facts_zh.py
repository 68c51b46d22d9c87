"""Facts about the user, in Chinese: 住在…, 来自…, 在…工作, 是…(职业), 我的…是…, 有/养…, 对…过敏, 吃素,
今年…岁, 在学….

Same keys as the English facts: fact:location | fact:work_location | fact:employer
| fact:occupation | fact:hometown | fact:diet | fact:allergy_<x> | fact:has_<thing>
| fact:<attribute> | fact:<relation>_<attribute> | fact:age | fact:learning_<x>.
"""

from __future__ import annotations

import re


from engram.extract.candidate import Ctx, candidate
from engram.extract.dates import calendar_day, zh_int, zh_said_time
from engram.extract.keys import CJK_RE, slot_value, slugify
from engram.extract.names import valid_zh_name
from engram.extract.phrases import ZH_CUT_RE, ZH_OBJ_BAD_RE, zh_object
from engram.extract.rewrite import zh_third
from engram.models import Candidate, Kind

_ZH_LOC_RE = re.compile(
    r"^我(?:现在|目前|一直|还|也|已经|刚|刚刚|最近|去年|前年|今年|上个月|上周|终于|[0-9]{4}年(?:[0-9]{1,2}月)?|就|才)*"
    r"(?:(?P<live>住在|住|定居在|定居于|定居|生活在)|(?P<move>搬到了|搬到|搬去了|搬去|搬来了|搬来|搬家到|搬回了|搬回到|搬回))"
    r"(?P<place>.+)$"
)
_ZH_LOC2_RE = re.compile(r"^我(?:现在|目前|一直)*在(?P<place>.{2,12}?)(?:生活|定居|安家)(?:了)?$")
_ZH_PLACE_TAIL_RE = re.compile(r"(?:去了|来了|住了|了|啦|呢|哦|啊|住|生活|这边|那边|定居)+$")
_ZH_PLACE_BAD = frozenset("家 家里 这里 那里 这儿 那儿 酒店 宾馆 医院 附近 楼上 楼下 隔壁 哪 外面 公司 学校".split())
_ZH_WORK_RE = re.compile(
    r"^我(?:现在|目前|一直|也|还|已经|在职)*在(?P<org>[^，,]{1,20}?)"
    r"(?:(?P<verb>工作|上班|任职|实习|打工)|(?:当|做|担任)(?:一名|一个|一位|个)?(?P<job>.{1,10}?))(?:了)?$"
)
# a new employer: "我上周入职了微软", "我跳槽到了腾讯" (a time before it is dropped first)
_ZH_JOINED_RE = re.compile(r"^我(?:已经|刚|刚刚|终于|正式)*(?:入职了?|跳槽到了?|跳槽去了?)(?P<org>[^，,]{2,20}?)(?:了|啦)?$")
_ZH_ORG_BAD = frozenset("家 家里 这里 那里 外地 国外 公司 晚上 周末 办公室 现在 这 那 哪里 单位 找 换 辞 丢 没 新".split())
_ZH_JOBS = frozenset(
    """医生 老师 教师 学生 护士 律师 会计 司机 警察 销售 老板 翻译 编辑 记者 作家 演员 歌手 教授 主管 总监
    经理 博士 硕士 运营 画家 专家 厨师 农民 工人 商人 军人 公务员 程序员 工程师 设计师 产品经理 研究员 科学家
    创业者 自由职业者 摄影师 建筑师 分析师 博士生 研究生 大学生 高中生 初中生 小学生 实习生 顾问 咨询师 药剂师
    牙医 兽医 飞行员 数据科学家 会计师 审计师 律师助理 保安 快递员 外卖员 店长 主播 博主 全职妈妈 家庭主妇 退休人员
    导演 编剧 模特 舞者 音乐家 艺术家 企业家 投资人 码农 前端 后端 全栈 架构师 测试 产品 客服 HR
    人事 秘书 助理 开发 运维 算法 设计 数据分析 UI 策划 游戏策划 文案 美术 财务 行政 法务 采购 导游 空姐 主持人
    销售经理 项目经理 客户经理 技术总监""".split()
)
_ZH_JOB_SUFFIX_RE = re.compile(r"(?:师|员|者|家|生)$")
_ZH_JOB_BAD_RE = re.compile(r"[了不很在是的吗呢吧说我你他她]")
_ZH_JOB_RE = re.compile(r"^我(?:现在|目前|也|还|其实)*是(?:一名|一个|一位|个|名|位)?(?P<job>.+)$")
_ZH_DO_TRADE_RE = re.compile(r"(?:做|干|搞)(?P<x>(?!什么|啥)[^，,的]{1,6})的")
_ZH_ORG_JOB_RE = re.compile(r"^我(?:现在|目前|也|还)*是(?P<org>[^，,的]{2,12})的(?:一名|一个|一位)?(?P<job>.{2,10})$")
_ZH_RELATIONS = {
    "猫": "cat", "小猫": "cat", "狗": "dog", "小狗": "dog", "狗狗": "dog", "猫咪": "cat", "宠物": "pet",
    "老婆": "wife", "妻子": "wife", "太太": "wife", "爱人": "spouse", "老公": "husband", "丈夫": "husband",
    "儿子": "son", "女儿": "daughter", "孩子": "child", "哥哥": "older_brother", "弟弟": "younger_brother",
    "姐姐": "older_sister", "妹妹": "younger_sister", "妈妈": "mother", "母亲": "mother", "爸爸": "father",
    "父亲": "father", "女朋友": "girlfriend", "男朋友": "boyfriend", "老板": "boss", "领导": "boss",
    "室友": "roommate", "最好的朋友": "best_friend", "朋友": "friend", "车": "car",
}
_ZH_ATTRS = {
    "名字": "name", "生日": "birthday", "邮箱": "email", "电子邮箱": "email", "邮件地址": "email",
    "电话": "phone", "手机": "phone", "手机号": "phone", "手机号码": "phone", "电话号码": "phone",
    "地址": "address", "住址": "address", "老家": "hometown", "家乡": "hometown", "年龄": "age",
    "职业": "occupation", "工作": "occupation", "专业": "major", "星座": "zodiac_sign", "血型": "blood_type",
    "母语": "native_language", "国籍": "nationality", "时区": "timezone", "公司": "employer",
    "学校": "school", "大学": "school", "微信": "wechat", "微信号": "wechat", "昵称": "nickname",
    "小名": "nickname", "身高": "height", "属相": "chinese_zodiac", "生肖": "chinese_zodiac",
    "结婚纪念日": "anniversary", "纪念日": "anniversary", "目标体重": "target_weight", "理想体重": "target_weight",
    "体重": "weight",
}
_ZH_REL_RE = "|".join(sorted(_ZH_RELATIONS, key=len, reverse=True))
_ZH_ATTR_RE = "|".join(sorted(_ZH_ATTRS, key=len, reverse=True))
_ZH_MY_RE = re.compile(
    rf"^我的?(?:(?P<rel>{_ZH_REL_RE})的?)?(?P<attr>{_ZH_ATTR_RE})?(?P<verb>叫做|叫|是|为|在)(?P<val>.+)$"
)
_ZH_HAS = {"猫": "cat", "猫咪": "cat", "狗": "dog", "狗狗": "dog", "孩子": "children", "小孩": "children",
           "儿子": "son", "女儿": "daughter", "哥哥": "brother", "弟弟": "brother", "姐姐": "sister",
           "妹妹": "sister", "女朋友": "girlfriend", "男朋友": "boyfriend", "老婆": "wife", "老公": "husband",
           "妻子": "wife", "丈夫": "husband", "车": "car", "汽车": "car", "宠物": "pet", "房子": "house",
           "兔子": "rabbit", "鹦鹉": "parrot", "仓鼠": "hamster"}
_ZH_HAS_LONGEST_FIRST = sorted(_ZH_HAS.items(), key=lambda kv: -len(kv[0]))
_ZH_HAS_RE = re.compile(
    r"^我(?:也|还|现在|家里?)*(?P<verb>有|养了|养着|养)(?P<num>[一二两三四五六七八九十几0-9]+)?"
    r"(?P<clf>只|条|个|辆|台|位|头|匹|套|间)?(?P<obj>[^，,]{1,8}?)(?:叫(?P<name>.{1,6}))?$"
)
_ZH_FROM_RE = re.compile(
    r"^我(?:来自|老家是|老家在|的老家是|的老家在|是在|是|在)?(?P<place>.{2,8}?)(?P<tail>人|长大的?|出生的?)$"
)
_ZH_FROM2_RE = re.compile(r"^我(?:来自|出生在|出生于|老家是|老家在)(?P<place>.{2,10})$")
_ZH_ALLERGY_RE = re.compile(r"^我(?:也|还|一直|从小)*(?:对)?(?P<obj>[^对]{1,10}?)过敏$")  # (not "我儿子对鸡蛋过敏")
_ZH_DIET_RE = re.compile(r"^我(?:是|一直)?(?:吃素的?|(?P<vegan>纯)?素食(?:主义)?者)$")


def is_place(word: str) -> bool:
    """jieba tags every part of `word` as a place name (ns)."""
    import rjieba  # loaded on first use (start-up time)

    tags = rjieba.tag(word)
    return bool(tags) and all(t == "ns" for _, t in tags)


def _zh_location(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_LOC_RE.match(s) or _ZH_LOC2_RE.match(s)
    if m is None and "住" not in s and "搬" not in s:
        return None
    said, since = zh_said_time(s, ctx.now)  # "我上个月搬到了上海": since last month
    if m is None:
        m = _ZH_LOC_RE.match(said)  # a time before the verb: "我三年前搬到了北京"
        if m is None:
            return None
    place = ZH_CUT_RE.split(m.group("place"), 1)[0]
    place = _ZH_PLACE_TAIL_RE.sub("", place).strip()
    if not place or len(place) > 12 or place in _ZH_PLACE_BAD or re.match(r"^[了着过得院校的在]", place):
        return None
    moved = bool(m.groupdict().get("move"))
    return [candidate(ctx, Kind.FACT, zh_third(said), "fact:location", slot_value(place), "用户的居住地",
                      entities=[place], valid_from=since or (ctx.now if moved else None))]


def _zh_work(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_WORK_RE.match(s)
    if m is None:
        return _zh_joined(s, ctx) if "入职" in s or "跳槽" in s else None
    org = m.group("org").strip()
    if org in _ZH_ORG_BAD or len(org) > 20 or re.match(r"^[这那哪]", org):
        return None
    out = []
    where = CJK_RE.match(org) and is_place(org)
    key, what = ("fact:work_location", "用户的工作地点") if where else ("fact:employer", "用户的雇主")
    job = m.group("job")
    content = zh_third(s) if not job else f"用户在{org}工作"
    out.append(candidate(ctx, Kind.FACT, content, key, slot_value(org), what, entities=[org]))
    if job and _zh_job_ok(job):
        out.append(candidate(ctx, Kind.FACT, f"用户是{job}", "fact:occupation", slot_value(job), "用户的职业"))
    return out


def _zh_joined(s: str, ctx: Ctx) -> list[Candidate] | None:
    said, since = zh_said_time(s, ctx.now)
    m = _ZH_JOINED_RE.match(said)
    if m is None:
        return None
    org = m.group("org").strip()
    if org in _ZH_ORG_BAD or re.match(r"^(?:[这那哪一]|[0-9一二三四五六七八九十两几半多]+个?(?:天|周|星期|礼拜|月|年))", org):
        return None  # "我入职三个月了": how long, not where
    return [candidate(ctx, Kind.FACT, f"用户在{org}工作", "fact:employer", slot_value(org), "用户的雇主",
                      entities=[org], valid_from=since or ctx.now)]


def _zh_job_ok(job: str) -> bool:
    if not 1 < len(job) <= 10 or _ZH_JOB_BAD_RE.search(job):
        return False
    if job in _ZH_JOBS:
        return True
    if job.endswith(("家", "生")) and len(job) < 3:
        return False
    return bool(_ZH_JOB_SUFFIX_RE.search(job)) or any(job.endswith(j) for j in _ZH_JOBS if len(j) >= 2)


def _zh_job(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_ORG_JOB_RE.match(s)
    if m and _zh_job_ok(m.group("job")):
        org, job = m.group("org"), m.group("job")
        return [candidate(ctx, Kind.FACT, f"用户是{job}", "fact:occupation", slot_value(job), "用户的职业"),
                candidate(ctx, Kind.FACT, f"用户在{org}工作", "fact:employer", slot_value(org), "用户的雇主",
                          entities=[org])]
    m = _ZH_JOB_RE.match(s)
    if m is None:
        return None
    trade = _ZH_DO_TRADE_RE.fullmatch(m.group("job"))  # "我是做会计的", "我是做外贸的": the trade is the job
    job = trade.group("x") if trade else zh_object(m.group("job"))
    if not trade and not _zh_job_ok(job):
        return None
    return [candidate(ctx, Kind.FACT, zh_third(s), "fact:occupation", slot_value(job), "用户的职业")]


def _zh_diet(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_DIET_RE.match(s)
    if m is None:
        return None
    diet = "纯素" if m.group("vegan") else "素食"
    return [candidate(ctx, Kind.FACT, zh_third(s), "fact:diet", diet, "用户的饮食")]


def _zh_from(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_FROM2_RE.match(s)
    if m is None:
        m = _ZH_FROM_RE.match(s)
        if m is None or not is_place(m.group("place")):
            return None
    place = _ZH_PLACE_TAIL_RE.sub("", m.group("place")).strip()
    if not place or re.search(r"\d", place) or place in _ZH_PLACE_BAD:
        return None
    return [candidate(ctx, Kind.FACT, zh_third(s), "fact:hometown", slot_value(place), "用户的家乡", entities=[place])]


# a day put first: "下个月十五号是我妈妈的生日" says "我妈妈的生日是下个月十五号"
_ZH_DATE_FIRST_RE = re.compile(rf"^(?P<day>[^，,。是]{{2,12}})是(?P<whose>我的?(?:(?:{_ZH_REL_RE})的?)?(?:生日|结婚纪念日|纪念日))$")


def _zh_my(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_MY_RE.match(s)
    if m is None:
        return None
    rel, attr, verb = m.group("rel"), m.group("attr"), m.group("verb")
    val = zh_object(ZH_CUT_RE.split(m.group("val"), 1)[0])
    if not val or len(val) > 30 or ZH_OBJ_BAD_RE.match(val):
        return None
    if verb == "在" and attr not in ("老家", "家乡"):
        return None
    if rel and not attr:
        if verb not in ("叫", "叫做") or not valid_zh_name(val):
            return None
        key = f"fact:{_ZH_RELATIONS[rel]}_name"
    elif attr:
        if not s.startswith("我的") and not rel and attr not in ("名字",):
            return None
        field = _ZH_ATTRS[attr]
        key = f"fact:{_ZH_RELATIONS[rel]}_{field}" if rel else f"fact:{field}"
    else:
        return None
    if key.endswith(("birthday", "anniversary")) and (day := calendar_day(val, ctx.now, "zh")) is not None:
        s, val = s[: s.rfind(val)] + day, day  # "下个月十五号" → "1月15日"
    said = zh_third(s)
    if rel and not attr and said.startswith("用户" + rel):
        said = "用户的" + said[2:]  # "我女儿叫朵朵" → "用户的女儿叫朵朵"
    return [candidate(ctx, Kind.FACT, said, key, slot_value(val), f"用户的{rel or ''}{attr or '名字'}",
                      entities=[val] if key.endswith("name") else [])]


def _zh_has(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_HAS_RE.match(s)
    if m is None:
        return None
    obj = m.group("obj")
    canon = next((v for k, v in _ZH_HAS_LONGEST_FIRST if obj.endswith(k)), None)
    if canon is None or len(obj) > 6:
        return None
    if not (m.group("num") or m.group("clf") or obj in _ZH_HAS):
        return None
    value = (m.group("num") or "") + (m.group("clf") or "") + obj
    out = [candidate(ctx, Kind.FACT, zh_third(s if not m.group("name") else s[: m.start("name") - 1]),
                     "fact:has_" + canon, slot_value(value), "用户拥有的", entities=[obj])]
    name = m.group("name")
    if name and valid_zh_name(name):
        out.append(candidate(ctx, Kind.FACT, f"用户的{obj}叫{name}", f"fact:{canon}_name", slot_value(name),
                             f"用户的{obj}的名字", entities=[name]))
    return out


def _zh_allergy(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_ALLERGY_RE.match(s)
    if m is None:
        return None
    obj = m.group("obj")
    if ZH_OBJ_BAD_RE.match(obj):
        return None
    return [candidate(ctx, Kind.FACT, zh_third(s), "fact:allergy_" + slugify(obj), slot_value(obj), "用户的过敏原",
                      entities=[obj])]


_ZH_AGE_RE = re.compile(
    r"^我(?:今年|现在|已经|刚|刚刚|刚满|满|都)*(?P<n>[0-9]{1,3}|[一二两三四五六七八九十]{1,3})周?岁(?:了|啦)?$"
)
_ZH_LEARN_RE = re.compile(
    r"^我(?P<adv>(?:最近|现在|目前|正|也|还|一直|刚|刚刚|已经|今年|这学期|上个月|去年|开始|在|正在)*)"
    r"(?:学习|自学|学)着?(?P<obj>.+)$"
)
_ZH_LEARN_BAD_RE = re.compile(r"^[校院生期年堂费历位者会到了过完好得上下里中的习着说]|东西|知识|一些|很多")
_ZH_INSTRUMENT_VERB_RE = re.compile(r"^(?:弹|拉|吹)(?=..)")


def _zh_age(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"我今年34岁", "我34岁了" → fact:age."""
    m = _ZH_AGE_RE.match(s)
    if m is None:
        return None
    n = zh_int(m.group("n"))
    if not 1 <= n <= 119:
        return None
    return [candidate(ctx, Kind.FACT, zh_third(s.rstrip("了啦")), "fact:age", str(n), "用户的年龄", valid_from=ctx.now)]


def _zh_learning(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"我在学日语", "我最近在学钢琴", "我开始学日语了" → fact:learning_<x>."""
    m = _ZH_LEARN_RE.match(s)
    if m is None or not ("在" in m.group("adv") or "开始" in m.group("adv")):
        return None
    obj = zh_object(m.group("obj"))
    if not 2 <= len(obj) <= 10 or _ZH_LEARN_BAD_RE.search(obj) or ZH_OBJ_BAD_RE.match(obj):
        return None
    slug = slugify(_ZH_INSTRUMENT_VERB_RE.sub("", obj), consume=True, limit=4)
    if not slug:
        return None
    said, since = zh_said_time(s, ctx.now)
    return [candidate(ctx, Kind.FACT, zh_third(said), "fact:learning_" + slug, slug.replace("_", " "), "用户在学的",
                      entities=[obj] if len(obj) <= 6 else [], valid_from=since)]


def zh_fact(s: str, ctx: Ctx) -> list[Candidate] | None:
    """The first fact rule that matches a Chinese clause starting with 我."""
    if (first := _ZH_DATE_FIRST_RE.match(s)) is not None:  # "下个月十五号是我妈妈的生日"
        s = f"{first.group('whose')}是{first.group('day')}"
    if not s.startswith("我"):
        return None
    for fn in (_zh_learning, _zh_location, _zh_work, _zh_diet, _zh_from, _zh_job, _zh_my, _zh_has, _zh_allergy,
               _zh_age):
        found = fn(s, ctx)
        if found is not None:
            return found
    return None
