"""Chapter "Performance": what ALiBi's bias would take in memory, prefill and decoding, what
the benchmark plans for an 80 GB GPU, and what an H100 measured against that plan.

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
from benchmarks.results import DIRECTORY, load_file, rows

record = DIRECTORY / "gpu" / "h100-2026-11-27"  # a measurement record, committed
measured = load_file(record / "run2-bench-alibi.json")
memory = int(measured["machine"]["gpu_memory_gib"] * 2**30)  # what torch reported for "80GB"
cuda = bench.config("cuda", smoke=False, compile_=True)  # batch 1, 32 heads, head size 128
plan = bench.plan_alibi(cuda, "cuda", memory_bytes=memory)


def show_plan(lang="en"):
    print(bench.plan_table(plan, lang=lang))


# --8<-- [end:plan]

# --8<-- [start:plan_checked]
inputs = {  # q, k and v: the estimate counts them, the measured peak does not
    seq: 3 * seq * 32 * 128 * 2 for seq in cuda["alibi_seq"]
}
checked = []
for run in rows(measured, bench="alibi"):
    estimate = next(r for r in plan if r["seq_len"] == run["seq_len"] and r["impl"] == run["impl"])
    peak = run["peak_extra_bytes"]
    assert peak <= estimate["peak_bytes"] - inputs[run["seq_len"]], (run["impl"], run["seq_len"])
    checked.append((run["seq_len"], run["impl"], estimate["peak_bytes"], peak))
skipped = {(s["seq_len"], s["impl"]) for s in measured["skipped"]}
assert skipped == {(r["seq_len"], r["impl"]) for r in plan if r["skip"]}  # no surprise skip
CHECKED_TEXT = {  # the header lines up with the rows (a Chinese character is two columns wide)
    "en": (f"{'L':>6} {'implementation':<14} {'planned GiB':>11} {'measured GiB':>13}",
           "{} candidates skipped, as planned"),
    "zh": (f"{'L':>6} 实现{' ' * 10}    计划 GiB      实测 GiB", "按计划跳过了 {} 个候选"),
}  # fmt: skip


def show_plan_checked(lang="en", impls=("broadcast", "materialised", "flex")):
    head, skips = CHECKED_TEXT[lang]
    print(head)
    for seq, impl, planned, peak in checked:
        if impl in impls:
            print(f"{seq:>6} {impl:<14} {planned / 2**30:11.2f} {peak / 2**30:13.2f}")
    print(skips.format(len(skipped)))


# --8<-- [end:plan_checked]

if __name__ == "__main__":
    show_bias()
    show_plan()
    show_plan_checked()
