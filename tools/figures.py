"""Draw every figure of the site from the snippet files that define it.

A figure script is any ``snippets/<chapter>/figure_*.py``: a runnable file that draws with
matplotlib and saves one or more ``.svg`` files into the current directory (so a reader who
pastes it gets the same file next to them). This tool runs each script in a scratch
directory and copies what it wrote into ``docs/figures/`` (git-ignored; the build adds it).
Each script runs in a process of its own, forked from a warm one that has imported torch and
matplotlib already (tools/figure_painter.py): 36 scripts drew in 20 s instead of 66 s.

Results are cached under ``.cache/figures/`` by a hash of the script, the library and the
settings, so a warm build does not import torch at all. Output is byte-identical across runs:
fixed ``svg.hashsalt``, ``SOURCE_DATE_EPOCH`` and hash seed, and scripts seed their own RNGs.

    python -m tools.figures            # bring docs/figures/ up to date
    python -m tools.figures --force    # redraw everything (ignores the cache)
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tools import layout
from tools.layout import ROOT

OUT_DIR = layout.figures_dir()
RCFILE = Path(__file__).resolve().parent / "matplotlibrc"
# figure file name -> the script that drew it (repository path), as of the last `build`
OWNERS: dict[str, str] = {}


def _inputs_digest(script: Path, root: Path, font: str) -> str:
    """Everything a figure depends on: the script, the library, the settings, this tool."""
    h = hashlib.sha256()
    library = sorted((root / "src" / "posenc").rglob("*.py"))
    # the settings, this tool and its painter, and the scripts' helper
    tools = [RCFILE, Path(__file__), Path(__file__).with_name("figure_painter.py"),
             root / "snippets" / "figures.py"]  # fmt: skip
    # committed results that figure scripts plot: a new result file must redraw the figure
    for path in [script, *library, *layout.result_files(root)]:
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    for path in tools:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(font.encode())
    return h.hexdigest()[:20]


def cjk_font() -> str:
    """The font file Chinese labels are laid out with, as ``name:size``, or "none": another
    font moves the text, so it is one of every figure's inputs."""
    try:
        found = subprocess.run(
            ["fc-match", "--format=%{file}", "Noto Sans CJK SC"], capture_output=True, text=True
        ).stdout
    except OSError:
        return "none"
    path = Path(found)
    return f"{path.name}:{path.stat().st_size}" if found and path.is_file() else "none"


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        MATPLOTLIBRC=str(RCFILE),
        MPLBACKEND="Agg",
        # a font cache of our own: `make cjk-font` drops it when it installs the font
        MPLCONFIGDIR=str(layout.cache_dir() / "matplotlib"),
        SOURCE_DATE_EPOCH="0",
        PYTHONHASHSEED="0",
    )
    return env


