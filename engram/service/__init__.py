"""engram as a service: thin network layers over `Memory` (REST, MCP, the OpenAI-compatible proxy).

Nothing here is imported by `import engram`; each server module loads its framework only when used.
"""
