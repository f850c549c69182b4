"""A warm process for figure scripts: imports once what they import, then runs each script in
a child forked from itself (tools/figures.py starts one per worker).

Starting Python and importing torch, numpy, matplotlib and posenc takes about 2 s, longer
than most figure scripts take to draw; forked from this process a script starts in
milliseconds. Each script still runs in a process of its own, so nothing one script sets
(rcParams, RNG state, open figures) reaches the next.

Protocol, one JSON object per line: tools/figures.py writes ``{"script", "cwd", "log"}``;
this process answers ``{"returncode"}`` when the script has ended; its stdout and stderr go
to the file ``log``. It prints ``ready`` once the imports are done.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import runpy
import sys
import traceback

import numpy

# what figure scripts import (each one's own imports still run; these are then cached)
PRELOAD = ("numpy", "matplotlib.pyplot", "torch", "posenc", "snippets.figures")


def _run_child(job: dict) -> None:
    """In the forked child: run the script as ``python script`` would, then exit."""
    code = 1
    try:
        os.chdir(job["cwd"])
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        script = job["script"]
        # fresh entropy, as a new process would have: a script that forgets to seed its RNG
        # must still draw differently each time (tests/site/test_snippets.py looks for that)
        random.seed()
        numpy.random.seed()
        sys.argv = [script]
        sys.path[0] = os.path.dirname(script)  # what `python script` puts first
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # noqa: BLE001 - the child reports every failure through its log
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip the parent's exit handlers: they belong to the parent


def main() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    print("ready", flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _run_child(job)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
