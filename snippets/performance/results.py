"""Chapter "Performance": read the committed benchmark results and print them.

Run it: python snippets/performance/results.py   (reads benchmarks/results/cpu.json)
"""

# --8<-- [start:machine]
from benchmarks.results import load, row, rows

results = load("cpu")  # benchmarks/results/cpu.json, checked against its schema
machine = results["machine"]
print(f"{machine['cpu']}, {machine['cpu_count']} cores, {machine['torch_threads']} torch threads")
print(f"torch {machine['torch']}, Python {machine['python']}")
load = results["load_average"]  # 1-minute load average: above 1 per core, others ran too
print(f"load average {load['start']} at the start, {load['end']} at the end")
print(f"allocator: {results['allocator']}")
print(f"measured {results['created'][:10]}")
# --8<-- [end:machine]


# --8<-- [start:rope_table]
def rope_rows(layout, seq_len=1024):
    return rows(results, bench="rope", layout=layout, seq_len=seq_len)


for layout in ("half", "interleaved"):
    print(f"RoPE, layout {layout!r}, q and k of shape {rope_rows(layout)[0]['shape']}, float32")
    print(f"  {'implementation':15} {'median ms':>9} {'x copy':>7} {'GB/s':>6}")
    for r in sorted(rope_rows(layout), key=lambda r: r["ratio"]):
        print(f"  {r['impl']:15} {r['median_ms']:9.1f} {r['ratio']:7.2f} {r['gb_per_s']:6.1f}")
# --8<-- [end:rope_table]


# --8<-- [start:rope_claims]
def ratio(layout, impl, seq_len=1024):
    return row(results, bench="rope", layout=layout, seq_len=seq_len, impl=impl)["ratio"]


for layout in ("half", "interleaved"):
    textbook = ratio(layout, "hf_eager")
    for impl in ("posenc", "posenc_compiled"):
        mine = ratio(layout, impl)
        near = "met" if mine <= 1.5 else "NOT met"
        fast = "met" if textbook / mine >= 2 else "NOT met"
        print(f"{layout:11} {impl:15} {mine:.2f}x copy (target 1.5x: {near}), "
              f"{textbook / mine:.1f}x faster than hf_eager (target 2x: {fast})")  # fmt: skip

print(f"mul_table (a pass that reads a table): {ratio('half', 'mul_table'):.2f}x copy (half), "
      f"{ratio('interleaved', 'mul_table'):.2f}x (interleaved)")  # fmt: skip

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
print(f"{'L':>5} {'implementation':14} {'median ms':>9} {'x no bias':>9} {'bias MiB':>8}")
for r in sorted(alibi, key=lambda r: (r["seq_len"], r["ratio"])):
    print(
        f"{r['seq_len']:5} {r['impl']:14} {r['median_ms']:9.1f} {r['ratio']:9.2f} "
        f"{r['bias_bytes'] / 2**20:8.1f}"
    )
# --8<-- [end:alibi_table]

# --8<-- [start:sinusoidal_table]
table = rows(results, bench="sinusoidal")
print(f"{'positions':>9} {'implementation':14} {'median ms':>9} {'x fill':>7}")
for r in sorted(table, key=lambda r: (r["seq_len"], r["ratio"])):
    print(f"{r['seq_len']:9} {r['impl']:14} {r['median_ms']:9.2f} {r['ratio']:7.2f}")
# --8<-- [end:sinusoidal_table]

# --8<-- [start:gpu_machine]
import re

from benchmarks.results import DIRECTORY, load_file

record = DIRECTORY / "gpu" / "h100-2026-11-26"  # a measurement record, committed
gpu = load_file(record / "bench-rope.json")
measured_at = re.search(r"at commit (\w+)", (record / "README.md").read_text()).group(1)
machine = gpu["machine"]
print(f"{machine['gpu']}, torch {machine['torch']}, CUDA {machine['cuda']}")
print(f"measured {gpu['created'][:10]} on posenc at commit {measured_at}")
copy = row(gpu, bench="rope", layout="half", seq_len=4096, impl="copy")
print(f"the copy of q and k moved {copy['gb_per_s'] / 1000:.2f} TB/s, "
      f"{copy['gb_per_s'] / 3350:.0%} of the 3.35 TB/s of the H100's specification")  # fmt: skip
# --8<-- [end:gpu_machine]

# --8<-- [start:gpu_rope_table]
NAMES = {"posenc": "posenc (eager)"}  # at that commit posenc's default on CUDA was eager
for layout in ("half", "interleaved"):
    measured = rows(gpu, bench="rope", layout=layout, seq_len=4096)
    print(f"RoPE, layout {layout!r}, q and k of shape {measured[0]['shape']}, bfloat16")
    print(f"  {'implementation':16} {'median ms':>9} {'x copy':>7} {'of copy bandwidth':>18}")
    for r in sorted(measured, key=lambda r: r["ratio"]):
        name = NAMES.get(r["impl"], r["impl"])
        print(f"  {name:16} {r['median_ms']:9.2f} {r['ratio']:7.2f} {1 / r['ratio']:18.0%}")
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
for table in markdown_tables(notes):
    header = table[0]
    if header[:2] == ["L", "SDPA no bias"]:  # ALiBi: causal prefill, then one decoding step
        prefill = "posenc flex" in header
        print("prefill, L queries:" if prefill else "decoding, 1 query against L keys:")
        for cells in table:
            print("  " + " | ".join(cell or "-" for cell in cells))
        for cells in table[1:]:  # what the chapter says, checked
            ms = {name: first_ms(cell) for name, cell in zip(header, cells, strict=True)}
            if prefill and ms["posenc sdpa (bias tensor)"]:  # FlexAttention itself wins
                flex = ms["FlexAttention called directly, block mask built once"]
                assert flex < ms["posenc sdpa (bias tensor)"]
            if not prefill:  # SDPA with the one-row bias wins a decoding step
                assert ms["posenc sdpa (bias tensor)"] < ms["posenc auto (FlexAttention)"]
# --8<-- [end:gpu_alibi]
