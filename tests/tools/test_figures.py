"""tools/figures.py's painters: a script forked from a warm process behaves as one run by
``python script``: fresh RNG entropy, nothing left over from the script before, failures
reported with the script's own output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import figures

UNSEEDED = """
import random
import matplotlib.pyplot as plt
import numpy as np
fig, ax = plt.subplots()
ax.plot(np.random.rand(5), [random.random() for _ in range(5)])
fig.savefig("noise.svg")
"""

SETS_RC = """
import matplotlib.pyplot as plt
plt.rcParams["lines.linewidth"] = 9
plt.figure().savefig("first.svg")
"""

READS_RC = """
import matplotlib.pyplot as plt
plt.figure().savefig(f"linewidth-{plt.rcParams['lines.linewidth']}.svg")
"""

FAILS = """
print("half-way there")
raise RuntimeError("no data for this figure")
"""


def _script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_an_unseeded_script_draws_differently_each_time(tmp_path):
    """What makes tests/site/test_snippets.py's byte-for-byte check able to fail: two
    children of one painter do not share the RNG state they were forked with."""
    script = _script(tmp_path, "figure_noise.py", UNSEEDED)
    with figures.painting(1) as draw:
        draw(script, tmp_path / "a")
        draw(script, tmp_path / "b")
    first, second = ((tmp_path / run / "noise.svg").read_bytes() for run in "ab")
    assert first != second


def test_a_script_does_not_see_what_the_one_before_set(tmp_path):
    with figures.painting(1) as draw:
        draw(_script(tmp_path, "figure_sets.py", SETS_RC), tmp_path / "a")
        names = draw(_script(tmp_path, "figure_reads.py", READS_RC), tmp_path / "b")
    assert names == ["linewidth-1.5.svg"]  # tools/matplotlibrc leaves matplotlib's default


def test_a_failing_script_is_named_with_its_output(tmp_path):
    script = _script(tmp_path, "figure_fails.py", FAILS)
    with figures.painting(1) as draw, pytest.raises(SystemExit) as failure:
        draw(script, tmp_path / "out")
    message = str(failure.value)
    assert "figure script failed" in message and "figure_fails.py" in message
    assert "half-way there" in message and "RuntimeError: no data for this figure" in message


def test_the_painter_draws_what_a_new_process_draws(tmp_path):
    """The same bytes either way, for a script of the site (seeded, with a fixed hash salt)."""
    script = figures.ROOT / "snippets" / "sinusoidal" / "figure_heatmap.py"
    with figures.painting(1) as draw:
        painted = draw(script, tmp_path / "painted")
    alone = figures.draw(script, tmp_path / "alone")
    assert painted == alone and painted
    for name in painted:
        painted_bytes, alone_bytes = (
            (tmp_path / how / name).read_bytes() for how in ("painted", "alone")
        )
        assert painted_bytes == alone_bytes
