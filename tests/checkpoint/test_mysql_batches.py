"""MySQL: a put or put_writes is one batch of statements, with items numbered by the saver.

What the batch must still guarantee: a write against a stale thread (deleted and re-created elsewhere,
or with items numbered elsewhere meanwhile) stores nothing and starts again; an item stored before this
process saw it is found by its hash; a write cancelled while its batch waits on the server is rolled
back, not committed later by the server.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

import asyncmy
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from orecast.checkpoint import base, open_checkpointer
from orecast.checkpoint.mysql import saver as mysql_saver
from orecast.checkpoint.mysql.saver import MysqlCheckpointer, connect_kwargs
from tests.checkpoint.conftest import raw_sql
from tests.checkpoint.graphs import human, tool_loop
from tests.checkpoint.test_graphs import assert_same_as_memory
from tests.checkpoint.test_item_pages import _chat, cfg, items_numbered_meanwhile_elsewhere
from tests.checkpoint.test_upcast import V2, write_v1_thread


def _items(url: str, thread_id: str) -> list[tuple[int, str]]:
    return raw_sql(
        url,
        "SELECT item_no, JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.content')) FROM items "
        "WHERE thread_id = %s ORDER BY item_no",
        (thread_id,),
    )


async def test_a_turn_is_one_round_trip_per_write(clean_mysql_url: str, monkeypatch) -> None:
    """Once the saver knows a thread, each put and put_writes is one round trip: no statement of its
    own for BEGIN, COMMIT, the item numbers or the thread's row."""
    sent: list[str] = []
    inside: list[bool] = []  # a group of one statement runs it through `batch`: counted once
    for name in ("execute", "executemany", "fetchone", "fetchall", "fetch_prepared", "batch", "group"):
        original = getattr(mysql_saver._Db, name)

        async def call(self: Any, sql: Any, *args: Any, _name: str = name, _original: Any = original) -> Any:
            if not inside:
                if _name == "group":
                    words = ["group:"] + [s.split()[0] for write in sql for s, _params in write]
                elif _name == "batch":
                    words = [s.split()[0] for s, _params in sql]
                else:
                    words = [sql.split()[0]]
                sent.append(" ".join(words))
            inside.append(True)
            try:
                return await _original(self, sql, *args)
            finally:
                inside.pop()

        monkeypatch.setattr(mysql_saver._Db, name, call)
    async with open_checkpointer(clean_mysql_url) as saver:
        await _chat(saver, "counted", 1)
        sent.clear()
        messages = await _chat(saver, "counted", 1, start=1)
    assert len(messages) == 8
    # The state read at the start (one statement: the checkpoint with its values and pending writes),
    # the final aget_state (one), and between them only groups: 5 puts and 4 put_writes, each in one
    # (the thread's next write may join its last one's group, groups.py), each beginning with the
    # thread's row (a put_writes that numbers no items and refers to none would be a single INSERT:
    # this graph's all refer to items).
    assert sent.count("SELECT") == 2, sent
    groups = [s for s in sent if s.startswith("group: UPDATE SET ")]
    assert len(sent) == 2 + len(groups), sent
    assert sum(g.count("UPDATE SET ") for g in groups) == 9, groups


async def test_items_numbered_meanwhile_elsewhere(clean_mysql_url: str) -> None:
    # On MySQL the batch's first statement (the thread's row) matches no row: nothing is stored.
    await items_numbered_meanwhile_elsewhere(clean_mysql_url, _items)


async def test_item_stored_before_this_process_saw_it(clean_mysql_url: str) -> None:
    """A new saver writes a message the thread already holds (same content, unknown to its cache): the
    insert fails on the item's hash, and the write is made again referring to the stored item."""
    url = clean_mysql_url
    async with open_checkpointer(url) as first:
        await _chat(first, "known", 2)
    before = _items(url, "known")
    async with open_checkpointer(url) as second:
        tup = await second.aget_tuple(cfg("known"))
        again = human(0, "question 0")  # item 1, which this read did not load (only the head's lists)
        second.items.drop("known")
        await second.aput_writes(tup.config, [("messages", [again])], task_id="task-again")
        assert not second._hash_conflicts
        pending = (await second.aget_tuple(tup.config)).pending_writes
        assert ("task-again", "messages", [again]) in pending
        ref = raw_sql(
            url, "SELECT value FROM writes WHERE thread_id = 'known' AND task_id = 'task-again'"
        )
        assert [json.loads(value) for (value,) in ref] == [[[1, 1]]]
        messages = await _chat(second, "known", 1, start=2)
    assert len(messages) == 12
    assert _items(url, "known")[: len(before)] == before
    assert len(_items(url, "known")) == len(before) + 4


