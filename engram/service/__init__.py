"""engram as a service: the REST server, its API keys and the web memory manager, the MCP server
(`mcp_server`, `mcp_http`) and the OpenAI-compatible memory proxy (`proxy`).

Everything here is a thin layer over `Memory`; FastAPI loads only when a server is built
(`engram.service.app.create_app`), never on ``import engram``.
"""
