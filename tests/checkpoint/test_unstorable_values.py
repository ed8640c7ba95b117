"""A value no backend can keep (a lone surrogate in a message, nesting deeper than the encoder goes) is
refused with a clear error, and the thread goes on from what was stored before it. It raised a bare
UnicodeEncodeError (from the hash of the item) and a RecursionError."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

from orecast.checkpoint import open_checkpointer
from orecast.checkpoint.encoding import UnstorableValue


def _nested(levels: int) -> list[Any]:
    outer: list[Any] = []
    inner = outer
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return outer


def _answer(question: str) -> AIMessage:
    if question == "surrogate":
        return AIMessage(content="an answer with a lone \ud800 surrogate")
    if question == "deep":
        return AIMessage(content="deep", additional_kwargs={"tree": _nested(5000)})
    return AIMessage(content=f"answer to {question}")


def _graph(saver: Any) -> Any:
    def reply(state: MessagesState) -> dict[str, Any]:
        return {"messages": [_answer(str(state["messages"][-1].content))]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize(("question", "words"), [("surrogate", "lone surrogate"), ("deep", "nested too deeply")])
async def test_an_unstorable_value_is_refused_and_the_thread_goes_on(
    store_url: str, question: str, words: str
) -> None:
    config = {"configurable": {"thread_id": "t"}}
    async with open_checkpointer(store_url) as saver:
        graph = _graph(saver)
        await graph.ainvoke({"messages": [("user", "first")]}, config)
        with pytest.raises(UnstorableValue, match=words):
            await graph.ainvoke({"messages": [("user", question)]}, config)
    async with open_checkpointer(store_url) as saver:  # what is stored, read by a new saver
        graph = _graph(saver)
        before = [m.content for m in (await graph.aget_state(config)).values["messages"]]
        assert before[:2] == ["first", "answer to first"] and "answer to" not in "".join(map(str, before[2:]))
        out = await graph.ainvoke({"messages": [("user", "again")]}, config)
        assert [m.content for m in out["messages"]][-2:] == ["again", "answer to again"]
