"""Chapter "Performance": read the committed benchmark results and print them.

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

Run it: python snippets/performance/results.py   (reads benchmarks/results/cpu.json)
"""

# --8<-- [start:machine]
from benchmarks.results import load, row, rows

results = load("cpu")  # benchmarks/results/cpu.json, checked against its schema
machine = results["machine"]
load = results["load_average"]  # 1-minute load average: above 1 per core, others ran too
MACHINE_TEXT = {
    "en": {
        "cpu": "{cpu}, {cpu_count} cores, {torch_threads} torch threads",
        "torch": "torch {torch}, Python {python}",
        "load": "load average {start} at the start, {end} at the end",
        "allocator": "allocator: {}",
        "measured": "measured {}",
    },
    "zh": {
        "cpu": "{cpu}，{cpu_count} 个核，{torch_threads} 个 torch 线程",
        "torch": "torch {torch}，Python {python}",
        "load": "负载均值：开始时 {start}，结束时 {end}",
        "allocator": "内存分配器：{}",
        "measured": "测量日期：{}",
    },
}
ALLOCATOR_ZH = {  # the descriptions benchmarks/bench.py writes into the results
    "glibc malloc without mmap or trimming (freed memory is reused)":
        "glibc malloc，不用 mmap，也不把内存还给系统（释放的内存留着复用）",
    "the platform's default allocator": "平台默认的分配器",
}  # fmt: skip


def show_machine(lang="en"):
    text = MACHINE_TEXT[lang]
    allocator = results["allocator"]
    if lang == "zh":
        allocator = ALLOCATOR_ZH.get(allocator, allocator)
    print(text["cpu"].format(**machine))
    print(text["torch"].format(**machine))
    print(text["load"].format(**load))
    print(text["allocator"].format(allocator))
    print(text["measured"].format(results["created"][:10]))


# --8<-- [end:machine]


# --8<-- [start:rope_table]
import unicodedata


