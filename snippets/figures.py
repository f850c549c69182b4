"""What every figure script shares: draw a figure once per language, each time with that
language's labels, and save it as ``<name>.svg`` (English) and ``<name>.<lang>.svg``.

A figure script keeps only what is its own: its data, its labels and a function that draws
one figure from one language's labels and returns it::

    LABELS = {"en": {"x": "position"}, "zh": {"x": "位置"}}

    def draw_example(labels):
        fig, ax = plt.subplots()
        ax.set_xlabel(labels["x"])
        return fig

    save_each_language(draw_example, "chapter-example.svg", LABELS)
"""

from collections.abc import Callable, Mapping
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# Chinese labels need the CJK font named as a fallback family: a generic "sans-serif"
# resolves to one font only, which has no Chinese glyphs. The site's build sets the same in
# tools/matplotlibrc; this is for a reader who runs a script with matplotlib's defaults.
FONT_FAMILY = ["DejaVu Sans", "Noto Sans CJK SC"]


def save(fig: Figure, path: str) -> None:
    """Write ``fig`` to ``path`` and free it (pyplot keeps every open figure alive)."""
    fig.savefig(path)
    plt.close(fig)


def language_path(path: str, lang: str) -> str:
    """Where the ``lang`` version of figure ``path`` goes: English keeps ``x.svg``, Chinese
    is ``x.zh.svg`` (the name the site's Chinese pages look for)."""
    return path if lang == "en" else path.removesuffix(".svg") + f".{lang}.svg"


def save_each_language(draw: Callable[[Any], Figure], path: str, labels: Mapping[str, Any]) -> None:
    """For each language of ``labels``, in order: ``draw(labels[lang])`` and save the figure
    it returns to ``language_path(path, lang)``."""
    with plt.rc_context({"font.family": FONT_FAMILY}):
        for lang, text in labels.items():
            save(draw(text), language_path(path, lang))
