"""Bridges for code written against other memory libraries (engram.compat.mem0)."""