def shown(text):
    """How many columns of a terminal ``text`` takes: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))


def pad(text, width, right=False):
    """``text`` padded to ``width`` columns, on the left if ``right``."""
    fill = " " * max(width - shown(text), 0)
    return fill + str(text) if right else str(text) + fill


def table(columns, cells, indent=""):
    """A table as text. ``columns``: (header, width, ">" to align right or "<" to the left),
    a column as wide as the widest of ``width``, its header and its cells; ``cells``: the texts
    of each row."""
    lines = [[head for head, _, _ in columns], *cells]
    by_column = zip(columns, zip(*lines, strict=True), strict=True)
    widths = [max(width, *map(shown, texts)) for (_, width, _), texts in by_column]
    aligns = [align == ">" for _, _, align in columns]
    return "\n".join(indent + " ".join(map(pad, line, widths, aligns)) for line in lines)


def rope_rows(layout, seq_len=1024):
    return rows(results, bench="rope", layout=layout, seq_len=seq_len)


ROPE_TEXT = {  # a title, and each column's header and width
    "en": ("RoPE, layout {!r}, q and k of shape {}, float32",
           [("implementation", 15), ("median ms", 9), ("x copy", 7), ("GB/s", 6)]),
    "zh": ("RoPE，{!r} 排布，q 和 k 的形状为 {}，float32",
           [("实现", 15), ("中位数 ms", 10), ("复制的倍数", 11), ("GB/s", 6)]),
}  # fmt: skip


def show_rope_table(lang="en"):
    title, heads = ROPE_TEXT[lang]
    columns = [(*head, align) for head, align in zip(heads, "<>>>", strict=True)]
    for layout in ("half", "interleaved"):
        print(title.format(layout, rope_rows(layout)[0]["shape"]))
        cells = [
            [r["impl"], f"{r['median_ms']:.1f}", f"{r['ratio']:.2f}", f"{r['gb_per_s']:.1f}"]
            for r in sorted(rope_rows(layout), key=lambda r: r["ratio"])
        ]
        print(table(columns, cells, indent="  "))


# --8<-- [end:rope_table]


# --8<-- [start:rope_claims]
def ratio(layout, impl, seq_len=1024):
    return row(results, bench="rope", layout=layout, seq_len=seq_len, impl=impl)["ratio"]


TARGETS_TEXT = {
    "en": {
        "line": "{layout:11} {impl:15} {mine:.2f}x copy (target 1.5x: {near}), "
        "{speedup:.1f}x faster than hf_eager (target 2x: {fast})",
        "met": "met",
        "not met": "NOT met",
        "table": "mul_table (a pass that reads a table): {half:.2f}x copy (half), "
        "{interleaved:.2f}x (interleaved)",
    },
    "zh": {
        "line": "{layout:11} {impl:15} 用时是复制的 {mine:.2f} 倍（目标 1.5 倍：{near}），"
        "速度是 hf_eager 的 {speedup:.1f} 倍（目标 2 倍：{fast}）",
        "met": "达标",
        "not met": "未达标",
        "table": "mul_table（读一张表的单遍运算）：用时是复制的 {half:.2f} 倍（half），"
        "{interleaved:.2f} 倍（interleaved）",
    },
}


def show_targets(lang="en"):
    text = TARGETS_TEXT[lang]
    for layout in ("half", "interleaved"):
        textbook = ratio(layout, "hf_eager")
        for impl in ("posenc", "posenc_compiled"):
            mine = ratio(layout, impl)
            near = text["met"] if mine <= 1.5 else text["not met"]
            fast = text["met"] if textbook / mine >= 2 else text["not met"]
            print(text["line"].format(layout=layout, impl=impl, mine=mine, near=near,
                                      speedup=textbook / mine, fast=fast))  # fmt: skip
    print(text["table"].format(half=ratio("half", "mul_table"),
                               interleaved=ratio("interleaved", "mul_table")))  # fmt: skip


# what the prose says, checked against the data at every length
lengths = sorted({r["seq_len"] for r in rows(results, bench="rope")})
for seq_len in lengths:
    for layout in ("half", "interleaved"):
        assert ratio(layout, "posenc_compiled", seq_len) < ratio(layout, "compiled", seq_len)
        assert ratio(layout, "compiled", seq_len) < ratio(layout, "hf_eager", seq_len)
        assert ratio(layout, "compiled", seq_len) > 2  # "stays well above a copy"
        assert ratio(layout, "mul_table", seq_len) < ratio(layout, "posenc_compiled", seq_len)
    if seq_len >= 512:  # at 256 the fixed cost of a call decides
        assert ratio("half", "posenc_compiled", seq_len) < ratio("half", "posenc", seq_len)
    # the eager complex product is one pass already, and faster here than the compiled kernel
    eager, fused = (ratio("interleaved", impl, seq_len) for impl in ("posenc", "posenc_compiled"))
    assert eager < fused
assert max(ratio(layout, "mul_table") for layout in ("half", "interleaved")) <= 1.5
# --8<-- [end:rope_claims]

# --8<-- [start:alibi_table]
alibi = rows(results, bench="alibi")
ALIBI_HEAD = {  # each column's header and width
    "en": [("L", 5), ("implementation", 14), ("median ms", 9), ("x no bias", 9), ("bias MiB", 8)],
    "zh": [("L", 5), ("实现", 14), ("中位数 ms", 10), ("无偏置的倍数", 13), ("偏置 MiB", 9)],
}


def show_alibi_table(lang="en"):
    columns = [(*head, align) for head, align in zip(ALIBI_HEAD[lang], "><>>>", strict=True)]
    cells = [
        [str(r["seq_len"]), r["impl"], f"{r['median_ms']:.1f}", f"{r['ratio']:.2f}",
         f"{r['bias_bytes'] / 2**20:.1f}"]
        for r in sorted(alibi, key=lambda r: (r["seq_len"], r["ratio"]))
    ]  # fmt: skip
    print(table(columns, cells))


# --8<-- [end:alibi_table]

# --8<-- [start:sinusoidal_table]
sinusoidal = rows(results, bench="sinusoidal")
SINUSOIDAL_HEAD = {  # each column's header and width
    "en": [("positions", 9), ("implementation", 14), ("median ms", 9), ("x fill", 7)],
    "zh": [("位置数", 9), ("实现", 14), ("中位数 ms", 10), ("fill 的倍数", 12)],
}


def show_sinusoidal_table(lang="en"):
    columns = [(*head, align) for head, align in zip(SINUSOIDAL_HEAD[lang], "><>>", strict=True)]
    cells = [
        [str(r["seq_len"]), r["impl"], f"{r['median_ms']:.2f}", f"{r['ratio']:.2f}"]
        for r in sorted(sinusoidal, key=lambda r: (r["seq_len"], r["ratio"]))
    ]
    print(table(columns, cells))


# --8<-- [end:sinusoidal_table]

# --8<-- [start:gpu_machine]
import re

from benchmarks.results import DIRECTORY, load_file

record = DIRECTORY / "gpu" / "h100-2026-11-26"  # a measurement record, committed
gpu = load_file(record / "bench-rope.json")
measured_at = re.search(r"at commit (\w+)", (record / "README.md").read_text()).group(1)
copy = row(gpu, bench="rope", layout="half", seq_len=4096, impl="copy")
GPU_TEXT = {
    "en": ("{gpu}, torch {torch}, CUDA {cuda}",
           "measured {date} on posenc at commit {commit}",
           "the copy of q and k moved {tb:.2f} TB/s, "
           "{share:.0%} of the 3.35 TB/s of the H100's specification"),
    "zh": ("{gpu}，torch {torch}，CUDA {cuda}",
           "测量日期：{date}，posenc 取自提交 {commit}",
           "复制 q 和 k 达到 {tb:.2f} TB/s，是 H100 规格标称带宽 3.35 TB/s 的 {share:.0%}"),
}  # fmt: skip


def show_gpu_machine(lang="en"):
    hardware, measured, bandwidth = GPU_TEXT[lang]
    print(hardware.format(**gpu["machine"]))
    print(measured.format(date=gpu["created"][:10], commit=measured_at))
    print(bandwidth.format(tb=copy["gb_per_s"] / 1000, share=copy["gb_per_s"] / 3350))


# --8<-- [end:gpu_machine]

# --8<-- [start:gpu_rope_table]
NAMES = {"posenc": "posenc (eager)"}  # at that commit posenc's default on CUDA was eager
GPU_ROPE_TEXT = {  # a title, and each column's header and width
    "en": ("RoPE, layout {!r}, q and k of shape {}, bfloat16",
           [("implementation", 16), ("median ms", 9), ("x copy", 7), ("of copy bandwidth", 18)]),
    "zh": ("RoPE，{!r} 排布，q 和 k 的形状为 {}，bfloat16",
           [("实现", 16), ("中位数 ms", 10), ("复制的倍数", 11), ("占复制带宽", 11)]),
}  # fmt: skip


def show_gpu_rope_table(lang="en"):
    title, heads = GPU_ROPE_TEXT[lang]
    columns = [(*head, align) for head, align in zip(heads, "<>>>", strict=True)]
    for layout in ("half", "interleaved"):
        measured = rows(gpu, bench="rope", layout=layout, seq_len=4096)
        print(title.format(layout, measured[0]["shape"]))
        cells = [
            [NAMES.get(r["impl"], r["impl"]), f"{r['median_ms']:.2f}", f"{r['ratio']:.2f}",
             f"{1 / r['ratio']:.0%}"]
            for r in sorted(measured, key=lambda r: r["ratio"])
        ]  # fmt: skip
        print(table(columns, cells, indent="  "))


# --8<-- [end:gpu_rope_table]


# --8<-- [start:gpu_alibi]
def markdown_tables(text):
    """Each table of a Markdown page as a list of rows, each row a list of its cells."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):  # not the |---| line under the header
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def first_ms(cell):
    """The first number of a cell such as "0.29–0.43 ms" or "6.6 ms (bias 4 GiB)", else None."""
    found = re.match(r"[\d.]+", cell)
    return float(found.group()) if found else None


