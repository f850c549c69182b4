"""posenc benchmark suite: what RoPE, ALiBi attention and sinusoidal tables cost.

    python benchmarks/bench.py                       # CPU suite (and CUDA when present)
    python benchmarks/bench.py --smoke --out x.json  # tiny sizes: checks that it runs
    make bench                                       # the full suite into benchmarks/results/

Method. Every candidate of one benchmark runs on the same inputs, interleaved: each round
calls every candidate once (in an order that rotates from round to round), so a load spike on
a shared machine hits all of them alike. Warm-up calls come first and are not timed. A call is
timed from start to end (``torch.cuda.synchronize`` before and after on CUDA) and includes
allocating the output, as a model would. We report the median over rounds, the quartiles, and
``ratio``: the median over rounds of ``time / time of the floor in the same round``. The floor
is the cheapest thing that does the same memory traffic: ``clone()`` of the inputs for RoPE
(an out-of-place op must at least read and write them), attention without a bias for ALiBi,
filling a table of the same size for the sinusoidal table.

``posenc`` is ``posenc.RotaryEmbedding(head_dim, layout=...)(q, k)``: one complex product for
the interleaved layout in float32/float64, ``x * cos`` then one ``addcmul_`` into each half of
the output otherwise. The other candidates live here, not in posenc: ``hf_eager`` (Hugging
Face's ``q*cos + rotate_half(q)*sin`` and GPT-J's ``rotate_every_two`` for the interleaved
layout), ``stack_flatten`` (even/odd slices rotated, then re-interleaved with
``torch.stack(...).flatten(-2)``) and ``compiled`` (``torch.compile`` of ``hf_eager``: what the
compiler makes of the textbook formula). An earlier version also timed a ``fused`` candidate,
the formulation posenc now uses; it measured the same code as ``posenc`` and was removed.

The results record the 1-minute load average before and after the run (``load_average``):
on a shared machine the ratios are only as good as that load allows.
"""

# The candidates are lambdas over the loop's tensors, called before the loop moves on (B023).
# ruff: noqa: B023

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

import posenc

SCHEMA = 1
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "cpu.json"


# ── Candidate RoPE implementations ──────────────────────────────────────────
# cos/sin: full-width tables (seq, head_dim) in the layout's order, as posenc.rotary_cos_sin
# returns them.


def rotate_half_ref(x: torch.Tensor) -> torch.Tensor:
    """Hugging Face Llama's rotate_half: (x1, x2) -> (-x2, x1)."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two_ref(x: torch.Tensor) -> torch.Tensor:
    """GPT-J's rotate_every_two: (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)."""
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


def rope_hf_eager(x, cos, sin, layout):
    rotate = rotate_half_ref if layout == "half" else rotate_every_two_ref
    return x * cos + rotate(x) * sin


def rope_stack_flatten(x, cos, sin, layout):
    """Interleaved pairs: rotate even/odd slices, then interleave them back.

    One table entry per pair.
    """
    assert layout == "interleaved"
    c, s = cos[..., 0::2], sin[..., 0::2]
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)


# ── Timing ──────────────────────────────────────────────────────────────────


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_interleaved(
    candidates: dict[str, Callable[[], object]],
    *,
    floor: str,
    rounds: int,
    warmup: int,
    device: str,
) -> dict[str, dict[str, float]]:
    """Median time (ms), quartiles and median per-round ratio to ``floor`` of each candidate."""
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    _sync(device)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            _sync(device)
            start = time.perf_counter()
            candidates[name]()
            _sync(device)
            times[name].append(time.perf_counter() - start)
    stats = {}
    for name in names:
        t = sorted(times[name])
        q1, _, q3 = statistics.quantiles(t, n=4) if len(t) > 1 else (t[0], t[0], t[0])
        ratios = [a / b for a, b in zip(times[name], times[floor], strict=True)]
        stats[name] = {
            "median_ms": statistics.median(t) * 1e3,
            "q1_ms": q1 * 1e3,
            "q3_ms": q3 * 1e3,
            "ratio": statistics.median(ratios),
        }
    return stats


# ── Benchmarks ──────────────────────────────────────────────────────────────


def compiler_available(device: str) -> tuple[bool, str]:
    """torch.compile on CPU needs a C++ compiler; on CUDA, Triton."""
    if device == "cpu":
        import shutil

        cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("clang++")
        return (cxx is not None, "no C++ compiler found" if cxx is None else "")
    try:
        import triton  # noqa: F401
    except ImportError:
        return False, "triton is not installed"
    return True, ""


