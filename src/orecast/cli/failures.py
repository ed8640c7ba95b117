"""One line for the terminal about why a turn or the store failed: no traceback, no secrets.

The model SDKs (openai, behind DeepSeek and every OpenAI-compatible server) and the database drivers
raise long, nested exceptions; what a user needs is which service, where, and what it said.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys

import httpx
import psycopg

_SECRET = re.compile(r"(sk-|Bearer\s+)[A-Za-z0-9_\-]{6,}")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return _SECRET.sub(r"\1***", line)[:300]


def _model_endpoint() -> str:
    base = (os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
            or os.environ.get("DEEPSEEK_API_BASE"))
    return f" at {base}" if base else ""


def describe_failure(exc: BaseException) -> str:
    """What went wrong, in one line, for the chat's error output."""
    # The openai SDK takes seconds to import and only a remote model loads it: while it is not loaded,
    # no exception can come from it, so the offline chat never pays for it.
    openai = sys.modules.get("openai")
    unreachable: tuple[type[BaseException], ...] = (httpx.TransportError,)
    timeout: tuple[type[BaseException], ...] = (httpx.TimeoutException,)
    if openai is not None:
        unreachable += (openai.APIConnectionError,)
        timeout += (openai.APITimeoutError,)
    if isinstance(exc, unreachable):
        kind = "timed out" if isinstance(exc, timeout) else "cannot be reached"
        return f"the model server{_model_endpoint()} {kind} ({first_line(exc)}) / 无法连接模型服务"
    if openai is not None and isinstance(exc, openai.AuthenticationError):
        return "the model server refused the API key (401); check DEEPSEEK_API_KEY / OPENAI_API_KEY"
    if openai is not None and isinstance(exc, openai.APIStatusError):
        return f"the model server answered HTTP {exc.status_code}: {first_line(exc)}"
    if isinstance(exc, psycopg.Error | sqlite3.Error):
        return f"the store failed: {first_line(exc)}"
    return f"{type(exc).__name__}: {first_line(exc)}"
