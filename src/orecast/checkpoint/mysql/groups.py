"""Group commit on MySQL: the puts and put_writes that are ready together share one batch.

Each put or put_writes of a thread the process knows is a list of statements that checks the thread's
row first and stores nothing when it matched no row (`queries.py`, "a put or put_writes in one round
trip"). Such lists need no transaction of their own: the writes that are ready in the same pass of the
event loop, and those that come while a group is on the server, are sent as one packet inside one
`BEGIN … COMMIT`. One round trip, one commit (one redo-log flush) and one wake-up of the server's thread
serve up to one write per thread, where each write used to pay for its own.

What a write sees does not change:
- it returns after its group committed, with the rows its own statements matched;
- a write whose statement fails (a duplicate item hash, a lock timeout, a deadlock) gets that error,
  and the others of its group, rolled back with it, are sent again without it;
- a write whose caller is cancelled before its group is sent is left out; once sent, the group's
  connection is killed, so the server rolls it back rather than committing it later, and the others
  are sent again (a group that had committed already stays committed: the statements are idempotent,
  and the write's `_write_thread` forgets the thread, see there);
- the threads' rows are locked in the order of their ids, so two processes' groups cannot deadlock
  on them.
What does change: a write waits for the other writes of its group. A group whose thread row is locked
by another session (a long maintenance transaction) holds the group's other writes until the lock is
free or times out; after `STALL_SECONDS` it no longer holds back new writes, which go in a new group.

A thread's writes queue in order (`Chain`): its lock lets the next write in once the previous one's
batch is queued here, not committed, so the next one prepares its batch meanwhile. That batch goes to
the server after the thread's earlier ones: in the same group (the server runs a group's statements in
order, the writes sorted by thread), or in a later group once those committed, never in another group
at the server alongside them. A write whose check matched nothing (its thread's items numbered by
another process meanwhile) stores nothing, and the writes prepared after it may refer to the items it
numbered: in its group, the next write of its thread checks that it matched (`after`, see queries.py);
those not sent yet fail, as they do after a write that failed or was cancelled unsent
(StaleThreadError: they start again from what is stored).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from orecast.checkpoint.cache import ThreadItems
from orecast.checkpoint.core import StaleThreadError, ThreadTurn
from orecast.checkpoint.errors import StoreError
from orecast.checkpoint.queued import Unsettled

# A group on the server for longer than this (waiting on a lock, or a large write) stops holding new
# writes back: they form the next group at once.
STALL_SECONDS = 0.05
# Groups on the server at once: with 2, one fills while the other waits for its commit (8×20: 0.29–0.41
# of floor's turns/s against 0.28–0.38 with 1, alternating on a quiet machine; docs/benchmarks.md).
IN_FLIGHT = 2
# The text of a group stays well under the servers' default max_allowed_packet (MariaDB 16 MiB, MySQL
# 64 MiB); a single write larger than this is a group of its own, as it was a batch of its own.
MAX_GROUP_CHARS = 4 << 20
CLIENT_ERRORS = 2000  # the driver's own error numbers start here; below are the server's

Statements = list[tuple[str, Any]]


def _chars(statements: Statements) -> int:
    """About the length of the statements' text (a write's statements share one dict of parameters)."""
    size = 0
    seen: set[int] = set()
    for sql, params in statements:
        size += len(sql)
        if params and id(params) not in seen:
            seen.add(id(params))
            for value in params.values() if type(params) is dict else params:
                if type(value) is str or type(value) is bytes:
                    size += len(value)
    return size


def _server_error(exc: BaseException) -> int | None:
    """The server's error number of `exc` (or of the driver error it was translated from)."""
    cause = exc.__cause__ if isinstance(exc, StoreError) and exc.__cause__ is not None else exc
    args = getattr(cause, "args", ())
    code = args[0] if args and isinstance(args[0], int) else None
    return code if code is not None and 0 < code < CLIENT_ERRORS else None


@dataclass(eq=False, slots=True)
class Chain:
    """One write of a thread (a put or a put_writes) as its batch joins the thread's queue."""

    # The cache entry the write is prepared with: marked stale if a write prepared before it fails
    entry: ThreadItems
    turn: ThreadTurn  # the thread's lock, as this write holds it: released once the batch is queued
    # The batch's first statement checks the thread's row, and nothing of it is stored if it matched none;
    # its parameter `after` says whether the write follows one of its thread in its group that checked
    checked: bool = False