def bench_rope(cfg: dict, device: str, out: dict) -> None:
    dtype = cfg["rope_dtype"]
    batch, heads, head_dim = cfg["rope_batch"], cfg["rope_heads"], cfg["rope_head_dim"]
    can_compile, why = compiler_available(device)
    can_compile = can_compile and cfg["compile"]
    if not cfg["compile"]:
        why = "compile disabled (--no-compile or --smoke)"
    for layout in posenc.rope.LAYOUTS:
        rope = posenc.RotaryEmbedding(head_dim, layout=layout).to(device)
        compiled = None
        if can_compile:
            compiled = torch.compile(rope_hf_eager, dynamic=device == "cpu")
        else:
            out["skipped"].append(
                {"bench": "rope", "layout": layout, "impl": "compiled", "reason": why}
            )
        for seq in cfg["rope_seq"]:
            gen = torch.Generator(device="cpu").manual_seed(0)
            shape = (batch, heads, seq, head_dim)
            q = torch.randn(shape, generator=gen).to(device, dtype)
            k = torch.randn(shape, generator=gen).to(device, dtype)
            cos, sin = rope.cos_sin(seq, device=device, dtype=dtype)
            reference = rope_hf_eager(q.float(), cos.float(), sin.float(), layout)
            candidates = {
                "copy": lambda: (q.clone(), k.clone()),
                "posenc": lambda: rope(q, k),
                "hf_eager": lambda: (
                    rope_hf_eager(q, cos, sin, layout),
                    rope_hf_eager(k, cos, sin, layout),
                ),
            }
            if layout == "interleaved":
                candidates["stack_flatten"] = lambda: (
                    rope_stack_flatten(q, cos, sin, layout),
                    rope_stack_flatten(k, cos, sin, layout),
                )
            if compiled is not None:
                candidates["compiled"] = lambda: (
                    compiled(q, cos, sin, layout),
                    compiled(k, cos, sin, layout),
                )
            tol = 1e-5 if dtype == torch.float32 else 2e-2
            for name, fn in candidates.items():  # every candidate computes the same rotation
                if name != "copy":
                    got = fn()[0].float()
                    if not torch.allclose(got, reference, atol=tol, rtol=tol):
                        raise AssertionError(f"rope {layout} {name} disagrees with the reference")
            print(f"rope {device} {layout} L={seq} ...", file=sys.stderr, flush=True)
            stats = time_interleaved(
                candidates,
                floor="copy",
                rounds=cfg["rounds"](q.numel()),
                warmup=cfg["warmup"],
                device=device,
            )
            moved = 2 * (q.numel() + k.numel()) * q.element_size()  # read q, k; write two outputs
            for name, s in stats.items():
                out["results"].append({
                    "bench": "rope", "device": device, "dtype": str(dtype).removeprefix("torch."),
                    "layout": layout, "shape": list(shape), "seq_len": seq, "impl": name,
                    "floor": "copy", "bytes_moved": moved,
                    "gb_per_s": moved / (s["median_ms"] * 1e-3) / 1e9, **s,
                })  # fmt: skip


