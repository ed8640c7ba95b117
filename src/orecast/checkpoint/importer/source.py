"""What the importer reads from an official saver's database, whichever saver wrote it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from orecast.checkpoint.importer.decoding import RefusedValue, SafeDecoder


@dataclass(frozen=True, slots=True)
class SourceWrite:
    """One row of the official saver's writes table, still serialised."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    type_tag: str
    data: bytes | None


@dataclass(frozen=True, slots=True)
class SourceCheckpoint:
    """One checkpoint as listed; `load` decodes it."""

    ns: str
    checkpoint_id: str
    parent_id: str | None
    row: Any = None  # what the listing read of it already, when that is small (PostgreSQL's JSONB)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A thread the importer leaves out, and why (naming the checkpoint and channel at fault)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None
    what: str  # "channel 'x'", "pending write to 'x'", "the checkpoint"
    type_tag: str

    def message(self) -> str:
        where = f"checkpoint {self.checkpoint_id}" if self.checkpoint_id else "a checkpoint"
        if self.checkpoint_ns:
            where += f" (namespace {self.checkpoint_ns!r})"
        return f"thread {self.thread_id!r}: {where}: {self.what} {RefusedValue(self.type_tag)}"


@dataclass(slots=True)
class LoadedCheckpoint:
    """A checkpoint decoded as the official saver's `get_tuple` returns it (without its writes)."""

    checkpoint: dict[str, Any]  # with "id" and the "channel_values" read
    metadata: dict[str, Any]


class Source(Protocol):
    """An official saver's database, read-only."""

    description: str  # for messages: the format and the redacted location
    decoder: SafeDecoder

    async def size_bytes(self) -> int:
        """Bytes the official saver's tables take."""
        ...

    async def thread_ids(self, wanted: Collection[str] | None) -> list[str]:
        """The threads stored (those of `wanted` only, when given), sorted."""
        ...

    async def count_checkpoints(self, thread_ids: Sequence[str]) -> int: ...

    async def refusals(self, thread_ids: Sequence[str]) -> list[Refusal]:
        """Values in these threads the importer cannot read (pickles, non-msgpack serialisations)."""
        ...

    async def checkpoints(self, thread_id: str) -> list[SourceCheckpoint]:
        """A thread's checkpoints in every namespace, in the order they were written (by id)."""
        ...

    async def load(
        self, thread_id: str, checkpoint: SourceCheckpoint, stored: Collection[tuple[str, str]]
    ) -> LoadedCheckpoint:
        """Decode a checkpoint; values of the (channel, version) pairs in `stored` may be left out
        (the target has them already), except the root namespace's `messages`."""
        ...

    async def thread_writes(self, thread_id: str) -> dict[tuple[str, str], list[SourceWrite]]:
        """A thread's pending writes by (namespace, checkpoint id), still serialised, in
        (task path, task id, index) order."""
        ...

    async def aclose(self) -> None: ...
