"""`ServiceSettings`: everything `orecast serve` and `create_app` read, from arguments or `ORECAST_*` env."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from orecast.checkpoint.durations import parse_duration
from orecast.checkpoint.sweep import TtlPolicy
from orecast.service.runs.slots import DEFAULT_JOBS_PER_WORKER

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


class ServiceSettings(BaseSettings):
    """Settings of one service instance; built by the caller and passed to `create_app`.

    `api_keys` is `user:KEY[:admin],…` (env `ORECAST_API_KEYS`); empty means one local user and no auth.
    `graphs` maps an assistant/graph name to `module:attr` or `./file.py:attr`.
    """

    model_config = SettingsConfigDict(env_prefix="ORECAST_", extra="ignore")

    database_url: str | None = Field(None, description="Checkpoint store URL; default sqlite file")
    model: str | None = Field(None, description="Analyst model spec (offline, deepseek:NAME, …)")
    graphs: dict[str, str] = Field(default_factory=dict, description="Extra graphs: name → spec")
    config_file: str | None = Field(None, description="A langgraph.json whose `graphs` are served")
    analyst: bool = Field(True, description="Serve the orecast analyst as assistant `orecast`")
    api_keys: str = Field("", description="user:KEY[:admin],… ; empty = no auth")
    auth_path: str | None = Field(
        None, description="A langgraph_sdk.Auth (module:attr or ./file.py:attr); default: the config's auth.path"
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list, description="Allowed CORS origins; off if empty")
    max_body_bytes: int = Field(1_000_000, ge=1, description="Largest accepted request body")
    web_dir: str | None = Field(
        None, description="Folder of the built web page; default: the one inside the package"
    )
    cancel_poll_seconds: float = Field(
        0.25, gt=0, description="How often a run checks the database for a cancel from another process"
    )
    stale_run_seconds: float = Field(
        30.0, gt=0, description="A running run without a heartbeat this long belongs to a dead process"
    )
    jobs_per_worker: int = Field(
        DEFAULT_JOBS_PER_WORKER, ge=1,
        description="Runs one process executes at once (LangGraph's N_JOBS_PER_WORKER); more wait, pending, "
        "oldest first. Each process of `--workers` and each replica has its own",
    )
    cron_poll_seconds: float = Field(
        5.0, gt=0, description="How often the scheduler looks for due crons (every replica does)"
    )
    freeze_heap: bool = Field(
        False,
        description="After startup, keep what startup built out of the garbage collector's scans (gc.freeze); "
        "`orecast serve` turns it on: a server process's CPU per request, not tests that start many apps",
    )
    webhook_allow_private: bool = Field(
        False,
        description="Let run webhooks call loopback and private-network addresses (127.0.0.0/8, ::1, localhost, "
        "10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7); off, such a webhook is refused with a 422",
    )
    metrics_database_seconds: float = Field(
        30.0, ge=0, description="How long /metrics reuses the database's row counts and sizes"
    )

    thread_ttl: str | None = Field(
        None, description="Default thread TTL from the last activity (90d, 12h …); unset: threads never expire"
    )
    thread_ttl_strategy: Literal["delete", "keep_latest"] = Field(
        "delete", description="What the sweep does to an expired thread without a strategy of its own"
    )
    sweep_interval: str = Field(
        "10m", description="How often the service sweeps expired threads (10m, 1h …); off: never"
    )

    @field_validator("thread_ttl", mode="after")
    @classmethod
    def _check_ttl(cls, value: str | None) -> str | None:
        if value is not None and value.strip():
            parse_duration(value)
            return value
        return None

    @field_validator("sweep_interval", mode="after")
    @classmethod
    def _check_interval(cls, value: str) -> str:
        if value.strip().lower() not in ("off", "0"):
            parse_duration(value)
        return value

    def ttl_policy(self) -> TtlPolicy:
        """The default TTL of threads, as `orecast serve` and `orecast db sweep` apply it."""
        return TtlPolicy(parse_duration(self.thread_ttl) if self.thread_ttl else None, self.thread_ttl_strategy)

    def sweep_every(self) -> timedelta | None:
        """The background sweep's interval; None when it is off."""
        if self.sweep_interval.strip().lower() in ("off", "0"):
            return None
        return parse_duration(self.sweep_interval)

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        return value
