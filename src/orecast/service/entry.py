"""The uvicorn factory `orecast serve` points its workers at (settings come through the environment)."""

from __future__ import annotations

import os

from fastapi import FastAPI

from orecast.service.app import create_app
from orecast.service.settings import ServiceSettings


def app_from_env() -> FastAPI:
    raw = os.environ.get("ORECAST_SERVICE_SETTINGS")
    return create_app(ServiceSettings.model_validate_json(raw) if raw else ServiceSettings())
