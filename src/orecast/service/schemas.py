"""Request bodies, field for field as the LangGraph SDKs send them (unknown fields are ignored, as the SDK
adds new ones over time); responses are the SDK's TypedDicts built in the service modules."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from orecast.checkpoint.ids import UnstorableId, check_document

StreamMode = Literal[
    "values", "messages", "updates", "events", "tasks", "checkpoints", "debug", "custom",
    "messages-tuple",
]

T = TypeVar("T")
# The largest page offset taken: an offset past what a 64-bit integer holds was a 500 (SQLite's
# OverflowError), and no store holds 2**62 rows to page through.
MAX_OFFSET = 2**62
# The longest TTL taken (a century, in minutes): a longer one overflowed Python's timedelta (a 500).
MAX_TTL_MINUTES = 100 * 366 * 24 * 60
# The longest `after_seconds` taken (a year): 1e300 or Infinity was taken, and the run then waited
# pending for ever, holding up every later run of its thread (enqueue). Later than that is a cron's job.
MAX_AFTER_SECONDS = 366 * 24 * 3600
# What a search's (or runs.list's) `select` may name: the SDK's `*SelectField`s, and the fields of
# ours the SDK does not list; anything else is a 422, as langgraph-api answers.
AssistantField = Literal[
    "assistant_id", "graph_id", "name", "description", "config", "context", "created_at", "updated_at",
    "metadata", "version",
]
ThreadField = Literal[
    "thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "config", "context", "status",
    "values", "interrupts", "error",
]
RunField = Literal[
    "run_id", "thread_id", "assistant_id", "created_at", "updated_at", "status", "metadata", "kwargs",
    "multitask_strategy", "cancel_reason",
]
CronField = Literal[
    "cron_id", "assistant_id", "thread_id", "end_time", "schedule", "timezone", "created_at", "updated_at",
    "user_id", "payload", "next_run_date", "metadata", "now", "on_run_completed", "enabled",
]


def _keepable(value: T, info: ValidationInfo) -> T:
    """`value` when every backend keeps it alike; a NUL character or a lone surrogate in a key or a
    string was stored by SQLite and MySQL but refused by PostgreSQL (metadata, names, store values)."""
    try:
        check_document(value, info.field_name or "value")
    except UnstorableId as exc:
        raise PydanticCustomError("unstorable", str(exc)) from None
    return value


# Metadata (and a filter on it), a name, a store item's value: refused with a 422 before anything
# is read or written, on every backend, when the store could not keep it as it is.
Metadata = Annotated[dict[str, Any] | None, AfterValidator(_keepable)]
Text = Annotated[str | None, AfterValidator(_keepable)]


# The shape LangGraph gives a `config` (RunnableConfig): a `configurable` of a list (say) was taken, and
# every run with it (or with an assistant created with it) was a 500 merging it.
_CONFIG_SHAPE: dict[str, tuple[type, str]] = {
    "configurable": (dict, "an object"), "metadata": (dict, "an object"), "tags": (list, "a list of strings"),
    "recursion_limit": (int, "an integer"), "run_name": (str, "a string"),
}


def _runnable_config(value: dict[str, Any] | None) -> dict[str, Any] | None:
    for key, (kind, said) in _CONFIG_SHAPE.items():
        item = (value or {}).get(key)
        wrong = item is not None and (not isinstance(item, kind) or isinstance(item, bool))
        if wrong or (key == "tags" and item and not all(isinstance(tag, str) for tag in item)):
            raise PydanticCustomError("config", f"config.{key} must be {said}")
    return value


RunnableConfigBody = Annotated[dict[str, Any] | None, AfterValidator(_runnable_config)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


def selected(items: list[dict[str, Any]], select: Sequence[str] | None) -> list[dict[str, Any]]:
    """A search's `select`: only those fields of each item (all without one)."""
    if not select:
        return items
    return [{k: item[k] for k in select if k in item} for item in items]


def paginated(page: list[T], offset: int, limit: int) -> tuple[list[T], dict[str, str]]:
    """A search's page and langgraph-api's pagination headers, from `page` read with one item past
    `limit` (present: there is a next page). The SDKs read `X-Pagination-Next` as the next offset
    (`assistants.search(response_format="object")["next"]`)."""
    if len(page) > limit:
        return page[:limit], {"X-Pagination-Total": str(offset + limit + 1), "X-Pagination-Next": str(offset + limit)}
    return page, {"X-Pagination-Total": str(offset + len(page))}


