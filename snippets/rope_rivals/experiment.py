"""Chapter "RoPE's rivals": xPos, KERPLE, FIRE and CoPE in chapter 8's experiment, read from the
committed results next to chapter 8's RoPE and ALiBi.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/rope_rivals/experiment.py
"""

# --8<-- [start:runs]
import math
import unicodedata

from experiments.extrapolation.results import load, load_seeds, spread

chapter8, rivals = load("full"), load("full", rivals=True)  # results/full.json, rivals.json
chapter8_seeds = load_seeds("full")  # results/seeds.json
rival_seeds = load_seeds("full", rivals=True)  # results/rivals-seeds.json
assert rivals["config"] == chapter8["config"]  # the same profile, seed and lengths
assert rival_seeds["config"] == chapter8_seeds["config"]  # ... seeds and passkey test
# (row name, the file that holds it): chapter 8's RoPE and ALiBi, then the four rivals
ROWS = [("rope", 8), ("alibi", 8), ("xpos", 21), ("kerple", 21), ("fire", 21), ("cope", 21)]
NAMES = {
    "en": {"rope": "RoPE (ch. 8)", "alibi": "ALiBi (ch. 8)", "xpos": "xPos",
           "kerple": "KERPLE (log)", "fire": "FIRE", "cope": "CoPE"},
    "zh": {"rope": "RoPE（第 8 章）", "alibi": "ALiBi（第 8 章）", "xpos": "xPos",
           "kerple": "KERPLE（对数核）", "fire": "FIRE", "cope": "CoPE"},
}  # fmt: skip
LENGTHS = chapter8["config"]["eval_lengths"]


def seed0(name, length, key="perplexity"):
    return (chapter8 if dict(ROWS)[name] == 8 else rivals)["results"][name][key][str(length)]


def over_seeds(name, length, key="perplexity"):
    """(mean, lowest, highest) over the seeds."""
    return spread(chapter8_seeds if dict(ROWS)[name] == 8 else rival_seeds, name, length, key)


def show_runs(lang="en"):
    text = {
        "en": ("same profile as chapter 8: {layers} layers, width {dim}, {heads} heads, "
               "{steps} steps of {batch} x {train_len} characters; seeds {seeds}",
               "rivals.json: {:.1f} min wall clock; rivals-seeds.json: {:.1f} min wall clock, "
               "{:.1f} min of CPU time, {} thread(s)"),
        "zh": ("与第 8 章配置相同：{layers} 层，宽度 {dim}，{heads} 个头，训练 {steps} 步，"
               "每步 {batch} 条 × {train_len} 个字符；随机种子 {seeds}",
               "rivals.json：实际耗时 {:.1f} 分钟；rivals-seeds.json：实际耗时 {:.1f} 分钟，"
               "CPU 时间 {:.1f} 分钟，{} 个线程"),
    }[lang]  # fmt: skip
    print(text[0].format(seeds=rival_seeds["config"]["seeds"], **rivals["config"]))
    print(text[1].format(rivals["wall_seconds"] / 60, rival_seeds["wall_seconds"] / 60,
                         rival_seeds["cpu_seconds"] / 60, rival_seeds["hardware"]["threads"]))  # fmt: skip


# --8<-- [end:runs]

# --8<-- [start:tables]


