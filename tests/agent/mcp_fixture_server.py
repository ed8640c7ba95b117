"""A small stdio MCP server for the tests: port stocks the bundled data does not have."""

from __future__ import annotations

from mcp.server.fastmcp import FastMCP

server = FastMCP("portstocks")
STOCKS = {"qingdao": 24.6, "rizhao": 18.2}


@server.tool()
def port_stocks(port: str = "qingdao") -> str:
    """Iron-ore inventory at a Chinese port, in million tonnes (test fixture values)."""
    value = STOCKS.get(port.lower())
    if value is None:
        return f"unknown port {port}"
    return f"{port} iron ore port stocks: {value} Mt (fixture)"


if __name__ == "__main__":
    server.run("stdio")
