"""State upcasting: a graph's state schema version, and the functions that bring older values up to it.

    REPORTS_V2 = StateSchema(version=2, upcasters={(1, "reports"): reports_1_to_2})
    graph = builder.compile(checkpointer=saver.with_state_schema(REPORTS_V2))

Every checkpoint row records the version of the graph that wrote it (`checkpoints.schema_version`). A
channel value is stored once per channel version and shared by the later checkpoints that did not
change the channel, so a checkpoint written at version 2 may still refer to a value written at
version 1: such checkpoints name those channels in `OLDER_VALUES` of their stored document. On every
read a value older than the schema goes through the upcasters `(N, channel)` for N, N+1, … in turn.
`orecast db migrate-state` rewrites the stored values, after which reads have nothing to upcast.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Upcaster = Callable[[Any], Any]
# In a stored checkpoint document: {channel: version} of the values it refers to that were written by
# an older state schema than the checkpoint's own (absent when there are none).
OLDER_VALUES = "older_values"
# In a stored checkpoint document: {task_id: version} of the tasks whose pending writes a state schema
# other than the checkpoint's wrote (an older graph's interrupt, resumed by a newer one).
WRITE_VERSIONS = "write_versions"


class StateVersionError(Exception):
    """A checkpoint holds a value written by a newer state schema than the reading graph's."""


@dataclass(frozen=True)
class StateSchema:
    """A graph's state schema version and its upcasters.

    `upcasters[(n, channel)]` takes a value of `channel` as version `n` stored it and returns it as
    version n+1 has it. It gets a private copy (editing it in place is fine) and should accept a value
    that already has the new shape (a read racing `orecast db migrate-state` may hand it one). Values of
    a channel with no upcaster for a step pass through that step unchanged.
    """

    version: int = 1
    upcasters: Mapping[tuple[int, str], Upcaster] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self.version) is not int or self.version < 1:
            raise ValueError(f"state schema version must be an int >= 1, got {self.version!r}")
        for key, upcaster in self.upcasters.items():
            if (
                not isinstance(key, tuple)
                or len(key) != 2
                or type(key[0]) is not int
                or not isinstance(key[1], str)
            ):
                raise ValueError(f"an upcaster key is (version, channel), got {key!r}")
            if not 1 <= key[0] < self.version:
                raise ValueError(
                    f"upcaster {key!r} upgrades from version {key[0]}, outside 1..{self.version - 1}"
                )
            if not callable(upcaster):
                raise ValueError(f"upcaster {key!r} is not callable")
        object.__setattr__(self, "upcasters", dict(self.upcasters))

    @property
    def channels(self) -> frozenset[str]:
        return frozenset(channel for _version, channel in self.upcasters)

    def needs_upcast(self, channel: str, stored_version: int) -> bool:
        """Whether a value of `channel` written at `stored_version` changes on the way to `version`."""
        self.check(channel, stored_version)
        return any((n, channel) in self.upcasters for n in range(stored_version, self.version))

    def check(self, channel: str, stored_version: int) -> None:
        if stored_version > self.version:
            raise StateVersionError(
                f"channel {channel!r} was written by state schema version {stored_version}, newer than this "
                f"graph's {self.version}: run the newer agent, or upgrade this one"
            )

    def upcast(self, channel: str, value: Any, stored_version: int) -> Any:
        """`value` of `channel`, written at `stored_version`, as this schema's version has it.

        The upcasters work on a deep copy: `value` (often an object the saver's cache shares between
        reads) is never changed.
        """
        if not self.needs_upcast(channel, stored_version):
            return value
        value = copy.deepcopy(value)
        for n in range(stored_version, self.version):
            upcaster = self.upcasters.get((n, channel))
            if upcaster is not None:
                value = upcaster(value)
        return value


def value_versions(schema_version: int, document: Mapping[str, Any]) -> dict[str, int]:
    """{channel: version that wrote its value} for a stored checkpoint document of `schema_version`."""
    older = document.get(OLDER_VALUES) or {}
    return {channel: int(older.get(channel, schema_version)) for channel in document.get("channel_versions", {})}
