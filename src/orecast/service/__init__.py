"""The orecast service: the LangGraph Agent Server API (assistants, threads, runs, store) for the analyst
and any LangGraph graph, on the orecast checkpoint store, plus the simple chat endpoints.

    from orecast.service import ServiceSettings, create_app
    app = create_app(ServiceSettings(database_url="sqlite:///data/orecast.sqlite3", model="offline"))
"""

from __future__ import annotations

from orecast.service.app import create_app
from orecast.service.settings import ServiceSettings

__all__ = ["ServiceSettings", "create_app"]
