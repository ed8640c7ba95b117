"""`Services`: what the lifespan opened, kept on `app.state.services`; routes get it as a dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from langgraph.store.base import BaseStore

from orecast.checkpoint import OrecastCheckpointer
from orecast.service.assistants import Assistants
from orecast.service.crons import CronRepo
from orecast.service.db import Db
from orecast.service.graphs import GraphRegistry
from orecast.service.metrics import ServiceMetrics
from orecast.service.runs.manager import RunManager
from orecast.service.runs.records import RunRepo
from orecast.service.settings import ServiceSettings
from orecast.service.threads import Threads
from orecast.service.webhooks import Webhooks


@dataclass(frozen=True)
class Services:
    settings: ServiceSettings
    saver: OrecastCheckpointer
    store: BaseStore
    db: Db
    graphs: GraphRegistry
    assistants: Assistants
    threads: Threads
    repo: RunRepo
    runs: RunManager
    metrics: ServiceMetrics
    crons: CronRepo
    webhooks: Webhooks


async def get_services(request: Request) -> Services:
    # async: FastAPI runs a sync dependency in its thread pool, a thread hop on every request
    services = getattr(request.app.state, "services", None)
    if services is None:
        raise RuntimeError("the service is not started (lifespan not run)")
    return services


Svc = Annotated[Services, Depends(get_services)]
