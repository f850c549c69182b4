"""Figure: the error of moving cached keys back by one position at a time, against at once.

Keys stored after RoPE at position 5000 are moved back n positions, either by n re-rotations
of one position (rounded to the cache's dtype each time) or by one re-rotation of n, and
compared with the same keys rotated at 5000 - n from scratch.
Saved twice, with English and with Chinese labels (same data).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from posenc.positions import rerotate
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "x": "positions moved back n",
        "y": "max |error| against rotating from scratch",
        "steps": "{}: n steps of 1",
        "once": "{}: one step of n",
        "title": "Re-rotating a cache in place: rounding adds up",
    },
    "zh": {
        "x": "往回移动的位置数 n",
        "y": "与从头旋转相比的最大误差",
        "steps": "{}：每次移 1，共 n 次",
        "once": "{}：一次移 n",
        "title": "在缓存里原地反复旋转：舍入误差不断累积",
    },
}


def drift_curves(steps=512, start=5000):
    """(checkpoints n, {(dtype name, "steps" or "once"): max error after moving back n})."""
    torch.manual_seed(0)
    inv_freq = posenc.default_inv_freq(128)
    keys = torch.randn(1, 1, 16, 128)

    def at(position):
        cos, sin = posenc.rotary_cos_sin(torch.tensor([position]), inv_freq)
        return posenc.apply_rotary(keys, cos, sin)

    stored = at(start)
    checkpoints = sorted({round(2 ** (i / 4)) for i in range(37)})  # 1 .. 512, log-spaced
    targets = {n: at(start - n) for n in checkpoints}
    curves = {}
    for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        stepwise, step_errors, once_errors = stored.to(dtype), [], []
        for n in range(1, steps + 1):
            stepwise = rerotate(stepwise, 1, inv_freq)  # rounded to dtype at every step
            if n in targets:
                step_errors.append((stepwise.float() - targets[n]).abs().max().item())
                once = rerotate(stored.to(dtype), n, inv_freq)
                once_errors.append((once.float() - targets[n]).abs().max().item())
        curves[name, "steps"], curves[name, "once"] = step_errors, once_errors
    return checkpoints, curves


def draw_drift(n, curves, text):
    fig, ax = plt.subplots(figsize=(6.4, 3.8), constrained_layout=True)
    styles = {
        ("bfloat16", "steps"): dict(color="tab:red"),
        ("bfloat16", "once"): dict(color="tab:red", linestyle="--"),
        ("float32", "steps"): dict(color="tab:blue"),
        ("float32", "once"): dict(color="tab:blue", linestyle="--"),
    }
    for (name, how), style in styles.items():
        ax.plot(n, curves[name, how], lw=1.2, marker=".", label=text[how].format(name), **style)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(text["x"])
    ax.set_ylabel(text["y"])
    ax.set_title(text["title"], fontsize=11)
    ax.legend(fontsize=9)
    return fig


N, CURVES = drift_curves()
save_each_language(
    lambda text: draw_drift(N, CURVES, text), "positions-at-inference-drift.svg", LABELS
)
