"""A run's driver (runs/driver.py) is judged gone only when it certainly is: a process of this machine
and PID namespace that no longer runs. A live one, one of another space, or a name that cannot be read
is never judged gone (its run waits for its lease)."""

from __future__ import annotations

import os
import subprocess

from orecast.service.runs import driver


def test_this_process_and_a_live_child_are_not_gone_a_dead_one_is() -> None:
    me = driver.this_process()
    assert me is not None and me.startswith(f"{driver.space()}/{os.getpid()}/")
    assert not driver.gone(me)
    child = subprocess.Popen(["sleep", "60"])
    try:
        named = driver._this(child.pid)
        assert named is not None and not driver.gone(named)
    finally:
        child.kill()
        child.wait()
    assert driver.gone(named), "killed and reaped"


def test_a_pid_used_again_by_a_later_process_is_not_its_driver() -> None:
    here, _, rest = driver.this_process().partition("/")
    pid, _, start_host = rest.partition("/")
    earlier = f"{here}/{pid}/{int(start_host.partition('@')[0]) - 1}@{start_host.partition('@')[2]}"
    assert driver.gone(earlier), "this pid, an earlier start: that process is gone"
    assert driver.gone(f"{here}/999999999/1@vm"), "no process has that pid here"


def test_a_driver_of_another_space_or_unreadable_is_never_judged() -> None:
    me = driver.this_process()
    _, _, rest = me.partition("/")
    assert not driver.gone(f"00000000-0000-0000-0000-000000000000:4:1/{rest}")  # another machine
    for name in ("", "junk", f"{driver.space()}/abc/1@h", f"{driver.space()}/{os.getpid()}/@h"):
        assert not driver.gone(name), name
