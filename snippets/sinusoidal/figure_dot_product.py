"""Figure: PE(p) . PE(p + k) against the offset k, for d_model = 512."""

import matplotlib.pyplot as plt
import torch

import posenc


def draw_dot_product(path="sinusoidal-dot-product.svg"):
    pe = posenc.sinusoidal(2048, 512).double()
    middle = 1024
    offsets = torch.arange(-1024, 1024)
    dots = pe[middle + offsets] @ pe[middle]  # PE(p) . PE(p + k) with p = 1024
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), constrained_layout=True)
    left.plot(offsets.numpy(), dots.numpy(), lw=1)
    left.set_xlabel("offset k")
    left.set_ylabel("PE(p) . PE(p + k)")
    left.set_title("Symmetric in k, slow decay")
    near = (offsets >= 0) & (offsets <= 120)
    right.plot(offsets[near].numpy(), dots[near].numpy(), lw=1, label="sum of cosines")
    f1 = dots[offsets == 1].item()
    right.plot(
        offsets[near][1:].numpy(),
        f1 / offsets[near][1:].double().numpy(),
        "--",
        lw=1,
        label="f(1) / k",
    )
    right.set_ylim(0, 270)
    right.set_xlabel("offset k")
    right.set_title("Zoom: ripples, not 1/k")
    right.legend(fontsize=9)
    fig.savefig(path)


draw_dot_product()
