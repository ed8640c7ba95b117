"""LangGraph's own test suite, run with our savers as its checkpointer fixtures.

The tests come from the sdist of the *installed* langgraph version (`pip download`), cached under
`.venv/langgraph-suite/` so a re-run does not download again. Only `tests/` (and LangGraph's pytest
config and MIT licence) are kept; `orecast_savers.py` is copied in and imported at the end of its
`conftest.py`, so our savers replace LangGraph's `sync_checkpointer` / `async_checkpointer`.

    python -m tests.checkpoint.langgraph_suite.suite --backends sqlite,postgres [--strict] [-- PYTEST ARGS]

prints the pass/fail counts and the failed tests. PostgreSQL needs ORECAST_TEST_PG_URL
(`eval "$(python -m tests.pg_server ensure --export)"`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import orecast

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
LANGGRAPH_VERSION = importlib.metadata.version("langgraph")
CACHE = Path(os.environ.get("ORECAST_SUITE_CACHE") or REPO / ".venv" / "langgraph-suite")
# Fail on every saver, LangGraph's own in-memory one included: the test compares `lc_versions`
# metadata that the installed langchain-core no longer writes.
KNOWN_FAILURES = frozenset(
    {
        "tests.test_large_cases::test_weather_subgraph",
        "tests.test_large_cases_async::test_weather_subgraph",
    }
)
IMPORT_LINE = "\nfrom tests.orecast_savers import *  # noqa: E402,F401,F403  (added by orecast)\n"


def prepare(cache: Path = CACHE, version: str = LANGGRAPH_VERSION) -> Path:
    """The folder holding LangGraph's `tests/` for `version`, with our fixtures plugged in."""
    root = cache / f"langgraph-{version}"
    ready = root / ".ready"
    if not ready.exists():
        _fetch(root, version)
        ready.write_text(version + "\n")
    # Refreshed on every run: it is our file, and may have changed since the download.
    shutil.copyfile(HERE / "orecast_savers.py", root / "tests" / "orecast_savers.py")
    return root


def _fetch(root: Path, version: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             f"langgraph=={version}", "-d", tmp],
            check=True,
        )
        (sdist,) = Path(tmp).glob("langgraph-*.tar.gz")
        if root.exists():
            shutil.rmtree(root)
        prefix = f"langgraph-{version}/"
        with tarfile.open(sdist) as tar:
            members = []
            for member in tar.getmembers():
                name = member.name.removeprefix(prefix)
                if name.startswith("tests/") or name in ("pyproject.toml", "LICENSE"):
                    member.name = name
                    members.append(member)
            tar.extractall(root, members=members, filter="data")
    with open(root / "tests" / "conftest.py", "a", encoding="utf-8") as conftest:
        conftest.write(IMPORT_LINE)


@dataclass
class Outcome:
    passed: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)  # failed, then passed when run again alone

    @property
    def unexpected(self) -> list[str]:
        return [t for t in self.failed if t.split("[")[0] not in KNOWN_FAILURES]


def run(
    backends: str, *, strict: bool, pytest_args: list[str] | None = None, root: Path | None = None
) -> Outcome:
    """Run the suite on `backends` ("sqlite", "postgres", "mysql", comma-separated) in one mode.

    A few of LangGraph's tests race a `sleep` of 10 ms against the saver on a loaded machine: unexpected
    failures are run once more on their own, and those that pass then are counted as passed and flaky.
    """
    return start(backends, strict=strict, pytest_args=pytest_args, root=root).outcome()


def start(
    backends: str, *, strict: bool, pytest_args: list[str] | None = None, root: Path | None = None,
    files: list[str] | None = None, nice: int = 0,
) -> Run:
    """`run`, started in the background: `.outcome()` waits for it. `files`: LangGraph's test files to
    run (default all of `tests/`); `nice` lowers the run's CPU priority."""
    root = root or prepare()
    paths = [f"tests/{name}" for name in files] if files else ["tests"]
    return Run(root, backends, strict, [*paths, *(pytest_args or [])], nice)


