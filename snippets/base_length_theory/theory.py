"""Chapter "Base, frequencies and length: the theory": the critical dimension (Liu et al., 2023),
the discrimination sum B_m and the lower bound of the base (Men et al., 2024), for a few
heads and for real models' configs.

Functions named ``show_*`` print a result with labels in the reader's language (``lang="en"``
or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/base_length_theory/theory.py
"""

# --8<-- [start:critical]
import math
import unicodedata

import torch

import posenc


def pad(text: str, columns: int) -> str:
    """Right-align to a width in terminal columns (a Chinese character takes two)."""
    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return " " * max(columns - width, 0) + text


def critical_dimension(head_dim: int, base: float, trained: int) -> int:
    """Liu et al. (2023), Eq. 13: 2·ceil(d/2 · log_base(T_train / 2π))."""
    return 2 * math.ceil(head_dim / 2 * math.log(trained / (2 * math.pi), base))


def critical_base(trained: int, tuned: int, base: float = 10000.0) -> float:
    """Eq. 16a: the base β0 at which the first pair that never turned in pre-training turns
    exactly once in the fine-tuning length."""
    return base ** math.log(tuned / (2 * math.pi), trained / (2 * math.pi))


def extrapolation_bound(new_base: float, d_extra: int, head_dim: int) -> float:
    """Eq. 16b: the period, under the new base, of the first pair past the critical dimension."""
    return 2 * math.pi * new_base ** (d_extra / head_dim)


def small_bases(tuned: int) -> tuple[float, float, float]:
    """Eq. 16d: β1 = 2·T_tune/π, β2 = T_tune/π, β3 = T_tune/2π; below β0 the bound is T_tune
    (Eq. 16c), and a base below these extrapolates markedly further."""
    return 2 * tuned / math.pi, tuned / math.pi, tuned / (2 * math.pi)


# LLaMA 2: heads of 128 dimensions, base 10000, pre-trained on 4096 tokens
d_extra = critical_dimension(128, 10000.0, 4096)
theta = posenc.rope_inv_freq(128, 10000.0)[0]
full_turns = int((2 * math.pi / theta <= 4096).sum())  # pairs with a period of at most 4096


def show_critical(lang: str = "en") -> None:
    lines = {
        "en": ("critical dimension: {} = 2 × {} pairs that turn in 4096 tokens",
               "β0 for fine-tuning at 4096: {:,.0f}, at 16384: {:,.0f}",
               "bound with base 1e6: {:,.0f} tokens, {:,.0f} short of 128 × 1024 = 131,072",
               "at 16384, β1 = {:,.0f}, β2 = {:,.0f}, β3 = {:,.0f}"),
        "zh": ("临界维度：{} = 2 × {}（4096 个 token 内转满一圈的维度对）",
               "在 4096 上微调的 β0：{:,.0f}，在 16384 上：{:,.0f}",
               "底数取 1e6 时的上界：{:,.0f} 个 token，比 128 × 1024 = 131,072 少 {:,.0f}",
               "在 16384 上：β1 = {:,.0f}，β2 = {:,.0f}，β3 = {:,.0f}"),
    }[lang]  # fmt: skip
    bound = extrapolation_bound(1e6, d_extra, 128)
    print(lines[0].format(d_extra, full_turns))
    print(lines[1].format(critical_base(4096, 4096), critical_base(4096, 16384)))
    print(lines[2].format(bound, 128 * 1024 - bound))
    print(lines[3].format(*small_bases(16384)))


# --8<-- [end:critical]

# --8<-- [start:theorem]
# Theorem 1 of Men et al. (2024), checked by sampling: q and k with i.i.d. components
# (mean 0.5, standard deviation 1), a similar key k* = q + ε, rotated by RoPE.
head_dim, base, sigma = 128, 10000.0, 1.0
theta = posenc.rope_inv_freq(head_dim, base)[0].double()
distances = torch.tensor([0, 10, 100, 1000, 2000, 5000])


