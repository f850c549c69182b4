"""How posenc's Triton RoPE kernel's tile changes its speed: heads × positions × warps.

    python -m benchmarks.rope_tiles --out tiles.json   # on a CUDA machine

The kernel (``posenc.rope_triton``) runs one program per (token, block of heads); its default
tile was first chosen without a GPU. This sweep times every tile of ``HEADS_PER_PROGRAM`` ×
``POSITIONS_PER_PROGRAM`` × ``WARPS`` at issue 27's shape, (8, 32, 4096, 128) bfloat16, q and k,
both layouts, interleaved with the copy of q and k (the floor, as in ``benchmarks/bench.py``)
and reports each tile's share of the copy's bandwidth. Every tile's result is checked against
posenc's eager rotation first.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import sys
from pathlib import Path

import torch

import posenc
from benchmarks.bench import machine_info, time_interleaved
from posenc import rope_triton

SHAPE = (8, 32, 4096, 128)
HEADS_PER_PROGRAM = (1, 2, 4, 8)
POSITIONS_PER_PROGRAM = (1, 4, 16)
WARPS = (1, 2, 4)


def sweep(rounds: int = 30, *, device: str = "cuda", shape: tuple = SHAPE) -> dict:
    """Every tile timed at ``shape``. On a CPU (``device="cpu"``, a small ``shape``) it runs
    under Triton's interpreter: what a test checks, not a timing."""
    batch, heads, seq, head_dim = shape
    gen = torch.Generator(device="cpu").manual_seed(0)
    q, k = (torch.randn(shape, generator=gen).to(device, torch.bfloat16) for _ in range(2))
    positions = torch.arange(seq, device=device)
    inv_freq = posenc.rope_inv_freq(head_dim)[0].to(device).float()
    rows = []
    for layout in posenc.rope.LAYOUTS:
        want = posenc.RotaryEmbedding(head_dim, layout=layout, kernel="eager").to(device)(q, k)
        candidates = {"copy": lambda: (q.clone(), k.clone())}
        tiles = itertools.product(
            (h for h in HEADS_PER_PROGRAM if h <= heads), POSITIONS_PER_PROGRAM, WARPS
        )
        for block_h, block_s, warps in tiles:

            def run(block_h=block_h, block_s=block_s, warps=warps, layout=layout):
                return rope_triton._launch(
                    q, k, layout, positions, inv_freq,
                    block_h=block_h, block_s=block_s, num_warps=warps,
                )  # fmt: skip

            got = run()
            name = f"{block_h}x{block_s}x{warps}"
            for a, b in zip(got, want, strict=True):
                if not torch.allclose(a.float(), b.float(), atol=2e-2, rtol=2e-2):
                    raise AssertionError(f"tile {name} {layout} disagrees")
            candidates[name] = run
        print(f"rope tiles {layout} ...", file=sys.stderr, flush=True)
        stats = time_interleaved(candidates, floor="copy", rounds=rounds, warmup=3, device=device)
        for name, s in stats.items():
            rows.append({"layout": layout, "tile": name, "share": 1 / s["ratio"], **s})
    return {
        "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine_info(device),
        "shape": list(shape),
        "dtype": "bfloat16",
        "tile": "heads x positions per program x warps",
        "results": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        parser.error("needs a CUDA device")
    found = sweep(args.rounds)
    args.out.write_text(json.dumps(found, indent=1) + "\n")
    for layout in posenc.rope.LAYOUTS:
        rows = sorted(
            (r for r in found["results"] if r["layout"] == layout), key=lambda r: -r["share"]
        )
        print(f"\n{layout}: tile (heads x positions x warps), share of copy bandwidth, median ms")
        for r in rows:
            print(f"  {r['tile']:>8} {r['share']:6.1%} {r['median_ms']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
