"""Tools from MCP servers listed in a JSON file (`ORECAST_MCP_CONFIG`).

The file has the common `mcpServers` shape used by Claude Desktop, Cursor and others:

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
        "search": {"url": "http://127.0.0.1:8000/mcp"}}}

A stdio server has `command` (+ `args`, `env`, `cwd`); a streamable-HTTP server has `url`
(+ `headers`). Each server is loaded on its own, so one that fails to start is reported in
`McpLoad.errors` and skipped instead of taking the whole agent down.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from orecast.agent.errors import AgentConfigError

# A server that has not answered `initialize` + `tools/list` by then is treated as failed.
DEFAULT_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class McpLoad:
    """Tools loaded from the servers that worked, and one line per server that did not."""

    tools: list[BaseTool] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def read_mcp_config(path: Path) -> dict[str, dict[str, Any]]:
    """Parse the config file into `langchain-mcp-adapters` connections, keyed by server name."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AgentConfigError(f"MCP config {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise AgentConfigError(f"MCP config {path} is not valid JSON: {exc}") from None
    servers = raw.get("mcpServers") if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise AgentConfigError(f'MCP config {path} needs an object "mcpServers": {{name: server}}')
    return {name: _connection(name, spec) for name, spec in servers.items()}


def _connection(name: str, spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise AgentConfigError(f"MCP server {name!r}: expected an object, got {type(spec).__name__}")
    if "command" in spec:
        conn: dict[str, Any] = {
            "transport": "stdio",
            "command": spec["command"],
            "args": list(spec.get("args", [])),
        }
        for key in ("env", "cwd"):
            if key in spec:
                conn[key] = spec[key]
        return conn
    if "url" in spec:
        kind = str(spec.get("transport") or spec.get("type") or "streamable_http").replace("-", "_")
        if kind == "http":
            kind = "streamable_http"
        conn = {"transport": kind, "url": spec["url"]}
        if "headers" in spec:
            conn["headers"] = spec["headers"]
        return conn
    raise AgentConfigError(f"MCP server {name!r}: needs 'command' (stdio) or 'url' (streamable HTTP)")


async def load_mcp_tools(path: Path | None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> McpLoad:
    """Load the tools of every server in `path`; None or a missing variable means no MCP tools.

    Tools keep their own names unless two servers clash, in which case they are prefixed with
    the server name (`server_tool`), so the model never sees duplicate tool names.
    """
    if path is None:
        return McpLoad()
    from langchain_mcp_adapters.client import MultiServerMCPClient

    connections = read_mcp_config(path)
    client = MultiServerMCPClient(connections)  # type: ignore[arg-type]  # TypedDicts built above
    per_server: dict[str, list[BaseTool]] = {}
    errors: list[str] = []
    for name in connections:
        try:
            per_server[name] = await asyncio.wait_for(client.get_tools(server_name=name), timeout_s)
        except Exception as exc:  # noqa: BLE001 — any failure of one server must not stop the others
            errors.append(f"MCP server {name!r} skipped: {_one_line(exc)}")
    seen: dict[str, int] = {}
    for tools in per_server.values():
        for tool in tools:
            seen[tool.name] = seen.get(tool.name, 0) + 1
    loaded: list[BaseTool] = []
    for server, tools in per_server.items():
        for tool in tools:
            if seen[tool.name] > 1:
                tool = tool.model_copy(update={"name": f"{server}_{tool.name}"})
            loaded.append(tool)
    return McpLoad(tools=loaded, errors=errors)


def _one_line(exc: BaseException) -> str:
    # anyio wraps startup failures in ExceptionGroups; the first leaf says what went wrong.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