class AssistantCreate(_Body):
    graph_id: str = Field(description="A served graph")
    assistant_id: Text = None
    config: RunnableConfigBody = None
    context: dict[str, Any] | None = None
    metadata: Metadata = None
    if_exists: Literal["raise", "do_nothing"] | None = None
    name: Text = None
    description: Text = None


class AssistantUpdate(_Body):
    graph_id: str | None = None
    config: RunnableConfigBody = None
    context: dict[str, Any] | None = None
    metadata: Metadata = None
    name: Text = None
    description: Text = None


class AssistantVersions(_Body):
    """`assistants.get_versions`: the versions whose metadata contains `metadata`, newest first."""

    metadata: Metadata = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class AssistantLatest(_Body):
    version: int = Field(ge=1, description="The version the assistant becomes again")


class AssistantSearch(_Body):
    metadata: Metadata = None
    graph_id: str | None = None
    name: Text = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)
    sort_by: Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[AssistantField] | None = Field(None, description="Return only these fields")


class ThreadTtl(_Body):
    """The Agent Server's thread TTL: minutes from the thread's last activity, and what happens then."""

    ttl: float = Field(gt=0, le=MAX_TTL_MINUTES, description="Minutes of idleness after which the thread expires")
    strategy: Literal["delete", "keep_latest"] = "delete"


class CommandBody(_Body):
    resume: Any = None
    update: Any = None
    goto: Any = None


class StateUpdateSpec(_Body):
    """One update of a superstep: `values` (or a `command`) written as if `as_node` returned it."""

    values: Any = None
    command: CommandBody | None = None
    as_node: str


class Superstep(_Body):
    updates: list[StateUpdateSpec]


class ThreadCreate(_Body):
    thread_id: str | None = None
    metadata: Metadata = None
    if_exists: Literal["raise", "do_nothing"] | None = None
    ttl: ThreadTtl | None = None
    supersteps: list[Superstep] | None = Field(
        None, description="State updates applied to the new thread, one superstep after the other"
    )


class ThreadPrune(_Body):
    thread_ids: list[str] = Field(max_length=1000)
    strategy: Literal["delete", "keep_latest"] = "delete"


class ThreadUpdate(_Body):
    metadata: Annotated[dict[str, Any], AfterValidator(_keepable)] = Field(default_factory=dict)
    ttl: ThreadTtl | None = None


# `extract` of a thread search, as langgraph-api takes it: aliases are identifiers that do not shadow
# a thread's fields, paths start at one of these fields
EXTRACT_ROOTS = ("values", "metadata", "config", "interrupts")
EXTRACT_MAX_PATHS = 10
THREAD_FIELDS = {"thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "config", "status",
                 "values", "interrupts", "error", "extracted"}
_ALIAS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ThreadSearch(_Body):
    metadata: Metadata = None
    values: dict[str, Any] | None = None
    ids: list[str] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)
    sort_by: Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"] | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[ThreadField] | None = Field(None, description="Return only these fields")
    extract: dict[str, str] | None = Field(
        None, description="alias → path (`values.messages[-1].content`): each thread gets `extracted`"
    )

    @field_validator("extract")
    @classmethod
    def _check_extract(cls, extract: dict[str, str] | None) -> dict[str, str] | None:
        if not extract:
            return extract
        if len(extract) > EXTRACT_MAX_PATHS:
            raise ValueError(f"at most {EXTRACT_MAX_PATHS} paths, not {len(extract)}")
        for alias, path in extract.items():
            if not _ALIAS.match(alias) or alias in THREAD_FIELDS:
                raise ValueError(f"{alias!r} is not an identifier, or is a thread's field")
            if re.split(r"[.\[]", path, maxsplit=1)[0] not in EXTRACT_ROOTS:
                raise ValueError(f"path {path!r} must start with one of {', '.join(EXTRACT_ROOTS)}")
        return extract


class ThreadCount(_Body):
    metadata: Metadata = None
    values: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None


class CheckpointRef(_Body):
    thread_id: str | None = None
    checkpoint_ns: str = ""
    checkpoint_id: str | None = None
    checkpoint_map: dict[str, Any] | None = None


class StateAt(_Body):
    checkpoint: CheckpointRef
    subgraphs: bool = False


class StateUpdate(_Body):
    values: Any = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: CheckpointRef | None = None


