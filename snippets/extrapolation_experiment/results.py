"""Chapter "A trained extrapolation experiment": read the committed results and print them.

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/extrapolation_experiment/results.py
"""

# --8<-- [start:load]
from experiments.extrapolation.results import LABELS, load

report = load("full")  # experiments/extrapolation/results/full.json, checked against its schema
config, hardware = report["config"], report["hardware"]
TEXT = {
    "en": {
        "profile": "profile {p}: {layers} layers, width {dim}, {heads} heads, {steps} steps of "
        "{batch} x {train_len} characters, seed {seed}",
        "hardware": "hardware: {cpu}, {threads} thread(s)",
        "took": "took {wall:.1f} min wall clock, {cpu:.1f} min of CPU time",
    },
    "zh": {
        "profile": "配置 {p}：{layers} 层，宽度 {dim}，{heads} 个头，训练 {steps} 步，"
        "每步 {batch} 条 × {train_len} 个字符，随机种子 {seed}",
        "hardware": "硬件：{cpu}，{threads} 个线程",
        "took": "实际耗时 {wall:.1f} 分钟，CPU 时间 {cpu:.1f} 分钟",
    },
}


def show_run(lang="en"):
    text = TEXT[lang]
    print(text["profile"].format(p=report["profile"], **config))
    print(text["hardware"].format(**hardware))
    print(text["took"].format(wall=report["wall_seconds"] / 60, cpu=report["cpu_seconds"] / 60))


# --8<-- [end:load]

# --8<-- [start:table]
import unicodedata

NAMES = {
    "en": LABELS,  # display name of each method, from the results module
    "zh": LABELS
    | {"nope": "无（NoPE）", "sinusoidal": "正弦", "learned": "可学习", "t5": "T5 偏置"},
}
HEADER = {"en": "method", "zh": "方法"}
NOT_RUN = {"en": "n/a", "zh": "不适用"}  # learned positions stop at the trained length


