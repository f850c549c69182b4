"""Chapter "RoPE's rivals": stick-breaking attention, in plain torch.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/stick_breaking.py
"""

# --8<-- [start:stick_breaking]
import torch
import torch.nn.functional as F


def stick_breaking(z):
    """Weights A_ij = beta_ij · prod over j < t < i of (1 - beta_it), beta = sigmoid(z), for the
    keys j < i; z (..., T, T) are the logits q_i·k_j/sqrt(d). Returns the weights (zero for
    j >= i) and what is left of each query's stick, 1 - sum_j A_ij."""
    T = z.shape[-1]
    past = torch.ones(T, T, dtype=torch.bool).tril(-1)  # keys strictly before the query
    log_beta = F.logsigmoid(z).masked_fill(~past, float("-inf"))
    log_rest = F.logsigmoid(-z).masked_fill(~past, 0.0)  # log(1 - beta)
    # sum of log(1 - beta_it) over the keys t between j and i: those after j, up to i - 1
    between = log_rest.flip(-1).cumsum(-1).flip(-1) - log_rest
    weights = (log_beta + between).exp()
    return weights, 1 - weights.sum(-1)


def stick_breaking_loop(z):
    """The same weights, one stick at a time: walk back from the query, take beta_ij of what
    is left, leave the rest for the keys further back."""
    T = z.shape[-1]
    weights = torch.zeros_like(z)
    for i in range(T):
        left = torch.ones_like(z[..., i, 0])
        for j in range(i - 1, -1, -1):
            beta = torch.sigmoid(z[..., i, j])
            weights[..., i, j] = beta * left
            left = left * (1 - beta)
    return weights


torch.manual_seed(0)
T = 12
z = torch.randn(2, T, T, dtype=torch.float64) * 3
weights, left = stick_breaking(z)
assert torch.allclose(weights, stick_breaking_loop(z))
assert (weights >= 0).all() and (left >= 0).all()  # the weights sum to at most 1

# No position encoding and equal content scores (every z = 0, beta = 1/2): the nearest key
# gets 1/2, the next 1/4, ... a recency bias from the order of the breaks alone.
equal, _ = stick_breaking(torch.zeros(T, T, dtype=torch.float64))
last = equal[-1, :-1].flip(0)  # the last query's weights, nearest key first
assert torch.allclose(last, 0.5 ** torch.arange(1, T, dtype=torch.float64))
# ... the same proportions as softmax with ALiBi's bias at slope softplus(0) = log 2 (chapter 6)
slope = F.softplus(torch.tensor(0.0, dtype=torch.float64))  # -log(1 - 1/2)
distance = torch.arange(1, T, dtype=torch.float64)  # 1, 2, ... tokens back
assert torch.allclose(last / last.sum(), (-slope * distance).softmax(-1))

# Two keys that match the query equally well (z = 8), 2 and 9 tokens back; all others z = -8.
match = torch.full((T, T), -8.0, dtype=torch.float64)
match[-1, T - 1 - 2] = match[-1, T - 1 - 9] = 8.0
sb = stick_breaking(match)[0][-1]
soft = match[-1, :-1].softmax(-1)  # ordinary softmax over the same past keys


def show_stick_breaking(lang="en"):
    text = {
        "en": ("equal scores, weights of the keys 1, 2, 3, 4 tokens back: ",
               "two matching keys, 2 and 9 tokens back: stick-breaking {:.4f} and {:.4f}, "
               "softmax {:.4f} and {:.4f}"),
        "zh": ("内容分数全部相同，往回 1、2、3、4 个 token 的 key 的权重：",
               "两个同样匹配的 key，分别在往回 2 和 9 个 token 处：stick-breaking 为 {:.4f} 和 {:.4f}，"
               "softmax 为 {:.4f} 和 {:.4f}"),
    }[lang]  # fmt: skip
    print(text[0] + " ".join(f"{x:.4f}" for x in last[:4].tolist()))
    near, far = T - 1 - 2, T - 1 - 9
    print(text[1].format(float(sb[near]), float(sb[far]), float(soft[near]), float(soft[far])))


# --8<-- [end:stick_breaking]

if __name__ == "__main__":
    show_stick_breaking()
