"""Chapter "RoPE's rivals": CoPE counts positions with gates, from posenc.cope_positions.

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

Run it: python snippets/rope_rivals/cope.py
"""

# --8<-- [start:cope]
import torch

import posenc

text = "we run. it fails. we fix it."
T = len(text)
is_stop = torch.tensor([ch == "." for ch in text])
# Gate logits of the last query against every key: +10 on a full stop, -10 elsewhere, the
# kind of score a head can learn (q_i · k_j large only for keys that are full stops).
stops_only = torch.where(is_stop, 10.0, -10.0).expand(T, T)
all_open = torch.full((T, T), 40.0)  # sigmoid(40) is 1.0 in float32: every key counts

p_stops = posenc.cope_positions(stops_only)[-1]  # position of each key seen from the last token
p_all = posenc.cope_positions(all_open)[-1]
j = torch.arange(T)
assert torch.equal(p_all, (T - 1 - j + 1).float())  # all gates open: i - j + 1, a relative offset
# Gates on full stops: each key's position is the number of full stops from it to the end.
stops_after = is_stop.flip(0).cumsum(0).flip(0).float()
assert torch.allclose(p_stops, stops_after, atol=1e-3)

# With all gates open, CoPE's term q·e[p] is a learned vector per relative offset, as in
# Shaw et al.'s relative keys (chapter 4): the table row i - j + 1, clipped to the last row.
torch.manual_seed(0)
cope = posenc.CoPE(head_dim=8, num_positions=12)  # e[0] .. e[11], zeros as released
with torch.no_grad():
    cope.pos_emb.normal_()  # a trained table would not be zero
q = torch.randn(1, 1, T, 8)
term = cope(q, all_open[None, None])[0, 0]  # (T, T): q_i · e[p_ij]
offsets = (j[:, None] - j[None, :] + 1).clamp(0, 11)  # i - j + 1, clipped to row 11
shaw = torch.einsum("id,dij->ij", q[0, 0], cope.pos_emb[:, offsets])  # q_i · e[i - j + 1]
assert torch.allclose(term.tril(), shaw.tril(), atol=1e-5)


def show_cope(lang="en"):
    label = {
        "en": ("text", "all gates open", "gates on '.'"),
        "zh": ("文本", "门全部打开", "门只在句号处打开"),
    }[lang]
    width = max(sum(2 if ord(ch) > 0x2E80 else 1 for ch in name) for name in label)
    for name, row in zip(label, (list(text), p_all.tolist(), p_stops.tolist()), strict=True):
        cells = "".join(f"{x:>3}" if isinstance(x, str) else f"{x:3.0f}" for x in row)
        fill = width - sum(2 if ord(ch) > 0x2E80 else 1 for ch in name)
        print(name + " " * fill + cells)


# --8<-- [end:cope]

if __name__ == "__main__":
    show_cope()
