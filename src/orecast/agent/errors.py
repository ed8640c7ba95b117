"""Errors the agent layer raises; each is one clear line for the CLI to print."""

from __future__ import annotations


class AgentConfigError(ValueError):
    """The agent cannot be built as configured (unknown model spec, missing key, bad MCP file)."""
