"""Chapter "A real model past its context": read the committed results of
experiments/smollm2/ and print them, with labels in the reader's language.

Run it from the repository: python snippets/real_model_extrapolation/results.py
"""

# --8<-- [start:load]
from experiments.smollm2.results import LABELS, found, load, wilson

report = load("full")  # experiments/smollm2/results/full.json, checked against its schema
config = report["config"]
lengths = config["lengths"]
TEXT = {
    "en": {
        "run": "lengths {lengths}, {needles} needles per input, rounds finished per length {rounds}",
        "took": "forward passes: {minutes:.0f} min on {threads} thread of a shared 2-core CPU",
    },
    "zh": {
        "run": "长度 {lengths}，每个输入 {needles} 个 needle，各长度完成的轮数 {rounds}",
        "took": "前向计算：在一台共享的双核 CPU 上用 {threads} 个线程，共 {minutes:.0f} 分钟",
    },
}


def show_run(lang="en"):
    text = TEXT[lang]
    rounds = {int(n): r for n, r in report["rounds"].items()}
    print(text["run"].format(lengths=lengths, needles=len(config["depths"]), rounds=rounds))
    threads = report["hardware"]["threads"]
    print(text["took"].format(minutes=report["unit_seconds"] / 60, threads=threads))


# --8<-- [end:load]

# --8<-- [start:passkey]
NAMES = {
    "en": LABELS,
    "zh": LABELS | {"none": "不缩放的 RoPE", "linear": "位置内插（PI）", "dynamic": "动态 NTK"},
}
HEADER = {"en": "method", "zh": "方法"}


def wide(label):
    """Chinese characters take two columns: pad them one less each."""
    return sum(ord(c) > 0x2E80 for c in label)


def table(lang, cell, width):
    """A row per method, a column per length; ``cell(method, length)`` is the text."""
    lines = [
        f"| {HEADER[lang]:<{14 - wide(HEADER[lang])}} | "
        + " | ".join(f"{n:>{width}}" for n in lengths)
        + " |"
    ]
    lines.append("|" + "-" * 16 + "|" + "|".join("-" * (width + 1) + ":" for _ in lengths) + "|")
    for name, label in NAMES[lang].items():
        cells = " | ".join(f"{cell(name, n):>{width}}" for n in lengths)
        lines.append(f"| {label:<{14 - wide(label)}} | {cells} |")
    return "\n".join(lines)


def show_passkey(lang="en"):
    """Needles found / asked, and the 95 % Wilson interval in percent."""

    def cell(name, length):
        k, n = found(report, name, length)
        low, high = wilson(k, n)
        return f"{k}/{n} ({100 * low:.0f}–{100 * high:.0f})"

    print(table(lang, cell, 14))


# --8<-- [end:passkey]


# --8<-- [start:digits]
def show_digits(lang="en"):
    """Mean number of the five digits that were the model's first choice."""

    def cell(name, length):
        cells = report["passkey"][name][str(length)].values()
        n = sum(c["count"] for c in cells)
        return f"{sum(c['digits'] * c['count'] for c in cells) / n:.1f}"

    print(table(lang, cell, 6))


# --8<-- [end:digits]

# --8<-- [start:perplexity]
import math

SPANS = [(0, 4096), (4096, 8192), (8192, 10240), (10240, 12288), (12288, 14336), (14336, 16384)]


def perplexity_between(name, start, end):
    """Perplexity of the text tokens at positions [start, end) of the 16384-token inputs."""
    entry = report["perplexity"][name]
    total = count = 0
    for s, ppl, tokens in zip(entry["starts"], entry["perplexity"], entry["tokens"], strict=True):
        if start <= s < end and tokens:
            total += tokens * math.log(ppl)
            count += tokens
    return math.exp(total / count)


def show_perplexity(lang="en"):
    spans = [f"{a / 1024:g}k–{b / 1024:g}k" for a, b in SPANS]
    print(
        f"| {HEADER[lang]:<{14 - wide(HEADER[lang])}} | "
        + " | ".join(f"{s:>8}" for s in spans)
        + " |"
    )
    print("|" + "-" * 16 + "|" + "|".join("-" * 9 + ":" for _ in spans) + "|")
    for name, label in NAMES[lang].items():
        cells = " | ".join(f"{perplexity_between(name, a, b):>8.1f}" for a, b in SPANS)
        print(f"| {label:<{14 - wide(label)}} | {cells} |")


# --8<-- [end:perplexity]

# --8<-- [start:attention]
# query positions probed (one every 1024 tokens of the 16384-token inputs), in three spans
QUERY_SPANS = [(0, 8192), (8192, 12288), (12288, 16384)]
DEEP = range(15, 30)  # the last 15 of the 30 layers


def attention_between(name, key, start, end, layers=DEEP):
    """Mean of ``key`` over the probed queries in [start, end) and over ``layers`` (and the
    heads and rounds): "sink" (attention on the first 4 tokens) or "entropy" (nats)."""
    entry = report["attention"][name]
    queries = [i for i, q in enumerate(entry["queries"]) if start <= q < end]
    values = [entry[key][layer][q] for layer in layers for q in queries]
    return sum(values) / len(values)


