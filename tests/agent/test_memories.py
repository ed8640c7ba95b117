"""Long-term memory: `/memories/` files live in LangGraph's store (here the real AsyncSqliteStore on
a file), so a note taken in one thread is read back in another — per user; other files stay in
their thread."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from orecast.agent import AgentSettings, build_agent
from orecast.agent.build import MEMORY_SECTION, system_prompt
from orecast.agent.offline import OfflineAnalyst
from orecast.checkpoint.store import open_store
from tests.agent.conftest import run_turn

NOTE = "我关注62%品位的CFR青岛价格"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[BaseStore]:
    async with open_store(f"sqlite:///{tmp_path / 'store.sqlite3'}") as opened:
        yield opened


@pytest.fixture
def remembering(settings: AgentSettings, store: BaseStore) -> Any:
    return build_agent(InMemorySaver(), model=OfflineAnalyst(), settings=settings, store=store)


def new_thread() -> str:
    return str(uuid.uuid4())


async def test_a_note_from_one_thread_is_recalled_in_another(
    remembering: Any, store: BaseStore
) -> None:
    noted = await run_turn(remembering, new_thread(), f"记住：{NOTE}")
    assert [c.name for c in noted.calls] == ["read_file", "write_file"]
    assert noted.call("write_file").args["file_path"] == "/memories/preferences.md"
    assert NOTE in noted.text

    recall = await run_turn(remembering, new_thread(), "你记得我的偏好吗？")
    assert [c.name for c in recall.calls] == ["read_file"]
    assert NOTE in recall.text
    # the one local user's memories: the store's ("memories",) namespace, key relative to /memories/
    item = await store.aget(("memories",), "/preferences.md")
    assert item is not None and item.value["content"] == f"- {NOTE}\n"


async def test_notes_add_up_and_english_works(remembering: Any, store: BaseStore) -> None:
    await run_turn(remembering, new_thread(), f"记住：{NOTE}")
    await run_turn(remembering, new_thread(), "Remember: I prefer a 6-month horizon")
    recall = await run_turn(remembering, new_thread(), "What do you remember about me?")
    assert "What I remember about you" in recall.text
    assert NOTE in recall.text and "I prefer a 6-month horizon" in recall.text


async def test_nothing_remembered_yet(remembering: Any) -> None:
    turn = await run_turn(remembering, new_thread(), "What do you remember about me?")
    assert "nothing noted about you yet" in turn.text


async def test_memories_are_per_user(remembering: Any, store: BaseStore) -> None:
    async def ask(user: str, text: str) -> str:
        config = {"configurable": {"thread_id": new_thread(), "user_id": user}}
        out = await remembering.ainvoke({"messages": [{"role": "user", "content": text}]}, config)
        return out["messages"][-1].text

    assert NOTE in await ask("alice", f"记住：{NOTE}")
    assert NOTE in await ask("alice", "你记得我的偏好吗？")
    assert NOTE not in await ask("bob", "你记得我的偏好吗？")
    # under the service's per-user root, so alice's own /store calls show them (routes/store.py)
    assert await store.aget(("users", "alice", "memories"), "/preferences.md") is not None
    assert await store.aget(("memories",), "/preferences.md") is None


async def test_other_files_stay_in_the_thread(remembering: Any, store: BaseStore) -> None:
    thread = new_thread()
    state = {
        "messages": [{"role": "user", "content": "你记得我的偏好吗？"}],
        "files": {"/draft.md": {"content": "draft", "encoding": "utf-8"}},
    }
    await remembering.ainvoke(state, {"configurable": {"thread_id": thread}})
    values = (await remembering.aget_state({"configurable": {"thread_id": thread}})).values
    assert "/draft.md" in values["files"]
    assert await store.asearch(("memories",)) == []


async def test_without_a_store_the_note_lives_in_its_thread(agent: Any) -> None:
    thread = new_thread()
    await run_turn(agent, thread, f"记住：{NOTE}")
    assert NOTE in (await run_turn(agent, thread, "你记得我的偏好吗？")).text
    assert NOTE not in (await run_turn(agent, new_thread(), "你记得我的偏好吗？")).text


def test_the_prompt_speaks_of_memories_only_with_a_store() -> None:
    assert "/memories/" in system_prompt(memories=True)
    assert MEMORY_SECTION in system_prompt(memories=True)
    assert "/memories/" not in system_prompt(memories=False)
    assert "今天是" in system_prompt(memories=False)


@pytest.fixture(params=["sqlite", "postgres"])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BaseStore]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.sqlite3'}"
    else:
        url = request.getfixturevalue("fresh_postgres_url")
    async with open_store(url) as opened:
        yield opened


@pytest.mark.parametrize(
    ("bad", "why"), [("\x00", "contains a NUL character"), ("\ud800", "is not valid Unicode")]
)
async def test_a_note_the_store_cannot_keep_is_refused_and_the_old_one_kept(
    settings: AgentSettings, any_store: BaseStore, bad: str, why: str
) -> None:
    """The /store routes answer such a value with a 422; the analyst's own write is refused alike (SQLite
    kept the NUL, PostgreSQL failed the run), the model is told why, and the note already there stays."""
    agent = build_agent(InMemorySaver(), model=OfflineAnalyst(), settings=settings, store=any_store)
    await run_turn(agent, new_thread(), f"记住：{NOTE}")
    refused = await run_turn(agent, new_thread(), f"记住：我关注{bad}品位")
    assert refused.call("write_file") is not None
    assert f"/memories/preferences.md was not saved: its content {why}" in refused.text
    item = await any_store.aget(("memories",), "/preferences.md")
    assert item is not None and item.value["content"] == f"- {NOTE}\n"
