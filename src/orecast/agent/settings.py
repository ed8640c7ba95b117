"""Where the agent writes files and which model and MCP servers it uses.

A plain frozen dataclass, built by the caller (CLI, service, tests) and passed down; nothing here is
read at import time, so two agents with different settings can live in one process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """Settings of one agent instance.

    `model` is a spec for `orecast.agent.models.select_model` (`offline`, `deepseek:NAME`,
    `openai:NAME`); None means "pick from the environment".
    """

    model: str | None = None
    charts_dir: Path = field(default_factory=lambda: Path("data/charts"))
    reports_dir: Path = field(default_factory=lambda: Path("data/reports"))
    mcp_config: Path | None = None

    def __post_init__(self) -> None:
        # Accept str paths from callers; everything downstream relies on Path.
        for name in ("charts_dir", "reports_dir", "mcp_config"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Path(value))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> AgentSettings:
        """Read `ORECAST_MODEL`, `ORECAST_CHARTS_DIR`, `ORECAST_REPORTS_DIR`, `ORECAST_MCP_CONFIG`."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        if env.get("ORECAST_MODEL"):
            values["model"] = env["ORECAST_MODEL"]
        if env.get("ORECAST_CHARTS_DIR"):
            values["charts_dir"] = Path(env["ORECAST_CHARTS_DIR"])
        if env.get("ORECAST_REPORTS_DIR"):
            values["reports_dir"] = Path(env["ORECAST_REPORTS_DIR"])
        if env.get("ORECAST_MCP_CONFIG"):
            values["mcp_config"] = Path(env["ORECAST_MCP_CONFIG"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]  # keys are the dataclass fields above
