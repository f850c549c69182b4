"""Chapter "A trained extrapolation experiment": read the committed results and print them.

Run it from the repository: python snippets/extrapolation_experiment/results.py
"""

# --8<-- [start:load]
from experiments.extrapolation.results import LABELS, load

report = load("full")  # experiments/extrapolation/results/full.json, checked against its schema
config, hardware = report["config"], report["hardware"]
print(
    f"profile {report['profile']}: {config['layers']} layers, width {config['dim']}, "
    f"{config['heads']} heads, {config['steps']} steps of {config['batch']} x "
    f"{config['train_len']} characters"
)
print(f"hardware: {hardware['cpu']}, {hardware['threads']} thread(s)")
print(
    f"took {report['wall_seconds'] / 60:.1f} min wall clock, "
    f"{report['cpu_seconds'] / 60:.1f} min of CPU time"
)
# --8<-- [end:load]

# --8<-- [start:table]
NAMES = LABELS  # display name of each method, from the results module


def perplexity_table(results, key="perplexity"):
    lengths = report["config"]["eval_lengths"]
    lines = ["| method       | " + " | ".join(f"{n:>6}" for n in lengths) + " |"]
    lines.append("|--------------|" + "|".join("-------:" for _ in lengths) + "|")
    for name, label in NAMES.items():
        row = results[name][key]
        cells = [("   n/a" if row[str(n)] is None else f"{row[str(n)]:6.2f}") for n in lengths]
        lines.append(f"| {label:<12} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


print(perplexity_table(report["results"]))
# --8<-- [end:table]

# --8<-- [start:beyond]
print(perplexity_table(report["results"], key="perplexity_beyond_128"))
# --8<-- [end:beyond]

# --8<-- [start:claims]
results = report["results"]


def ppl(name, length):
    return results[name]["perplexity"][str(length)]


def growth(name):
    """Perplexity at 1024 over perplexity at 128: 1.0 means no loss from the longer input."""
    return ppl(name, 1024) / ppl(name, 128)


for name in ("nope", "sinusoidal", "t5", "rope", "rope+pi", "rope+ntk", "rope+yarn", "alibi"):
    print(f"{NAMES[name]:<12} x{growth(name):.2f}")
usable = [n for n in NAMES if ppl(n, 1024) is not None]
print("best at 128: ", NAMES[min(usable, key=lambda n: ppl(n, 128))])
print("best at 1024:", NAMES[min(usable, key=lambda n: ppl(n, 1024))])

# The reading on the page rests on these:
assert growth("alibi") < 1.05  # ALiBi: flat
assert ppl("alibi", 128) > ppl("rope", 128)  # ... but behind RoPE at the trained length
assert growth("rope") > 2  # plain RoPE: much worse past the trained length
assert growth("rope+yarn") < growth("rope+ntk") < growth("rope")  # YaRN < NTK < nothing
assert ppl("rope+pi", 256) > ppl("rope", 256)  # PI without fine-tuning: worse at 2x
assert growth("sinusoidal") > growth("nope")  # a fixed absolute code hurts more than none
assert ppl("nope", 128) > ppl("rope", 128)  # ... but no code at all costs at every length
assert growth("nope") == min(growth(n) for n in usable if n != "alibi")  # least, after ALiBi
assert ppl("nope", 128) == max(ppl(n, 128) for n in NAMES)  # ... and the weakest at 128
assert growth("t5") < growth("rope+yarn")  # T5 degrades more slowly than any RoPE variant
# --8<-- [end:claims]

# --8<-- [start:exercise]
best_128 = min(ppl(n, 128) for n in usable)
print(f"best at 128: {best_128:.2f}")
for name in usable:
    if ppl(name, 1024) <= 1.2 * best_128:
        print(f"{NAMES[name]:<12} {ppl(name, 1024):.2f} (+{ppl(name, 1024) / best_128 - 1:.0%})")
# --8<-- [end:exercise]
