"""Figure: PE(p) . PE(p + k) against the offset k, for d_model = 512.

Saved twice, with English and with Chinese labels (same data).
"""

import matplotlib.pyplot as plt
import torch

import posenc
from snippets.figures import save_each_language

LABELS = {
    "en": {
        "offset": "offset k",
        "left": "Symmetric in k, slow decay",
        "right": "Zoom: ripples, not 1/k",
        "sum": "sum of cosines",
    },
    "zh": {
        "offset": "偏移 k",
        "left": "关于 k 对称，衰减缓慢",
        "right": "局部放大：有波纹，不是 1/k",
        "sum": "余弦之和",
    },
}


def draw_dot_product(text):
    pe = posenc.sinusoidal(2048, 512).double()
    middle = 1024
    offsets = torch.arange(-1024, 1024)
    dots = pe[middle + offsets] @ pe[middle]  # PE(p) . PE(p + k) with p = 1024
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), constrained_layout=True)
    left.plot(offsets.numpy(), dots.numpy(), lw=1)
    left.set_xlabel(text["offset"])
    left.set_ylabel("PE(p) · PE(p + k)")
    left.set_title(text["left"])
    near = (offsets >= 0) & (offsets <= 120)
    right.plot(offsets[near].numpy(), dots[near].numpy(), lw=1, label=text["sum"])
    f1 = dots[offsets == 1].item()
    right.plot(
        offsets[near][1:].numpy(),
        f1 / offsets[near][1:].double().numpy(),
        "--",
        lw=1,
        label="f(1) / k",
    )
    right.set_ylim(0, 270)
    right.set_xlabel(text["offset"])
    right.set_title(text["right"])
    right.legend(fontsize=9)
    return fig


save_each_language(draw_dot_product, "sinusoidal-dot-product.svg", LABELS)
