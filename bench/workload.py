"""The chat workload: a tool-calling agent over `MessagesState`, driven by a deterministic fake model.

Adapted from the neutral harness `../shared/bench/checkpointer_bench.py` so both give the same bytes.
One user turn is one `ainvoke` that runs `agent -> tools -> agent` and appends 4 messages (~3.8 KB
serialized): a 200-char question, an AIMessage with one tool call, a ~1.5 KB JSON tool result and an
800-char answer. Text is Zipf-weighted pseudo-words, so it compresses about like prose (zlib ≈ 0.38).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph

_WORDS = (
    "the price of the index rose over the quarter while volume stayed flat and "
    "analysts expect a moderate correction before the next earnings report because "
    "input costs remain high demand is seasonal and the currency moved against "
    "exporters so margins may narrow although guidance was reaffirmed by management "
    "during the call with investors who asked about buybacks dividends and capital "
    "spending plans for new plants in several regions including europe and asia"
).split()
_SYLLABLES = (
    "ba be bi bo bu ca ce co da de di do fa fe fi ga ge go ha he hi ka ke ki ko la le li "
    "lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su ta "
    "te ti to tu va ve vi vo za ze zo str tra pre con ex in un al er ing tion ment ous ly"
).split()
SYMBOLS = ("ACME", "GLOBX", "INITECH", "UMBRL", "WAYNE", "STARK", "HOOLI", "CYBDN")


def _vocabulary(size: int = 3000) -> tuple[list[str], list[float]]:
    rng = random.Random(42)
    vocab = list(dict.fromkeys(_WORDS))
    seen = set(vocab)
    while len(vocab) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4))))
        if word not in seen:
            seen.add(word)
            vocab.append(word)
    weights, total = [], 0.0
    for rank in range(1, len(vocab) + 1):
        total += 1.0 / rank
        weights.append(total)
    return vocab, weights


_VOCAB, _CUM_WEIGHTS = _vocabulary()


def _text(rng: random.Random, n_chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < n_chars:
        for word in rng.choices(_VOCAB, cum_weights=_CUM_WEIGHTS, k=max(8, (n_chars - size) // 5)):
            words.append(word)
            size += len(word) + 1
            if size >= n_chars:
                break
    return " ".join(words)[: n_chars - 1].rstrip() + "."


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _price_table(rng: random.Random, symbol: str, target: int = 1500) -> str:
    rows: list[dict[str, Any]] = []
    doc = {"symbol": symbol, "currency": "USD", "interval": "1mo", "rows": rows}
    price, year, month = rng.uniform(20, 400), 2023, 1
    while True:
        o = round(price, 2)
        h = round(o * rng.uniform(1.0, 1.08), 2)
        lo = round(o * rng.uniform(0.92, 1.0), 2)
        c = round(rng.uniform(lo, h), 2)
        rows.append({"month": f"{year}-{month:02d}", "open": o, "high": h, "low": lo, "close": c,
                     "volume": rng.randint(100_000, 9_999_999)})
        price = c
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        text = json.dumps(doc)
        if len(text) >= target:
            return text


def make_human(thread_id: str, turn: int, seed: int = 1) -> HumanMessage:
    rng = random.Random(f"{seed}|{thread_id}|human|{turn}")
    symbol = rng.choice(SYMBOLS)
    content = (f"Turn {turn}: can you pull the monthly price history for {symbol} and tell me "
               f"what stands out? ") + _text(rng, 120)
    return HumanMessage(content=content[:200], id=_uuid(rng))


def _usage(rng: random.Random, out_tokens: int, n_messages: int) -> dict[str, int]:
    inp = 150 + 180 * n_messages + rng.randint(0, 50)
    return {"input_tokens": inp, "output_tokens": out_tokens, "total_tokens": inp + out_tokens}


async def agent(state: dict[str, Any]) -> dict[str, Any]:
    """Fake chat model: a tool call after a question, an answer after a tool result."""
    messages = state["messages"]
    last = messages[-1]
    rng = random.Random(f"agent|{len(messages)}|{last.id}")
    metadata = {"model_name": "fake-model-2025-01"}
    if isinstance(last, HumanMessage):
        symbol = next((s for s in SYMBOLS if s in last.content), "ACME")
        message = AIMessage(
            content="",
            id=f"msg_{rng.getrandbits(96):024x}",
            tool_calls=[{
                "name": "get_price_history",
                "args": {"symbol": symbol, "months": 12,
                         "fields": ["open", "high", "low", "close", "volume"]},
                "id": f"call_{rng.getrandbits(96):024x}",
                "type": "tool_call",
            }],
            response_metadata={**metadata, "finish_reason": "tool_calls",
                               "system_fingerprint": f"fp_{rng.getrandbits(40):010x}"},
            usage_metadata=_usage(rng, 32, len(messages)),
        )
    else:
        content = ("Here is what stands out in the last twelve months: " + _text(rng, 760))[:800]
        message = AIMessage(
            content=content,
            id=f"msg_{rng.getrandbits(96):024x}",
            response_metadata={**metadata, "finish_reason": "stop",
                               "system_fingerprint": f"fp_{rng.getrandbits(40):010x}"},
            usage_metadata=_usage(rng, 190, len(messages)),
        )
    return {"messages": [message]}


async def tools(state: dict[str, Any]) -> dict[str, Any]:
    out = []
    for call in state["messages"][-1].tool_calls:
        rng = random.Random(f"tool|{call['id']}")
        out.append(ToolMessage(content=_price_table(rng, call["args"]["symbol"]),
                               tool_call_id=call["id"], name=call["name"], id=_uuid(rng)))
    return {"messages": out}


def _route(state: dict[str, Any]) -> str:
    return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END


def build_graph(tools_node: Any = tools) -> StateGraph:
    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools_node)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", _route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph


async def run_turn(graph: Any, thread_id: str, turn: int, history: list[Any] | None = None,
                   durability: str | None = None) -> tuple[float, list[Any] | None]:
    """One user turn; returns its wall time in ms (and, without a checkpointer, the new history).

    With a checkpointer only the new question goes in. Without one (`history` not None) the client
    carries the whole conversation, so the graph works on state of the same size. `durability` is
    LangGraph's (None: its default, "async").
    """
    human = make_human(thread_id, turn)
    if history is None:
        options = {"durability": durability} if durability else {}
        start = time.perf_counter()
        await graph.ainvoke({"messages": [human]}, {"configurable": {"thread_id": thread_id}}, **options)
        return (time.perf_counter() - start) * 1000, None
    start = time.perf_counter()
    out = await graph.ainvoke({"messages": [*history, human]})
    return (time.perf_counter() - start) * 1000, out["messages"]


# -- the subgraph workload: a tool loop inside a subgraph, several-KB tool results -------------------


async def _sub_tools(state: dict[str, Any]) -> dict[str, Any]:
    out = []
    for call in state["messages"][-1].tool_calls:
        rng = random.Random(f"subtool|{call['id']}")
        out.append(ToolMessage(content=_price_table(rng, call["args"]["symbol"], target=SUB_TOOL_RESULT_CHARS),
                               tool_call_id=call["id"], name=call["name"], id=_uuid(rng)))
    return {"messages": out}


SUB_TOOL_RESULT_CHARS = 6000


def build_subgraph_graph() -> StateGraph:
    """The chat agent of `build_graph` as a subgraph node of a parent graph: the tool loop's checkpoints
    get a non-empty `checkpoint_ns` (`analyst:<task id>`, a new one each turn), and each tool result is
    ~6 KB of JSON. One turn appends 4 messages to the parent's `messages` (question, tool call, tool
    result, answer), as `build_graph` does."""
    outer = StateGraph(MessagesState)
    outer.add_node("analyst", build_graph(_sub_tools).compile())
    outer.add_edge(START, "analyst")
    outer.add_edge("analyst", END)
    return outer
