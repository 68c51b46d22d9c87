"""What of a candidate memory, or of caller metadata, may be stored under a privacy policy.

`engram.privacy` finds secrets in a text. Here that meets extraction: a rule or an
LLM rewrites what was said ("I changed my password to X" → "User changed their
password to X"), and the rewrite can keep a secret while losing the words that made
it detectable. So the secrets of the sentence *as said* are taken out of the
candidate too, and a candidate that still carries a piece of one is not stored at
all; its slot, value and entities are checked the same way.

Identifiers the caller chooses (session ids, idempotency keys, OptMem's
`source_session`) are stored too, and are compared later, so they are not redacted
like prose: `redact_identifier` keeps them stable and distinct.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, TypeVar, cast

from engram.models import Candidate
from engram.privacy import Policy, PrivacyPolicy, apply, placeholder, redact, scan
from engram.text import lexical_tokens

__all__ = ["redact_identifier", "redact_json", "safe_candidate"]

log = logging.getLogger("engram")
T = TypeVar("T")

# cheap pre-check: a sentence without digits, "@" or these words holds no detectable secret
_MAY_HOLD_SECRET = re.compile(r"[0-9@_]|pass|pw|pin|key|token|secret|bearer|sk-|密码|密碼|口令|密钥|秘钥|令牌", re.I)


def redact_json(value: Any, policy: PrivacyPolicy) -> Any:
    """Every string inside caller metadata redacted (it is stored as given otherwise)."""
    if isinstance(value, str):
        return redact(value, policy)
    if isinstance(value, list):
        return [redact_json(v, policy) for v in value]
    if isinstance(value, dict):
        return {k: redact_json(v, policy) for k, v in value.items()}
    return value


def redact_identifier(value: T, policy: PrivacyPolicy, salt: str = "") -> T:
    """`value` (a session id, an idempotency key) as it may be stored; anything but a
    string (None, or a wrong type the caller's validation will refuse) as it is.

    Unchanged when it holds no secret the policy hides (almost always). Otherwise
    its secrets become placeholders and `#h` plus a digest of the whole value is
    appended: the same identifier always maps to the same stored value (sessions
    and idempotency keep working when the caller passes it again) and two
    different ones stay different. The digest is scrypt, salted with `salt` (pass
    the user id: no table computed once fits every user) and slow on purpose, so
    trying every phone number against it costs CPU-years; a secret with little
    entropy (a 4-digit PIN) can still be guessed from it. `drop` redacts here: an
    identifier cannot be refused without refusing the call.
    """
    if not isinstance(value, str):
        return value
    redacted = redact(value, policy)
    if redacted == value:
        return value
    return cast(T, redacted + "#h" + _identifier_digest(value, salt))


@lru_cache(maxsize=256)  # a session id is passed again on every add of the session
def _identifier_digest(value: str, salt: str) -> str:
    secret = value.encode("utf-8", "surrogatepass")
    return hashlib.scrypt(
        secret, salt=b"engram-identifier\0" + salt.encode("utf-8", "surrogatepass"), n=2**14, r=8, p=1, dklen=8
    ).hex()


def _leaks(text: str, secrets: Sequence[str], allowed: str = "") -> bool:
    """True when `text` (a memory, key slug, value, entity) carries a piece of a secret
    that `allowed` (the sentence with its secrets redacted) does not also say."""
    flat = "".join(ch for ch in text.casefold() if ch.isalnum())
    words = set(lexical_tokens(text.replace("_", " ")))
    fine = set(lexical_tokens(allowed)) if allowed else set()
    fine_flat = "".join(ch for ch in allowed.casefold() if ch.isalnum())
    for secret in secrets:
        core = "".join(ch for ch in secret.casefold() if ch.isalnum())
        if len(core) >= 4 and core in flat and core not in fine_flat:
            return True
        if words & ({t for t in lexical_tokens(secret) if len(t) >= 4} - fine):
            return True
    return False


def safe_candidate(candidate: Candidate, said: str, policy: PrivacyPolicy) -> Candidate | None:
    """`candidate` (extracted from the sentence `said`) as it may be stored, or None when
    the policy drops it or it would still carry part of a secret."""
    filtered = apply(candidate.content, policy)
    if filtered.dropped or not filtered.text.strip():
        log.info("privacy policy dropped a %s candidate (%s)", candidate.kind, ", ".join(sorted(filtered.kinds)))
        return None
    text = filtered.text
    said_findings = [
        f for f in scan(said) if policy.action(f.kind) is not Policy.ALLOW
    ] if filtered.findings or _MAY_HOLD_SECRET.search(said) else []
    secrets = [  # the content's own, as `apply` found them
        candidate.content[f.start : f.end] for f in filtered.findings if policy.action(f.kind) is not Policy.ALLOW
    ] + [said[f.start : f.end] for f in said_findings]
    for f in said_findings:
        value = said[f.start : f.end]
        if value in text:
            if policy.action(f.kind) is Policy.DROP:
                log.info("privacy policy dropped a %s candidate (%s)", candidate.kind, f.kind.value)
                return None
            text = text.replace(value, placeholder(f.kind))
    if said_findings and _leaks(text, secrets, allowed=redact(said, policy)):
        log.info("dropped a %s candidate that still carried part of a secret", candidate.kind)
        return None
    if not secrets and text == candidate.content and (
        candidate.value is None or redact(candidate.value, policy) == candidate.value
    ):
        return candidate  # nothing to hide (most statements): no copy
    candidate = candidate.model_copy(update={"content": text})
    if candidate.value is not None:
        candidate.value = redact(candidate.value, policy)
    if secrets:  # slots, values and entities derived from a secret say it too
        if candidate.key and _leaks(candidate.key, secrets):
            candidate.key = None
        if candidate.value and _leaks(candidate.value, secrets):
            candidate.value = None
        candidate.entities = [e for e in candidate.entities if not _leaks(e, secrets)]
        candidate.typed_entities = [e for e in candidate.typed_entities if not _leaks(e[0], secrets)]
        candidate.relations = [r for r in candidate.relations if not any(_leaks(p, secrets) for p in r)]
        candidate.reason = redact(candidate.reason, policy)
    return candidate