async def test_thread_deleted_and_recreated_elsewhere(clean_mysql_url: str) -> None:
    """A batch against a thread another process deleted and re-created stores nothing under the old
    incarnation's numbers: the write starts again on the new thread."""
    url = clean_mysql_url
    async with open_checkpointer(url) as first, open_checkpointer(url) as second:
        await _chat(first, "reborn", 3)
        await second.adelete_thread("reborn")
        await _chat(second, "reborn", 1, start=10)  # items 1-4 of the new incarnation
        messages = await _chat(first, "reborn", 1, start=11)  # first's cache says next item 13
    assert [m.id for m in messages if m.type == "human"] == [human(10).id, human(11).id]
    numbers = _items(url, "reborn")
    assert [n for n, _ in numbers] == list(range(1, 9))
    assert raw_sql(url, "SELECT next_item FROM threads WHERE thread_id = 'reborn'") == [(9,)]


async def test_cancelled_batch_is_rolled_back(clean_mysql_url: str) -> None:
    """A write cancelled while its batch waits on a lock is killed on the server and rolled back; the
    server does not go on to COMMIT it once the lock is free."""
    url = clean_mysql_url
    async with open_checkpointer(url) as saver:
        await _chat(saver, "blocked", 1)
        tup = await saver.aget_tuple(cfg("blocked"))
        holder = await asyncmy.connect(**connect_kwargs(url), autocommit=False)
        try:
            async with holder.cursor() as cur:
                await cur.execute("SELECT 1 FROM threads WHERE thread_id = 'blocked' FOR UPDATE")
            write = asyncio.create_task(
                saver.aput_writes(tup.config, [("messages", [AIMessage("never", id="never")])], task_id="t-x")
            )
            await asyncio.sleep(0.5)
            assert not write.done()
            write.cancel()
            try:
                await write
            except asyncio.CancelledError:
                pass
        finally:
            await holder.rollback()
            holder.close()
        await asyncio.sleep(0.5)  # a batch the server still ran would have committed by now
        assert raw_sql(url, "SELECT count(*) FROM writes WHERE task_id = 't-x'") == [(0,)]
        assert [c for _n, c in _items(url, "blocked") if c == "never"] == []
        # The saver goes on, with numbers from the database.
        messages = await _chat(saver, "blocked", 1, start=1)
    assert len(messages) == 8
    numbers = _items(url, "blocked")
    assert [n for n, _ in numbers] == list(range(1, 9))


async def test_a_write_version_waits_for_migrate_state(clean_mysql_url: str) -> None:
    """A newer graph's put_writes on an older checkpoint records its version in the checkpoint's
    document within its own batch, behind the thread's row: while migrate-state holds that row (a new
    incarnation, the checkpoint re-stamped), the write waits, then starts again on the migrated
    checkpoint instead of writing back the document it read before."""
    url = clean_mysql_url
    async with open_checkpointer(url) as saver:
        await write_v1_thread(saver)
        v2 = saver.with_state_schema(V2)
        old = (await v2.aget_tuple(cfg("t"))).config  # stamped version 1
        migrated = raw_sql(
            url, "SELECT checkpoint FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = %s",
            (old["configurable"]["checkpoint_id"],),
        )[0][0]
        migrator = await asyncmy.connect(**connect_kwargs(url), autocommit=False)
        try:
            async with migrator.cursor() as cur:  # what migrate-state does first
                await cur.execute("UPDATE threads SET incarnation = 'migrated' WHERE thread_id = 't'")
                await cur.execute(
                    "UPDATE checkpoints SET schema_version = 2, checkpoint = %s "
                    "WHERE thread_id = 't' AND checkpoint_id = %s",
                    (migrated, old["configurable"]["checkpoint_id"]),
                )
            write = asyncio.create_task(
                v2.aput_writes(old, [("title", {"text": "ore"})], "task-new")  # numbers no items
            )
            await asyncio.sleep(0.5)
            assert not write.done()  # held back by the thread's row
            assert raw_sql(url, "SELECT count(*) FROM writes WHERE task_id = 'task-new'") == [(0,)]
            await migrator.commit()
            await write
        finally:
            await migrator.rollback()
            migrator.close()
        (version, document), = raw_sql(
            url, "SELECT schema_version, checkpoint FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = %s",
            (old["configurable"]["checkpoint_id"],),
        )
        assert version == 2 and "write_versions" not in json.loads(document)  # the migration stands
        pending = (await v2.aget_tuple(old)).pending_writes
        assert ("task-new", "title", {"text": "ore"}) in pending