def show_attention(lang="en", key="sink", layers=DEEP):
    spans = [f"{a // 1024}k–{b // 1024}k" for a, b in QUERY_SPANS]
    print(
        f"| {HEADER[lang]:<{14 - wide(HEADER[lang])}} | "
        + " | ".join(f"{s:>7}" for s in spans)
        + " |"
    )
    print("|" + "-" * 16 + "|" + "|".join("-" * 8 + ":" for _ in spans) + "|")
    for name, label in NAMES[lang].items():
        cells = " | ".join(
            f"{attention_between(name, key, a, b, layers):>7.2f}" for a, b in QUERY_SPANS
        )
        print(f"| {label:<{14 - wide(label)}} | {cells} |")


# --8<-- [end:attention]


# --8<-- [start:claims]
def ppl(name, span):  # span: an index into SPANS
    return perplexity_between(name, *SPANS[span])


def digits(name, length):
    cells = report["passkey"][name][str(length)].values()
    return sum(c["digits"] * c["count"] for c in cells) / sum(c["count"] for c in cells)


KEEP_FAST = ["ntk", "dynamic", "yarn", "llama3"]  # the scalings that keep the fast pairs
inside, longest = [n for n in lengths if n <= 8192], lengths[-1]
# PI with s = 2 and no fine-tuning breaks the model at every length, inside 8192 too
assert all(ppl("linear", i) > 3 * ppl("none", i) for i in (0, 1, 2))
assert all(found(report, "linear", n)[0] == 0 and digits("linear", n) < 1 for n in lengths)
# plain RoPE: as good as any method up to 10k tokens, then it loses the text
assert all(ppl("none", i) <= 1.05 * min(ppl(n, i) for n in KEEP_FAST) for i in (0, 1, 2))
assert ppl("none", 3) > 1.5 * max(ppl(n, 3) for n in KEEP_FAST)
assert ppl("none", 4) > 10 * max(ppl(n, 4) for n in KEEP_FAST)
assert ppl("none", 5) > 10 * max(ppl(n, 5) for n in KEEP_FAST)
# ... and at 16384 it finds no needle and gets fewer digits right than uniform guessing
# would (0.5 of 5), none at all at depths 0.1 to 0.5; inside 8192 as many as the others
assert found(report, "none", longest)[0] == 0 and digits("none", longest) < 0.5
assert all(report["passkey"]["none"][str(longest)][d]["digits"] == 0 for d in ("0.1", "0.3", "0.5"))
assert all(digits("none", n) >= 3.5 for n in inside)
# the four that keep the fast pairs: close to each other at every span, and cost little
# below 8192 (within 10 % of plain RoPE's perplexity)
for i in range(len(SPANS)):
    assert max(ppl(n, i) for n in KEEP_FAST) < 1.15 * min(ppl(n, i) for n in KEEP_FAST)
assert all(ppl(n, i) < 1.1 * ppl("none", i) for n in KEEP_FAST for i in (0, 1))
# ... and they still get digits right at 16384; they find fewer needles there than at 2048,
# but each 16384 interval overlaps the 2048 one: two inputs cannot show a drop
assert all(digits(n, longest) > 2 for n in KEEP_FAST)
assert all(found(report, n, longest)[0] <= found(report, n, 2048)[0] for n in KEEP_FAST)
assert all(
    wilson(*found(report, n, longest))[1] > wilson(*found(report, n, 2048))[0] for n in KEEP_FAST
)
# even inside its trained length the model misses some of the five needles, every method
assert all(found(report, m, n)[0] < found(report, m, n)[1] for m in LABELS for n in inside)
# the deepest needle at 16384 (about 14 700 tokens back) is the one least often found
by_depth = {
    d: sum(report["passkey"][m][str(longest)][str(d)]["found"] for m in LABELS)
    for d in config["depths"]
}
assert by_depth[0.1] == min(by_depth.values()) == 0 < max(by_depth.values())


def found_at(length, depth, methods=LABELS):
    return sum(report["passkey"][m][str(length)][str(depth)]["found"] for m in methods)


# far needles are missed inside the trained length too: at 8192 no method finds a needle at
# depth 0.1 or 0.3 (about 7400 and 5700 tokens back)
assert found_at(8192, 0.1) == found_at(8192, 0.3) == 0
# at 16384, 8 of the 10 needles the four scalings find are at depth 0.5 or later
finds = {d: found_at(longest, d, KEEP_FAST) for d in config["depths"]}
assert sum(finds.values()) == 10 and sum(k for d, k in finds.items() if d >= 0.5) == 8
# YaRN: the sharpest attention (lowest entropy) of all methods in every span
for a, b in QUERY_SPANS:
    entropy = {n: attention_between(n, "entropy", a, b) for n in LABELS}
    assert min(entropy, key=entropy.get) == "yarn"
# entropy grows with position for every method; the share on the first tokens falls most
# for plain RoPE
assert all(
    attention_between(n, "entropy", *QUERY_SPANS[0])
    < attention_between(n, "entropy", *QUERY_SPANS[2])
    for n in LABELS
)
drop = {
    n: attention_between(n, "sink", *QUERY_SPANS[0]) - attention_between(n, "sink", *QUERY_SPANS[2])
    for n in LABELS
}
assert max(drop, key=drop.get) == "none"
# --8<-- [end:claims]

# --8<-- [start:exercise]
for name, label in LABELS.items():
    cells = report["passkey"][name][str(lengths[-1])]
    reached = [d for d, cell in cells.items() if cell["found"]]
    print(f"{label:<12} {', '.join(reached) or '-'}")
# --8<-- [end:exercise]

if __name__ == "__main__":
    show_run()
    show_passkey()
    show_digits()
    show_perplexity()
    show_attention()
    show_attention(key="entropy")
    show_attention(layers=range(15))