class Painter:
    """A warm process (tools/figure_painter.py) started with the figures' settings, which runs
    one script at a time, each in a child forked from it: the ~2 s of imports are paid once
    per painter instead of once per script. Not for use by two threads at once."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.figure_painter"],
            cwd=ROOT,  # where `tools` imports from
            env=_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            self.close()
            raise SystemExit("the figure painter (tools/figure_painter.py) did not start")

    def run(self, script: Path, cwd: Path, log: Path) -> int:
        """Run ``script`` in ``cwd``, its output into ``log``; its exit status."""
        job = {"script": str(script), "cwd": str(cwd), "log": str(log)}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit(f"the figure painter died while running {script}")
        return json.loads(answer)["returncode"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


@contextlib.contextmanager
def painting(workers: int | None = None) -> Iterator[Callable[[Path, Path], list[str]]]:
    """``draw(script, into)`` for up to ``workers`` threads at once (default: one per core),
    each call on a free painter."""
    workers = workers or os.cpu_count() or 1
    free: queue.Queue[Painter] = queue.Queue()
    started: list[Painter] = []

    def draw_on_a_painter(script: Path, into: Path) -> list[str]:
        try:
            painter = free.get_nowait()
        except queue.Empty:
            painter = Painter()  # started on first use: a warm cache starts none
            started.append(painter)
        try:
            return draw(script, into, painter)
        finally:
            free.put(painter)

    try:
        yield draw_on_a_painter
    finally:
        for painter in started:
            painter.close()


def draw(script: Path, into: Path, painter: Painter | None = None) -> list[str]:
    """Run one figure script in a scratch directory (on ``painter``, or in a new Python
    process); move the SVGs it wrote into ``into``."""
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "output.log"
        if painter is not None:
            returncode = painter.run(script, Path(scratch), log)
        else:
            with log.open("w") as output:
                returncode = subprocess.run(
                    [sys.executable, str(script)], cwd=scratch, env=_environment(),
                    stdout=output, stderr=subprocess.STDOUT,
                ).returncode  # fmt: skip
        shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
        if returncode != 0:
            raise SystemExit(f"figure script failed: {shown}\n{log.read_text()}")
        written = sorted(p.name for p in Path(scratch).glob("*.svg"))
        if not written:
            raise SystemExit(f"{shown} ran but saved no .svg file")
        into.mkdir(parents=True, exist_ok=True)
        for name in written:
            shutil.copyfile(Path(scratch) / name, into / name)
        return written


def _copy_if_changed(src: Path, dst: Path) -> None:
    # unchanged bytes are not rewritten, so `mkdocs serve` does not see a change and loop
    if not dst.exists() or dst.read_bytes() != src.read_bytes():
        shutil.copyfile(src, dst)


def build(
    force: bool = False, out_dir: Path | None = None, root: Path = ROOT
) -> dict[str, list[str]]:
    """Bring ``out_dir`` (default: the docs' figures folder) up to date for the repository at
    ``root``; return {script: [figure names]}."""
    out_dir = layout.figures_dir(root) if out_dir is None else out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    produced: dict[str, list[str]] = {}
    owners: dict[str, str] = {}
    cache = layout.cache_dir(root) / "figures"
    font = cjk_font()
    scripts = {s: cache / _inputs_digest(s, root, font) for s in layout.figure_scripts(root)}
    stale = [s for s, cached in scripts.items() if force or not (cached / "manifest.json").exists()]

    def redraw(script: Path) -> None:
        # Drawn into a folder of this process, then renamed into place in one step: another
        # build running at the same time never sees a half-written entry.
        cached = scripts[script]
        scratch = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
        shutil.rmtree(scratch, ignore_errors=True)
        names = draw_here(script, scratch)
        (scratch / "manifest.json").write_text(json.dumps(names))
        if force:
            shutil.rmtree(cached, ignore_errors=True)
        try:
            scratch.rename(cached)
        except OSError:  # another build put the same figures there first
            shutil.rmtree(scratch, ignore_errors=True)

    # each script is its own process, forked from a warm painter, one painter per core
    with painting() as draw_here, ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(redraw, stale))
    for script, cached in scripts.items():
        rel = script.relative_to(root).as_posix()
        names = json.loads((cached / "manifest.json").read_text())
        for name in names:
            if name in owners:
                raise SystemExit(f"{rel} and {owners[name]} both save {name}: rename one")
            owners[name] = rel
            _copy_if_changed(cached / name, out_dir / name)
        produced[rel] = names
    OWNERS.clear()
    OWNERS.update(owners)
    # a figure whose script is gone must not linger and hide a broken reference
    for stale in set(p.name for p in out_dir.glob("*.svg")) - set(owners):
        (out_dir / stale).unlink()
    return produced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--force", action="store_true", help="redraw, ignoring the cache")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="where the SVGs go")
    args = parser.parse_args()
    produced = build(force=args.force, out_dir=args.out)
    count = sum(len(v) for v in produced.values())
    print(f"figures: {count} from {len(produced)} scripts in {args.out}")


if __name__ == "__main__":
    main()
