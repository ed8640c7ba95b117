"""The page at `/`: files of the build with the right cache headers, client-side routes, no API route
shadowed, no file outside the build handed out, and a clear page when there is no build."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import ECHO, Server
from tests.service.web.conftest import web_settings

BIG = "".join(f"export const v{i} = 'orecast {i}';\n" for i in range(3000))  # ~100 kB, as a bundle is
INDEX = '<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head></html>'


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("static")
    (root / "assets").mkdir()
    (root / "index.html").write_text(INDEX)
    (root / "assets" / "index-abc123.js").write_text("console.log('orecast')")
    (root / "favicon.svg").write_text("<svg/>")
    (root / "assets" / "big-def456.js").write_text(BIG)
    (root.parent / "secret.txt").write_text("not for the web")
    return root


@pytest.fixture(scope="module")
def site(build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    # a graph of the tests rather than the analyst: this module looks at files and routes only
    running = Server.start(web_settings(
        tmp_path_factory.mktemp("page"), web_dir=str(build), analyst=False,
        graphs={ECHO: "tests.service.echo_graph:graph"},
    ))
    with httpx.Client(base_url=running.url) as client:
        yield client
    running.stop()


def test_index_at_root_and_client_routes_revalidated(site: httpx.Client) -> None:
    for path in ("/", "/threads-view", "/t/5f0c", "/settings/keys"):
        page = site.get(path, headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        assert page.status_code == 200, path
        assert page.text == INDEX
        assert page.headers["content-type"].startswith("text/html")
        assert page.headers["cache-control"] == "no-cache"
    assert site.head("/").status_code == 200


def test_a_program_asking_for_an_unknown_route_gets_a_json_404(site: httpx.Client) -> None:
    """Only a browser's navigation turns an unknown path into the page; an API client gets what the
    Agent Server answers for an unknown route."""
    for accept in ("application/json", "*/*"):
        missing = site.get("/no/such/route", headers={"Accept": accept})
        assert missing.status_code == 404, accept
        assert "detail" in missing.json()


def test_hashed_assets_cached_for_a_year(site: httpx.Client) -> None:
    asset = site.get("/assets/index-abc123.js")
    assert asset.status_code == 200 and asset.text == "console.log('orecast')"
    assert "javascript" in asset.headers["content-type"]
    assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
    other = site.get("/favicon.svg")
    assert other.status_code == 200 and other.headers["cache-control"] == "no-cache"


def test_bundles_go_gzipped_to_a_browser_that_takes_gzip(site: httpx.Client) -> None:
    """The page's ~850 kB script went as it was built (~250 kB gzipped) to every browser."""
    with site.stream("GET", "/assets/big-def456.js", headers={"Accept-Encoding": "gzip, deflate, br"}) as zipped:
        raw = b"".join(zipped.iter_raw())
        assert zipped.headers["content-encoding"] == "gzip" and "javascript" in zipped.headers["content-type"]
        assert zipped.headers["vary"] == "Accept-Encoding"
        assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert gzip.decompress(raw).decode() == BIG and len(raw) < len(BIG) // 5
    for refused in ("identity", "gzip;q=0"):
        plain = site.get("/assets/big-def456.js", headers={"Accept-Encoding": refused})
        assert "content-encoding" not in plain.headers and plain.text == BIG, refused
    small = site.get("/assets/index-abc123.js", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers  # too small to gain anything


def test_api_routes_are_not_shadowed(site: httpx.Client) -> None:
    assert site.get("/ok").json() == {"ok": True}
    assert site.get("/info").json()["server"] == "orecast"
    assert "openapi" in site.get("/openapi.json").json()
    assert "swagger" in site.get("/docs").text.lower()
    assert site.post("/threads/search", json={}).status_code == 200
    assert site.post("/assistants/search", json={}).json()[0]["graph_id"] == ECHO
    # an unknown path under an API prefix stays a JSON 404, never the page
    for path in ("/threads/nope/nothing", "/assistants/x/y/z", "/store/whatever", "/runs/a/b/c"):
        missing = site.get(path)
        assert missing.status_code == 404, path
        assert missing.json()["error"] == "not_found"
    # a known API path with another method keeps its 405
    assert site.put("/ok").status_code == 405


def test_missing_files_and_traversal_are_404(site: httpx.Client, build: Path) -> None:
    assert site.get("/assets/index-old.js").status_code == 404
    assert site.get("/nothing.png").status_code == 404
    for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/assets/%2e%2e/%2e%2e/secret.txt", "/..%2fsecret.txt"):
        answer = site.get(path)
        assert "not for the web" not in answer.text, path
        assert answer.status_code in (200, 404), path  # 200 only as the page itself
        if answer.status_code == 200:
            assert answer.text == INDEX


def test_without_a_build_the_page_says_how_to_build_it(tmp_path: Path) -> None:
    running = Server.start(web_settings(
        tmp_path, web_dir=str(tmp_path / "empty"), analyst=False,
        graphs={ECHO: "tests.service.echo_graph:graph"},
    ))
    try:
        page = httpx.get(running.url + "/")
        assert page.status_code == 503
        assert "make web" in page.text and "/docs" in page.text
        assert httpx.get(running.url + "/ok").json() == {"ok": True}
    finally:
        running.stop()
