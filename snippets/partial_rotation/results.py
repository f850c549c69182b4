"""Chapter "Partial and proportional rotation": the committed results of experiment.py.

Functions named ``show_*`` print a result with labels in the reader's language (``lang="en"``
or ``"zh"``); each page calls them in a one-line block.

Run it from the repository: python snippets/partial_rotation/results.py
"""

# --8<-- [start:load]
import json
import statistics
import unicodedata
from pathlib import Path

import posenc

# snippets/partial_rotation/results.json, in the repository posenc is installed from
RESULTS = Path(posenc.__file__).resolve().parents[2] / "snippets/partial_rotation/results.json"
report = json.loads(RESULTS.read_text(encoding="utf-8"))
lengths = report["config"]["eval_lengths"]
NAMES = {
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


def show_results(lang: str = "en") -> None:
    """Mean perplexity of three seeds, and (in brackets) the lowest and highest seed."""
    head = {"en": "length", "zh": "评测长度"}[lang]
    print(pad(head, 13) + "".join(pad(str(n), 20, right=True) for n in lengths))
    for name in report["results"]:
        cells = []
        for n in lengths:
            values = perplexities(name, n)
            cells.append(f"{mean(name, n):.2f} ({min(values):.2f}-{max(values):.2f})")
        print(pad(NAMES[lang][name], 13) + "".join(pad(c, 20, right=True) for c in cells))


# --8<-- [end:load]

if __name__ == "__main__":
    show_results()