async def test_a_write_version_is_noted_in_the_writes_batch(clean_mysql_url: str, monkeypatch) -> None:
    """The write's version reaches the checkpoint's document in the batch that stores the writes: both
    commit or neither."""
    sent: list[list[str]] = []
    original = mysql_saver._Db.group

    def group(self: Any, writes: Any) -> Any:
        for statements in writes:
            sent.append([s.split()[0] + (" checkpoints" if "checkpoints SET" in s else "") for s, _p in statements])
        return original(self, writes)

    monkeypatch.setattr(mysql_saver._Db, "group", group)
    async with open_checkpointer(clean_mysql_url) as saver:
        await write_v1_thread(saver)
        v2 = saver.with_state_schema(V2)
        old = (await v2.aget_tuple(cfg("t"))).config
        sent.clear()
        await v2.aput_writes(old, [("title", {"text": "ore"})], "task-new")  # numbers no items
        assert sent == [["UPDATE", "SET", "INSERT", "UPDATE checkpoints"]]  # one write, one transaction
        (document,), = raw_sql(
            clean_mysql_url, "SELECT checkpoint FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = %s",
            (old["configurable"]["checkpoint_id"],),
        )
        assert json.loads(document)["write_versions"] == {"task-new": 2}


HOSTILE = "it's \\ \\' \\\\' '' \" \0 \x1a \n\r\t ünïcødé 𝄞 中文 %s %(x)s ?; END; -- /*"


async def test_quoted_values_come_back_byte_for_byte(clean_mysql_url: str) -> None:
    """The saver quotes string parameters itself (`_quoted`): quotes, backslashes, NUL, control
    characters, non-BMP characters and placeholder-like text are stored and read back unchanged, in
    ids as in values and metadata, and the stored JSON stays valid for MySQL's JSON functions."""
    url = clean_mysql_url
    plain = HOSTILE.replace("\0", "")  # ids.py refuses NUL in ids; stored JSON keeps it as \u0000
    thread_id = "thread " + plain
    async with open_checkpointer(url) as saver:
        graph = tool_loop(saver)
        config = {"configurable": {"thread_id": thread_id}, "metadata": {"note": plain}}
        for turn in range(2):
            await graph.ainvoke({"messages": [HumanMessage(HOSTILE + str(turn), id=f"h{turn}")]}, config)
        messages = (await graph.aget_state(config)).values["messages"]
    assert [m.content for m in messages if m.type == "human"] == [HOSTILE + "0", HOSTILE + "1"]
    assert raw_sql(url, "SELECT COUNT(*) FROM items WHERE NOT JSON_VALID(value)") == [(0,)]
    # (a string holding NUL is stored tagged, see encoding.py: compared without it)
    async with open_checkpointer(url) as saver:
        graph = tool_loop(saver)
        await graph.ainvoke({"messages": [HumanMessage(plain, id="plain")]}, config)
    stored = raw_sql(
        url,
        "SELECT JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.content')) FROM items "
        "WHERE thread_id = %s AND JSON_EXTRACT(value, '$.data.id') = 'plain'",
        (thread_id,),
    )
    assert stored == [(plain,)]
    notes = raw_sql(
        url, "SELECT JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.note')) FROM checkpoints WHERE thread_id = %s",
        (thread_id,),
    )
    assert notes and {note for (note,) in notes} == {plain}


