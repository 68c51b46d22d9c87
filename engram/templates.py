"""Jinja2 templates in ``engram/prompts/`` (zh and en), overridable by file name from the
user's `template_dir`. Capsules, contexts, deltas and every LLM prompt render through here."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

BUNDLED = Path(__file__).parent / "prompts"


@lru_cache(maxsize=8)
def environment(template_dir: str | None) -> jinja2.Environment:
    """Bundled templates, overridden by file name from the user's folder."""
    loaders: list[jinja2.BaseLoader] = []
    if template_dir:
        loaders.append(jinja2.FileSystemLoader(template_dir))
    loaders.append(jinja2.FileSystemLoader(str(BUNDLED)))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, language: str, template_dir: Path | None, **values: Any) -> str:
    """Render ``{name}.{language}.j2`` (English when the language has no template)."""
    env = environment(str(template_dir) if template_dir else None)
    try:
        template = env.get_template(f"{name}.{language}.j2")
    except jinja2.TemplateNotFound:
        template = env.get_template(f"{name}.en.j2")
    return template.render(**values).strip()
