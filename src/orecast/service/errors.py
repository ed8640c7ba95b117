"""Service errors and the one place that turns them (and FastAPI's own) into HTTP responses.

Body shape: `{"detail": "...", "error": "not_found", "message": "...", "details": ...}`. `detail` is
langgraph-api's own (its clients print it); `error`, `message` and `details` add a stable code and,
for a malformed body, every field with its reason.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from langgraph.store.base import InvalidNamespaceError
from starlette.exceptions import HTTPException as StarletteHTTPException

from orecast.checkpoint.errors import StoreError, StoreTimeout, StoreUnavailable
from orecast.checkpoint.ids import UnstorableId

log = logging.getLogger("orecast.service")
# What a 503 for an unreachable or overloaded database tells clients to wait before trying again.
RETRY_AFTER_SECONDS = 5
# PostgreSQL's errors for a NUL character in jsonb (untranslatable_character, character_not_in_repertoire)
NUL_SQLSTATES = ("22P05", "22021")
# FastAPI's 400 for a body it could not read as JSON values (fastapi.routing: any error but a decode error)
BODY_UNREADABLE = "There was an error parsing the body"


class ServiceError(Exception):
    """An expected failure of a request; `status` and `code` say which."""

    status = 400
    code = "bad_request"

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(ServiceError):
    status, code = 404, "not_found"


class Conflict(ServiceError):
    status, code = 409, "conflict"


class Unauthorized(ServiceError):
    status, code = 401, "unauthorized"


class Forbidden(ServiceError):
    status, code = 403, "forbidden"


class Invalid(ServiceError):
    status, code = 422, "invalid"


class TooLarge(ServiceError):
    status, code = 413, "too_large"


class RunFailed(ServiceError):
    status, code = 500, "run_failed"


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"detail": message, "error": code, "message": message, "details": details}


def _field(loc: Any) -> str:
    # pydantic adds the union member it tried (`literal[...]`, `list[...]`) to the path: not a field
    parts = [str(p) for p in loc if p not in ("body", "query", "path") and not _is_tag(p)]
    return ".".join(parts)


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or "(" in part or part.startswith("function-"))


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    details: list[dict[str, Any]] = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":  # its `loc` is a character position, not a field
            cause = (error.get("ctx") or {}).get("error")
            item = {"field": "body", "reason": "invalid JSON" + (f" ({cause})" if cause else "")}
        else:
            item = {"field": _field(error["loc"]), "reason": error["msg"]}
        if item not in details:
            details.append(item)
    return details


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves as one JSON shape; anything unexpected is a 500 with a fixed text."""

    @app.exception_handler(ServiceError)
    async def _service(_: Request, exc: ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(
            error_body(exc.code, exc.message, exc.details), exc.status, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = _validation_details(exc)
        first = details[0] if details else {"field": "", "reason": "invalid"}
        message = f"{first['field'] or 'body'}: {first['reason']}"
        return JSONResponse(error_body("invalid", message, details), 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == BODY_UNREADABLE:
            # JSON that parses as text but not as values: nested past Python's recursion limit, or an
            # integer past its 4,300 digits. Malformed JSON is a 422 (`body: invalid JSON`): so is this.
            reason = "invalid JSON (nested too deeply, or a number too long)"
            return JSONResponse(error_body("invalid", f"body: {reason}", [{"field": "body", "reason": reason}]), 422)
        code = "not_found" if exc.status_code == 404 else "http_error"
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code)

    @app.exception_handler(StoreError)
    async def _store(_: Request, exc: StoreError) -> JSONResponse:
        # The database's doing, not the caller's: a client may try again (`Retry-After`), and nothing
        # half-done was kept. The message is the store's one line, which never carries a secret.
        if isinstance(exc, StoreUnavailable | StoreTimeout):
            code = "database_unavailable" if isinstance(exc, StoreUnavailable) else "database_timeout"
            log.warning("%s: %s", code, exc)
            return JSONResponse(error_body(code, str(exc)), 503, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
        log.error("database error: %s", exc)
        return JSONResponse(error_body("database_error", str(exc)), 500)

    @app.exception_handler(UnstorableId)
    async def _unstorable_id(_: Request, exc: UnstorableId) -> JSONResponse:
        # an id with a NUL (say) in a path or a body: the store cannot keep it, nor can it name a thread
        return JSONResponse(error_body("invalid", str(exc)), 422)

    @app.exception_handler(UnicodeEncodeError)
    async def _not_unicode(request: Request, exc: UnicodeEncodeError) -> JSONResponse:
        # JSON's "\ud800" alone decodes to a lone surrogate, which no UTF-8 text (a store's) can hold
        if exc.reason != "surrogates not allowed":
            return await _unexpected(request, exc)
        return JSONResponse(error_body("invalid", "text holds a lone surrogate (as \\ud800 alone): not Unicode "
                                                  "text that can be stored"), 422)

    @app.exception_handler(InvalidNamespaceError)
    async def _bad_namespace(_: Request, exc: InvalidNamespaceError) -> JSONResponse:
        return JSONResponse(error_body("invalid", str(exc)), 422)  # the store's check of a client's labels

    @app.exception_handler(psycopg.DataError)
    async def _not_postgres_text(request: Request, exc: psycopg.DataError) -> JSONResponse:
        # A client's "\u0000" in JSON (a key, metadata): PostgreSQL's text and jsonb hold no NUL character,
        # which psycopg refuses to send (a key) or the server to take (in jsonb). Any other: the server's.
        if exc.sqlstate not in NUL_SQLSTATES and "NUL (0x00)" not in str(exc):
            return await _unexpected(request, exc)
        return JSONResponse(error_body("invalid", "text holds a NUL character (\\u0000), which PostgreSQL "
                                                  "cannot store"), 422)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error", exc_info=exc)
        return JSONResponse(error_body("internal", "internal server error"), 500)
