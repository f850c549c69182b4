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
    format at 128; a dash where none did."""

    def cell(name, n):
        found = [100 * runs_of[name][s]["retrieval"][str(n)] for s in learned[name]]
        if not found:
            return "-"
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
assert all(2 * ppl("xpos", s, 1024) < ppl("rope", s, 1024) for s in SEEDS)  # xPos: half of RoPE
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


# --8<-- [end:tables]

if __name__ == "__main__":
    show_runs()
    show_seed0()
    show_over_seeds()
    show_learned()
    show_passkeys()