def discrimination(m: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """B_m = Σ_i cos(m·θ_i), for each distance m."""
    return torch.cos(m.double()[:, None] * theta).sum(-1)


def sampled_difference(seed: int, samples: int = 20000) -> torch.Tensor:
    """(E[q·R_m k*] − E[q·R_m k]) / (2σ²), estimated from `samples` draws, per distance."""
    g = torch.Generator().manual_seed(seed)
    q = 0.5 + sigma * torch.randn(samples, head_dim, generator=g, dtype=torch.float64)
    k = 0.5 + sigma * torch.randn(samples, head_dim, generator=g, dtype=torch.float64)
    similar = q + 0.3 * torch.randn(samples, head_dim, generator=g, dtype=torch.float64)
    cos, sin = posenc.rotary_cos_sin(distances, theta)  # the key rotated by m, the query by 0
    at_each = (samples, len(distances), head_dim)  # one copy per distance: (samples, m, d)
    similar_m = posenc.apply_rotary(similar[:, None].expand(at_each), cos.double(), sin.double())
    random_m = posenc.apply_rotary(k[:, None].expand(at_each), cos.double(), sin.double())
    gap = (q[:, None] * similar_m).sum(-1) - (q[:, None] * random_m).sum(-1)
    return gap.mean(0) / (2 * sigma**2)


estimates = torch.stack([sampled_difference(seed) for seed in range(5)])  # (seeds, distances)
exact = discrimination(distances, theta)


def show_theorem(lang: str = "en") -> None:
    head = {"en": ("distance m", "B_m", "sampled (5 seeds)"),
            "zh": ("距离 m", "B_m", "抽样估计（5 个种子）")}[lang]  # fmt: skip
    print(pad(head[0], 10) + pad(head[1], 9) + "   " + head[2])
    for j, m in enumerate(distances.tolist()):
        low, high = estimates[:, j].min().item(), estimates[:, j].max().item()
        print(f"{m:>10}{exact[j].item():>9.2f}   {low:6.2f} .. {high:6.2f}")


# every seed's estimate within 0.5 of the exact sum, and negative where the sum is (m = 5000)
assert (estimates - exact).abs().max() < 0.5 and (estimates[:, -1] < 0).all()
# B_m starts at d/2 = 64; for base 10000 it falls below 0 by m = 5000
assert exact[0] == 64 and exact[-1] < 0
# --8<-- [end:theorem]

# --8<-- [start:reach]


def reach(theta: torch.Tensor, cap: int = 10**7, chunk: int = 1 << 15) -> int:
    """L_θ (Men et al., Eq. 10): the largest L ≤ cap with B_m ≥ 0 for every m = 0 .. L."""
    theta = theta.double()
    for start in range(0, cap + 1, chunk):
        m = torch.arange(start, min(start + chunk, cap + 1))
        negative = (discrimination(m, theta) < 0).nonzero()
        if len(negative):
            return start + int(negative[0]) - 1
    return cap


def show_reach(bases=(1e4, 5e5, 1e6), lang: str = "en", width: int = 9, commas: bool = True):
    """For each base of a head of 128: the last m up to which B_m stays non-negative."""
    line = {"en": "base {}: B_m ≥ 0 up to m = {}", "zh": "底数 {}：m ≤ {} 时 B_m 都 ≥ 0"}[lang]
    for base in bases:
        last = reach(posenc.rope_inv_freq(128, base)[0])
        print(line.format(f"{base:>{width},.0f}", f"{last:,}" if commas else last))


# --8<-- [end:reach]

# --8<-- [start:table]
import json
import operator
from pathlib import Path

# snippets/base_length_theory/bounds.json, written by search.py in the same folder
BOUNDS = Path(posenc.__file__).resolve().parents[2] / "snippets/base_length_theory/bounds.json"
bounds = json.loads(BOUNDS.read_text(encoding="utf-8"))
# Men et al. (2024), Table 2: "Context length and its corresponding lower bound of RoPE's base"
PAPER = {1_000: 4.3e3, 2_000: 1.6e4, 4_000: 2.7e4, 8_000: 8.4e4, 16_000: 3.1e5, 32_000: 6.4e5,
         64_000: 2.1e6, 128_000: 7.8e6, 256_000: 3.6e7, 512_000: 6.4e7, 1_000_000: 5.1e8}  # fmt: skip


def l_theta(base: float) -> int:
    """L_θ of a base of the grid (two significant digits), read from bounds.json."""
    return bounds["reach"][str(round(base))]


def label(length: int, k: int = 1000) -> str:
    return "1M" if length == k * k else f"{length // k}k"


def show_bounds(lang: str = "en") -> None:
    head = {"en": ("length L", "Table 2", "its L_θ", "smallest", "every base from"),
            "zh": ("长度 L", "论文表 2", "其 L_θ", "最小底数", "此后都满足")}[lang]  # fmt: skip
    widths = (10, 10, 10, 10, 17)
    print("".join(pad(title, width) for title, width in zip(head, widths, strict=True)))
    for length, paper in PAPER.items():
        row = bounds["table"][str(length)]
        print(f"{length:>10,}{paper:>10.1e}{l_theta(paper):>10,}{row['smallest']:>10.1e}"
              f"{row['every_base_from']:>17.1e}")  # fmt: skip

    found = {n: float(f"{bounds['table'][str(n)]['smallest']:.1e}") for n in PAPER}
    words = {"en": ("as Table 2", "grid smaller", "grid larger", "Table 2's base short of L"),
             "zh": ("与表 2 相同", "网格更小", "网格更大", "表 2 的底数够不到 L")}[lang]  # fmt: skip
    colon = "：" if lang == "zh" else ": "
    for word, keep in zip(words, (operator.eq, operator.lt, operator.gt), strict=False):
        lengths = [label(n) for n in PAPER if keep(found[n], PAPER[n])]
        print(f"{word}{colon}{' '.join(lengths)}")
    print(f"{words[3]}{colon}{' '.join(label(n) for n in PAPER if l_theta(PAPER[n]) < n)}")


# --8<-- [end:table]

# --8<-- [start:su]
# Su (kexue.fm/archives/10122), his b* per length. His code searches m = 0 .. L - 1 with
# L = 1024·k (bmin(1024 * 128)), so a base serves L when L_θ ≥ L - 1.
SU = {1: 4.3e3, 2: 1.2e4, 4: 2.7e4, 8: 8.4e4, 16: 2.3e5, 32: 6.3e5, 64: 2.1e6, 128: 4.9e6,
      256: 2.4e7, 512: 5.8e7, 1024: 6.5e7}  # fmt: skip


def show_su(lang: str = "en") -> None:
    head = {"en": ("L", "L - 1", "Su's b*", "its L_θ", "enough"),
            "zh": ("L", "L - 1", "苏的 b*", "其 L_θ", "够不够")}[lang]  # fmt: skip
    answer = {"en": ("yes", "no"), "zh": ("够", "不够")}[lang]
    widths = (5, 11, 10, 10, 8)
    print("".join(pad(title, width) for title, width in zip(head, widths, strict=True)))
    for k, base in SU.items():
        last, reached = 1024 * k - 1, l_theta(base)
        enough = answer[0] if reached >= last else answer[1]
        print(f"{label(1024 * k, 1024):>5}{last:>11,}{base:>10.1e}{reached:>10,}{pad(enough, 8)}")


# --8<-- [end:su]

# --8<-- [start:models]
# snippets/choosing/models.json: chapter 9's released configs, each row with its source
MODELS = Path(posenc.__file__).resolve().parents[2] / "snippets/choosing/models.json"
rows = {row["model"]: row for row in json.loads(MODELS.read_text(encoding="utf-8"))["models"]}
# lengths the configs do not hold: Llama 2's pre-training length (Liu et al. use 4096 for it)
# and Gemma 3's before its scaling to 128K (32K: Gemma 3 report §5.3, see chapter 11)
TRAINED = {"Llama 2 7B": 4096, "Gemma 3 27B": 32768}
NAMES = ("Llama 2 7B", "Llama 3.1 8B", "Qwen3-8B", "Gemma 3 27B", "gpt-oss-120b",
         "Llama 4 Scout", "DeepSeek-V3")  # fmt: skip


def as_run(row: dict) -> torch.Tensor | None:
    """The rotated frequencies with the config's scaling dict applied, None without one."""
    scaling, d, base = row["scaling"], row["rotary_dim"], float(row["theta"])
    if scaling is None:
        return None
    if row["model"] == "Llama 4 Scout":
        # low_freq_factor = high_freq_factor: Meta's step rule (posenc refuses the dict,
        # chapter 9): pairs slower than one turn in 8192 tokens are divided by 16
        theta = posenc.rope_inv_freq(d, base)[0]
        return torch.where(2 * math.pi / theta > 8192, theta / 16, theta)
    return posenc.rope_inv_freq(d, base, scaling=scaling, max_position_embeddings=row["context"])[0]


def longest_span(row: dict) -> int:
    """The longest distance a rotated layer attends over: a window, a chunk or the context."""
    spans = [unit.get("span") for unit in row["layers"] or [] if unit["rope"]]
    return row["context"] - 1 if None in spans or not spans else max(spans) - 1


def show_models(lang: str = "en") -> None:
    head = {
        "en": ("model", "d", "base", "RoPE span", "B ≥ 0 up to", "scaled", "L0"),
        "zh": ("模型", "d", "底数", "RoPE 跨度", "B ≥ 0 的最远距离", "缩放后", "L0"),
    }
    h = head[lang]
    reach_width = {"en": 13, "zh": 18}[lang]  # the column of B ≥ 0, as wide as its title
    print(h[0] + " " * (15 - 2 * len(h[0]) if lang == "zh" else 15 - len(h[0]))
          + "".join(pad(t, w) for t, w in zip(h[1:], (4, 11, 12, reach_width, 10, 7), strict=True)))  # fmt: skip
    for name in NAMES:
        row = rows[name]
        d, base = row["rotary_dim"], float(row["theta"])
        plain = reach(posenc.rope_inv_freq(d, base)[0])
        scaled = as_run(row)
        scaled = "-" if scaled is None else f"{reach(scaled):,}"
        # L0: the length the config's scaling dict starts from (original_max_position_embeddings,
        # the length before the long-context stage), else a trained length from a report or card
        trained = (row["scaling"] or {}).get("original_max_position_embeddings") or (
            (row.get("trained") or {}).get("length") or TRAINED[name]
        )
        print(f"{name:<15}{d:>4}{base:>11,.0f}{longest_span(row):>12,}{plain:>{reach_width},}{scaled:>10}"
              f"{trained:>7}")  # fmt: skip


# --8<-- [end:models]


# --8<-- [start:mistake]
# Is every base above a working one also a working one? Not for L = 1000, d = 128:
def show_close_bases(lang: str = "en") -> None:
    show_reach((4300.0, 4400.0, 4500.0, 5000.0), lang, width=0, commas=False)


# --8<-- [end:mistake]

# --8<-- [start:exercise_deepseek]
# DeepSeek-V3's heads: 128 dimensions that are not rotated (64 pairs at angle 0) and 64 that
# are (32 pairs, base 10000, YaRN as configured). B_m over the whole head of 192 dimensions:
row = rows["DeepSeek-V3"]
rotated = as_run(row).double()
whole = torch.cat([torch.zeros(64, dtype=torch.float64), rotated])  # θ = 0: never turns
m = torch.arange(row["context"])


def show_deepseek(lang: str = "en") -> None:
    lines = {
        "en": ("rotated part alone: B_m ≥ 0 up to m = {:,}",
               "whole head: smallest B_m over m < {:,} = {:.2f}"),
        "zh": ("只看旋转部分：m ≤ {:,} 时 B_m 都 ≥ 0",
               "整个头：m < {:,} 时 B_m 的最小值 = {:.2f}"),
    }[lang]  # fmt: skip
    print(lines[0].format(reach(rotated)))
    print(lines[1].format(row["context"], discrimination(m, whole).min()))


# --8<-- [end:exercise_deepseek]

# --8<-- [start:experiment]
# snippets/base_length_theory/results.json, written by experiment.py --profile full
RESULTS = Path(posenc.__file__).resolve().parents[2] / "snippets/base_length_theory/results.json"
experiment = json.loads(RESULTS.read_text(encoding="utf-8"))
runs = experiment["results"]  # {base or "none": {"first_negative": m, "runs": [one per seed]}}
bases = [base for base in runs if base != "none"]  # "none": the same head without rotation
buckets = [f"{lo}-{hi}" for lo, hi in experiment["config"]["buckets"]]
CHANCE = 1 / experiment["config"]["values"]
WINDOW = experiment["config"]["seq"] - 2  # the farthest needle: 126 tokens before the query


def mean_by_bucket(base: str, step: str | None = None) -> list[float]:
    """Accuracy by distance bucket, the mean of the seeds (at ``step``, else after training)."""
    seeds = runs[base]["runs"]
    chosen = [run["by_step"][step] if step else run["accuracy"] for run in seeds]
    return [sum(a[b] for a in chosen) / len(chosen) for b in buckets]


def slowest_turn(base: str) -> float:
    """How far the slowest pair of the head turns over the window, in radians."""
    if base == "none":
        return 0.0
    return (
        float(posenc.rope_inv_freq(experiment["config"]["head_dim"], float(base))[0][-1]) * WINDOW
    )


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


# what the page says of the runs, checked
for base in bases:
    by_bucket = mean_by_bucket(base)
    beyond = [a for (lo, hi), a in zip(experiment["config"]["buckets"], by_bucket, strict=True)
              if lo > runs[base]["first_negative"]]  # fmt: skip
    # no fall with distance: past the first negative B_m as good as the nearest bucket
    assert not beyond or min(beyond) > by_bucket[0] - 0.06, (base, by_bucket)
    assert min(by_bucket) > CHANCE  # every head learned something
means = [mean(mean_by_bucket(base)) for base in bases]
assert means[0] < means[1] < means[2]  # 10 < 50 < 200: a small base costs accuracy everywhere
nope = mean(mean_by_bucket("none"))  # no rotation: below bases 200 to 10000, above base 50
assert means[1] < nope < min(means[2:])
last, before = (str(step) for step in experiment["config"]["checkpoints"][-1:-3:-1])
for base in runs:  # stopped moving under this schedule: the last two evaluations within 0.03
    assert abs(mean(mean_by_bucket(base, last)) - mean(mean_by_bucket(base, before))) < 0.03

EXPERIMENT_TEXT = {
    "en": ("base", "slowest turn", "B_m < 0 from", "seed range",
           "accuracy by the needle's distance from the query (mean of {} seeds, {:,} steps); "
           "chance {:.3f}; slowest turn: radians the slowest pair turns over {} tokens"),
    "zh": ("底数", "最慢转角", "B_m 首次 < 0", "种子间范围",
           "按针到查询的距离统计的准确率（{} 个种子的平均，{:,} 步）；随机猜测为 {:.3f}；"
           "最慢转角：转得最慢的那对维度在 {} 个 token 内转过的弧度"),
}  # fmt: skip


def show_experiment(lang: str = "en") -> None:
    base_head, turn_head, first_head, seeds_head, title = EXPERIMENT_TEXT[lang]
    cfg = experiment["config"]
    print(title.format(len(cfg["seeds"]), cfg["steps"], CHANCE, WINDOW))
    print(pad(base_head, 6) + pad(turn_head, 13) + pad(first_head, 14)
          + "".join(pad(b, 7) for b in buckets) + pad(seeds_head, 12))  # fmt: skip
    for base, entry in runs.items():
        each = [mean(run["accuracy"].values()) for run in entry["runs"]]
        first = "-" if entry["first_negative"] is None else entry["first_negative"]
        print(f"{base:>6}{slowest_turn(base):>13.2f}{first:>14}"
              + "".join(f"{a:>7.2f}" for a in mean_by_bucket(base))
              + f"{min(each):>7.2f}–{max(each):.2f}")  # fmt: skip


CURVE_TEXT = {"en": ("base", "after {:,} steps"), "zh": ("底数", "{:,} 步后")}


def show_curve(lang: str = "en") -> None:
    """Accuracy over every distance (mean of the seeds) at each checkpoint."""
    base_head, step_head = CURVE_TEXT[lang]
    steps = [str(step) for step in experiment["config"]["checkpoints"]]
    width = {"en": 20, "zh": 13}[lang]
    print(pad(base_head, 6) + "".join(pad(step_head.format(int(s)), width) for s in steps))
    for base in runs:
        print(f"{base:>6}" + "".join(f"{mean(mean_by_bucket(base, s)):>{width}.2f}" for s in steps))


# --8<-- [end:experiment]

if __name__ == "__main__":
    show_critical()
    show_reach()
    show_close_bases()
    show_deepseek()
    show_theorem()
    show_bounds()
    show_su()
    show_models()
    show_experiment()
    show_curve()