class HistoryQuery(_Body):
    limit: int = Field(10, ge=1, le=1000)
    before: CheckpointRef | str | None = None
    metadata: Metadata = None
    checkpoint: CheckpointRef | None = None

    @field_validator("before", mode="before")
    @classmethod
    def _config_form(cls, value: Any) -> Any:
        """The JS SDK types `before` as a config (`{"configurable": {"checkpoint_id": …}}`), as langgraph-api
        takes it: read as a checkpoint with no id, it was dropped and the history read from its head."""
        if isinstance(value, dict) and isinstance(value.get("configurable"), dict):
            return value["configurable"]
        return value


class _WithWebhook(_Body):
    """A body that may name a `webhook` (runs, crons): the finished run is POSTed there. The URL is
    checked when the run or cron is created (`Webhooks.check`: it resolves the host)."""

    webhook: str | None = Field(None, description="POST the run here once it has ended")


class RunCreate(_WithWebhook):
    assistant_id: str = Field(description="An assistant id or a served graph's name")
    input: Any = None
    command: CommandBody | None = None
    config: RunnableConfigBody = None
    context: dict[str, Any] | None = None
    metadata: Metadata = None
    stream_mode: StreamMode | list[StreamMode] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    checkpoint: CheckpointRef | None = None
    checkpoint_id: str | None = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] | None = None
    on_completion: Literal["delete", "keep"] | None = None
    durability: Literal["sync", "async", "exit"] | None = None
    after_seconds: float | None = Field(
        None, ge=0, le=MAX_AFTER_SECONDS, allow_inf_nan=False, description="Start the run this many seconds later"
    )

    def modes(self) -> list[str]:
        return [self.stream_mode] if isinstance(self.stream_mode, str) else list(self.stream_mode)


class _CronFields(_WithWebhook):
    """What a cron's create and update both take: when it ends, and the run each firing starts."""

    timezone: str | None = None
    end_time: datetime | None = None
    on_run_completed: Literal["delete", "keep"] | None = None
    input: Any = None
    config: RunnableConfigBody = None
    context: dict[str, Any] | None = None
    metadata: Metadata = None
    interrupt_before: Literal["*"] | list[str] | None = None
    interrupt_after: Literal["*"] | list[str] | None = None
    stream_mode: StreamMode | list[StreamMode] | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None


class CronCreate(_CronFields):
    """A cron's body (`crons.create_for_thread`, `crons.create`): a schedule and the run it starts."""

    assistant_id: str = Field(description="An assistant id or a served graph's name")
    schedule: str = Field(description="5-field cron expression, UTC unless `timezone`")
    enabled: bool = True
    multitask_strategy: Literal["reject", "interrupt", "rollback", "enqueue"] | None = None


class CronUpdate(_CronFields):
    """`crons.update`: what is given changes (`end_time: null` removes the end)."""

    schedule: str | None = None
    enabled: bool | None = None


class CronCount(_Body):
    assistant_id: str | None = None
    thread_id: str | None = None
    enabled: bool | None = None
    metadata: Metadata = None


class CronSearch(CronCount):
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)
    sort_by: Literal[
        "cron_id", "assistant_id", "thread_id", "created_at", "updated_at", "next_run_date", "end_time"
    ] | None = None
    sort_order: Literal["asc", "desc"] | None = None
    select: list[CronField] | None = Field(None, description="Return only these fields")


class CancelMany(_Body):
    thread_id: str | None = None
    run_ids: list[str] | None = None
    status: Literal["pending", "running", "all"] | None = None


class StorePut(_Body):
    namespace: list[str]
    key: str
    value: Annotated[dict[str, Any], AfterValidator(_keepable)]
    index: Any = None
    ttl: float | None = Field(None, gt=0, le=MAX_TTL_MINUTES, description="Minutes until the item expires")


class StoreDelete(_Body):
    namespace: list[str]
    key: str


class StoreSearch(_Body):
    namespace_prefix: list[str] = Field(default_factory=list)
    filter: dict[str, Any] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)
    query: str | None = None
    refresh_ttl: bool | None = None


class StoreNamespaces(_Body):
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = Field(None, ge=1)
    limit: int = Field(100, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class ChatRequest(_Body):
    message: str = Field(min_length=1, description="The user's message")
    thread_id: str | None = Field(None, description="Continue this conversation; new one if absent")


class ChatReply(BaseModel):
    reply: str
    thread_id: str
