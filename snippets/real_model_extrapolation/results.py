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
        "took": "forward passes: {parts} of a 2-core CPU",
        "part": "{minutes:.0f} min on {threads} thread{plural}",
        "and": " and ",
    },
    "zh": {
        "run": "长度 {lengths}，每个输入 {needles} 个 needle，各长度完成的轮数 {rounds}",
        "took": "前向计算：在一台双核 CPU 上，{parts}",
        "part": "用 {threads} 个线程 {minutes:.0f} 分钟",
        "and": "，",
    },
}


def show_run(lang="en"):
    text = TEXT[lang]
    rounds = {int(n): r for n, r in report["rounds"].items()}
    print(text["run"].format(lengths=lengths, needles=len(config["depths"]), rounds=rounds))
    parts = [  # resumed runs may have used other numbers of threads
        text["part"].format(minutes=seconds / 60, threads=threads, plural="s"[: threads != "1"])
        for threads, seconds in report["seconds_by_threads"].items()
    ]
    print(text["took"].format(parts=text["and"].join(parts)))


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

SPANS = [(start, start + 4096) for start in range(0, 32768, 4096)]


def perplexity_between(name, start, end):
    """Perplexity of the text tokens at positions [start, end) of the 32768-token inputs."""
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


BROKEN = 3.0  # a span is "lost" when its perplexity is this many times the best method's there
BREAKS = {"en": ("loses the text from {}", "keeps the text to 32k"),
          "zh": ("从 {} 起读不懂文本", "到 32k 都读得懂文本")}  # fmt: skip


def first_lost_span(name):
    """Index of the first span where ``name`` is BROKEN times the best method, or None."""
    for i, span in enumerate(SPANS):
        best = min(perplexity_between(n, *span) for n in LABELS)
        if perplexity_between(name, *span) > BROKEN * best:
            return i
    return None


def show_breaks(lang="en"):
    for name, label in NAMES[lang].items():
        i = first_lost_span(name)
        where = (
            BREAKS[lang][1]
            if i is None
            else BREAKS[lang][0].format(f"{SPANS[i][0] // 1024}k–{SPANS[i][1] // 1024}k")
        )
        print(f"{label:<{14 - wide(label)}} {where}")


# --8<-- [end:perplexity]

# --8<-- [start:attention]
# query positions probed (one every 1024 tokens of the 32768-token inputs), in four spans
QUERY_SPANS = [(0, 8192), (8192, 16384), (16384, 24576), (24576, 32768)]
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
def ppl(name, span):  # span: an index into SPANS (4096 positions each)
    return perplexity_between(name, *SPANS[span])


def digits(name, length):
    cells = report["passkey"][name][str(length)].values()
    return sum(c["digits"] * c["count"] for c in cells) / sum(c["count"] for c in cells)


def span_of(position):
    return position // 4096


KEEP_FAST = ["ntk", "dynamic", "yarn", "llama3"]  # the scalings that keep the fast pairs
HALVED = ["ntk", "yarn", "llama3"]  # ... of which these halve the slowest pair at any length
inside, longest = [n for n in lengths if n <= 8192], lengths[-1]
before_8k = range(span_of(8192))
# PI with s = 2 and no fine-tuning breaks the model at every length, inside 8192 too
assert all(ppl("linear", i) > 3 * ppl("none", i) for i in before_8k)
assert all(found(report, "linear", n)[0] == 0 and digits("linear", n) < 1 for n in lengths)
# plain RoPE: as good as the best method up to 8192, loses the text between 12k and 16k ...
assert all(ppl("none", i) <= 1.05 * min(ppl(n, i) for n in LABELS) for i in before_8k)
assert first_lost_span("none") == span_of(12288)
# ... NTK-aware, YaRN and Llama 3 lose it at about twice that position (20k to 28k) ...
assert all(span_of(20480) <= first_lost_span(n) <= span_of(24576) for n in HALVED)
assert all(abs(SPANS[first_lost_span(n)][0] - 2 * SPANS[first_lost_span("none")][0]) <= 4096
           for n in HALVED)  # fmt: skip
