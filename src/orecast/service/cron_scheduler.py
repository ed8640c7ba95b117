"""The background scheduler of crons, kept on `app.state.cron_scheduler`.

Every replica runs one and polls for due crons every `cron_poll_seconds`. A due firing is claimed in
SQL (`CronRepo.claim`: the next date is set only where the row still has the date this replica
read), so however many replicas see it, one fires it. The firing is an ordinary `runs.create` as the
cron's creator (`start_run`): auth, multitask strategy, events and stateless threads as for any run.
The next date is counted from now, so a cron missed while every replica was down fires once, not
once per missed date.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from orecast.service.auth import ApiKeys, Principal
from orecast.service.context import Services
from orecast.service.crons import CronRecord, CronRepo, next_date, stored
from orecast.service.custom_auth import Access, CustomAuth, User
from orecast.service.periodic import Periodic
from orecast.service.runs.prepare import start_run
from orecast.service.schemas import RunCreate

log = logging.getLogger(__name__)
BATCH = 100  # due crons fired per tick; the rest wait for the next one


class CronScheduler:
    def __init__(
        self,
        services: Services,
        crons: CronRepo,
        api_keys: ApiKeys,
        custom_auth: CustomAuth | None,
        poll_seconds: float,
    ) -> None:
        self.services = services
        self.crons = crons
        self.api_keys = api_keys
        self.custom_auth = custom_auth
        self.poll_seconds = poll_seconds
        self._periodic = Periodic("orecast-crons", poll_seconds, self.tick)

    def runs_as(self, cron: CronRecord) -> Principal | None:
        """Who the cron's runs run as: its creator; None when that user is no longer configured."""
        if cron.auth_user is not None:
            if self.custom_auth is None:
                return None
            user = User(cron.auth_user["user"])
            return Principal(None, access=Access(self.custom_auth.auth, user, tuple(cron.auth_user["permissions"])))
        if cron.owner is None or not self.api_keys.enabled:  # no auth (now): the one local user
            return Principal(None, admin=True)
        return self.api_keys.principal(cron.owner)

    async def tick(self, now: datetime | None = None) -> list[str]:
        """Fire the crons due at `now` (default: the clock) that this replica claims; their run ids."""
        now = now or datetime.now(UTC)
        fired = []
        for cron in await self.crons.due(now, BATCH):
            following = stored(next_date(cron.schedule, cron.timezone, now))
            if cron.end_time is not None and following > cron.end_time:
                following = None  # this was its last firing
            if not await self.crons.claim(cron, following):
                continue  # another replica fired it, or it was changed meanwhile
            try:
                run_id = await self.fire(cron)
            except Exception:  # one cron's failure (a busy thread under `reject`, a gone thread) stops no other
                log.exception("cron %s: its run could not start", cron.cron_id)
            else:
                if run_id is not None:
                    fired.append(run_id)
        return fired

    async def fire(self, cron: CronRecord) -> str | None:
        """Start the cron's run; its run id (None: its creator is no longer a configured user)."""
        user = self.runs_as(cron)
        if user is None:
            log.warning("cron %s: its creator is no longer configured; not fired", cron.cron_id)
            return None
        body = RunCreate.model_validate({
            **cron.payload,
            "assistant_id": cron.assistant_id,
            "metadata": {**cron.metadata, **(cron.payload.get("metadata") or {})},
            # a stateless cron's run deletes its thread after, unless the cron keeps them
            "on_completion": "keep" if cron.on_run_completed == "keep" else None,
        })
        run, _ = await start_run(self.services, user, body, cron.thread_id)
        return run.run_id

    def start(self) -> None:
        self._periodic.start()

    async def close(self) -> None:
        await self._periodic.close()