async def test_escaped_parameters_are_the_literals_the_server_reads_back(clean_mysql_url: str) -> None:
    """A write's parameters, escaped all at once (`_Db._escaped`), are each the literal `_literal` makes
    of it, and the server reads each back as the value it was (strings with quotes, backslashes, NUL
    and non-BMP characters; ints, NULL, the saver's naive UTC timestamps, and what the driver escapes)."""
    params = {
        "hostile": HOSTILE,
        "plain": "checkpoint 1f0-abc",
        "empty": "",
        "json": json.dumps({"a": 'say "hi" \\ there'}),
        "int": -42,
        "none": None,
        "now": datetime(2026, 12, 7, 16, 30, 5, 123456),
        "whole_second": datetime(2026, 12, 7, 16, 30, 5),
        "flag": True,
        "blob": b"\x00'\\x",
    }
    async with open_checkpointer(clean_mysql_url) as saver:
        async with saver._read() as db:
            escaped = db._escaped(params)
            assert escaped == {key: db._literal(value) for key, value in params.items()}
            (row,) = await db.fetchall("SELECT " + ", ".join(escaped.values()))
    # (timestamps come back as the text of their literal, a bool as an int, bytes as text: `conversions`)
    expected = {
        **params, "now": "2026-12-07 16:30:05.123456", "whole_second": "2026-12-07 16:30:05", "flag": 1,
        "blob": params["blob"].decode(),
    }
    assert dict(zip(params, row, strict=True)) == expected


# MariaDB sends a group as one compound statement of prepared statements; MySQL 8, which has neither
# compound statements outside stored programs nor EXECUTE with literal parameters, as a batch of plain
# statements. Both are run here (on MariaDB, the MySQL way by saying the server is not MariaDB).
SERVER_KINDS = pytest.mark.parametrize("mariadb", [True, False], ids=["mariadb", "mysql-way"])


@SERVER_KINDS
async def test_concurrent_threads_share_groups(clean_mysql_url: str, monkeypatch, mariadb: bool) -> None:
    """Writes of several threads that are ready together go to the server as one group (one round
    trip, one transaction), and every thread's state comes back whole."""
    sizes: list[int] = []
    original = mysql_saver._Db.group

    def group(self: Any, writes: Any) -> Any:
        sizes.append(len(writes))
        return original(self, writes)

    monkeypatch.setattr(mysql_saver._Db, "group", group)
    async with open_checkpointer(clean_mysql_url) as saver:
        saver._mariadb = mariadb
        threads = [f"together-{i}" for i in range(6)]
        await asyncio.gather(*(_chat(saver, t, 1) for t in threads))  # each thread's first write: alone
        sizes.clear()
        results = await asyncio.gather(*(_chat(saver, t, 2, start=1) for t in threads))
    assert all(len(messages) == 12 for messages in results)
    assert max(sizes) > 1, sizes
    assert sum(sizes) == 6 * 2 * 9, sizes  # 5 puts and 4 put_writes a turn, each in one group


@SERVER_KINDS
async def test_a_failing_write_does_not_fail_its_group(clean_mysql_url: str, monkeypatch, mariadb: bool) -> None:
    """A write whose statement fails in a group (here: an item whose hash is stored already, which this
    process took for new) gets that error alone, and starts again looking hashes up; the other write
    of its group is sent again and committed."""
    groups: list[tuple[int, bool]] = []
    original = mysql_saver._Db.group

    async def group(self: Any, writes: Any) -> Any:
        try:
            result = await original(self, writes)
        except Exception:
            groups.append((len(writes), True))
            raise
        groups.append((len(writes), False))
        return result

    monkeypatch.setattr(mysql_saver._Db, "group", group)
    url = clean_mysql_url
    async with open_checkpointer(url) as saver:
        saver._mariadb = mariadb
        await _chat(saver, "known", 1)
        await _chat(saver, "other", 1)
        known = await saver.aget_tuple(cfg("known"))
        other = await saver.aget_tuple(cfg("other"))
        thread = saver.items.peek("known")
        # As if another process had stored its items meanwhile: the cache still holds as many hashes as
        # the thread has items (else it looks them up first, `knows_every_hash`), but not theirs.
        thread.by_hash = {f"elsewhere-{n}": n for n in thread.by_hash.values()}
        again = human(0, "question 0")
        fresh = AIMessage("new in other", id="fresh")
        groups.clear()
        await asyncio.gather(
            saver.aput_writes(known.config, [("messages", [again])], task_id="task-again"),
            saver.aput_writes(other.config, [("messages", [fresh])], task_id="task-fresh"),
        )
        assert (2, True) in groups, groups  # both in one group, which failed on the known item
        assert ("task-again", "messages", [again]) in (await saver.aget_tuple(known.config)).pending_writes
        assert ("task-fresh", "messages", [fresh]) in (await saver.aget_tuple(other.config)).pending_writes
    assert [c for _n, c in _items(url, "known")].count("question 0") == 1
    assert [c for _n, c in _items(url, "other")].count("new in other") == 1


