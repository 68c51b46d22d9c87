"""The web manager's interface text in English and Chinese, chosen from Accept-Language."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "en": {
        "title": "engram memory manager", "signin": "Sign in", "signout": "Sign out",
        "api_key": "API key", "manage_user": "User to manage (admin keys)", "bad_key": "That key is unknown or revoked.",
        "need_user": "An admin key needs the user to manage.", "memories": "Memories", "disputes": "Disputes",
        "capsule": "Capsule", "search": "Search", "search_label": "Search memories", "results": "Results",
        "no_results": "Nothing found.", "nothing": "Nothing is remembered yet.", "edit": "Edit", "save": "Save",
        "content": "Text", "delete": "Delete", "delete_kind": "Delete all of this kind", "delete_all": "Delete everything",
        "confirm_title": "Are you sure?", "confirm_yes": "Yes, delete", "cancel": "Cancel",
        "confirm_one": "Delete this memory for good: “{what}”", "confirm_kind": "Delete every memory of kind “{what}”.",
        "confirm_all": "Delete every memory of {what}. This cannot be undone.",
        "paused": "Memory is paused: nothing new is remembered.", "active": "Memory is on.",
        "pause": "Pause memory", "resume": "Resume memory", "history": "History", "versions": "Versions",
        "chain": "Supersede chain", "status": "Status", "kind": "Kind", "layer": "Layer", "created": "Created",
        "action": "Action", "old": "Before", "new": "After", "reason": "Reason", "when": "When",
        "no_disputes": "No open disputes.", "question": "Question", "keep_this": "Keep this one",
        "keep_newer": "Keep the newer", "keep_older": "Keep the older", "keep_both": "Keep both",
        "keep_neither": "Keep neither", "tokens": "{n} tokens of {budget}", "empty_capsule": "The capsule is empty.",
        "deleted": "Deleted {n}.", "saved": "Saved.", "resolved": "Dispute resolved.", "user": "User",
        "bad_csrf": "The form expired; please try again.", "not_found": "No such memory.", "score": "Score",
        "long_term": "Long-term", "episodic": "Episodic", "disputed": "Disputed", "back": "Back to memories",
        "skip": "Skip to content", "provenance": "Said by the user",
        "newest": "The newest {n} of {total} are listed; search finds any of them.",
        **{f"kind_{k}": k for k in ("preference", "fact", "task", "decision", "identity", "event", "summary", "turn")},
    },
    "zh": {
        "title": "engram 记忆管理", "signin": "登录", "signout": "退出", "api_key": "API 密钥",
        "manage_user": "要管理的用户（管理员密钥）", "bad_key": "密钥无效或已吊销。", "need_user": "管理员密钥需要指定用户。",
        "memories": "记忆", "disputes": "待确认", "capsule": "记忆胶囊", "search": "搜索", "search_label": "搜索记忆",
        "results": "搜索结果", "no_results": "没有找到。", "nothing": "还没有任何记忆。", "edit": "编辑", "save": "保存",
        "content": "内容", "delete": "删除", "delete_kind": "删除此类全部", "delete_all": "全部删除",
        "confirm_title": "确定吗？", "confirm_yes": "确定删除", "cancel": "取消", "confirm_one": "永久删除这条记忆：“{what}”",
        "confirm_kind": "删除类型为“{what}”的全部记忆。", "confirm_all": "删除 {what} 的全部记忆，无法恢复。",
        "paused": "记忆已暂停：不会记住新内容。", "active": "记忆已开启。", "pause": "暂停记忆", "resume": "恢复记忆",
        "history": "历史", "versions": "版本", "chain": "替换链", "status": "状态", "kind": "类型", "layer": "层级",
        "created": "创建时间", "action": "操作", "old": "之前", "new": "之后", "reason": "原因", "when": "时间",
        "no_disputes": "没有待确认的冲突。", "question": "问题", "keep_this": "保留这条", "keep_newer": "保留较新的",
        "keep_older": "保留较旧的", "keep_both": "都保留", "keep_neither": "都不保留", "tokens": "{n} / {budget} 个词元",
        "empty_capsule": "记忆胶囊是空的。", "deleted": "已删除 {n} 条。", "saved": "已保存。", "resolved": "冲突已解决。",
        "user": "用户", "bad_csrf": "表单已过期，请重试。", "not_found": "没有这条记忆。", "score": "得分",
        "long_term": "长期", "episodic": "情景", "disputed": "待确认", "back": "返回记忆列表", "skip": "跳到正文",
        "provenance": "用户原话", "newest": "列出最新的 {n} 条（共 {total} 条）；搜索可找到任意一条。",
        "kind_preference": "偏好", "kind_fact": "事实", "kind_task": "任务", "kind_decision": "决定",
        "kind_identity": "身份", "kind_event": "事件", "kind_summary": "摘要", "kind_turn": "对话原文",
    },
}


def language_of(accept_language: str | None) -> str:
    """"zh" when the browser prefers Chinese over English, else "en" (q-values respected)."""
    best, best_q = "en", -1.0
    for position, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip().lower()
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        lang = "zh" if tag.startswith("zh") else "en" if tag.startswith("en") else None
        if lang and q - position * 1e-6 > best_q:
            best, best_q = lang, q - position * 1e-6
    return best