notes = (record / "README.md").read_text()  # the record's tables, measured by a separate script
# ALiBi: causal prefill, then one decoding step
alibi_tables = [t for t in markdown_tables(notes) if t[0][:2] == ["L", "SDPA no bias"]]
for header, *body in alibi_tables:
    prefill = "posenc flex" in header
    for cells in body:  # what the chapter says, checked
        ms = {name: first_ms(cell) for name, cell in zip(header, cells, strict=True)}
        if prefill and ms["posenc sdpa (bias tensor)"]:  # FlexAttention itself wins
            flex = ms["FlexAttention called directly, block mask built once"]
            assert flex < ms["posenc sdpa (bias tensor)"]
        if not prefill:  # SDPA with the one-row bias wins a decoding step
            assert ms["posenc sdpa (bias tensor)"] < ms["posenc auto (FlexAttention)"]

GPU_ALIBI_TEXT = {
    "en": ("prefill, L queries:", "decoding, 1 query against L keys:", {}),
    "zh": ("预填充，L 个 query：", "解码，1 个 query 对 L 个 key：", {
        "SDPA no bias": "SDPA 无偏置",
        "posenc sdpa (bias tensor)": "posenc sdpa（偏置张量）",
        "FlexAttention called directly, block mask built once":
            "直接调用 FlexAttention，块掩码只建一次",
        "posenc auto (FlexAttention)": "posenc auto（FlexAttention）",
    }),
}  # the record's headers in each language (its cells stay as the record writes them)  # fmt: skip


def show_gpu_alibi(lang="en"):
    prefill_title, decoding_title, headers = GPU_ALIBI_TEXT[lang]
    for header, *body in alibi_tables:
        print(prefill_title if "posenc flex" in header else decoding_title)
        for cells in [[headers.get(cell, cell) for cell in header], *body]:
            print("  " + " | ".join(cell or "-" for cell in cells))


# --8<-- [end:gpu_alibi]


if __name__ == "__main__":
    show_machine()
    show_rope_table()
    show_targets()
    show_alibi_table()
    show_sinusoidal_table()
    show_gpu_machine()
    show_gpu_rope_table()
    show_gpu_alibi()
