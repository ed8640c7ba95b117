"""Big JSON answers gzipped for a client that takes gzip.

A thread's history repeats every checkpoint's messages, and the page reads 500 checkpoints after
each answer (`useStream`'s `fetchStateHistory`): at 60 questions of the analyst that was 56 MB, on
every answer, and over a network link at 1 MB/s about a minute. Gzipped it is 2.6 MB. Only these
answers are compressed, in a worker thread (0.4 s for 56 MB): a middleware would hold back the
event streams, and would compress the many small answers for nothing.
"""

from __future__ import annotations

import asyncio
import gzip
from typing import Any

from fastapi import Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

# Below this a JSON answer goes as it is: gzip's frame and the time are not worth it.
COMPRESS_MIN_BYTES = 64 * 1024
LEVEL = 6  # level 9 took twice the time for 4 % less


def takes_gzip(request: Request) -> bool:
    """Whether the client's Accept-Encoding lists gzip (and not with q=0)."""
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() == "gzip":
            return params.replace(" ", "").lower() not in {"q=0", "q=0.0", "q=0.00", "q=0.000"}
    return False


async def json_answer(request: Request, content: Any) -> Response:
    """`content` as FastAPI would answer it, gzipped when it is big and the client takes gzip."""
    plain = JSONResponse(jsonable_encoder(content))
    if len(plain.body) < COMPRESS_MIN_BYTES:
        return plain
    plain.headers["Vary"] = "Accept-Encoding"
    if not takes_gzip(request):
        return plain
    body = await asyncio.to_thread(gzip.compress, bytes(plain.body), LEVEL, mtime=0)
    headers = {"Vary": "Accept-Encoding", "Content-Encoding": "gzip"}
    return Response(body, media_type="application/json", headers=headers)
