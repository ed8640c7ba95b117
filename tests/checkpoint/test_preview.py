"""A thread's preview is the first 200 characters of its last message's text, whitespace collapsed.

`message_text` takes shortcuts (the text's head alone, when it is printable and has no run of spaces);
each must give what collapsing the whole text gives.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from orecast.checkpoint.core import PREVIEW_CHARS, message_text


def collapsed(text: str) -> str | None:
    return " ".join(text.replace("\x00", " ").split())[:PREVIEW_CHARS] or None


WORDS = "the price of iron ore rose over the quarter while volume stayed flat " * 6

TEXTS = [
    WORDS,
    WORDS[:PREVIEW_CHARS],  # exactly 200 characters
    WORDS[:PREVIEW_CHARS - 1] + " ",  # a space at 200, nothing after it
    "x" * (PREVIEW_CHARS - 1) + " " + "y" * 50,  # a space at 200, a word after it
    "x" * PREVIEW_CHARS + " " + "   ",  # a space just after the head, then only spaces
    "x" * (PREVIEW_CHARS - 1) + "  " + "y" * 50,  # a run of spaces across the head's end
    " " + WORDS,  # a leading space
    "a  b" + WORDS,  # a run of spaces
    "a\tb\nc\r\nd" + WORDS,  # other whitespace
    "a\u00a0b\u3000c" + WORDS,  # non-ASCII spaces
    "a\x00b" + WORDS,  # NUL
    "铁矿石价格" * 60,  # no spaces at all
    "铁矿石 价格 " * 60,
    "   \n\t  ",
    "",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_preview_is_the_collapsed_text(text: str) -> None:
    for message in (HumanMessage(content=text), AIMessage(content=text)):
        assert message_text(message) == collapsed(text)


def test_preview_of_a_tool_call_without_text() -> None:
    message = AIMessage(content="", tool_calls=[{"name": "get_price", "args": {}, "id": "c1", "type": "tool_call"}])
    assert message_text(message) == "→ get_price"