def _materialised_alibi_attention(q, k, v, slopes):
    """BLOOM-style: a (batch, heads, L, L) bias tensor built per call, causal mask folded in."""
    batch, heads, seq, _ = q.shape
    bias = posenc.alibi_bias(heads, seq, slopes=slopes).expand(batch, heads, seq, seq).contiguous()
    future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
    bias = bias.masked_fill(future, float("-inf")).to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def bench_alibi(cfg: dict, device: str, out: dict) -> None:
    dtype = cfg["alibi_dtype"]
    batch, heads, head_dim = cfg["alibi_batch"], cfg["alibi_heads"], cfg["alibi_head_dim"]
    slopes = posenc.alibi_slopes(heads, device=device)
    flex_ok = getattr(sys.modules["posenc.attention"], "flex_attention", None) is not None
    for seq in cfg["alibi_seq"]:
        gen = torch.Generator(device="cpu").manual_seed(0)
        q, k, v = (
            torch.randn(batch, heads, seq, head_dim, generator=gen).to(device, dtype)
            for _ in range(3)
        )
        element = torch.finfo(dtype).bits // 8
        extra = {  # bytes of bias tensors each candidate builds (analytic)
            "no_bias": 0,
            "materialised": batch * heads * seq * seq * element,
            "broadcast": heads * seq * seq * element,
            "flex": 0,
        }
        candidates = {
            "no_bias": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            "broadcast": lambda: posenc.attention(q, k, v, alibi_slopes=slopes, backend="sdpa"),
        }
        limit = cfg["alibi_materialise_limit"]
        if extra["materialised"] <= limit:
            candidates["materialised"] = lambda: _materialised_alibi_attention(q, k, v, slopes)
        else:
            out["skipped"].append(
                {
                    "bench": "alibi",
                    "seq_len": seq,
                    "impl": "materialised",
                    "reason": f"bias would take {extra['materialised'] / 2**30:.1f} GiB",
                }
            )
        if extra["broadcast"] > limit:
            del candidates["broadcast"]
            out["skipped"].append(
                {
                    "bench": "alibi",
                    "seq_len": seq,
                    "impl": "broadcast",
                    "reason": f"bias would take {extra['broadcast'] / 2**30:.1f} GiB",
                }
            )
        if flex_ok and (device == "cuda" or seq <= cfg["flex_cpu_max_seq"]):
            candidates["flex"] = lambda: posenc.attention(
                q, k, v, alibi_slopes=slopes, backend="flex"
            )
        elif seq == cfg["alibi_seq"][0]:
            out["skipped"].append(
                {
                    "bench": "alibi",
                    "impl": "flex",
                    "reason": "FlexAttention missing"
                    if not flex_ok
                    else "eager FlexAttention on CPU is slow: only up to "
                    f"L={cfg['flex_cpu_max_seq']}",
                }
            )
        reference = candidates["broadcast" if "broadcast" in candidates else "flex"]().float()
        for name, fn in candidates.items():
            if name != "no_bias":
                tol = 1e-4 if dtype == torch.float32 else 3e-2
                if not torch.allclose(fn().float(), reference, atol=tol, rtol=tol):
                    raise AssertionError(f"alibi {name} at L={seq} disagrees")
        peak = {}
        if device == "cuda":  # measured peak memory above the inputs
            for name, fn in candidates.items():
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                fn()
                torch.cuda.synchronize()
                peak[name] = torch.cuda.max_memory_allocated() - base
        print(f"alibi {device} L={seq} ...", file=sys.stderr, flush=True)
        stats = time_interleaved(
            candidates,
            floor="no_bias",
            rounds=cfg["alibi_rounds"],
            warmup=cfg["warmup"],
            device=device,
        )
        for name, s in stats.items():
            row = {
                "bench": "alibi",
                "device": device,
                "dtype": str(dtype).removeprefix("torch."),
                "shape": [batch, heads, seq, head_dim],
                "seq_len": seq,
                "impl": name,
                "floor": "no_bias",
                "bias_bytes": extra[name],
                **s,
            }
            if name in peak:
                row["peak_extra_bytes"] = peak[name]
            out["results"].append(row)


def _sinusoidal_reference(n: int, dim: int) -> torch.Tensor:
    """The common tutorial version: fill even columns with sin, odd with cos."""
    position = torch.arange(n).float()[:, None]
    inv_freq = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    table = torch.zeros(n, dim)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)
    return table


def bench_sinusoidal(cfg: dict, device: str, out: dict) -> None:
    dim = cfg["sin_dim"]
    for n in cfg["sin_seq"]:
        if not torch.allclose(posenc.sinusoidal(n, dim), _sinusoidal_reference(n, dim), atol=1e-3):
            raise AssertionError("sinusoidal tables disagree")
        candidates = {
            "fill": lambda: torch.full((n, dim), 1.0, device=device),
            "posenc": lambda: posenc.sinusoidal(n, dim, device=device),
            "slice_assign": lambda: _sinusoidal_reference(n, dim).to(device),
        }
        stats = time_interleaved(
            candidates,
            floor="fill",
            rounds=cfg["rounds"](n * dim),
            warmup=cfg["warmup"],
            device=device,
        )
        for name, s in stats.items():
            out["results"].append(
                {
                    "bench": "sinusoidal",
                    "device": device,
                    "dtype": "float32",
                    "shape": [n, dim],
                    "seq_len": n,
                    "impl": name,
                    "floor": "fill",
                    **s,
                }
            )


# ── Configurations, machine info, report ────────────────────────────────────


