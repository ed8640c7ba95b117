"""Which checkpoints a prune keeps: the policy's, plus everything a kept checkpoint needs to load and go on.

A prune keeps, per namespace, the newest `keep_last` checkpoints (1 with `keep_latest`) and, with
`older_than`, every checkpoint newer than that. Then, whatever the policy says, it keeps

* a **pending interrupt**: a checkpoint holding an interrupt write and no child yet (a run waits there);
* a **DeltaChannel chain**: a kept checkpoint whose DeltaChannel value is not stored at it is rebuilt from
  the writes of its ancestors back to the nearest stored value (the seed): those ancestors stay;
* a **branch point**: a checkpoint from which kept checkpoints descend on two or more branches (a fork
  the user made), so the history of what was kept stays one tree.

The namespace's newest checkpoint is always kept, so a prune never takes a thread's current state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from orecast.checkpoint.core import version_key

Key = tuple[str, str]  # (checkpoint_ns, checkpoint_id)


@dataclass(frozen=True)
class PrunePolicy:
    """What a prune may delete; `keep_last` per namespace (≥ 1), `older_than` an aware datetime."""

    keep_last: int = 1
    older_than: datetime | None = None

    def __post_init__(self) -> None:
        if self.keep_last < 1:
            raise ValueError("keep_last must be at least 1: a prune never deletes a thread's current state")
        if self.older_than is not None and self.older_than.tzinfo is None:
            raise ValueError("older_than must be an aware datetime (checkpoint times are UTC)")


@dataclass(frozen=True)
class Node:
    """One stored checkpoint, as much of it as the plan needs."""

    ns: str
    id: str
    parent_id: str | None
    ts: datetime | None
    versions: Mapping[str, str | int | float]
    delta_channels: frozenset[str]  # channels LangGraph rebuilds from writes (DeltaChannel)
    interrupted: bool = False  # holds an interrupt write

    @property
    def key(self) -> Key:
        return (self.ns, self.id)


@dataclass
class PruneResult:
    """What a prune of one thread deleted (or, with `dry_run`, would delete)."""

    thread_id: str
    dry_run: bool
    checkpoints_kept: int = 0
    checkpoints_deleted: int = 0
    writes_deleted: int = 0
    values_deleted: int = 0
    items_deleted: int = 0
    bytes_freed: int = 0  # payload bytes (JSON text and blobs) of the rows deleted
    deleted: list[Key] = field(default_factory=list)
    # Kept beyond the policy, and why: "interrupt", "delta", "branch".
    protected: dict[str, int] = field(default_factory=dict)


def plan(nodes: Iterable[Node], populated: set[tuple[str, str, str]], policy: PrunePolicy) -> tuple[set[Key], dict[str, int]]:
    """The checkpoints to keep, and how many were kept for each protection.

    `populated`: (ns, channel, version key) of every channel version stored with a value.
    """
    by_key = {n.key: n for n in nodes}
    children: dict[Key, list[Key]] = {}
    by_ns: dict[str, list[Node]] = {}
    for n in by_key.values():
        by_ns.setdefault(n.ns, []).append(n)
        if n.parent_id is not None and (n.ns, n.parent_id) in by_key:
            children.setdefault((n.ns, n.parent_id), []).append(n.key)
    keep: set[Key] = set()
    for ns_nodes in by_ns.values():
        ns_nodes.sort(key=lambda n: n.id, reverse=True)
        keep.update(n.key for n in ns_nodes[: policy.keep_last])
        if policy.older_than is not None:
            keep.update(n.key for n in ns_nodes if n.ts is None or n.ts >= policy.older_than)
    protected = {"interrupt": 0, "delta": 0, "branch": 0}

    def protect(key: Key, why: str) -> None:
        if key not in keep:
            keep.add(key)
            protected[why] += 1

    for n in by_key.values():
        if n.interrupted and n.key not in children:
            protect(n.key, "interrupt")
    chained: set[Key] = set()
    while True:
        size = len(keep)
        for key in sorted(keep - chained):
            chained.add(key)
            _keep_delta_chain(by_key[key], by_key, populated, protect)
        for key in _branch_points(by_key, children, keep):
            protect(key, "branch")
        if len(keep) == size:
            return keep, {k: v for k, v in protected.items() if v}


def _keep_delta_chain(node: Node, by_key: dict[Key, Node], populated: set[tuple[str, str, str]], protect) -> None:
    """Keep the ancestors `node`'s DeltaChannels are rebuilt from (as `aget_delta_channel_history` walks)."""
    open_channels = {
        ch
        for ch in node.delta_channels
        if ch in node.versions and (node.ns, ch, version_key(node.versions[ch])) not in populated
    }
    cursor = node.parent_id
    while open_channels and cursor is not None and (node.ns, cursor) in by_key:
        ancestor = by_key[(node.ns, cursor)]
        protect(ancestor.key, "delta")
        for ch in list(open_channels):
            version = ancestor.versions.get(ch)
            if version is not None and (node.ns, ch, version_key(version)) in populated:
                open_channels.discard(ch)  # the seed: its value is stored
        cursor = ancestor.parent_id


def _branch_points(by_key: dict[Key, Node], children: dict[Key, list[Key]], keep: set[Key]) -> list[Key]:
    """Checkpoints with kept checkpoints under two or more of their children."""
    holds_kept: dict[Key, bool] = {}
    # Children have larger ids than their parents: visit newest first, so children are done first.
    for key in sorted(by_key, key=lambda k: k[1], reverse=True):
        holds_kept[key] = key in keep or any(holds_kept.get(c, False) for c in children.get(key, ()))
    return [
        key
        for key, kids in children.items()
        if len(kids) > 1 and sum(holds_kept.get(c, False) for c in kids) > 1
    ]
