"""The offline analyst streams like a network model: many message chunks for one answer."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessageChunk


async def test_graph_astream_messages_yields_token_chunks(agent: Any, thread_id: str) -> None:
    chunks: list[str] = []
    config = {"configurable": {"thread_id": thread_id}}
    async for message, meta in agent.astream(
        {"messages": [("user", "螺纹钢最新价格")]}, config, stream_mode="messages"
    ):
        if isinstance(message, AIMessageChunk) and message.content and meta.get("langgraph_node") == "model":
            chunks.append(message.content)
    assert len(chunks) > 20
    text = "".join(chunks)
    assert "螺纹钢" in text and "来源" in text
