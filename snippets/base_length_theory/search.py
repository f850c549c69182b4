"""Chapter "Base, frequencies and length": the smallest RoPE base that keeps
B_m = Σ_i cos(m·θ_i) ≥ 0 for every distance m = 0 .. L, for a head of 128 dimensions, found
by scanning every base with two significant digits from 1.0e3 to 9.9e8.

Men et al. (2024, arXiv:2405.14591, Eq. 10-11 and Table 2) define the lower bound of the base
for a context length L as the infimum of such bases and print it for L = 1k .. 1M. The set of
good bases is not an interval (a base can work while a slightly larger one fails, as Su notes
in kexue.fm/archives/10122), so bisection is wrong; this script evaluates every base of the
grid. For each base it records L_θ, the last distance before B_m first turns negative (capped
at CAP), and derives per L the smallest base of the grid with L_θ ≥ L and the smallest from
which every larger base of the grid has L_θ ≥ L.

    python snippets/base_length_theory/search.py          # quick: bases up to 1e5, L up to 8000
    python snippets/base_length_theory/search.py --full   # rewrites bounds.json (~1 min of CPU)
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import torch

import posenc

BOUNDS = Path(__file__).resolve().parent / "bounds.json"
HEAD_DIM = 128
CAP = 1_000_000  # no L beyond this is asked for
LENGTHS = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000)
GRID = [k * 10**e for e in range(2, 8) for k in range(10, 100)]  # 1.0e3 .. 9.9e8, 2 digits


def last_good_distance(theta: torch.Tensor, cap: int = CAP, chunk: int = 1 << 15) -> int:
    """L_θ: the largest L <= cap with Σ_i cos(m·θ_i) >= 0 for every m = 0 .. L (float64)."""
    theta = theta.double()
    for start in range(0, cap + 1, chunk):
        m = torch.arange(start, min(start + chunk, cap + 1), dtype=torch.float64)
        negative = (torch.cos(m[:, None] * theta).sum(-1) < 0).nonzero()
        if len(negative):
            return start + int(negative[0]) - 1
    return cap


def search(grid=GRID, lengths=LENGTHS, cap=CAP) -> dict:
    torch.set_num_threads(1)
    began, began_cpu = time.perf_counter(), time.process_time()
    reach = {base: last_good_distance(posenc.rope_inv_freq(HEAD_DIM, float(base))[0], cap)
             for base in grid}  # fmt: skip
    table = {}
    for length in lengths:
        good = [base for base in grid if reach[base] >= length]
        smallest = min(good)
        # the smallest base above which no base of the grid fails
        failing = [base for base in grid if reach[base] < length]
        above = [base for base in good if base > max(failing, default=0)]
        from_here = min(above) if above else None  # None: past the top of the grid
        table[str(length)] = {
            "smallest": smallest,
            "every_base_from": from_here,
            "failing_above_smallest": sum(1 for base in failing if base > smallest),
        }
    return {
        "head_dim": HEAD_DIM,
        "grid": "k * 10**e for k in 10..99, e in 2..7 (two significant digits, 1.0e3 .. 9.9e8)",
        "cap": CAP,
        "precision": "float64 angles m·θ_i with θ_i from posenc.rope_inv_freq (float32)",
        "hardware": {"cpu": platform.processor() or platform.machine(), "threads": 1},
        "software": {"python": platform.python_version(), "torch": torch.__version__},
        "cpu_seconds": round(time.process_time() - began_cpu, 1),
        "wall_seconds": round(time.perf_counter() - began, 1),
        "table": table,
        "reach": {str(base): reach[base] for base in grid},
    }


if __name__ == "__main__":
    if "--full" in sys.argv[1:]:
        report = search()
        BOUNDS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {BOUNDS} in {report['wall_seconds']} s ({report['cpu_seconds']} s CPU)")
    else:  # a quick look: the first four lengths, from the bases up to 1e5
        quick = search([b for b in GRID if b <= 100_000], LENGTHS[:4], cap=8000)
        for length, row in quick["table"].items():
            print(f"L = {length:>5}: smallest base {row['smallest']:.1e}")