# ... NTK-aware (middle pairs slowed by less than half) no later than YaRN and Llama 3
assert first_lost_span("ntk") < min(first_lost_span(n) for n in ("yarn", "llama3"))
assert first_lost_span("yarn") == first_lost_span("llama3") == 2 * first_lost_span("none")
# plain RoPE degrades past 8192 before it collapses: 1.6 times the best at 8k-12k
assert round(ppl("none", 2) / min(ppl(n, 2) for n in LABELS), 1) == 1.6
# ... and dynamic NTK keeps it to 32768, paying on the first 8192 positions (its 32k base)
assert first_lost_span("dynamic") is None
cost = [round(100 * (ppl("dynamic", i) / ppl("none", i) - 1)) for i in before_8k]
assert cost == [15, 26]
# NTK-aware, YaRN and Llama 3 agree within 10 % up to 16384 and cost little below 8192
for i in range(span_of(16384)):
    assert max(ppl(n, i) for n in HALVED) < 1.1 * min(ppl(n, i) for n in HALVED)
assert all(ppl(n, i) < 1.1 * ppl("none", i) for n in HALVED for i in before_8k)
# passkeys: plain RoPE at 16384 gets fewer digits right than uniform guessing (0.5 of 5),
# inside 8192 as many as the others; at 32768 no method finds any needle
assert found(report, "none", 16384)[0] == 0 and digits("none", 16384) < 0.5
assert all(digits("none", n) >= 3.5 for n in inside)
assert all(found(report, m, 32768)[0] == 0 for m in LABELS)
assert digits("dynamic", 32768) > max(digits(m, 32768) for m in LABELS if m != "dynamic")
# the scalings that keep the fast pairs: more than 2 digits of 5 at 16384, fewer needles
# found there than at 2048 (as a share)
share = lambda m, n: found(report, m, n)[0] / found(report, m, n)[1]  # noqa: E731
assert all(digits(m, 16384) > 2 and share(m, 16384) < share(m, 2048) for m in KEEP_FAST)


# depth: no method finds the deepest needle at 8192 or 16384; most of what the four
# scalings find at 16384 is at depth 0.5 or later
def found_at(length, depth, methods=LABELS):
    return sum(report["passkey"][m][str(length)][str(depth)]["found"] for m in methods)


assert found_at(8192, 0.1) == found_at(16384, 0.1) == 0
for n in inside:  # the nearest needle (depth 0.9) is the one found most often
    assert found_at(n, 0.9) == max(found_at(n, d) for d in config["depths"])


# (how far back the needles are: the mean distance from needle to the end of its question)
def back(length, depth):
    return report["passkey"]["none"][str(length)][str(depth)]["distance"]


assert round(back(32768, 0.9), -2) == 3300  # the nearest needle at 32768
assert round(back(16384, 0.3), -2) == 11500 and round(back(16384, 0.1), -2) == 14700
# ... and past L0 it happens: depth 0.3 of 16384 (about 11 500 back) 4 times in 16, YaRN 3 in 4
assert found_at(16384, 0.3, KEEP_FAST) == 4 and found_at(16384, 0.3, ["yarn"]) == 3
assert report["passkey"]["yarn"]["16384"]["0.3"]["count"] == 4
near = sum(found_at(16384, d, KEEP_FAST) for d in config["depths"] if d >= 0.5)
assert near > 0.5 * sum(found_at(16384, d, KEEP_FAST) for d in config["depths"])
# even inside its trained length the model misses some of the five needles, every method
assert all(found(report, m, n)[0] < found(report, m, n)[1] for m in LABELS for n in inside)
# attention: the share on the first tokens falls where a method has lost the text ...
sink = {n: [attention_between(n, "sink", a, b) for a, b in QUERY_SPANS] for n in LABELS}
assert max(sink["none"][2:]) < 0.1 < min(sink["none"][:2])  # plain RoPE: gone past 16k
assert all(sink[n][3] < 0.7 * sink[n][2] for n in HALVED)  # the halved ones: in the last span
assert min(sink["dynamic"]) > 0.2  # dynamic NTK: kept
assert min(sink["linear"][:3]) > 0.25  # PI lost the text from the start, yet keeps its share
# ... and YaRN's attention is the sharpest (lowest entropy) of the scalings in every span
for a, b in QUERY_SPANS:
    entropy = {n: attention_between(n, "entropy", a, b) for n in KEEP_FAST}
    assert min(entropy, key=entropy.get) == "yarn"
# --8<-- [end:claims]

# --8<-- [start:exercise]
for name, label in LABELS.items():
    cells = report["passkey"][name]["16384"]
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
