"""Chapter "Partial and proportional rotation": the committed results of experiment.py.

Functions named ``show_*`` print a result with labels in the reader's language (``lang="en"``
or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/partial_rotation/results.py
"""

# --8<-- [start:load]
import json
import math
import statistics
import unicodedata
from pathlib import Path

import posenc

# snippets/partial_rotation/results.json, in the repository posenc is installed from
RESULTS = Path(posenc.__file__).resolve().parents[2] / "snippets/partial_rotation/results.json"
report = json.loads(RESULTS.read_text(encoding="utf-8"))
lengths = report["config"]["eval_lengths"]
RUN_NAMES = {
    "en": {"rope": "full RoPE", "neox_0.25": "NeoX 25%", "prope_0.75": "p-RoPE 0.75",
           "prope_0.25": "p-RoPE 0.25", "nope": "NoPE"},
    "zh": {"rope": "完整 RoPE", "neox_0.25": "NeoX 25%", "prope_0.75": "p-RoPE 0.75",
           "prope_0.25": "p-RoPE 0.25", "nope": "NoPE"},
}  # fmt: skip


def perplexities(name: str, length: int) -> list[float]:
    """Validation perplexity of the three seeds of one variant at one length."""
    return [run["perplexity"][str(length)] for run in report["results"][name]]


def mean(name: str, length: int) -> float:
    return statistics.mean(perplexities(name, length))


def pad(text: str, columns: int, right: bool = False) -> str:
    """Pad to a width in terminal columns (a Chinese character takes two)."""
    width = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    space = " " * max(columns - width, 0)
    return space + text if right else text + space


def slow_pairs(name: str) -> str:
    """Rotated pairs of the variant's heads that turn less than once in the trained length."""
    config, variant = report["config"], report["variants"][name]
    if variant["method"] == "nope":
        return "-"
    head_dim = config["dim"] // config["heads"]
    theta = posenc.rope_inv_freq(head_dim, scaling=variant["scaling"])[0]
    theta = theta[theta > 0]
    slow = int((config["train_len"] * theta < 2 * math.pi).sum())
    return f"{slow}/{len(theta)}"


def show_results(lang: str = "en") -> None:
    """Slow pairs, then the mean perplexity of three seeds and (in brackets) the lowest and
    highest seed, at each evaluation length."""
    head = {"en": ("length", "slow pairs"), "zh": ("评测长度", "慢的维度对")}[lang]
    print(pad(head[0], 13) + pad(head[1], 11, right=True)
          + "".join(pad(str(n), 20, right=True) for n in lengths))  # fmt: skip
    for name in report["results"]:
        cells = []
        for n in lengths:
            values = perplexities(name, n)
            cells.append(f"{mean(name, n):.2f} ({min(values):.2f}-{max(values):.2f})")
        print(pad(RUN_NAMES[lang][name], 13) + pad(slow_pairs(name), 11, right=True)
              + "".join(pad(c, 20, right=True) for c in cells))  # fmt: skip


def seeds(name: str, length: int) -> list[float]:
    return perplexities(name, length)


# what the prose reads off the table, seed by seed
rope, p75, p25, neox, nope = (
    {n: seeds(name, n) for n in lengths}
    for name in ("rope", "prope_0.75", "prope_0.25", "neox_0.25", "nope")
)
# p-RoPE 0.75 stops 4 pairs that turn by less than 0.13 rad in 128 characters: same as RoPE
full_32 = posenc.rope_inv_freq(32)[0]
stopped = full_32[
    posenc.rope_inv_freq(32, scaling=report["variants"]["prope_0.75"]["scaling"])[0] == 0
]
assert len(stopped) == 4 and (127 * stopped).max() < 0.13
assert all(abs(a - b) / b < 0.02 for n in lengths for a, b in zip(p75[n], rope[n], strict=True))
# NeoX 25% is worse than full RoPE at the trained length, in every seed
assert all(a > b for a, b in zip(neox[128], rope[128], strict=True))
# p-RoPE 0.25: worse at 128, the best RoPE variant at 512 and 1024, in every seed
assert all(a > b for a, b in zip(p25[128], rope[128], strict=True))
for n in (512, 1024):
    others = zip(p25[n], rope[n], p75[n], neox[n], strict=True)
    assert all(seed[0] < min(seed[1:]) for seed in others)
# NoPE: far behind at 128, flattest from 128 to 1024
assert min(nope[128]) > max(max(v) for v in (rope[128], p75[128], p25[128], neox[128]))
assert max(nope[1024]) / min(nope[128]) < 1.2
# ... and at 1024 the lowest of all five on the mean of the seeds
assert mean("nope", 1024) < min(
    mean(n, 1024) for n in ("rope", "prope_0.75", "prope_0.25", "neox_0.25")
)
# --8<-- [end:load]

if __name__ == "__main__":
    show_results()
