"""Figure: TODO(new-chapter) one line on what the figure shows.

Saves multi-axis-rope-example.svg into the current directory (the build moves it to docs/figures/).
Labels are language-neutral (English words, math); keep the code in functions and seeded.
"""

import matplotlib.pyplot as plt
import numpy as np


def draw_example(path="multi-axis-rope-example.svg"):
    # TODO(new-chapter) draw what the chapter explains; rename the file and this function
    positions = np.arange(16)
    fig, ax = plt.subplots(figsize=(6, 3), constrained_layout=True)
    ax.plot(positions, np.sin(positions / 4), marker="o")
    ax.set_xlabel("position $i$")
    ax.set_ylabel("value")
    fig.savefig(path)


draw_example()
