"""Crons through the SDK (`client.crons`) on a real server, on SQLite and PostgreSQL.

Nothing waits for the clock: crons get a yearly schedule (`0 0 1 1 *`, which fires on its own only at
New Year), and a test makes one due by moving its `next_run_date` into the past in the database; the
servers' schedulers poll every 20-50 ms and fire it.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError
from langgraph_sdk.schema import Cron

from orecast.service.crons import CronRecord, CronRepo, stored
from orecast.service.db import open_db
from tests.checkpoint.conftest import raw_sql
from tests.service.conftest import ECHO, ECHO_FILE, NESTED, Server, held, say, settings_for
from tests.service.test_auth_errors import new_database
from tests.service.test_custom_auth import AUTH_FILE, as_user

YEARLY = "0 0 1 1 *"
LONG_AGO = "2000-01-01T00:00:00.000000+00:00"
KEYS = "alice:key-alice,bob:key-bob,root:key-root:admin"


@pytest.fixture(scope="module")
def cron_server(db_url: str) -> Iterator[Server]:
    running = Server.start(settings_for(db_url, cron_poll_seconds=0.05))
    yield running
    running.stop()


@pytest.fixture
def cron_client(cron_server: Server) -> LangGraphClient:
    return cron_server.client()


def make_due(url: str, cron_id: str, when: str = LONG_AGO) -> None:
    """Move the cron's next firing to `when` (stored form: UTC ISO text with microseconds)."""
    mark = "?" if url.startswith("sqlite") else "%s"
    raw_sql(url, f"UPDATE service_crons SET next_run_date = {mark} WHERE cron_id = {mark}", (when, cron_id))


