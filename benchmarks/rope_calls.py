"""Where a RoPE call's time goes on a GPU: the kernel alone against the whole library call.

    python -m benchmarks.rope_calls --out calls.json   # on a CUDA machine

At (8, 32, 4096, 128) bfloat16, times the copy of q and k, posenc's Triton kernel launched
directly (``rope_triton._launch``), `posenc.rope_triton.rotate_qk` (arguments checked) and
`posenc.RotaryEmbedding` (positions built, arguments checked), in two ways: one call at a time
with a synchronisation before and after (what ``benchmarks/bench.py`` does: host time before
the launch shows), and 50 calls back to back then one synchronisation (as in a model, where
the host runs ahead of the GPU and its time hides behind the kernels).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

import posenc
from benchmarks.bench import machine_info
from posenc import rope_triton

SHAPE = (8, 32, 4096, 128)


def _per_call(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _back_to_back(fn, calls: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times) * 1e3


def measure(layout: str) -> dict:
    gen = torch.Generator(device="cpu").manual_seed(0)
    q, k = (torch.randn(SHAPE, generator=gen).to("cuda", torch.bfloat16) for _ in range(2))
    positions = torch.arange(SHAPE[2], device="cuda")
    rope = posenc.RotaryEmbedding(SHAPE[3], layout=layout).to("cuda")
    inv_freq = rope.inv_freq.float()
    candidates = {
        "copy": lambda: (q.clone(), k.clone()),
        "kernel": lambda: rope_triton._launch(q, k, layout, positions, inv_freq),
        "rotate_qk": lambda: rope_triton.rotate_qk(q, k, positions, inv_freq, layout=layout),
        "module": lambda: rope(q, k),
    }
    found = {}
    with torch.no_grad():
        for fn in candidates.values():
            for _ in range(5):
                fn()
        for name, fn in candidates.items():
            found[name] = {
                "per_call_ms": _per_call(fn, 50),
                "back_to_back_ms": _back_to_back(fn, 50, 5),
            }
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    found = {"machine": machine_info("cuda"), "shape": list(SHAPE), "dtype": "bfloat16"}
    for layout in posenc.rope.LAYOUTS:
        found[layout] = measure(layout)
        copy = found[layout]["copy"]
        print(f"\n{layout}: median ms (share of the copy's bandwidth)")
        for name, t in found[layout].items():
            one, many = t["per_call_ms"], t["back_to_back_ms"]
            print(
                f"  {name:10s} one call {one:.3f} ({copy['per_call_ms'] / one:6.1%})   "
                f"back to back {many:.3f} ({copy['back_to_back_ms'] / many:6.1%})"
            )
    args.out.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