def config(device: str, smoke: bool, compile_: bool) -> dict:
    if smoke:
        return dict(
            rope_dtype=torch.float32, rope_batch=1, rope_heads=2, rope_head_dim=8,
            rope_seq=[16, 32],
            alibi_dtype=torch.float32, alibi_batch=1, alibi_heads=2, alibi_head_dim=8,
            alibi_seq=[16, 32], alibi_rounds=3, alibi_materialise_limit=2**30, flex_cpu_max_seq=16,
            sin_dim=8, sin_seq=[16, 32], rounds=lambda numel: 3, warmup=1, compile=False,
        )  # fmt: skip
    if device == "cuda":
        return dict(
            rope_dtype=torch.bfloat16, rope_batch=8, rope_heads=32, rope_head_dim=128,
            rope_seq=[1024, 2048, 4096], alibi_dtype=torch.bfloat16, alibi_batch=1, alibi_heads=32,
            alibi_head_dim=128, alibi_seq=[8192, 16384, 32768], alibi_rounds=10,
            alibi_materialise_limit=24 * 2**30, flex_cpu_max_seq=0, sin_dim=1024,
            sin_seq=[4096, 32768, 131072], rounds=lambda numel: 50, warmup=5, compile=compile_,
        )  # fmt: skip
    return dict(
        rope_dtype=torch.float32, rope_batch=4, rope_heads=16, rope_head_dim=64,
        rope_seq=[256, 512, 1024, 2048], alibi_dtype=torch.float32, alibi_batch=2,
        alibi_heads=8, alibi_head_dim=64, alibi_seq=[128, 256, 512, 1024], alibi_rounds=7,
        alibi_materialise_limit=2**30, flex_cpu_max_seq=256, sin_dim=256,
        sin_seq=[1024, 4096, 16384],
        # ~4M elements (16 MiB) per tensor at the target size: 21 rounds there, fewer above
        rounds=lambda numel: max(9, min(31, int(21 * 4_194_304 / numel))), warmup=2,
        compile=compile_,
    )  # fmt: skip


def machine_info(device: str) -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": device,
    }
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(
            gpu=props.name,
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
        )
    return info


