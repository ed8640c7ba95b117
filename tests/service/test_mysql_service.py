"""The service on MySQL / MariaDB: the same run tests as on SQLite and PostgreSQL, on a fresh database.

The run tests of `test_runs.py` and `test_multitask.py`, the thread search's and the crons', are collected here once
more; this module's `db_url` (a new MySQL database of this test run) replaces the conftest's for them.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from orecast.checkpoint import open_checkpointer
from orecast.service.db import open_db
from orecast.service.runs import queries as q
from orecast.service.runs.records import RunRepo
from tests.conftest import new_mysql_database
from tests.service.test_assistant_versions import (  # noqa: F401
    test_a_batch_starts_one_stateless_run_per_item,
    test_context_and_configurable_are_kept_in_step,
    test_each_update_is_a_version_and_set_latest_brings_one_back,
    test_version_errors_and_delete,
)
from tests.service.test_crons import (  # noqa: F401
    cron_client,
    cron_server,
    test_a_stateless_cron_runs_on_a_new_thread_each_time,
    test_a_thread_cron_runs_on_its_thread,
    test_end_time_and_disabled_stop_firing,
    test_one_claim_of_a_firing_wins,
    test_search_and_count_filter_sort_and_select,
    test_two_schedulers_fire_a_due_cron_once,
)
from tests.service.test_hostile_requests import (  # noqa: F401
    test_a_bad_history_filter_is_a_422,
    test_a_run_input_the_graph_refused_leaves_its_thread_listed_and_usable,
    test_text_no_store_can_keep_is_a_422_on_every_database_and_nothing_is_stored,
)
from tests.service.test_multitask import (  # noqa: F401  (collected again, on MySQL)
    test_a_run_left_by_a_dead_process_does_not_block_the_thread,
    test_enqueue_runs_in_order,
    test_reject_answers_409_and_changes_nothing,
    test_rollback_strategy_erases_the_current_run,
    test_two_servers_on_one_database_never_overlap_and_cancel_reaches_across,
)
from tests.service.test_run_recovery import (  # noqa: F401
    test_a_process_never_takes_over_a_run_it_drives,
    test_a_run_stopped_by_a_shutdown_goes_on_at_the_next_start,
    test_a_run_taken_over_too_often_fails_and_its_old_driver_stops,
    test_a_run_whose_server_died_is_finished_by_another,
    test_a_run_whose_server_was_killed_goes_on_at_the_next_start_at_once,
)
from tests.service.test_run_slots import (  # noqa: F401
    _count_afresh,
    slots_server,
    slots_url,
    test_a_queued_run_of_a_dead_process_cancelled_frees_its_thread,
    test_a_queued_run_taken_over_from_a_dead_process_keeps_its_attempt,
    test_a_run_another_replica_took_is_cancelled_from_the_first,
    test_a_run_started_later_waits_without_its_slot,
    test_a_stateless_run_handed_over_leaves_no_rows_when_its_first_process_dies,
    test_a_thread_is_busy_while_its_run_waits_for_a_slot,
    test_a_thread_s_runs_taken_by_another_replica_keep_their_order_and_delay,
    test_an_idle_replica_takes_the_runs_another_one_queued,
    test_each_replica_executes_at_most_its_own_limit,
    test_runs_past_the_limit_wait_pending_and_start_oldest_first,
    test_wait_join_and_stream_of_a_run_pending_for_a_slot,
)
from tests.service.test_runs import (  # noqa: F401
    test_background_run_join_list_get_delete,
    test_cancel_interrupts_a_running_run,
    test_interrupt_and_command_resume,
    test_stateless_runs_leave_no_thread,
    test_stream_modes,
)
from tests.service.test_store_chat import test_chat_endpoints_keep_the_thread  # noqa: F401
from tests.service.test_thread_search import (  # noqa: F401
    test_every_sort_by_of_the_sdk_orders_the_threads,
    test_values_are_matched_before_the_page_is_cut,
)
from tests.service.test_thread_ttl import (  # noqa: F401
    test_a_thread_created_with_a_ttl_is_swept_with_its_runs,
    test_bad_ttl_is_a_422_and_changes_nothing,
    test_ttl_set_by_update_and_a_busy_thread_waits,
    ttl_server,
)


@pytest.fixture(scope="module")
def db_url(mysql_databases: tuple[str, str]) -> str:
    return new_mysql_database(mysql_databases)


async def test_a_claim_waits_for_no_lock_on_another_runs_row(db_url: str) -> None:
    """MariaDB read the subqueries of the claim's UPDATE with shared locks on every run of the thread: a
    run finishing meanwhile (its row locked FOR UPDATE) deadlocked with the claim's expiry, its end was
    rolled back, and the thread stayed blocked until the run looked dead (a CI failure). The claim now
    takes no lock on another run's row."""
    async with open_checkpointer(db_url) as saver, open_db(db_url) as db:
        repo = RunRepo(db, saver.thread_status_statement, saver.thread_lock_statement)  # type: ignore[attr-defined]  # our saver
        thread_id = str(uuid.uuid4())
        await saver.aupdate_thread(thread_id, metadata={}, status="idle")  # runs are admitted on a stored thread
        admitted = [
            (await repo.admit(
                run_id=str(uuid.uuid4()), thread_id=thread_id, assistant_id="a", metadata={}, kwargs={},
                strategy="enqueue", owner=None,
            ))[0]
            for _ in range(2)
        ]
        running, pending = admitted
        assert (running.status, pending.status) == ("running", "pending")
        async with db.transaction() as finishing:  # the running run's end, not yet committed
            assert await finishing.fetchall(q.LOCK_UNFINISHED_RUN, (running.run_id,))
            assert await asyncio.wait_for(repo.claim(pending, 30), 5) is None, "the thread is busy"
        assert await repo.finish(running.run_id, "success")
        assert await repo.claim(pending, 30) == []
        assert (await repo.get(pending.run_id)).status == "running"  # type: ignore[union-attr]


async def test_a_transaction_cancelled_mid_statement_is_cancelled(db_url: str) -> None:
    """A statement cancelled mid-way closes its connection (the driver's stream is cut): the rollback and
    the thread's unlock on it then failed, and the caller got StoreUnavailable instead of its cancellation.
    The server rolls back and frees the named lock when it sees the connection go."""
    async with open_db(db_url) as db:
        started = asyncio.Event()

        async def slow() -> None:
            async with db.transaction("cancelled-thread") as tx:
                started.set()
                await tx.fetchone("SELECT SLEEP(2)")

        task = asyncio.create_task(slow())
        await started.wait()
        for _ in range(500):  # cancel once the server runs the statement, not before it was sent
            async with db.transaction("watcher") as tx:
                running = await tx.fetchone(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(2)'"
                )
            if running and running[0]:
                break
            await asyncio.sleep(0.01)
        else:
            pytest.fail("the statement never reached the server")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        async with db.transaction("cancelled-thread") as tx:  # the thread's lock is free again (once SLEEP ends)
            assert await tx.fetchone("SELECT 1") == (1,)
