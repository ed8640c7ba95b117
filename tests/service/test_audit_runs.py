"""Runs of the analyst through the service are audited with their run id (the service's, as the API shows it)."""

from __future__ import annotations

from orecast.checkpoint import open_checkpointer
from tests.service.conftest import say


async def test_a_runs_tool_calls_carry_its_run_id(client, db_url: str) -> None:
    tid = (await client.threads.create())["thread_id"]
    parts = [p async for p in client.runs.stream(tid, "orecast", input=say("铁矿石现在多少钱？"), stream_mode=["values"])]
    run_id = parts[0].data["run_id"]
    async with open_checkpointer(db_url) as saver:
        rows = await saver.aaudit_tool_calls(thread_id=tid)
        checkpoints = {c.config["configurable"]["checkpoint_id"] async for c in saver.alist({"configurable": {"thread_id": tid}})}
    assert rows and {r.tool for r in rows} == {"latest_price"} and {r.status for r in rows} == {"ok"}
    assert {r.run_id for r in rows} == {run_id}
    assert {r.checkpoint_id for r in rows} <= checkpoints
