"""The committed page is built from the committed sources: `static/build-info.json` records the
fingerprint of `web/` that `npm run build` saw (rule: web/scripts/source-hash.mjs, docs/web.md), and
it must equal the fingerprint of `web/` now. A failure here means: run `make web` and commit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from orecast.service.routes.page import PACKAGE_STATIC

WEB = Path(__file__).resolve().parents[3] / "web"
ROOT_FILES = ("index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts")


def source_files(web: Path) -> list[str]:
    names = list(ROOT_FILES) + [
        p.relative_to(web).as_posix() for p in (web / "src").rglob("*") if p.is_file()
    ]
    return sorted(names, key=lambda n: n.encode())


def source_hash(web: Path) -> str:
    total = hashlib.sha256()
    for name in source_files(web):
        digest = hashlib.sha256((web / name).read_bytes()).hexdigest()
        total.update(f"{name}\n{digest}\n".encode())
    return total.hexdigest()


def test_committed_build_matches_web_sources() -> None:
    if not (WEB / "src").is_dir():
        pytest.skip("no web/ sources in this checkout")
    info = PACKAGE_STATIC / "build-info.json"
    assert info.is_file(), "no committed build of web/: run `make web` and commit src/orecast/service/static"
    recorded = json.loads(info.read_text())["source_sha256"]
    assert recorded == source_hash(WEB), "the committed build is older than web/'s sources: run `make web`"
    assert (PACKAGE_STATIC / "index.html").is_file()
    assert (PACKAGE_STATIC / "THIRD-PARTY-LICENSES.txt").is_file()
