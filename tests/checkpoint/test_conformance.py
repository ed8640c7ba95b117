"""The official LangGraph checkpointer conformance suite, on every backend, every capability."""

from __future__ import annotations

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from orecast.checkpoint import open_checkpointer
from tests.store_pool import Pool

EXPECTED = {cap.value for cap in ALL_CAPABILITIES}


def _assert_full(report) -> None:
    results = report.results
    missing = EXPECTED - {name for name, r in results.items() if r.detected}
    assert not missing, f"capabilities not detected: {sorted(missing)}"
    failures = {
        name: r.failures for name, r in results.items() if r.detected and r.passed is not True
    }
    assert not failures, f"conformance failures: {failures}"
    for name in EXPECTED:
        assert results[name].tests_passed > 0, name
        assert results[name].tests_failed == 0, name
    assert report.passed_all_base()
    assert report.passed_all()
    assert report.conformance_level() == "FULL"


async def test_conformance_sqlite(tmp_path) -> None:
    counter = iter(range(1000))

    @checkpointer_test(name="orecast-sqlite")
    async def factory():
        # A fresh database file per capability suite.
        async with open_checkpointer(f"sqlite:///{tmp_path / f'conf{next(counter)}.db'}") as s:
            yield s

    _assert_full(await validate(factory))


async def test_conformance_sqlite_memory() -> None:
    @checkpointer_test(name="orecast-sqlite-memory")
    async def factory():
        async with open_checkpointer("sqlite:///:memory:") as s:
            yield s

    _assert_full(await validate(factory))


async def test_conformance_postgres(_pg_schemas: Pool) -> None:
    @checkpointer_test(name="orecast-postgres")
    async def factory():
        # A clean store per capability suite (tests/store_pool.py).
        with _pg_schemas.lend() as url:
            async with open_checkpointer(url, pool_size=4) as s:
                yield s

    _assert_full(await validate(factory))


async def test_conformance_mysql(_mysql_pool: Pool) -> None:
    @checkpointer_test(name="orecast-mysql")
    async def factory():
        with _mysql_pool.lend() as url:
            async with open_checkpointer(url, pool_size=4) as s:
                yield s

    _assert_full(await validate(factory))