class _Member:
    __slots__ = ("thread_id", "statements", "done", "chars", "group", "abandoned", "chain")

    def __init__(
        self, thread_id: str, statements: Statements, done: asyncio.Future[list[int]], chain: Chain
    ) -> None:
        self.thread_id = thread_id
        self.statements = statements
        self.done = done  # its caller's answer
        self.chars = _chars(statements)
        self.group: _Group | None = None
        self.abandoned = False  # its caller was cancelled: nobody waits for its answer
        self.chain = chain


class _Group:
    __slots__ = ("members", "task", "answered", "killed", "holding", "timer")

    def __init__(self, members: list[_Member]) -> None:
        self.members = members
        self.task: asyncio.Task[None] | None = None
        self.answered = False  # the server answered all of it: too late to take a write back
        self.killed = False  # cancelled for a member whose caller was cancelled
        self.holding = True  # still holds new writes back (see STALL_SECONDS)
        self.timer: asyncio.TimerHandle | None = None


class GroupWriter:
    """Sends the writes it is given in groups, at most IN_FLIGHT at a time (but see STALL_SECONDS).

    `connection` opens one of the saver's pooled connections (autocommit, errors turned into
    StoreErrors); its `group` runs the writes' statements in one transaction and one round trip, and
    says in `failed_write` which write's statement failed.
    """

    def __init__(self, connection: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
        self._connection = connection
        self._waiting: list[_Member] = []
        self._holding = 0  # groups on the server that new writes wait for
        self._scheduled = False
        # The event loop of the writes (a saver serves one). Kept: in Python 3.11 each
        # asyncio.get_running_loop() is a getpid() system call, ~4 of them per write here otherwise.
        self._loop: asyncio.AbstractEventLoop | None = None
        # Per thread, its chained writes queued and not settled yet.
        self._queued: Unsettled[str, _Member] = Unsettled()

    async def write(self, thread_id: str, statements: Statements, chain: Chain) -> list[int]:
        """Run `statements` in the next group; the rows its first statement matched, as a list of one.

        `chain`: the thread's write they are, whose queue they join (see the module's doc).
        """
        if chain.entry.stale:  # prepared after a write that failed
            raise StaleThreadError(thread_id)
        member = _Member(thread_id, statements, self._get_loop().create_future(), chain)
        self._queued.queue(thread_id, member)
        self._waiting.append(member)
        self._schedule()
        chain.turn.release()
        try:
            return await member.done
        except asyncio.CancelledError:
            # (the caller's cancellation cancels the future it waits on: the group sees it done)
            if member.done.done() and not member.done.cancelled():
                raise  # answered, cancelled meanwhile
            member.abandoned = True
            if member.group is None:
                if member in self._waiting:
                    self._waiting.remove(member)
                self._settle(member, stored=False)  # never sent
            elif member.group.task is not None and not (member.group.killed or member.group.answered):
                member.group.killed = True
                member.group.task.cancel()
                # Returns once the server has rolled the group back (its connection killed), as a
                # write of its own did.
                await asyncio.wait([member.group.task])
            raise

    async def settled(self, thread_id: str) -> None:
        """Return once every chained write of `thread_id` queued so far has committed or failed."""
        await self._queued.settled(thread_id)

    def _settle(self, member: _Member, *, stored: bool) -> None:
        """`member` has committed (`stored`) or will never run (see queued.py)."""
        self._queued.settle(member.thread_id, member, stored=stored)

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def _schedule(self) -> None:
        # The task's first step comes in the next pass of the event loop, after the writes woken in this
        # one joined: it forms the group and sends it in that step (not a callback that starts a task,
        # which cost one more pass of the loop per group).
        if self._waiting and not self._scheduled and self._holding < IN_FLIGHT:
            self._scheduled = True
            self._get_loop().create_task(self._next_group())

    async def _next_group(self) -> None:
        self._scheduled = False
        group = self._start()
        if group is not None:
            await self._send(group)

    def _start(self) -> _Group | None:
        if not self._waiting or self._holding >= IN_FLIGHT:
            return None
        members: list[_Member] = []
        held: list[_Member] = []
        in_group: dict[str, int] = {}  # per thread, how many of its writes the group holds so far
        chars = 0
        for at, member in enumerate(self._waiting):
            if member.done.done():  # its caller was cancelled (or it failed as stale): left out
                self._settle(member, stored=False)
                continue
            if members and chars + member.chars > MAX_GROUP_CHARS:
                held.extend(self._waiting[at:])
                break
            if not self._follows(member, in_group):
                held.append(member)  # after its thread's earlier writes have settled
                continue
            members.append(member)
            in_group[member.thread_id] = in_group.get(member.thread_id, 0) + 1
            chars += member.chars
        self._waiting = held
        if not members:
            return None
        checked: set[str] = set()  # threads with a write that checked the row in the group so far
        for member in members:
            if member.chain.checked:
                member.statements[0][1]["after"] = 1 if member.thread_id in checked else 0
                checked.add(member.thread_id)
        group = _Group(members)
        for member in members:
            member.group = group
        self._holding += 1
        loop = self._get_loop()
        group.timer = loop.call_later(STALL_SECONDS, self._release, group)
        group.task = asyncio.current_task(loop)
        return group

    def _follows(self, member: _Member, in_group: dict[str, int]) -> bool:
        """Whether the thread's writes queued before `member` are all in the group being formed: the
        group holds a prefix of each thread's queue (of `in_group[thread]` writes), so whether `member`
        comes right after it. (Comparing each earlier write with the group's members took 13 s of the
        event loop for a fan-out of 2000 tasks writing to one thread at once.)"""
        queued = self._queued.of(member.thread_id)
        count = in_group.get(member.thread_id, 0)
        return count < len(queued) and queued[count] is member

    def _release(self, group: _Group) -> None:
        if group.holding:
            group.holding = False
            self._holding -= 1
            self._schedule()

    async def _send(self, group: _Group) -> None:
        # Thread rows are locked in id order: no deadlock with another process's group on them.
        members = sorted(group.members, key=lambda m: m.thread_id)
        db = None
        try:
            async with self._connection() as db:
                answers = await db.group([member.statements for member in members])
                group.answered = True
        except BaseException as exc:
            self._failed(group, members, db, exc)
            if not isinstance(exc, Exception) and not group.killed:
                raise
        else:
            for member, answer in zip(members, answers, strict=True):
                if not member.abandoned and not member.done.done():
                    member.done.set_result([answer])
                self._settle(member, stored=not member.chain.checked or answer > 0)
        finally:
            # The group and its members refer to each other, and a timer that fired keeps its group:
            # unlinked here, a finished group is freed at once rather than by the cycle collector.
            if group.timer is not None:
                group.timer.cancel()
                group.timer = None
            group.members = []
            self._release(group)
            self._schedule()  # writes sent again (see `_failed`), also when the group had stalled

    def _failed(self, group: _Group, members: Sequence[_Member], db: Any, exc: BaseException) -> None:
        """Give a failed group's error to the write whose statement failed; send the others again."""
        culprit: _Member | None = None
        if not group.killed:  # (a cancelled write's group: nothing of it stays, the others go again)
            failed = db.failed_write if db is not None and _server_error(exc) is not None else None
            if failed is None:  # no connection, it broke, or BEGIN or COMMIT failed: all get the error
                self._fail_all(members, exc)
                return
            culprit = members[failed]
            if not culprit.abandoned and not culprit.done.done():
                culprit.done.set_exception(exc)
            self._settle(culprit, stored=False)
        for member in members:
            if member.abandoned:
                self._settle(member, stored=False)
        again = [m for m in members if m is not culprit and not m.abandoned and not m.done.done()]
        for member in again:
            member.group = None
        self._waiting[:0] = again

    def _fail_all(self, members: Sequence[_Member], exc: BaseException) -> None:
        for member in members:
            if not member.abandoned and not member.done.done():
                if isinstance(exc, Exception):
                    member.done.set_exception(exc)
                else:
                    member.done.cancel()
            self._settle(member, stored=False)
