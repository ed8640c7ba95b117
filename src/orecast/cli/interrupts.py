"""Ctrl-C and prompts for the interactive chat, both owned by the event loop.

The chat owns SIGINT through one asyncio handler for its whole life, and every prompt waits for its
line without blocking the loop. A signal then reaches the loop through its wakeup descriptor whatever
the main thread is doing, so no Ctrl-C falls into a gap between handlers: swapping Python's default
handler with asyncio's around each turn (as this code once did) lost a Ctrl-C sent right after a
cancelled turn's prompt, and `asyncio.run`'s own handler swallowed one at the first prompt.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import io
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


class Interrupted(Exception):
    """Ctrl-C while waiting: raised where the REPL awaited, instead of a KeyboardInterrupt, which
    asyncio would carry out of the event loop."""


class CtrlC:
    """The chat's SIGINT handler: Ctrl-C runs the innermost callback registered with `on`; with none,
    it cancels the whole chat (`main`), which then ends as interrupted."""

    def __init__(self, main: asyncio.Task[object] | None) -> None:
        self._main = main
        self._callbacks: list[Callable[[], None]] = []
        self.ended_chat = False

    def fire(self) -> None:
        if self._callbacks:
            self._callbacks[-1]()
        elif self._main is not None and not self._main.done():
            self.ended_chat = True
            self._main.cancel()

    @contextlib.contextmanager
    def on(self, callback: Callable[[], None]) -> Iterator[None]:
        self._callbacks.append(callback)
        try:
            yield
        finally:
            self._callbacks.remove(callback)

    async def interruptible(self, awaitable: Awaitable[T]) -> T:
        """Await `awaitable`; a Ctrl-C meanwhile cancels it and raises `Interrupted` here."""
        task = asyncio.ensure_future(awaitable)
        hit = False

        def stop() -> None:
            nonlocal hit
            hit = True
            task.cancel()

        with self.on(stop):
            try:
                return await task
            except asyncio.CancelledError:
                if hit:
                    raise Interrupted from None
                raise

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Own SIGINT while inside; only the main thread of a Unix process can, so elsewhere (a test
        driving the chat from another thread, Windows) Ctrl-C keeps its default."""
        loop = asyncio.get_running_loop()
        handled = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGINT")
        if handled:
            loop.add_signal_handler(signal.SIGINT, self.fire)
        try:
            yield
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGINT)


class LineReader:
    """Lines from stdin that a coroutine can await and Ctrl-C can cancel.

    The blocking read runs in a daemon thread, started only when a prompt needs more input, so
    nothing is read ahead of the prompts. A cancelled prompt leaves its read in flight; the next
    prompt takes what it brings. The raw descriptor is read, not `sys.stdin`'s buffer, whose lock a
    thread still blocked at exit would hold. Streams without a descriptor (a test's StringIO) never
    block and are read directly."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        try:
            self._fd: int | None = stream.fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            self._fd = None
        self._decode = codecs.getincrementaldecoder(getattr(stream, "encoding", None) or "utf-8")(
            errors="replace")
        self._buffer = ""
        self._eof = False
        self._arrived = asyncio.Event()
        self._reading = False

    async def readline(self) -> str | None:
        """One line without its newline; None at end of input."""
        if self._fd is None:
            line = self._stream.readline()
            return line.rstrip("\n") if line else None
        while "\n" not in self._buffer and not self._eof:
            if not self._reading:
                self._start_read(asyncio.get_running_loop())
            await self._arrived.wait()
            self._arrived.clear()
        if "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            return line
        line, self._buffer = self._buffer, ""
        return line or None

    def _start_read(self, loop: asyncio.AbstractEventLoop) -> None:
        fd = self._fd
        assert fd is not None
        self._reading = True

        def read() -> None:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            with contextlib.suppress(RuntimeError):  # the loop closed while we waited
                loop.call_soon_threadsafe(self._deliver, data)

        threading.Thread(target=read, name="orecast-stdin", daemon=True).start()

    def _deliver(self, data: bytes) -> None:
        self._reading = False
        if data:
            self._buffer += self._decode.decode(data)
        else:
            self._buffer += self._decode.decode(b"", final=True)
            self._eof = True
        self._arrived.set()
