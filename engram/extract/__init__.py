"""Extraction: turn what the user says into candidate memories.

The rules extractor needs no LLM and is the default; an LLM extractor, when
configured, adds to it.
"""

from engram.extract.rules import extract_candidates

__all__ = ["extract_candidates"]
