"""The web page: the built files of `web/` (committed in `service/static/`) served at `/`.

Included after every API router, as a GET catch-all, so it never shadows an API route: a path the
API knows is answered by the API first, and a path under an API prefix that the API does not know
stays a JSON 404 rather than turning into the page. Any other path without a file extension is a
client-side route of the page and gets `index.html` when a browser asks for a page (`Accept:
text/html`); a program asking for it gets the JSON 404 an unknown route gets from the Agent Server.

Vite names its bundles by content hash (`assets/index-3f2a….js`), so they are cached for a year;
`index.html` is revalidated on every load, which is what makes a new build reach the browser.

Those bundles go gzipped to a browser that takes gzip: the page's script is ~850 kB as built and
~250 kB gzipped, and on a slow link (200 kB/s) it was most of the 7 s before the page showed. They are
compressed once each (they never change under their name), not by a middleware, which would hold
back the API's event streams.
"""

from __future__ import annotations

import gzip
import mimetypes
from functools import lru_cache
from pathlib import Path, PurePosixPath

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from orecast.service.errors import NotFound
from orecast.service.gzip_json import takes_gzip

router = APIRouter(include_in_schema=False)

PACKAGE_STATIC = Path(__file__).resolve().parent.parent / "static"

# First path segments that belong to the API (ours and the Agent Server's), never to the page.
API_PREFIXES = frozenset({
    "assistants", "threads", "runs", "store", "crons", "agent", "ok", "health", "info",
    "docs", "redoc", "openapi.json", "mcp", "a2a",
})
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

MISSING_BUILD = """<!doctype html><html lang="en"><meta charset="utf-8"><title>orecast</title>
<body style="font-family:sans-serif;max-width:40rem;margin:3rem auto;line-height:1.5">
<h1>orecast — 网页未构建 / the web page is not built</h1>
<p>This copy of orecast has no built web page (<code>src/orecast/service/static/</code>).
Build it with <code>make web</code> (needs Node.js and npm), or install a release of orecast, which
ships the page.</p>
<p>The API works without it: <a href="/docs">/docs</a>.</p>
</body></html>
"""


# Text worth compressing, and the size below which gzip's ~20-byte frame is not worth it.
COMPRESSIBLE = frozenset({".js", ".mjs", ".css", ".svg", ".json", ".map", ".txt", ".html"})
COMPRESS_MIN_BYTES = 1024


@lru_cache(maxsize=64)
def _gzipped(path: Path, mtime_ns: int, size: int) -> bytes:
    """The file gzipped; keyed by its modification time and size too, so a file rebuilt in place
    (a `web_dir` being developed) is compressed again."""
    return gzip.compress(path.read_bytes(), compresslevel=9, mtime=0)


def _asset(found: Path, request: Request, cache: str) -> Response:
    stat = found.stat()
    if found.suffix not in COMPRESSIBLE or stat.st_size < COMPRESS_MIN_BYTES:
        return FileResponse(found, headers={"Cache-Control": cache})
    headers = {"Cache-Control": cache, "Vary": "Accept-Encoding"}
    if not takes_gzip(request):
        return FileResponse(found, headers=headers)
    media_type = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
    body = _gzipped(found, stat.st_mtime_ns, stat.st_size)
    return Response(body, media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})


def static_dir(request: Request) -> Path:
    """The folder the page is served from: `ServiceSettings.web_dir`, else the package's build."""
    configured = request.app.state.web_dir
    return Path(configured).resolve() if configured else PACKAGE_STATIC


def _file_in(root: Path, path: str) -> Path | None:
    """`root/path` when it is a regular file inside `root` (no `..`, no symlink escaping it)."""
    parts = PurePosixPath(path).parts
    if any(p in ("..", ".") or p.startswith("\\") or ":" in p for p in parts):
        return None
    candidate = (root / path).resolve()
    if not candidate.is_relative_to(root) or not candidate.is_file():
        return None
    return candidate


@router.api_route("/{path:path}", methods=["GET", "HEAD"])
async def page(path: str, request: Request) -> Response:
    first = path.split("/", 1)[0]
    if first in API_PREFIXES:
        raise NotFound(f"no route {request.url.path}")
    root = static_dir(request)
    if path and (found := _file_in(root, path)) is not None and found.name != "index.html":
        cache = IMMUTABLE if found.parent.name == "assets" else REVALIDATE
        return _asset(found, request, cache)
    if "." in PurePosixPath(path).name:
        raise NotFound(f"no file {request.url.path}")
    if path and "text/html" not in request.headers.get("accept", ""):
        raise NotFound(f"no route {request.url.path}")
    index = root / "index.html"
    if not index.is_file():
        return HTMLResponse(MISSING_BUILD, 503, headers={"Cache-Control": REVALIDATE})
    return FileResponse(index, media_type="text/html", headers={"Cache-Control": REVALIDATE})
