"""Long commands: a progress bar on stderr, and one line saying how far they got when Ctrl-C stops them.

    tally = Tally("threads")
    async def run():
        with tally.bar("restoring", len(files)) as advance:
            for file in files:
                ...
                advance()
    results = run_to_end(run(), tally, then="run the same command again to restore the rest")

Ctrl-C cancels the command's coroutine (asyncio's own SIGINT handling), so the work in flight undoes
itself as an error would (a half-imported thread is deleted, a half-written file removed) before the
line is printed and the command exits with 130.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

T = TypeVar("T")


def progress_bar(label: str, unit: str, quiet: bool = False) -> Progress:
    """A bar on stderr while a terminal watches (never in --json output or a pipe)."""
    console = Console(stderr=True)
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=quiet or not console.is_terminal,
    )


class Tally:
    """How far a long command got: its bar counts here, and `run_to_end` reports it on Ctrl-C."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.done = 0
        self.total: int | None = None
        self.started = False

    @contextlib.contextmanager
    def bar(self, label: str, total: int, quiet: bool = False) -> Iterator[Callable[[int], None]]:
        """A progress bar of `total` units; the callable it yields advances it (by 1 unless told)."""
        self.total, self.started = total, True
        with progress_bar(label, self.unit, quiet) as bar:
            task = bar.add_task(label, total=total)

            def advance(n: int = 1) -> None:
                self.done += n
                bar.advance(task, n)

            yield advance

    def counter(self) -> Callable[[int], None]:
        """Counts without a bar, for a command that finds its work as it goes (no total to show)."""
        self.started = True

        def advance(n: int = 1) -> None:
            self.done += n

        return advance

    def __str__(self) -> str:
        if not self.started:
            return "before it started"
        return f"after {self.done} {self.unit}" if self.total is None else f"after {self.done} of {self.total} {self.unit}"


def run_to_end(main: Coroutine[Any, Any, T], tally: Tally, then: str) -> T:
    """`asyncio.run(main)`; Ctrl-C ends the command with 130 and one line on stderr: how far it got
    and `then`, what finishes the job."""
    try:
        return asyncio.run(main)
    except KeyboardInterrupt:
        typer.echo(f"interrupted {tally}; {then}", err=True)
        raise typer.Exit(130) from None