def dumps(results: dict) -> str:
    """JSON with one line per result row, so the file reads well and diffs well."""
    parts = []
    for key, value in results.items():
        if isinstance(value, list):
            body = ",\n".join(f"  {json.dumps(v)}" for v in value)
            parts.append(
                f" {json.dumps(key)}: [\n{body}\n ]" if value else f" {json.dumps(key)}: []"
            )
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def table(results: dict) -> str:
    """Medians (ms) with the ratio to each benchmark's floor, one block per benchmark/layout."""
    lines = []
    groups: dict[tuple, list[dict]] = {}
    for row in results["results"]:
        groups.setdefault((row["bench"], row["device"], row.get("layout", "")), []).append(row)
    for (bench, device, layout), rows in groups.items():
        impls = list(dict.fromkeys(r["impl"] for r in rows))
        name = f"{bench} {layout}" if layout else bench
        lines += [
            "",
            f"{name} ({device}, {rows[0]['dtype']}; median ms, x floor '{rows[0]['floor']}')",
        ]
        lines.append(f"{'seq_len':>8} " + " ".join(f"{i:>20}" for i in impls))
        for seq in sorted({r["seq_len"] for r in rows}):
            cells = []
            for impl in impls:
                hit = [r for r in rows if r["seq_len"] == seq and r["impl"] == impl]
                cells.append(
                    f"{hit[0]['median_ms']:11.3f} x{hit[0]['ratio']:5.2f}  "
                    if hit
                    else f"{'-':>20}"
                )
            lines.append(f"{seq:>8} " + " ".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def targets(results: dict) -> str:
    """The issue's targets, read off the results (reported, never asserted)."""
    lines = ["", "targets"]
    rows = results["results"]

    def pick(**kw):
        hit = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
        return hit[0] if hit else None

    for device in sorted({r["device"] for r in rows if r["bench"] == "rope"}):
        seqs = sorted(
            {r["seq_len"] for r in rows if r["bench"] == "rope" and r["device"] == device}
        )
        seq = 1024 if device == "cpu" and 1024 in seqs else (4096 if 4096 in seqs else seqs[-1])
        for layout in posenc.rope.LAYOUTS:
            for impl in ("posenc", "compiled"):
                r, hf = (
                    pick(bench="rope", device=device, layout=layout, seq_len=seq, impl=impl),
                    pick(bench="rope", device=device, layout=layout, seq_len=seq, impl="hf_eager"),
                )
                if r is None:
                    continue
                if device == "cpu":  # each target reported on its own, then both together
                    speedup = hf["ratio"] / r["ratio"]
                    near, faster = r["ratio"] <= 1.5, speedup >= 2
                    lines.append(
                        f"  rope {device} {layout:11s} L={seq} {impl:9s} {r['ratio']:5.2f}x copy "
                        f"(<= 1.5: {_met(near)}), {speedup:4.2f}x faster than hf_eager "
                        f"(>= 2: {_met(faster)}): {_met(near and faster)}"
                    )
                else:
                    share = 1 / r["ratio"]
                    lines.append(
                        f"  rope {device} {layout:11s} L={seq} {impl:9s} {share:6.1%} of copy "
                        f"bandwidth (>= 80%): {_met(share >= 0.8)}"
                    )
    for row in rows:
        if row["bench"] == "alibi" and row["impl"] in ("broadcast", "materialised", "flex"):
            if row["seq_len"] == max(r["seq_len"] for r in rows if r["bench"] == "alibi"):
                mem = f", bias {row['bias_bytes'] / 2**20:.0f} MiB"
                if "peak_extra_bytes" in row:
                    mem += f", peak extra {row['peak_extra_bytes'] / 2**20:.0f} MiB"
                lines.append(
                    f"  alibi {row['device']} L={row['seq_len']} {row['impl']:12s} "
                    f"{row['ratio']:5.2f}x no-bias attention{mem}"
                )
    return "\n".join(lines)


def run(
    *,
    smoke: bool = False,
    devices: list[str] | None = None,
    only: list[str] | None = None,
    compile_: bool = True,
) -> dict:
    devices = devices or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
    results: dict = {
        "schema": SCHEMA,
        "created": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "smoke": smoke,
        "machine": machine_info(devices[-1]),
        "method": ("interleaved rounds (rotating order), warm-up calls untimed, median over "
                   "rounds; ratio = median over rounds of time / floor time in the same round"),
        "load_average": {"start": _load_average()},
        "results": [],
        "skipped": [],
    }  # fmt: skip
    # eager FlexAttention on CPU warns that it is unfused: that is what we measure there
    warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
    benches = {"rope": bench_rope, "alibi": bench_alibi, "sinusoidal": bench_sinusoidal}
    for device in devices:
        if device == "cuda" and not torch.cuda.is_available():
            results["skipped"].append(
                {"bench": "all", "device": "cuda", "reason": "no CUDA device"}
            )
            continue
        cfg = config(device, smoke, compile_)
        for name, fn in benches.items():
            if only is None or name in only:
                with torch.no_grad():
                    fn(cfg, device, results)
    results["load_average"]["end"] = _load_average()
    return results


def _load_average() -> float | None:
    """The 1-minute load average (None where the OS does not report it)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, no compile: check that it runs"
    )
    parser.add_argument("--device", choices=["cpu", "cuda", "all"], default="all")
    parser.add_argument("--only", default=None, help="comma-separated: rope,alibi,sinusoidal")
    parser.add_argument(
        "--no-compile", action="store_true", help="skip the torch.compile candidate"
    )
    args = parser.parse_args(argv)
    devices = None if args.device == "all" else [args.device]
    if devices is None and not torch.cuda.is_available():
        devices = ["cpu"]
    results = run(
        smoke=args.smoke,
        devices=devices,
        only=args.only.split(",") if args.only else None,
        compile_=not args.no_compile,
    )
    out = args.out or (DEFAULT_OUT if not args.smoke else None)
    if out is None:
        out = Path("bench-smoke.json")
    if devices == ["cuda"] and args.out is None:
        out = out.with_name("cuda.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dumps(results))
    m = results["machine"]
    print(
        f"{m['cpu']} ({m['cpu_count']} CPUs, {m['torch_threads']} torch threads), "
        f"torch {m['torch']}" + (f", {m['gpu']}" if "gpu" in m else "")
    )
    load = results["load_average"]
    print(f"load average: {load['start']} at start, {load['end']} at end")
    print(table(results))
    print(targets(results))
    for s in results["skipped"]:
        print(f"skipped: {s}")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