def pad(text, width, right=False):
    """``text`` padded to ``width`` columns of a terminal: a Chinese character takes two."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))
    fill = " " * max(width - shown, 0)
    return fill + str(text) if right else str(text) + fill


def rows(lang, lengths, cell, width):
    """A table: a row per method, a column per length; ``cell(name, length)`` is its text."""
    head = " | ".join(pad(n, width, right=True) for n in lengths)
    lines = [f"| {pad(HEADER[lang], 12)} | {head} |"]
    lines.append("|--------------|" + "|".join("-" * (width + 1) + ":" for _ in lengths) + "|")
    for name, label in NAMES[lang].items():
        cells = " | ".join(pad(cell(name, n), width, right=True) for n in lengths)
        lines.append(f"| {pad(label, 12)} | {cells} |")
    return "\n".join(lines)


def show_perplexity(lang="en", key="perplexity"):
    def cell(name, length):
        value = report["results"][name][key][str(length)]
        return NOT_RUN[lang] if value is None else f"{value:.2f}"

    print(rows(lang, config["eval_lengths"], cell, 6))


# --8<-- [end:table]

# --8<-- [start:claims]
results = report["results"]
usable = [n for n in LABELS if results[n]["perplexity"]["1024"] is not None]


def ppl(name, length):
    return results[name]["perplexity"][str(length)]


def growth(name):
    """Perplexity at 1024 over perplexity at 128: 1.0 means no loss from the longer input."""
    return ppl(name, 1024) / ppl(name, 128)


def show_growth(lang="en"):
    for name in usable:
        print(f"{pad(NAMES[lang][name], 12)} x{growth(name):.2f}")
    best = {"en": ("best at 128:  ", "best at 1024: "), "zh": ("128 处最好：", "1024 处最好：")}
    print(best[lang][0] + NAMES[lang][min(usable, key=lambda n: ppl(n, 128))])
    print(best[lang][1] + NAMES[lang][min(usable, key=lambda n: ppl(n, 1024))])


# The reading on the page rests on these:
assert growth("alibi") < 1.05  # ALiBi: flat
assert ppl("alibi", 128) > ppl("rope", 128)  # ... but behind RoPE at the trained length
assert growth("rope") > 2  # plain RoPE: much worse past the trained length
assert growth("rope+yarn") < growth("rope+ntk") < growth("rope")  # YaRN < NTK < nothing
assert ppl("rope+pi", 256) > ppl("rope", 256)  # PI without fine-tuning: worse at 2x
assert growth("sinusoidal") > growth("nope")  # a fixed absolute code hurts more than none
assert ppl("nope", 128) > ppl("rope", 128)  # ... but no code at all costs at every length
assert growth("nope") == min(growth(n) for n in usable if n != "alibi")  # least, after ALiBi
assert ppl("nope", 128) == max(ppl(n, 128) for n in LABELS)  # ... and the weakest at 128
assert growth("t5") < growth("rope+yarn")  # T5 degrades more slowly than any RoPE variant
# A head of 16 dimensions has 8 pairs; 3 turn at least once in 128 positions, and at 1024
# YaRN (its ramp is set for pairs that turn 32 times) keeps only pair 0 at full speed.
import math

import posenc
from experiments.extrapolation.train import rope_variants

head_dim = report["config"]["dim"] // report["config"]["heads"]
plain = posenc.rope_inv_freq(head_dim)[0]
assert head_dim == 16 and int((128 * plain / (2 * math.pi) >= 1).sum()) == 3
yarn_1024 = rope_variants(1024, head_dim)["rope+yarn"]["scaling"]
ratios = (posenc.rope_inv_freq(head_dim, scaling=yarn_1024)[0] / plain).tolist()
assert ratios[0] == 1.0 and all(r < 1 for r in ratios[1:])
# --8<-- [end:claims]

# --8<-- [start:seeds]
import posenc
from experiments.extrapolation.results import committed_seeds, spread

seeds = committed_seeds()  # results/seeds.json, or the quick profile until that is committed
SEEDS_TEXT = {
    "en": {
        "quick": "profile quick: a pipeline check ({layers} layer(s), width {dim}, {steps} steps), "
        "seeds {seeds}; these numbers measure nothing",
        "full": "profile full: the models above, seeds {seeds}",
        "passkey": "passkey fine-tuning: {steps} steps of {batch} x {n} characters, "
        "{examples} examples per depth and length, chance {chance:g}",
        "took": "took {wall:.1f} min wall clock, {cpu:.1f} min of CPU time",
    },
    "zh": {
        "quick": "配置 quick：只检查流程能否跑通（{layers} 层，宽度 {dim}，{steps} 步），"
        "随机种子 {seeds}；这些数字不说明任何问题",
        "full": "配置 full：即上面的模型，随机种子 {seeds}",
        "passkey": "passkey 微调：{steps} 步，每步 {batch} 条 × {n} 个字符；"
        "每个深度、每个长度 {examples} 个样例；随机猜中的概率 {chance:g}",
        "took": "实际耗时 {wall:.1f} 分钟，CPU 时间 {cpu:.1f} 分钟",
    },
}


def show_seeds(lang="en"):
    text, ret = SEEDS_TEXT[lang], seeds["config"]["retrieval"]
    print(text[seeds["profile"]].format(seeds=seeds["config"]["seeds"], **seeds["config"]["lm"]))
    print(text["passkey"].format(n=seeds["config"]["train_len"], **ret))
    if seeds["profile"] == "full":  # a quick run's timings change from run to run
        print(text["took"].format(wall=seeds["wall_seconds"] / 60, cpu=seeds["cpu_seconds"] / 60))


def show_spread(lang="en", key="perplexity"):
    """Mean over the seeds, and the lowest and highest seed in brackets."""

    def cell(name, length):
        s = spread(seeds, name, length, key)
        if s is None:
            return NOT_RUN[lang]
        if key == "retrieval":  # percent of passkeys found
            return f"{100 * s[0]:.0f} ({100 * s[1]:.0f}–{100 * s[2]:.0f})"
        return f"{s[0]:.2f} ({s[1]:.2f}–{s[2]:.2f})"

    print(rows(lang, seeds["config"]["eval_lengths"], cell, 19))


def found(name, length):
    """Share of passkeys found, one value per seed (in seed order)."""
    return [run["retrieval"][str(length)] for run in seeds["runs"][name].values()]


if seeds["profile"] == "full":  # the reading below the tables rests on these, seed by seed
    beyond = [n for n in LABELS if n != "learned"]
    assert min(min(found(n, 128)) for n in LABELS) > 100 * seeds["config"]["retrieval"]["chance"]
    assert max(found("nope", 128)) < 0.2  # ... but NoPE learned the format least
    assert min(found("sinusoidal", 128)) > 0.6 and max(found("sinusoidal", 256)) == 0
    assert max(found("rope", 128)) - min(found("rope", 128)) > 0.5  # seeds disagree at 128
    rope_128 = found("rope", 128)
    best, worst = rope_128.index(max(rope_128)), rope_128.index(min(rope_128))
    assert all(rope_128[best] >= found(n, 128)[best] for n in LABELS)  # first in one seed
    assert [n for n in LABELS if found(n, 128)[worst] < rope_128[worst]] == ["nope"]  # last but 1
    assert max(found("rope", 1024)) == 0 and max(found("rope+pi", 1024)) <= 0.05
    assert all(  # YaRN finds more than plain RoPE at every longer length, in every seed
        y > r
        for n in (256, 512, 1024)
        for y, r in zip(found("rope+yarn", n), found("rope", n), strict=True)
    )
    assert min(found("t5", 256)) > 0.9 and max(found("t5", 1024)) < 0.4  # T5: 2x yes, 8x no
    runs = seeds["runs"]
    ppl_1024 = {n: [r["perplexity"]["1024"] for r in runs[n].values()] for n in beyond}
    for i in range(len(seeds["config"]["seeds"])):  # perplexity at 1024, seed by seed
        at = {n: values[i] for n, values in ppl_1024.items()}
        assert at["alibi"] == min(at.values())  # ALiBi lowest in every seed
        assert at["rope+yarn"] < at["rope+ntk"] < at["rope"]  # YaRN < NTK < plain RoPE
    assert all(t < r for t, r in zip(ppl_1024["t5"], ppl_1024["rope"], strict=True))
    assert any(y < t for y, t in zip(ppl_1024["rope+yarn"], ppl_1024["t5"], strict=True))
    assert any(y > t for y, t in zip(ppl_1024["rope+yarn"], ppl_1024["t5"], strict=True))
    # three seed-0 readings that the other seeds do not keep
    rise = {n: [r["perplexity"]["1024"] / r["perplexity"]["128"] for r in runs[n].values()]
            for n in ("rope", "rope+pi", "rope+yarn", "t5")}  # fmt: skip
    later = slice(1, None)  # seeds 1 and 2
    assert rise["rope"][0] > rise["rope+pi"][0]  # seed 0: plain RoPE grows the most ...
    assert all(p > r for p, r in zip(rise["rope+pi"][later], rise["rope"][later], strict=True))
    assert all(
        p > r for p, r in zip(ppl_1024["rope+pi"][later], ppl_1024["rope"][later], strict=True)
    )
    assert spread(seeds, "rope+pi", 1024)[0] > spread(seeds, "rope", 1024)[0]  # and on the mean
    assert rise["rope+yarn"][2] < rise["t5"][2] < rise["rope+yarn"][2] + 0.01  # seed 2: a tie
    # the passkey fine-tuning did not finish for NoPE (every seed) and RoPE seed 1
    final = {n: [r["retrieval_final_loss"] for r in runs[n].values()] for n in LABELS}
    assert min(final["nope"]) > 0.8 and final["rope"][1] > 0.75 > 0.3 > final["rope"][0]
    assert max(max(final[n]) for n in ("sinusoidal", "learned", "t5", "alibi")) < 0.2
    flattest = min(posenc.alibi_slope_values(seeds["config"]["lm"]["heads"]))
    assert flattest == 2**-8 and round(flattest * 1023, 1) == 4.0  # penalty of the farthest key
    assert all(  # ALiBi finds the most at 1024, in every seed
        a > max(found(n, 1024)[i] for n in beyond if n != "alibi")
        for i, a in enumerate(found("alibi", 1024))
    )
# --8<-- [end:seeds]


# --8<-- [start:exercise]
def show_close_at_1024(lang="en"):
    """The methods whose perplexity at 1024 is within 20 % of the best at 128."""
    best_128 = min(ppl(n, 128) for n in usable)
    print({"en": "best at 128: ", "zh": "128 处最好："}[lang] + f"{best_128:.2f}")
    for name in usable:
        if ppl(name, 1024) <= 1.2 * best_128:
            rise = ppl(name, 1024) / best_128 - 1
            print(f"{pad(NAMES[lang][name], 12)} {ppl(name, 1024):.2f} (+{rise:.0%})")


# --8<-- [end:exercise]
