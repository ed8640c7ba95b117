"""Plain HTTPS downloads of the public files, with a size cap and one-line errors.

Every address can be overridden by an environment variable (`ORECAST_WB_PINK_SHEET_URL` …), which
is how the tests point the updater at a local server instead of the internet.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request

from orecast.market.update.validate import DataError

ENV_URLS = {"worldbank": "ORECAST_WB_PINK_SHEET_URL"}
MAX_BYTES = 64 * 1024 * 1024
TIMEOUT_SECONDS = 60
USER_AGENT = "orecast-data-update (+https://pypi.org/project/orecast/)"


def source_url(source: str, default: str) -> str:
    return os.environ.get(ENV_URLS.get(source, ""), "") or default


def download(url: str) -> bytes:
    """The body of `url`; `DataError` with one line when it cannot be fetched or is too large."""
    if not url.startswith(("https://", "http://")):
        raise DataError(f"unsupported address {url!r}: use http(s)://")
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            body = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise DataError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(f"download of {url} failed: {reason}") from None
    if len(body) > MAX_BYTES:
        raise DataError(f"download of {url} is larger than {MAX_BYTES // 2**20} MiB; refused")
    return body