class Run:
    """One pytest process over LangGraph's tests; `outcome()` waits for it, then re-runs its failures."""

    def __init__(self, root: Path, backends: str, strict: bool, args: list[str], nice: int = 0) -> None:
        self.root, self.backends, self.strict, self.nice = root, backends, strict, nice
        # Runs may go side by side: each has its own report and temporary folder.
        self.tag = (f"{os.getpid()}-{id(self):x}-{backends.replace(',', '-')}-"
                    f"{'strict' if strict else 'default'}")
        self.report = root / f"report-{self.tag}.xml"
        self.basetemp = root / f"tmp-{self.tag}"
        self.log = root / f"log-{self.tag}.txt"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(orecast.__file__).parents[1]), str(root)])
        env["ORECAST_SUITE_BACKENDS"] = backends
        env["LANGGRAPH_STRICT_MSGPACK"] = "true" if strict else "false"
        env["NO_DOCKER"] = "true"  # LangGraph's own stores and caches expect its docker services
        with open(self.log, "wb") as log:  # read back only when pytest leaves no report
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "--timeout", "120", f"--junitxml={self.report}", f"--basetemp={self.basetemp}", *args],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=(lambda: os.nice(nice)) if nice else None,
            )

    def outcome(self) -> Outcome:
        return retried(self.wait(), self.root, self.backends, self.strict, self.nice)

    def stop(self) -> None:
        """End a run nobody will wait for (the test session ended first). An interrupt, so its pytest
        still drops the database it made."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._clean()

    def wait(self) -> Outcome:
        """The run's own outcome, its failures not run again."""
        self.process.wait()
        try:
            if not self.report.exists():
                tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
                raise RuntimeError(f"LangGraph's suite left no report ({self.backends}):\n{tail}")
            return _outcome(ET.parse(self.report))
        finally:
            self._clean()

    def _clean(self) -> None:
        self.report.unlink(missing_ok=True)
        self.log.unlink(missing_ok=True)
        shutil.rmtree(self.basetemp, ignore_errors=True)


def retried(outcome: Outcome, root: Path, backends: str, strict: bool, nice: int = 0) -> Outcome:
    """`outcome` once its unexpected failures have run again on their own: those that pass then count
    as passed and flaky."""
    if outcome.unexpected:
        again = Run(root, backends, strict, [_node_id(t) for t in outcome.unexpected], nice).wait()
        outcome.flaky = [t for t in outcome.unexpected if t not in again.failed]
        outcome.failed = [t for t in outcome.failed if t not in outcome.flaky]
        outcome.passed += len(outcome.flaky)
    return outcome


def _node_id(name: str) -> str:
    module, test = name.split("::", 1)
    return f"{module.replace('.', '/')}.py::{test}"


def _outcome(tree: ET.ElementTree) -> Outcome:
    outcome = Outcome()
    for case in tree.iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome.failed.append(name)
        elif case.find("skipped") is not None:
            outcome.skipped += 1
        else:
            outcome.passed += 1
    return outcome


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--strict", action="store_true", help="LANGGRAPH_STRICT_MSGPACK=true")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args(argv)
    outcome = run(args.backends, strict=args.strict, pytest_args=args.pytest_args)
    total = outcome.passed + len(outcome.failed)
    print(f"langgraph {LANGGRAPH_VERSION} suite, {args.backends}, "
          f"{'strict' if args.strict else 'default'}: {outcome.passed} of {total} passed, "
          f"{outcome.skipped} skipped")
    for name in outcome.failed:
        print(f"  failed: {name}{'' if name in outcome.unexpected else '  (known)'}")
    for name in outcome.flaky:
        print(f"  flaky (failed, then passed alone): {name}")
    return 1 if outcome.unexpected else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
