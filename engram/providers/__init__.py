"""Embedding and LLM providers behind small protocols."""