def pad(text, width, right=False):
    """``text`` padded to ``width`` terminal columns: a Chinese character takes two."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in str(text))
    fill = " " * max(width - shown, 0)
    return fill + str(text) if right else str(text) + fill


def table(lang, cell, width):
    head = {"en": "method", "zh": "方法"}[lang]
    lines = [f"| {pad(head, 16)} | " + " | ".join(pad(n, width, True) for n in LENGTHS) + " |"]
    lines.append("|" + "-" * 18 + "|" + "|".join("-" * (width + 1) + ":" for _ in LENGTHS) + "|")
    for name, _ in ROWS:
        cells = " | ".join(pad(cell(name, n), width, True) for n in LENGTHS)
        lines.append(f"| {pad(NAMES[lang][name], 16)} | {cells} |")
    print("\n".join(lines))


def show_seed0(lang="en"):
    table(lang, lambda name, n: f"{seed0(name, n):.2f}", 6)


def show_over_seeds(lang="en"):
    def cell(name, n):
        mean, low, high = over_seeds(name, n)
        return f"{mean:.2f} ({low:.2f}–{high:.2f})"

    table(lang, cell, 19)


def show_passkeys(lang="en"):
    """Passkeys found, in percent: mean (lowest–highest) over the seeds whose model learned the
    format at 128; "fine-tuning failed" where none did, "(1 seed)" where only one did."""
    text = {"en": ("{} examples per length ({} per depth x {} depths): one example = {:g} points",
                   "fine-tuning failed", "{:.0f} (1 seed)"),
            "zh": ("每个长度 {} 个样例（{} 个深度，每个深度 {} 个）：一个样例 = {:g} 个百分点",
                   "微调失败", "{:.0f}（1 个种子）")}[lang]  # fmt: skip
    retrieval = rival_seeds["config"]["retrieval"]
    per_length = retrieval["examples"] * len(retrieval["depths"])
    if lang == "en":
        print(text[0].format(per_length, retrieval["examples"], len(retrieval["depths"]),
                             100 / per_length))  # fmt: skip
    else:
        print(text[0].format(per_length, len(retrieval["depths"]), retrieval["examples"],
                             100 / per_length))  # fmt: skip

    def cell(name, n):
        found = [100 * runs_of[name][s]["retrieval"][str(n)] for s in learned[name]]
        if not found:
            return text[1]
        if len(found) == 1:
            return text[2].format(found[0])
        mean = sum(found) / len(found)
        return f"{mean:.0f} ({min(found):.0f}–{max(found):.0f})"

    table(lang, cell, 19)


runs_of = {n: (chapter8_seeds if dict(ROWS)[n] == 8 else rival_seeds)["runs"][n] for n, _ in ROWS}
chance = rival_seeds["config"]["retrieval"]["chance"]
# A model "learned the passkey format" if it finds at least 500 times chance at the trained
# length (the bar chapter 8's tests set for every one of its models); otherwise its passkey
# numbers at longer lengths say nothing about positions.
learned = {n: [s for s, run in runs_of[n].items() if run["retrieval"]["128"] >= 500 * chance]
           for n, _ in ROWS}  # fmt: skip


# The reading on the page rests on these, seed by seed (a seed gives the same shared initial
# weights and the same batches to every method):
SEEDS = sorted(runs_of["rope"])
RIVALS = ("xpos", "kerple", "fire", "cope")


def ppl(name, seed, length):
    return runs_of[name][seed]["perplexity"][str(length)]


def grows(name, seed):
    return ppl(name, seed, 1024) / ppl(name, seed, 128)


assert all(ppl(n, s, 128) < ppl("rope", s, 128) for n in RIVALS for s in SEEDS)  # all below RoPE
assert all(ppl("kerple", s, n) < ppl("alibi", s, n) for s in SEEDS for n in LENGTHS)
assert all(grows(n, s) < 1 for n in ("kerple", "alibi") for s in SEEDS)  # both flat
assert all(1 < grows("fire", s) < 1.2 for s in SEEDS)  # FIRE: a slow rise
assert all(2 * ppl("xpos", s, 1024) < ppl("rope", s, 1024) for s in SEEDS)  # below half of RoPE


def rise(name, seed=None):
    """Perplexity at 1024 minus at 128: seed 0's (results/*.json) or the mean over the seeds."""
    if seed is None:
        return over_seeds(name, 1024)[0] - over_seeds(name, 128)[0]
    return ppl(name, seed, 1024) - ppl(name, seed, 128)


# xPos's rise is about a quarter of RoPE's: on average and in every seed between a fifth and a third
assert 0.2 < rise("xpos") / rise("rope") < 0.3
assert all(0.2 < rise("xpos", s) / rise("rope", s) < 1 / 3 for s in SEEDS)
assert all(1 < grows("xpos", s) for s in SEEDS)  # ... but not flat
assert all(ppl("cope", s, 256) < 1.02 * ppl("cope", s, 128) < ppl("cope", s, 512) for s in SEEDS)
assert len(learned["fire"]) == 0 and len(learned["kerple"]) == 1
assert all(len(learned[n]) == len(SEEDS) for n in ("rope", "alibi", "xpos", "cope"))
assert all(runs_of["cope"][s]["retrieval"][str(n)] >= 0.95 for s in SEEDS for n in (128, 256))
# the models that did not learn the format ended their fine-tuning at ln 10: a uniform guess
for name in RIVALS:
    for seed in set(SEEDS) - set(learned[name]):
        assert abs(runs_of[name][seed]["retrieval_final_loss"] - math.log(10)) < 0.02


def show_learned(lang="en"):
    text = {
        "en": ("seeds that learned the passkey format at 128 (at least {:.0%} found):",
               "{}: {} of {}"),
        "zh": ("在 128 上学会了 passkey 格式的随机种子（至少找到 {:.0%}）：", "{}：{}/{}"),
    }[lang]  # fmt: skip
    print(text[0].format(500 * chance))
    sep = ", " if lang == "en" else "，"
    print(
        sep.join(text[1].format(NAMES[lang][n], len(learned[n]), len(runs_of[n])) for n, _ in ROWS)
    )


def show_rises(lang="en"):
    text = {"en": "rise in perplexity from 128 to 1024, mean over the seeds: "
                  "RoPE +{:.2f}, xPos +{:.2f} ({:.0%} of RoPE's)",
            "zh": "困惑度从 128 到 1024 的涨幅（各种子平均）：RoPE +{:.2f}，xPos +{:.2f}"
                  "（RoPE 的 {:.0%}）"}[lang]  # fmt: skip
    print(text.format(rise("rope"), rise("xpos"), rise("xpos") / rise("rope")))


# --8<-- [end:tables]

# --8<-- [start:positions]
import posenc

