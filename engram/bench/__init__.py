"""Benchmarks: LoCoMo and MADial retrieval recall, latency and throughput at scale.

Library code only (no printing): every runner returns a pydantic report that
the CLI (`engram bench …`) renders and writes to JSON.
"""
