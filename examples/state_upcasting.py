"""A thread written before a state shape change still loads, runs on, and is migrated once.

    python examples/state_upcasting.py            # uses a fresh SQLite file in a temporary directory

Version 1 of the graph kept `watchlist` as a list of symbols; version 2 keeps {"symbol", "unit"} records.
"""

from __future__ import annotations

import asyncio
import operator
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

from orecast.checkpoint import StateSchema, open_checkpointer


class State(TypedDict, total=False):
    watchlist: Annotated[list[Any], operator.add]


def watch(version: int, symbol: str):
    def node(state: State) -> dict:
        entry = symbol if version == 1 else {"symbol": symbol, "unit": "USD/t"}
        return {"watchlist": [entry]}

    builder = StateGraph(State)
    builder.add_node("watch", node)
    builder.add_edge(START, "watch")
    return builder


def watchlist_1_to_2(watchlist: list[Any]) -> list[Any]:
    # Accepts a value already in the new shape: a read may race `migrate-state`.
    return [w if isinstance(w, dict) else {"symbol": w, "unit": "USD/t"} for w in watchlist]


V2 = StateSchema(version=2, upcasters={(1, "watchlist"): watchlist_1_to_2})
THREAD = {"configurable": {"thread_id": "desk"}}


async def main(url: str) -> None:
    async with open_checkpointer(url) as saver:
        old = watch(1, "IODEX").compile(checkpointer=saver.with_state_schema(StateSchema(version=1)))
        await old.ainvoke({}, THREAD)  # the version-1 agent writes the thread

        new = watch(2, "DCE-I").compile(checkpointer=saver.with_state_schema(V2))
        print("loaded: ", (await new.aget_state(THREAD)).values["watchlist"])
        await new.ainvoke({}, THREAD)  # and runs on
        print("ran on: ", (await new.aget_state(THREAD)).values["watchlist"])

        print("stored: ", await first_watchlist(saver))  # as version 1 wrote it: upcast on read
        migration = await saver.with_state_schema(V2).amigrate_state(batch=100)
        print(f"migrated {migration.threads} thread: {migration.checkpoints} checkpoints, {migration.values} value")
        print("stored: ", await first_watchlist(saver))


async def first_watchlist(saver: Any) -> Any:
    """The oldest stored watchlist, read as stored (a saver without a state schema upcasts nothing)."""
    history = [t async for t in saver.alist(THREAD) if "watchlist" in t.checkpoint["channel_values"]]
    return history[-1].checkpoint["channel_values"]["watchlist"]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(f"sqlite:///{Path(folder) / 'upcast.sqlite3'}"))