# What the rivals learned about positions: seed 0's models (results/rivals.json, train.py --rivals)
learned_positions = {n: rivals["results"][n]["learned_positions"] for n in RIVALS}
kerple_r1, kerple_r2 = learned_positions["kerple"]["r1"], learned_positions["kerple"]["r2"]
fire_layers = learned_positions["fire"]["layers"]
cope = learned_positions["cope"]
TRAIN_LEN = rivals["config"]["train_len"]


def fire_input(layer, query, r):
    """FIRE's u = psi(r) / psi(max(L, query)) with this layer's learned c and L."""
    c, threshold = layer["c"], layer["L"]
    return math.log1p(c * r) / math.log1p(c * max(threshold, query))


assert all(a > 1 for a in kerple_r1)  # every KERPLE head chose the converging regime
assert all(layer["L"] < TRAIN_LEN for layer in fire_layers)  # training covered all of [0, 1]
for layer in fire_layers:  # ... and a distance shrinks as the query moves on
    assert fire_input(layer, 1024, 10) < 0.75 * fire_input(layer, TRAIN_LEN - 1, 10)
# Which defaults were scaled to the training length: CoPE's table (length + 1 rows), not FIRE's
# initial threshold (4 x the length) nor xPos's B (512, the released constant)
assert cope["last_row"] == TRAIN_LEN and float(posenc.FIRE(1).init_threshold) == 4 * TRAIN_LEN
assert posenc.XPos(16).scale_base == 512
# CoPE: no head counts every token; few pairs reach the clamp at 256, a third to two thirds at 1024
gates = [g for layer in cope["layers"] for g in layer["mean_gate"]["128"]]
assert max(gates) < 0.75
assert all(share <= 0.1 for layer in cope["layers"] for share in layer["clamped_share"]["256"])
assert all(
    0.3 <= share <= 0.7 for layer in cope["layers"] for share in layer["clamped_share"]["1024"]
)
BANDS = ((0, 64), (64, 96), (96, 128), (128, 129))  # rows of the table


def row_norm(layer, first, end):
    norms = layer["row_norms"][first:end]
    return sum(norms) / len(norms)


for layer in cope["layers"]:  # the table starts at zero: rows training rarely reached stay small
    assert (
        row_norm(layer, 96, 128) < 0.5 * row_norm(layer, 0, 64) and row_norm(layer, 128, 129) < 0.01
    )


def show_positions(lang="en"):
    text = {
        "en": ("KERPLE, one module for both layers: r1 = {}; r2 = {}",
               "FIRE layer {}: c = {:.3f}, L = {:.0f} (from 512); "
               "u for r = 10: {:.2f} at query 127, {:.2f} at query 1024",
               "CoPE: mean gate per head over held-out windows of 128 tokens; share of the "
               "(query, key) pairs whose position reaches the clamp ({}) at 256 and 1024 tokens",
               "layer", "head", "gate", "gate x 128", "at 256", "at 1024",
               "CoPE layer {}, mean norm of the table's rows {}"),
        "zh": ("KERPLE，两层共用一个模块：r1 = {}；r2 = {}",
               "FIRE 第 {} 层：c = {:.3f}，L = {:.0f}（初始 512）；"
               "r = 10 时 u 在 query 127 上为 {:.2f}，在 query 1024 上为 {:.2f}",
               "CoPE：各头在 128 个 token 的验证窗口上的平均门值；"
               "在 256 和 1024 个 token 上，位置到达截断（{}）的 (query, key) 对所占比例",
               "层", "头", "门", "门 x 128", "256 上", "1024 上",
               "CoPE 第 {} 层，位置表各行的平均模长 {}"),
    }[lang]  # fmt: skip
    print(text[0].format(" ".join(f"{a:.2f}" for a in kerple_r1),
                         " ".join(f"{b:.2f}" for b in kerple_r2)))  # fmt: skip
    for number, layer in enumerate(fire_layers, start=1):
        print(text[1].format(number, layer["c"], layer["L"], fire_input(layer, 127, 10),
                             fire_input(layer, 1024, 10)))  # fmt: skip
    print(text[2].format(cope["last_row"]))
    widths = (6, 5, 8, 11, 9, 9)
    print("".join(pad(t, w, True) for t, w in zip(text[3:9], widths, strict=True)))
    for number, layer in enumerate(cope["layers"], start=1):
        for head, gate in enumerate(layer["mean_gate"]["128"]):
            shares = [layer["clamped_share"][str(n)][head] for n in (256, 1024)]
            cells = [str(number), str(head), f"{gate:.2f}", f"{gate * TRAIN_LEN:.0f}"]
            cells += [f"{share:.0%}" for share in shares]
            print("".join(pad(c, w, True) for c, w in zip(cells, widths, strict=True)))
    for number, layer in enumerate(cope["layers"], start=1):
        bands = ", ".join(f"{a}–{b - 1}: {row_norm(layer, a, b):.2f}" if b - a > 1
                          else f"{a}: {row_norm(layer, a, b):.2f}" for a, b in BANDS)  # fmt: skip
        print(text[9].format(number, bands))


# --8<-- [end:positions]

if __name__ == "__main__":
    show_runs()
    show_seed0()
    show_over_seeds()
    show_learned()
    show_passkeys()
    show_rises()
    show_positions()
