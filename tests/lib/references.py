"""Reference implementations the library is compared against, transcribed from their sources.

Each function here is copied from its primary source (link in its docstring) with only the
changes a module-level Python function needs, so a test compares posenc with the original
code rather than with a restatement of posenc's own formula.
"""

from __future__ import annotations

import math


def press_get_slopes(n: int) -> list[float]:
    """ALiBi slopes, Press et al.'s ``get_slopes`` as published with the paper.

    Source: https://github.com/ofirpress/attention_with_linear_biases/blob/
    a35aaca144e0eb6b789dfcb46784c4b8e31b7983/fairseq/models/transformer.py#L742
    (the nested function, and the recursion for a head count that is not a power of two).
    """

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        # In the paper, we only train models that have 2^a heads for some a. This function has
        # some good properties that only occur when the input is a power of 2. To maintain
        # that even when the number of heads is not a power of 2, we use this workaround.
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + press_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )
