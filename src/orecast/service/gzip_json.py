"""Big JSON answers gzipped for a client that takes gzip.

A thread's history repeats every checkpoint's messages, and the page reads 500 checkpoints when it
opens a conversation (`useStream`'s `fetchStateHistory`): at 60 questions of the analyst that is
153 MB, over a network link at 1 MB/s minutes. Gzipped it is 3.8 MB. Only these answers are
compressed, in a worker thread (0.65–1.0 s for 153 MB): a middleware would hold back the event
streams, and would compress the many small answers for nothing. The answer comes as bytes already
(`encode.History`): FastAPI's encoder is not run over it.
"""

from __future__ import annotations

import asyncio
import gzip

from fastapi import Request, Response

# Below this a JSON answer goes as it is: gzip's frame and the time are not worth it.
COMPRESS_MIN_BYTES = 64 * 1024
# level 9 took twice the time for 4 % less; level 1, on those 153 MB, 0.5 s against 0.65 s for 14.3 MB
# against 3.8 MB
LEVEL = 6


def takes_gzip(request: Request) -> bool:
    """Whether the client's Accept-Encoding lists gzip (and not with q=0)."""
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() == "gzip":
            return params.replace(" ", "").lower() not in {"q=0", "q=0.0", "q=0.00", "q=0.000"}
    return False


async def json_answer(request: Request, body: bytes) -> Response:
    """The JSON `body` as it is, gzipped when it is big and the client takes gzip."""
    if len(body) < COMPRESS_MIN_BYTES:
        return Response(body, media_type="application/json")
    if not takes_gzip(request):
        return Response(body, media_type="application/json", headers={"Vary": "Accept-Encoding"})
    body = await asyncio.to_thread(gzip.compress, body, LEVEL, mtime=0)
    headers = {"Vary": "Accept-Encoding", "Content-Encoding": "gzip"}
    return Response(body, media_type="application/json", headers=headers)
