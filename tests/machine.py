"""The machine to itself: a test that measures speed (Lighthouse's simulated page load)
runs while nothing else of the same pytest run does.

`make test` runs tests in two processes (pytest-xdist). Lighthouse's performance score is
simulated from the load it observes, so a page measured while the other process trains a
model or compiles a kernel scores lower for that reason alone (the explorer once scored 88
that way, 97 alone). The two processes share a lock file in the run's temporary folder:

* every other test holds it shared while it runs (`shared`), and
* the Lighthouse measurements hold it alone (`alone`): they wait for the other process's
  current test to end, and the other process waits until they are done.

A turnstile in front of the lock keeps the waiting side from starving: once a measurement
asks for the machine, no new test starts beside it.
"""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path


def run_folder(request) -> Path:
    """A folder every process of this pytest run shares (pytest-xdist's workers each have
    their own temporary folder inside it)."""
    base = request.getfixturevalue("tmp_path_factory").getbasetemp()
    return base.parent if hasattr(request.config, "workerinput") else base


def _files(run_folder: Path) -> tuple[Path, Path]:
    return run_folder / "posenc-machine.lock", run_folder / "posenc-machine.turnstile"


@contextlib.contextmanager
def _locked(path: Path, mode: int):
    with open(path, "a+") as handle:
        fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def shared(run_folder: Path):
    """Run beside other ordinary tests, but not beside a measurement."""
    lock, turnstile = _files(run_folder)
    with _locked(turnstile, fcntl.LOCK_EX):  # pass through: blocked while a measurement waits
        pass
    with _locked(lock, fcntl.LOCK_SH):
        yield


@contextlib.contextmanager
def alone(run_folder: Path):
    """Run with no other test of this run running."""
    lock, turnstile = _files(run_folder)
    with _locked(turnstile, fcntl.LOCK_EX), _locked(lock, fcntl.LOCK_EX):
        yield