@SERVER_KINDS
async def test_cancelled_write_leaves_its_group(clean_mysql_url: str, mariadb: bool) -> None:
    """A write cancelled while its group waits on the server (its thread's row locked by another
    session) rolls the group back; the group's other write is sent again and commits."""
    url = clean_mysql_url
    async with open_checkpointer(url) as saver:
        saver._mariadb = mariadb
        await _chat(saver, "a-blocked", 1)
        await _chat(saver, "b-free", 1)
        blocked = await saver.aget_tuple(cfg("a-blocked"))
        free = await saver.aget_tuple(cfg("b-free"))
        holder = await asyncmy.connect(**connect_kwargs(url), autocommit=False)
        try:
            async with holder.cursor() as cur:
                await cur.execute("SELECT 1 FROM threads WHERE thread_id = 'a-blocked' FOR UPDATE")
            # Ready in the same pass: one group, in which "a-blocked" (the lower id) goes first and waits.
            stuck = asyncio.create_task(
                saver.aput_writes(blocked.config, [("messages", [AIMessage("never", id="never")])], task_id="t-a")
            )
            other = asyncio.create_task(
                saver.aput_writes(free.config, [("messages", [AIMessage("kept", id="kept")])], task_id="t-b")
            )
            await asyncio.sleep(0.5)
            assert not stuck.done() and not other.done()
            stuck.cancel()
            try:
                await stuck
            except asyncio.CancelledError:
                pass
            await asyncio.wait_for(other, 10)  # sent again without the cancelled write
        finally:
            await holder.rollback()
            holder.close()
        await asyncio.sleep(0.5)
        assert raw_sql(url, "SELECT count(*) FROM writes WHERE task_id = 't-a'") == [(0,)]
        assert raw_sql(url, "SELECT count(*) FROM writes WHERE task_id = 't-b'") == [(1,)]
        messages = await _chat(saver, "a-blocked", 1, start=1)
    assert len(messages) == 8
    assert [c for _n, c in _items(url, "b-free")].count("kept") == 1


