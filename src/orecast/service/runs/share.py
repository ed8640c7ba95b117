"""One queue for all live processes: a process with a free slot takes the oldest runs other processes
queued (as any worker of LangGraph's Agent Server claims from its one shared queue).

A run is admitted, and at first driven, by the process its client called. When that process has no
free slot the run waits `pending` in its queue (runs/slots.py); every `ORECAST_CANCEL_POLL_SECONDS`, a
process with free slots and no run of its own waiting for one reads the oldest runs that could start now
(`RunRepo.claimable`: each its thread's next, on a free thread, its `after_seconds` over, queued by
another process), and for each takes a slot and claims it in one transaction that also makes the run
its own (`RunRepo.hand_over`: `driver`, `lease` + 1, only from the lease it read; not `attempt`, which
counts the processes that executed the run: a hand-over is not one). The claim is the one any claim of the run is
(the thread's running-run index, `status = 'pending'`), so exactly one process executes it: the taker,
or the queuing process if its claim came first. The queuing process sees the lease change (its queue's
poll, or its own refused claim) and lets the run go, but goes on with its event log and output from
the database (`RunManager._mirror`), where the taker writes all the run's events as for a
`stream_resumable` run: its clients (a stream, /runs/wait, a join) see the run as if it ran there. A
temporary run's row outlives its thread until that process has read it, or for `stale_run_seconds`
(that process may have died with its client's request): the taker deletes it then. The taker rebuilds
what the run needs from its row, as a take-over of a dead process's run does (runs/recover.py: input,
config, context, graph, the custom-auth user).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from orecast.service.context import Services
from orecast.service.periodic import Periodic
from orecast.service.runs.recover import graph_of, resumed_input

log = logging.getLogger(__name__)


async def take_queued_runs(svc: Services) -> list[str]:
    """Take, while this process has free slots, the oldest runs other processes queued; their ids."""
    slots = svc.runs.slots
    free = slots.limit - slots.executing if slots.waiting == 0 else 0
    if free <= 0:
        return []
    taken: list[str] = []
    # a margin for this process's own runs among them (their thread just freed: they claim it themselves)
    for run, attempt, lease in await svc.repo.claimable(free + 5):
        if svc.runs.knows(run.run_id) or svc.graphs.get(graph_of(run)) is None:
            continue  # its own, or left to a process that serves its graph
        if not slots.try_take():
            break
        try:
            rollbacks_left = await svc.repo.hand_over(run, lease)
            if rollbacks_left is None:  # claimed, cancelled or taken meanwhile
                slots.give_back()
                continue
            await svc.runs.erase(rollbacks_left)  # before the run builds on its thread's state
            prepared = await resumed_input(svc, run)
        except BaseException:
            slots.give_back()
            raise
        svc.runs.start(
            replace(run, status="running"),
            prepared,
            temporary=bool(run.kwargs.get("temporary")),
            resumable=True,
            attempt=attempt,
            lease=lease + 1,
            slot=True,
            handed_over=True,
        )
        taken.append(run.run_id)
    if taken:
        log.info("took %d runs other processes queued", len(taken))
    return taken


def run_sharing(svc: Services, every: float) -> Periodic:
    """`take_queued_runs` every `every` seconds."""
    return Periodic("orecast-run-sharing", every, lambda: take_queued_runs(svc))
