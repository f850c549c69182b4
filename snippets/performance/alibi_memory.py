"""Chapter "Performance": what ALiBi's bias would take in memory, prefill and decoding, and
what the benchmark plans for an 80 GB GPU.

Run it: python snippets/performance/alibi_memory.py   (from a clone, after `make install`)
"""

# --8<-- [start:bias]
heads, element = 32, 2  # 32 heads, bfloat16
for keys in (4096, 32768):
    prefill = heads * keys * keys * element  # one (heads, L, L) bias: every query, every key
    decoding = heads * 1 * keys * element  # one new query against the cache: (heads, 1, L)
    print(f"{keys:>6} tokens: prefill bias {prefill / 2**30:5.1f} GiB, "
          f"decoding-step bias {decoding / 2**20:4.2f} MiB")  # fmt: skip
# --8<-- [end:bias]

# --8<-- [start:plan]
from benchmarks import bench
from benchmarks.results import DIRECTORY, load_file

h100 = load_file(DIRECTORY / "gpu" / "h100-2026-11-26" / "bench-rope.json")["machine"]
memory = int(h100["gpu_memory_gib"] * 2**30)  # what torch reported for the H100 "80GB"
cuda = bench.config("cuda", smoke=False, compile_=True)  # batch 1, 32 heads, head size 128
print(bench.plan_table(bench.plan_alibi(cuda, "cuda", memory_bytes=memory)))
# --8<-- [end:plan]
