"""Which process drives a run, written on its row (`service_runs.driver`), so that a process can tell
that the one holding a run's lease is gone — an earlier process of this very server, killed (`kill -9`,
the OOM killer) or crashed — and resume the run at once, not once `stale_run_seconds` have passed.

`<space>/<pid>/<start>@<host>`. `space` names the processes this one can see: the machine's boot (Linux's
random `boot_id`, new at every boot) and this process's PID namespace (a container has its own). In
one space `pid` and `start` (the process's start in clock ticks since boot, from /proc) name one process
for ever: a later process given the same pid starts later. A run's driver is judged gone only if it is
in this process's space and no live process has its pid and its start (a zombie is not live: it runs
no code). A driver of another space (another machine, another container, an earlier boot: a replica
that may well be alive) is never judged: its runs wait for their lease to expire, as before. Where
there is no /proc (not Linux) this process has no space: it judges none and records none.
"""

from __future__ import annotations

import os
import socket
from functools import cache

BOOT_ID = "/proc/sys/kernel/random/boot_id"
PID_NAMESPACE = "/proc/self/ns/pid"


@cache
def space() -> str | None:
    """The processes this one can see (boot, PID namespace); None where /proc cannot tell."""
    try:
        with open(BOOT_ID, encoding="ascii") as file:
            boot = file.read().strip()
        namespace = os.stat(PID_NAMESPACE)
    except OSError:
        return None
    return f"{boot}:{namespace.st_dev}:{namespace.st_ino}" if boot else None


def _started(pid: int) -> tuple[str, str] | None:
    """(state, start in clock ticks since boot) of process `pid`; None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after the name, which may hold spaces and ')'
    return (fields[0], fields[19]) if len(fields) > 19 else None


@cache
def _this(pid: int) -> str | None:
    here, started = space(), _started(pid)
    if here is None or started is None:
        return None
    return f"{here}/{pid}/{started[1]}@{socket.gethostname()}"


def this_process() -> str | None:
    """This process as a run's driver (per pid: a forked worker is another process)."""
    return _this(os.getpid())


def drivers_here() -> str | None:
    """A `LIKE` pattern of the drivers of this process's space; None where it has none."""
    here = space()
    return None if here is None else f"{here}/%"


def gone(driver: str) -> bool:
    """Whether the process `driver` names is certainly gone (see the module's docstring)."""
    here = space()
    where, _, rest = driver.partition("/")
    pid_text, _, rest = rest.partition("/")
    start = rest.partition("@")[0]
    if here is None or where != here or not pid_text.isdigit() or not start:
        return False
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: alive; its start tells if it is the driver
        pass
    except OSError:
        return False
    started = _started(pid)
    if started is None:  # it exists but cannot be read (or ended this instant): not judged
        return False
    state, now_start = started
    return now_start != start or state in ("Z", "X")