async def test_a_read_looks_up_the_versions_its_statement_did_not_match(
    clean_mysql_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """aget_tuple reads a checkpoint and its writes in one statement; a document that keeps no values in
    "vals" (here: a store written before migration 008, its documents' versions left padded, so the
    migration leaves them as they are, the values' short) has its values looked up after it through the
    versions it names, and the state is the same. Written with "vals", the same thread reads in one
    statement."""
    reference = tool_loop(InMemorySaver())
    monkeypatch.setattr(base, "with_short_versions", lambda checkpoint: checkpoint)
    async with open_checkpointer(clean_mysql_url) as saver:
        graph = tool_loop(saver)
        monkeypatch.setattr(MysqlCheckpointer, "inline_values", False)  # every value a row, no "vals"
        for turn in range(2):
            for g in (graph, reference):
                await g.ainvoke({"messages": [human(turn)]}, cfg("padded"))
        monkeypatch.setattr(MysqlCheckpointer, "inline_values", True)
        reads: list[str] = []
        for name in ("fetchall", "fetch_prepared"):  # (MariaDB: the checkpoint's read is prepared)
            original = getattr(mysql_saver._Db, name)

            async def fetch(self: Any, sql: str, *args: Any, _original: Any = original) -> Any:
                reads.append(sql)
                return await _original(self, sql, *args)

            monkeypatch.setattr(mysql_saver._Db, name, fetch)
        tup = await saver.aget_tuple(cfg("padded"))
        assert all(len(v) == 49 for v in tup.checkpoint["channel_versions"].values())
        # the checkpoint and its writes, then its values
        assert [r.split()[:2] for r in reads] == [["SELECT", "c.checkpoint_id,"], ["SELECT", "0"]], reads
        await assert_same_as_memory(graph, reference, "padded")
        # The next turn is written with "vals": its checkpoint reads alone.
        for g in (graph, reference):
            await g.ainvoke({"messages": [human(2)]}, cfg("padded"))
        reads.clear()
        await saver.aget_tuple(cfg("padded"))
        assert [r.split()[:2] for r in reads] == [["SELECT", "c.checkpoint_id,"]], reads
        await assert_same_as_memory(graph, reference, "padded")



async def test_a_group_answers_only_when_a_write_matched_nothing(clean_mysql_url: str, monkeypatch) -> None:
    """On MariaDB a group's compound statement sends its writes' answers (a result set) only when one
    of them matched no row: a group whose writes all matched answers with its end alone (one packet).
    A stale write (its thread deleted and re-created by another process) in a group with a good one
    gets its 0 and starts again on the new thread; the other write commits."""
    answers: list[list[int]] = []
    original = mysql_saver._Db.group

    async def group(self: Any, writes: Any) -> Any:
        result = await original(self, writes)
        answers.append(result)
        return result

    monkeypatch.setattr(mysql_saver._Db, "group", group)
    url = clean_mysql_url
    async with open_checkpointer(url) as first, open_checkpointer(url) as second:
        await _chat(first, "a-reborn", 1)
        await _chat(first, "b-kept", 1)
        reborn = await first.aget_tuple(cfg("a-reborn"))
        kept = await first.aget_tuple(cfg("b-kept"))
        await second.adelete_thread("a-reborn")
        await _chat(second, "a-reborn", 1, start=10)
        answers.clear()
        await asyncio.gather(  # new messages: each write numbers an item, so it checks the thread's row
            first.aput_writes(reborn.config, [("messages", [AIMessage("late", id="late")])], task_id="t-a"),
            first.aput_writes(kept.config, [("messages", [AIMessage("kept", id="kept")])], task_id="t-b"),
        )
        assert answers[0] == [0, 1], answers  # one group; the stale write (the lower id goes first) told apart
        assert all(n > 0 for result in answers[1:] for n in result), answers  # the stale one, again
        assert ("t-b", "messages", [AIMessage("kept", id="kept")]) in (await first.aget_tuple(kept.config)).pending_writes
        messages = await _chat(first, "a-reborn", 1, start=11)
    assert [m.id for m in messages if m.type == "human"] == [human(10).id, human(11).id]
    assert [c for _n, c in _items(url, "b-kept")].count("kept") == 1
    assert [c for _n, c in _items(url, "a-reborn")].count("late") == 1  # stored once, in the new thread


async def test_a_write_failed_with_an_earlier_one_looks_hashes_up_on_its_retry(clean_mysql_url: str) -> None:
    """Two writes of a thread whose item numbers another process took meanwhile, queued one after the
    other: the first matches nothing, the second fails with it. The first's retry makes the thread known
    again with only the hashes it looked up; the second's retry then takes a stored message for new,
    fails on its hash, and is made once more, looking hashes up: both are stored, each item once."""
    url = clean_mysql_url
    async with open_checkpointer(url) as first, open_checkpointer(url) as second:
        await _chat(first, "shared", 2)
        await _chat(second, "shared", 2, start=2)  # items 9-16, unknown to `first`
        tup = await first.aget_tuple(cfg("shared"))
        first.items.peek("shared").next_item = 9  # as if read before `second` wrote
        late = AIMessage(content="a late write", id="late")
        again = human(0, "question 0")  # item 1, stored
        await asyncio.gather(
            first.aput_writes(tup.config, [("messages", [late])], task_id="task-late"),
            first.aput_writes(tup.config, [("messages", [again])], task_id="task-again"),
        )
        pending = (await first.aget_tuple(tup.config)).pending_writes
        assert ("task-late", "messages", [late]) in pending
        assert ("task-again", "messages", [again]) in pending
    contents = [c for _n, c in _items(url, "shared")]
    assert contents.count("question 0") == 1 and contents.count("a late write") == 1


async def test_a_fan_out_of_many_tasks_forms_its_groups_in_linear_time(clean_mysql_url: str) -> None:
    """2000 tasks of one step (LangGraph's `Send` fan-out) write to one checkpoint at once: forming each
    group compared every queued write of the thread with every write already in the group, and took
    13 s of the event loop's CPU (0.3 s for 500 tasks; 1 s for 1000): every other call of the process
    waited meanwhile."""
    import time

    async with open_checkpointer(clean_mysql_url) as saver:
        await tool_loop(saver).ainvoke({"messages": [human(0)]}, cfg("fan"))
        head = (await saver.aget_tuple(cfg("fan"))).config
        started = time.process_time()
        await asyncio.gather(
            *(saver.aput_writes(head, [("messages", [AIMessage(f"r{i}", id=f"r{i}")])], f"task-{i}") for i in range(2000))
        )
        spent = time.process_time() - started
        assert len((await saver.aget_tuple(head)).pending_writes) == 2000
        assert spent < 6, f"{spent:.1f} s of CPU for 2000 writes"
