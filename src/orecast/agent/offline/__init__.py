"""The offline analyst: the default model on a machine without an LLM key."""

from __future__ import annotations

from orecast.agent.offline.model import OfflineAnalyst

__all__ = ["OfflineAnalyst"]
