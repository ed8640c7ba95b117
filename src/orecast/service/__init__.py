"""The orecast service: the LangGraph Agent Server API (assistants, threads, runs, store) for the analyst
and any LangGraph graph, on the orecast checkpoint store, plus the simple chat endpoints.

    from orecast.service import ServiceSettings, create_app
    app = create_app(ServiceSettings(database_url="sqlite:///data/orecast.sqlite3", model="offline"))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orecast.service.app import create_app
    from orecast.service.settings import ServiceSettings

__all__ = ["ServiceSettings", "create_app"]

# Imported on first use, not with the package: `orecast db sweep` needs only the settings
# (orecast.service.settings), and the app pulls in FastAPI, the agent, LangGraph and pandas — about a
# second of CPU for every `orecast db …` process.
_WHERE = {"create_app": "orecast.service.app", "ServiceSettings": "orecast.service.settings"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
