"""Run tests again and again with every core kept busy, to find the ones that pass or fail
by chance (a value read before the page finished drawing, a style read mid-transition).

    python -m tools.stress --runs 5 -- -m browser

starts one busy process per core (at the tests' own priority), then runs pytest with the
arguments after ``--`` until it has passed ``--runs`` times in a row, and stops at the first
failing run, naming it. ``make stress`` runs the browser tests this way; a contributor who
touches a browser test or the explorer runs it before opening a pull request.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def _burn() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="green runs in a row wanted")
    parser.add_argument(
        "--burners", type=int, default=os.cpu_count() or 1, help="busy processes (one per core)"
    )
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.burners < 0:
        parser.error("--runs must be at least 1 and --burners at least 0")
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burners)]
    for burner in burners:
        burner.start()
    print(f"stress: {args.burners} busy processes; pytest {' '.join(args.pytest_args)}")
    try:
        for run in range(1, args.runs + 1):
            start = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", *args.pytest_args],
                # Lighthouse's simulated performance score counts the busy cores against the
                # page: under load it is reported, not judged (its other scores still are)
                env={**os.environ, "POSENC_CORES_KEPT_BUSY": "1"},
            )
            took = time.monotonic() - start
            if done.returncode != 0:
                print(f"stress: run {run} of {args.runs} FAILED after {took:.0f} s (see above)")
                return 1
            print(f"stress: run {run} of {args.runs} passed in {took:.0f} s under load")
    finally:
        for burner in burners:
            burner.terminate()
    print(f"stress: {args.runs} runs in a row passed with {args.burners} cores kept busy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
