"""Chapter "RoPE's rivals": PaTH attention, a product of data-dependent Householder-like
transitions between the query and the key, in plain torch (small, not fast).

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/path.py
"""

# --8<-- [start:path]
import torch


def transitions(w, beta):
    """H_t = I - beta_t w_t w_t^T for every token t: w (T, d) unit vectors, beta (T,) in (0, 2)."""
    d = w.shape[-1]
    return torch.eye(d, dtype=w.dtype) - beta[:, None, None] * w[:, :, None] * w[:, None, :]


def path_scores(q, k, H):
    """s_ij = q_i^T H_i H_(i-1) ... H_(j+1) k_j for j <= i (the empty product is I); -inf above."""
    T, d = q.shape
    scores = torch.full((T, T), float("-inf"), dtype=q.dtype)
    for i in range(T):
        P = torch.eye(d, dtype=q.dtype)  # H_i ... H_(j+1), starting with j = i
        for j in range(i, -1, -1):
            scores[i, j] = q[i] @ P @ k[j]
            P = P @ H[j]
    return scores


def path_scores_recurrent(q, k, w, beta):
    """The same scores as a decoder computes them: when token t arrives, every cached key is
    multiplied by H_t (a rank-one update, k - beta (k·w) w), then k_t joins the cache."""
    T, _ = q.shape
    scores = torch.full((T, T), float("-inf"), dtype=q.dtype)
    cache = k[:0]
    for t in range(T):
        cache = cache - beta[t] * (cache @ w[t])[:, None] * w[t]
        cache = torch.cat([cache, k[t : t + 1]])
        scores[t, : t + 1] = cache @ q[t]
    return scores


torch.manual_seed(0)
T, d = 12, 8
unit = torch.nn.functional.normalize
q = torch.randn(d, dtype=torch.float64).expand(T, d)  # one query and one key vector ...
k = torch.randn(d, dtype=torch.float64).expand(T, d)  # ... at every position, as for xPos
w_tokens = unit(torch.randn(T, d, dtype=torch.float64), dim=-1)  # one w_t per token
beta_tokens = 2 * torch.sigmoid(torch.randn(T, dtype=torch.float64))  # in (0, 2)
w_fixed, beta_fixed = w_tokens[:1].expand(T, d), beta_tokens[:1].expand(T)  # the same every step

token_dependent = path_scores(q, k, transitions(w_tokens, beta_tokens))
fixed = path_scores(q, k, transitions(w_fixed, beta_fixed))
assert torch.allclose(token_dependent, path_scores_recurrent(q, k, w_tokens, beta_tokens))


def depends_on_distance_only(scores):
    past = torch.ones(T, T, dtype=torch.bool).tril()
    s = scores.masked_fill(~past, 0.0)
    return all(torch.allclose(s[t:, t:], s[:-t, :-t]) for t in range(1, T))


assert depends_on_distance_only(fixed) and not depends_on_distance_only(token_dependent)

# beta in (0, 2): H_t has eigenvalues 1 (d - 1 times) and 1 - beta_t, in (-1, 1), so a key
# carried past any number of tokens never grows; beta = 2 makes H_t a reflection (norm kept).
H = transitions(w_tokens, beta_tokens)
carried = k[0]
for t in range(1, T):
    carried = H[t] @ carried
shrink = float(carried.norm() / k[0].norm())
mirror = transitions(w_tokens, torch.full((T,), 2.0, dtype=torch.float64))
kept = k[0]
for t in range(1, T):
    kept = mirror[t] @ kept
assert shrink <= 1 and torch.isclose(kept.norm(), k[0].norm())


def show_path(lang="en"):
    text = {
        "en": ("scores depend on i - j only: {} (one transition for every token), "
               "{} (a transition per token)",
               "norm of k_0 after 11 transitions: x{:.3f} (beta in (0, 2)), x{:.3f} (beta = 2)"),
        "zh": ("分数只取决于 i - j：{}（每个 token 的变换相同），{}（每个 token 有自己的变换）",
               "k_0 经过 11 次变换后的模长：x{:.3f}（beta 在 (0, 2) 内），x{:.3f}（beta = 2）"),
    }[lang]  # fmt: skip
    print(
        text[0].format(depends_on_distance_only(fixed), depends_on_distance_only(token_dependent))
    )
    print(text[1].format(shrink, float(kept.norm() / k[0].norm())))


# --8<-- [end:path]

if __name__ == "__main__":
    show_path()
