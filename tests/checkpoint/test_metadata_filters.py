"""Metadata filters mean the same on both dialects (containment), and bad keys are refused on both."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from orecast.checkpoint.filters import MAX_FILTER_CONDITIONS

ROWS: dict[str, dict[str, Any]] = {
    "t1": {
        "k": 1,
        "flag": True,
        "name": 'say "hi"',
        "city": "上海",
        "n": None,
        "nested": {"a": {"b": 1, "c": 2}, "d": "x"},
        "tags": ["x", "y", 3],
    },
    "t2": {"k": True, "flag": 1, "name": "say hi", "city": "北京", "n": 0, "a": {"b": 1}, "tags": ["x"]},
    "t3": {"k": 1.0, "name": "it's", "tags": "x", "a.b": 5},
    "t4": {'a"b': 1, "a": {"b": {"c": 1}}, "k": "1"},
}

CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"k": 1}, {"t1", "t3"}),  # 1 == 1.0, never true or "1"
    ({"k": 1.0}, {"t1", "t3"}),
    ({"k": True}, {"t2"}),
    ({"k": "1"}, {"t4"}),
    ({"flag": True}, {"t1"}),
    ({"flag": 1}, {"t2"}),
    ({"name": 'say "hi"'}, {"t1"}),
    ({"name": "it's"}, {"t3"}),
    ({"city": "上海"}, {"t1"}),
    ({"n": None}, {"t1"}),  # JSON null, not a missing key
    ({"n": 0}, {"t2"}),
    ({"nested": {"a": {"b": 1}}}, {"t1"}),
    ({"nested": {"a": {"b": 1, "c": 2}, "d": "x"}}, {"t1"}),
    ({"nested": {"a": {"b": 2}}}, set()),
    ({"nested": {}}, {"t1"}),
    ({"a": {"b": 1}}, {"t2"}),
    ({"a": {"b": {}}}, {"t4"}),
    ({"a.b": 5}, {"t3"}),
    ({"tags": ["x"]}, {"t1", "t2"}),
    ({"tags": ["y", "x"]}, {"t1"}),
    ({"tags": [3]}, {"t1"}),
    ({"tags": []}, {"t1", "t2"}),
    ({"tags": "x"}, {"t3"}),
    ({"k": 1, "flag": True}, {"t1"}),
    ({"missing": 1}, set()),
]

BAD_FILTERS: list[dict[str, Any]] = [
    {'a"b': 1},
    {'a"."b': 1},
    {"": 1},
    {"a b": 1},
    {"标题": 1},
    {"$.k": 1},
    {"nested": {'a"."b': 1}},
    {"k": float("nan")},
    {"k": "nul\x00"},
    {"tags": [{"x": 1}]},
    {"k": object()},
]


async def store_rows(saver: Any) -> None:
    for thread_id, metadata in ROWS.items():
        cp = empty_checkpoint()
        await saver.aput(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}},
            cp,
            {"source": "input", "step": -1, **metadata},
            {},
        )
        await saver.aupdate_thread(thread_id, metadata=metadata)


async def test_filters_match_the_same_rows_on_both_dialects(saver) -> None:
    await store_rows(saver)
    for wanted, expected in CASES:
        threads = await saver.asearch_threads(metadata=wanted, limit=100)
        assert {t.thread_id for t in threads} == expected, wanted
        assert await saver.acount_threads(metadata=wanted) == len(expected), wanted
        checkpoints = [c async for c in saver.alist(None, filter=wanted)]
        assert {c.config["configurable"]["thread_id"] for c in checkpoints} == expected, wanted


async def test_bad_filters_are_refused_on_both_dialects(saver) -> None:
    await store_rows(saver)
    for wanted in BAD_FILTERS:
        with pytest.raises(ValueError):
            await saver.asearch_threads(metadata=wanted)
        with pytest.raises(ValueError):
            await saver.acount_threads(metadata=wanted)
        with pytest.raises(ValueError):
            [c async for c in saver.alist(None, filter=wanted)]
    assert await saver.acount_threads() == len(ROWS)


@pytest.mark.parametrize("shape", ["keys", "nested", "list"])
async def test_a_filter_of_more_conditions_than_every_dialect_runs_is_refused(saver, shape: str) -> None:
    """A filter of 5,000 keys was SQLite's 'Expression tree is too large' (a 500 in the service) and
    PostgreSQL's answer: the same filter now has the same answer everywhere. The most it holds runs."""
    def made(n: int) -> dict[str, Any]:
        if shape == "keys":
            return {f"k{i}": i for i in range(n)}
        if shape == "nested":
            return {"a": {f"k{i}": i for i in range(n)}}
        return {"tags": [f"t{i}" for i in range(n)]}

    stored = made(MAX_FILTER_CONDITIONS)
    await saver.aupdate_thread("full", metadata=stored)
    assert [t.thread_id for t in await saver.asearch_threads(metadata=stored)] == ["full"]
    assert await saver.acount_threads(metadata=stored) == 1
    assert [c async for c in saver.alist(None, filter=stored)] == []  # (a thread row without checkpoints)
    with pytest.raises(ValueError, match=f"at most {MAX_FILTER_CONDITIONS} conditions"):
        await saver.asearch_threads(metadata=made(MAX_FILTER_CONDITIONS + 1))
    with pytest.raises(ValueError, match=f"at most {MAX_FILTER_CONDITIONS} conditions"):
        [c async for c in saver.alist(None, filter=made(5000))]


async def test_a_scope_the_caller_adds_is_not_counted_in_the_cap_but_filters(saver) -> None:
    """The service adds an owner to every search of a user: a `scope`, checked as a filter and applied,
    but not counted, so the user's own filter of the most conditions allowed is still taken."""
    full = {f"k{i}": i for i in range(MAX_FILTER_CONDITIONS)}
    await saver.aupdate_thread("alices", metadata={**full, "owner": "alice"})
    await saver.aupdate_thread("bobs", metadata={**full, "owner": "bob"})
    mine = await saver.asearch_threads(metadata=full, scope={"owner": "alice"})
    assert [t.thread_id for t in mine] == ["alices"]
    assert await saver.acount_threads(metadata=full, scope={"owner": "alice"}) == 1
    with pytest.raises(ValueError, match=f"not {MAX_FILTER_CONDITIONS + 1}"):
        await saver.asearch_threads(metadata={**full, "one_more": 1}, scope={"owner": "alice"})
    with pytest.raises(ValueError, match="NUL"):
        await saver.acount_threads(metadata=full, scope={"owner": "a\x00"})
