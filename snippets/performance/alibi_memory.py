"""Chapter "Performance": what ALiBi's bias would take in memory, prefill and decoding, and
what the benchmark plans for an 80 GB GPU.

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

Run it: python snippets/performance/alibi_memory.py   (from a clone, after `make install`)
"""

# --8<-- [start:bias]
heads, element = 32, 2  # 32 heads, bfloat16
BIAS_LINE = {
    "en": "{keys:>6} tokens: prefill bias {prefill:5.1f} GiB, decoding-step bias {decoding:4.2f} MiB",
    "zh": "{keys:>6} 个 token：预填充的偏置 {prefill:5.1f} GiB，解码一步的偏置 {decoding:4.2f} MiB",
}


def show_bias(lang="en"):
    for keys in (4096, 32768):
        prefill = heads * keys * keys * element  # one (heads, L, L) bias: every query, every key
        decoding = heads * 1 * keys * element  # one new query against the cache: (heads, 1, L)
        print(BIAS_LINE[lang].format(keys=keys, prefill=prefill / 2**30, decoding=decoding / 2**20))


# --8<-- [end:bias]

# --8<-- [start:plan]
from benchmarks import bench
from benchmarks.results import DIRECTORY, load_file

h100 = load_file(DIRECTORY / "gpu" / "h100-2026-11-26" / "bench-rope.json")["machine"]
memory = int(h100["gpu_memory_gib"] * 2**30)  # what torch reported for the H100 "80GB"
cuda = bench.config("cuda", smoke=False, compile_=True)  # batch 1, 32 heads, head size 128
plan = bench.plan_alibi(cuda, "cuda", memory_bytes=memory)


def show_plan(lang="en"):
    print(bench.plan_table(plan, lang=lang))


# --8<-- [end:plan]

if __name__ == "__main__":
    show_bias()
    show_plan()