async def until(check, what: str, seconds: float = 15.0):
    """Poll `check()` (async) until it returns something truthy; that value."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        if found := await check():
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"never: {what}")
        await asyncio.sleep(0.02)


async def finished_runs(client: LangGraphClient, thread_id: str) -> list[dict]:
    return [r for r in await client.runs.list(thread_id) if r["status"] in ("success", "error")]


def contents(values: dict | None) -> list[str]:
    return [m["content"] for m in (values or {}).get("messages", [])]


async def test_a_thread_cron_runs_on_its_thread(cron_client: LangGraphClient, db_url: str) -> None:
    tid = (await cron_client.threads.create())["thread_id"]
    cron = await cron_client.crons.create_for_thread(
        tid, ECHO, schedule=YEARLY, input=say("iron ore forecast"), metadata={"desk": "ore"},
        context={"prefix": "forecast"},
    )
    assert set(cron) == set(Cron.__annotations__), "the SDK's Cron, field for field"
    assert cron["thread_id"] == tid and cron["schedule"] == YEARLY and cron["enabled"] is True
    assert cron["next_run_date"].endswith("-01-01T00:00:00+00:00") and cron["on_run_completed"] is None
    assert cron["metadata"] == {"desk": "ore"} and cron["end_time"] is None
    assert await cron_client.runs.list(tid) == [], "nothing runs before the cron is due"

    make_due(db_url, cron["cron_id"])
    runs = await until(lambda: finished_runs(cron_client, tid), "the cron's run ended")
    assert len(runs) == 1 and runs[0]["status"] == "success"
    assert runs[0]["metadata"]["desk"] == "ore"
    assert runs[0]["kwargs"]["config"]["configurable"]["cron_id"] == cron["cron_id"]
    values = (await cron_client.threads.get(tid))["values"]
    assert contents(values) == ["iron ore forecast", "forecast: iron ore forecast"]
    (again,) = await cron_client.crons.search(thread_id=tid)
    assert again["next_run_date"] == cron["next_run_date"], "the next firing is next New Year's"


async def test_a_stateless_cron_runs_on_a_new_thread_each_time(
    cron_client: LangGraphClient, db_url: str, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex
    kept = await cron_client.crons.create(
        ECHO, schedule=YEARLY, input=say("kept"), metadata={"tag": tag}, on_run_completed="keep"
    )
    assert kept["thread_id"] is None and kept["on_run_completed"] == "keep"
    seen: set[str] = set()
    for firing in (1, 2):
        make_due(db_url, kept["cron_id"])

        async def threads_done(n: int = firing) -> list[dict] | None:
            found = await cron_client.threads.search(metadata={"tag": tag}, status="idle", limit=10)
            done = [t for t in found if contents(t["values"]) == ["kept", "echo: kept"]]
            return done if len(done) == n else None

        seen = {t["thread_id"] for t in await until(threads_done, f"firing {firing}'s thread")}
    assert len(seen) == 2, "each firing has a thread of its own, kept"

    # its run lasts until the test has seen its thread (a run of half a second could end first)
    hold = held(tmp_path)
    deleted = await cron_client.crons.create(
        ECHO, schedule=YEARLY, input=say("gone", hold=str(hold)), metadata={"tag": tag, "gone": True}
    )
    assert deleted["on_run_completed"] == "delete", "langgraph-api's default for a stateless cron"
    make_due(db_url, deleted["cron_id"])
    await until(lambda: cron_client.threads.count(metadata={"tag": tag, "gone": True}), "the firing's thread")
    hold.unlink()
    await until(
        lambda: _none(cron_client.threads.count(metadata={"tag": tag, "gone": True})), "the thread deleted after"
    )
    assert await cron_client.threads.count(metadata={"tag": tag}) == 2, "the kept threads stay"


async def _none(count) -> bool:
    return await count == 0


async def test_search_and_count_filter_sort_and_select(cron_client: LangGraphClient) -> None:
    tag = uuid.uuid4().hex
    tid = (await cron_client.threads.create())["thread_id"]
    made = [
        await cron_client.crons.create_for_thread(tid, ECHO, schedule="0 8 * * 1-5", metadata={"tag": tag, "n": 0}),
        await cron_client.crons.create_for_thread(tid, ECHO, schedule="0 0 1 1 *", metadata={"tag": tag, "n": 1}),
        await cron_client.crons.create(NESTED, schedule="0 12 1 * *", metadata={"tag": tag, "n": 2}),
    ]
    ids = [c["cron_id"] for c in made]
    mine = {"tag": tag}
    assert [c["cron_id"] for c in await cron_client.crons.search(metadata=mine)] == ids[::-1], "newest first"
    oldest = await cron_client.crons.search(metadata=mine, sort_by="created_at", sort_order="asc")
    assert [c["cron_id"] for c in oldest] == ids
    by_date = await cron_client.crons.search(metadata=mine, sort_by="next_run_date", sort_order="asc")
    assert [c["next_run_date"] for c in by_date] == sorted(c["next_run_date"] for c in made)
    assert {c["cron_id"] for c in await cron_client.crons.search(thread_id=tid)} == set(ids[:2])
    assert [c["cron_id"] for c in await cron_client.crons.search(assistant_id=NESTED, metadata=mine)] == ids[2:]
    assert [c["cron_id"] for c in await cron_client.crons.search(metadata={"tag": tag, "n": 1})] == ids[1:2]
    page = await cron_client.crons.search(metadata=mine, limit=1, offset=1, sort_by="created_at", sort_order="asc")
    assert [c["cron_id"] for c in page] == ids[1:2]
    picked = await cron_client.crons.search(metadata=mine, select=["cron_id", "schedule"], limit=1)
    assert picked == [{"cron_id": ids[2], "schedule": "0 12 1 * *"}]
    assert await cron_client.crons.count(metadata=mine) == 3
    assert await cron_client.crons.count(thread_id=tid) == 2
    assert await cron_client.crons.count(assistant_id=ECHO, metadata=mine) == 2

    paused = await cron_client.crons.update(ids[0], enabled=False, metadata={"paused": True})
    assert paused["enabled"] is False and paused["metadata"] == {"tag": tag, "n": 0, "paused": True}
    assert [c["cron_id"] for c in await cron_client.crons.search(metadata=mine, enabled=False)] == ids[:1]
    moved = await cron_client.crons.update(ids[1], schedule="30 6 * * *")
    assert moved["schedule"] == "30 6 * * *" and moved["next_run_date"].endswith("T06:30:00+00:00")


async def test_a_timezone_reads_the_schedule_there(cron_client: LangGraphClient) -> None:
    cron = await cron_client.crons.create(ECHO, schedule="0 8 * * *", timezone="Asia/Shanghai")
    assert cron["timezone"] == "Asia/Shanghai"
    assert cron["next_run_date"].endswith("T00:00:00+00:00"), "08:00 in Shanghai is 00:00 UTC"
    await cron_client.crons.delete(cron["cron_id"])


async def test_delete_and_unknown_ids(cron_client: LangGraphClient) -> None:
    tag = uuid.uuid4().hex
    cron = await cron_client.crons.create(ECHO, schedule=YEARLY, metadata={"tag": tag})
    assert await cron_client.http.get(f"/runs/crons/{cron['cron_id']}") == cron  # as langgraph-api's GET
    await cron_client.crons.delete(cron["cron_id"])
    assert await cron_client.crons.count(metadata={"tag": tag}) == 0
    for call in (
        lambda: cron_client.http.get(f"/runs/crons/{cron['cron_id']}"),
        lambda: cron_client.crons.delete(cron["cron_id"]),
        lambda: cron_client.crons.update(cron["cron_id"], schedule=YEARLY),
        lambda: cron_client.crons.create_for_thread(str(uuid.uuid4()), ECHO, schedule=YEARLY),
        lambda: cron_client.crons.create("no-such-assistant", schedule=YEARLY),
    ):
        with pytest.raises(NotFoundError):
            await call()
    with pytest.raises(httpx.HTTPStatusError) as malformed:
        await cron_client.crons.delete("not-a-uuid")
    assert malformed.value.response.status_code == 422


async def test_a_bad_schedule_is_422(cron_client: LangGraphClient) -> None:
    tag = uuid.uuid4().hex
    for schedule in ("not a cron", "61 * * * *", "* * * * * *", ""):
        with pytest.raises(httpx.HTTPStatusError) as bad:
            await cron_client.crons.create(ECHO, schedule=schedule, metadata={"tag": tag})
        assert bad.value.response.status_code == 422, schedule
        body = bad.value.response.json()
        assert body["error"] == "invalid" and body["details"][0]["field"] == "schedule"
    with pytest.raises(httpx.HTTPStatusError) as zone:
        await cron_client.crons.create(ECHO, schedule=YEARLY, timezone="Mars/Olympus", metadata={"tag": tag})
    assert zone.value.response.status_code == 422
    cron = await cron_client.crons.create(ECHO, schedule=YEARLY, metadata={"tag": tag})
    with pytest.raises(httpx.HTTPStatusError) as update:
        await cron_client.crons.update(cron["cron_id"], schedule="every day")
    assert update.value.response.status_code == 422
    assert await cron_client.crons.count(metadata={"tag": tag}) == 1, "a refused cron is not stored"


async def test_end_time_and_disabled_stop_firing(cron_client: LangGraphClient, db_url: str) -> None:
    now = datetime.now(UTC)
    threads = [(await cron_client.threads.create())["thread_id"] for _ in range(3)]
    last = await cron_client.crons.create_for_thread(
        threads[0], ECHO, schedule=YEARLY, input=say("last"), end_time=now + timedelta(days=1)
    )
    ended = await cron_client.crons.create_for_thread(
        threads[1], ECHO, schedule=YEARLY, input=say("ended"), end_time=now - timedelta(minutes=1)
    )
    assert ended["next_run_date"] is None, "it ended before its first date"
    paused = await cron_client.crons.create_for_thread(
        threads[2], ECHO, schedule=YEARLY, input=say("paused"), enabled=False
    )
    make_due(db_url, last["cron_id"])
    # past due, but after its end: the guard in SQL, not only the date computed at creation
    make_due(db_url, ended["cron_id"], (now - timedelta(seconds=30)).isoformat(timespec="microseconds"))
    make_due(db_url, paused["cron_id"])
    await until(lambda: finished_runs(cron_client, threads[0]), "the last firing")
    (after,) = await cron_client.crons.search(thread_id=threads[0])
    assert after["next_run_date"] is None, "the next New Year is past its end: no more firings"
    await asyncio.sleep(0.5)  # ten polls: each one would have fired the others
    assert await cron_client.runs.list(threads[1]) == [] and await cron_client.runs.list(threads[2]) == []

    resumed = await cron_client.crons.update(paused["cron_id"], enabled=True)
    assert resumed["enabled"] is True and resumed["next_run_date"] is not None
    make_due(db_url, paused["cron_id"])
    await until(lambda: finished_runs(cron_client, threads[2]), "the resumed cron's firing")


async def test_deleting_a_thread_deletes_its_crons(cron_client: LangGraphClient) -> None:
    tid = (await cron_client.threads.create())["thread_id"]
    await cron_client.crons.create_for_thread(tid, ECHO, schedule=YEARLY)
    assert await cron_client.crons.count(thread_id=tid) == 1
    await cron_client.threads.delete(tid)
    assert await cron_client.crons.count(thread_id=tid) == 0


@pytest.fixture(scope="module")
def keyed(db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    url = new_database(db_url, request, tmp_path_factory)
    running = Server.start(settings_for(url, api_keys=KEYS, cron_poll_seconds=0.05))
    yield running, url
    running.stop()


async def test_a_cron_is_its_creators(keyed: tuple[Server, str]) -> None:
    server, url = keyed
    alice, bob, root = (server.client(api_key=f"key-{who}") for who in ("alice", "bob", "root"))
    tid = (await alice.threads.create())["thread_id"]
    cron = await alice.crons.create_for_thread(tid, ECHO, schedule=YEARLY, input=say("mine"))
    assert cron["user_id"] == "alice"
    assert await bob.crons.search() == [] and await bob.crons.count() == 0
    for call in (
        lambda: bob.http.get(f"/runs/crons/{cron['cron_id']}"),
        lambda: bob.crons.delete(cron["cron_id"]),
        lambda: bob.crons.update(cron["cron_id"], enabled=False),
        lambda: bob.crons.create_for_thread(tid, ECHO, schedule=YEARLY),
    ):
        with pytest.raises(NotFoundError):
            await call()
    assert [c["cron_id"] for c in await root.crons.search()] == [cron["cron_id"]], "an admin sees all"

    make_due(url, cron["cron_id"])  # it runs as alice, on her thread
    (run,) = await until(lambda: finished_runs(alice, tid), "alice's cron ran")
    assert run["status"] == "success"
    assert contents((await alice.threads.get(tid))["values"]) == ["mine", "echo: mine"]
    await alice.crons.delete(cron["cron_id"])


@pytest.fixture(scope="module")
def custom(db_url: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    url = new_database(db_url, request, tmp_path_factory)
    config = tmp_path_factory.mktemp("cfg") / "langgraph.json"
    config.write_text(json.dumps({"graphs": {ECHO: f"{ECHO_FILE}:graph"}, "auth": {"path": f"{AUTH_FILE}:auth"}}))
    running = Server.start(settings_for(url, graphs={}, analyst=False, config_file=str(config), cron_poll_seconds=0.05))
    yield running, url
    running.stop()


async def test_custom_auth_decides_on_crons(custom: tuple[Server, str]) -> None:
    server, url = custom
    alice, bob = as_user(server, "tok-alice"), as_user(server, "tok-bob")
    tid = (await alice.threads.create())["thread_id"]
    cron = await alice.crons.create_for_thread(tid, ECHO, schedule=YEARLY, input=say("hers"))
    assert cron["metadata"] == {"owner": "alice"}, "the `crons` create handler stamped it"
    mark = "?" if url.startswith("sqlite") else "%s"
    [(stored,)] = raw_sql(url, f"SELECT auth_user FROM service_crons WHERE cron_id = {mark}", (cron["cron_id"],))
    assert "alice" in str(stored) and "alice-upstream-secret" not in str(stored), "its user's identity, no secret"
    assert await bob.crons.search() == [] and await bob.crons.count() == 0
    with pytest.raises(NotFoundError):
        await bob.crons.delete(cron["cron_id"])
    make_due(url, cron["cron_id"])  # runs as alice: her thread's handlers let her
    await until(lambda: finished_runs(alice, tid), "alice's cron ran")
    assert contents((await alice.threads.get(tid))["values"]) == ["hers", "echo: hers"]


async def test_two_schedulers_fire_a_due_cron_once(db_url: str) -> None:
    url = db_url  # the module's server, if started, is one more replica on it
    replicas = [Server.start(settings_for(url, cron_poll_seconds=0.02)) for _ in range(2)]
    try:
        client = get_client(url=replicas[0].url)
        threads = [(await client.threads.create())["thread_id"] for _ in range(5)]
        crons = [await client.crons.create_for_thread(t, ECHO, schedule=YEARLY, input=say("once")) for t in threads]
        for cron in crons:  # all due at once: both replicas find all of them on their next poll
            make_due(url, cron["cron_id"])
        for tid in threads:
            await until(lambda t=tid: finished_runs(client, t), "the firing")
        await asyncio.sleep(0.5)  # 25 polls of each replica
        for tid in threads:
            assert len(await client.runs.list(tid)) == 1, "one firing, one run"
            assert contents((await client.threads.get(tid))["values"]) == ["once", "echo: once"]
    finally:
        for replica in replicas:
            replica.stop()


async def test_one_claim_of_a_firing_wins(db_url: str) -> None:
    """The claim itself, from two connections (pools) at once: of the callers that read the same
    date, exactly one moves it on. The date is not yet due, so that the schedulers of this module's
    servers, polling the same database, leave the row to the test (one fired it first in CI)."""
    due = CronRecord(
        cron_id=str(uuid.uuid4()), assistant_id="a", thread_id=None, owner=None, auth_user=None,
        schedule=YEARLY, timezone=None, end_time=None, next_run_date=stored(datetime(2099, 1, 1, tzinfo=UTC)),
        payload={}, metadata={},
        on_run_completed="delete", enabled=True, created_at=LONG_AGO, updated_at=LONG_AGO,
    )
    following = stored(datetime(2100, 1, 1, tzinfo=UTC))
    async with open_db(db_url) as first, open_db(db_url) as second:
        await CronRepo(first).insert(due)
        repos = [CronRepo(first), CronRepo(second)] * 4
        claims = await asyncio.gather(*(repo.claim(due, following) for repo in repos))
        assert claims.count(True) == 1
        assert (await CronRepo(second).require(due.cron_id)).next_run_date == following
        await CronRepo(first).delete(due.cron_id)
