"""`freeze_heap` (on in `orecast serve`): what startup built is kept out of the collector's scans."""

from __future__ import annotations

import gc
from pathlib import Path

from orecast.service import create_app
from tests.service.conftest import settings_for


async def test_freeze_heap_freezes_what_startup_built(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'orecast.sqlite3'}"
    for freeze in (False, True):
        gc.unfreeze()
        app = create_app(settings_for(url, freeze_heap=freeze, analyst=False))
        try:
            async with app.router.lifespan_context(app):
                frozen = gc.get_freeze_count()
                assert app.state.services is not None
        finally:
            gc.unfreeze()  # the rest of the test session is not a server
        if freeze:
            assert frozen > 10_000, "the modules and graphs startup loaded are frozen"
        else:
            assert frozen == 0
