"""Chapter "Learned absolute embeddings": a trainable table of position vectors (BERT, GPT-2).

Run it: python snippets/learned/learned.py
"""

# --8<-- [start:table]
import torch
import torch.nn.functional as F

import posenc

torch.manual_seed(0)
table = posenc.LearnedPositionalEmbedding(max_positions=512, dim=768)  # BERT-base size
print(table)
print(tuple(table.weight.shape), table.weight.requires_grad)

x = torch.randn(2, 10, 768)  # (batch, seq, dim) token embeddings
with torch.no_grad():
    h = table(x)  # adds rows 0..9 of the table
    positions = torch.arange(10)
    # the same as an nn.Embedding lookup: row p of the weight matrix
    print(torch.equal(h, x + F.embedding(positions, table.weight)))
# --8<-- [end:table]


# --8<-- [start:structure]
def neighbour_similarity(rows: torch.Tensor) -> float:
    """Mean cosine similarity between the vectors of positions p and p + 1."""
    return F.cosine_similarity(rows[1:], rows[:-1], dim=-1).mean().item()


def far_similarity(rows: torch.Tensor, gap: int = 100) -> float:
    """Mean cosine similarity between the vectors of positions p and p + gap."""
    return F.cosine_similarity(rows[gap:], rows[:-gap], dim=-1).mean().item()


with torch.no_grad():
    random_rows = table.weight[:200]
sine_rows = posenc.sinusoidal(200, 768)
print(
    f"sinusoidal: neighbours {neighbour_similarity(sine_rows):.2f}, 100 apart {far_similarity(sine_rows):.2f}"
)
print(
    f"learned, untrained: neighbours {neighbour_similarity(random_rows):.2f}, 100 apart {far_similarity(random_rows):.2f}"
)
assert neighbour_similarity(sine_rows) > 0.9 and abs(neighbour_similarity(random_rows)) < 0.05
# --8<-- [end:structure]

# --8<-- [start:unseen_rows]
torch.manual_seed(0)
small = posenc.LearnedPositionalEmbedding(max_positions=128, dim=16)
before = small.weight.detach().clone()
optimizer = torch.optim.SGD(small.parameters(), lr=0.1)
for _ in range(20):  # train on sequences of length 64 only
    tokens = torch.randn(8, 64, 16)
    loss = small(tokens).pow(2).mean()  # any loss: what matters is which rows it touches
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
changed = (small.weight.detach() != before).any(dim=-1)
print(
    f"rows updated: {int(changed[:64].sum())} of the first 64, {int(changed[64:].sum())} of the last 64"
)
# --8<-- [end:unseen_rows]

# --8<-- [start:too_long]
long_input = torch.randn(1, 600, 768)  # 600 tokens, but the table has 512 rows
try:
    table(long_input)
except ValueError as err:
    print(err)

try:
    table.embeddings(torch.tensor([0, 511, 512]))
except ValueError as err:
    print(err)
# --8<-- [end:too_long]

# --8<-- [start:plain_embedding]
plain = torch.nn.Embedding(512, 768)
try:
    plain(torch.arange(600))
except IndexError as err:
    print(err)
# --8<-- [end:plain_embedding]

# --8<-- [start:parameters]
models = {  # name: (max_positions, d_model)
    "BERT-base": (512, 768),
    "BERT-large": (512, 1024),
    "GPT-2 small": (1024, 768),
    "GPT-2 medium": (1024, 1024),
    "GPT-2 large": (1024, 1280),
    "GPT-2 XL": (1024, 1600),
}
for name, (max_positions, d_model) in models.items():
    params = posenc.LearnedPositionalEmbedding(max_positions, d_model).weight.numel()
    assert params == max_positions * d_model
    print(f"{name:13s} {max_positions:5d} x {d_model:4d} = {params:>9,d} parameters")
# --8<-- [end:parameters]


# --8<-- [start:share]
def bert_params(vocab=30522, positions=512, d=768, layers=12, ffn=3072, types=2) -> int:
    """All parameters of a BERT encoder with its pooler (biases and LayerNorms included)."""
    embeddings = (vocab + positions + types) * d + 2 * d  # three tables + LayerNorm
    layer = 4 * (d * d + d) + 2 * d + (d * ffn + ffn) + (ffn * d + d) + 2 * d
    return embeddings + layers * layer + (d * d + d)  # + pooler


def gpt2_params(vocab=50257, positions=1024, d=768, layers=12) -> int:
    """All parameters of GPT-2 (output layer tied to the token table)."""
    layer = (
        2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + (d * 4 * d + 4 * d) + (4 * d * d + d)
    )
    return (vocab + positions) * d + layers * layer + 2 * d


for name, total, table_size in [
    ("BERT-base", bert_params(), 512 * 768),
    ("GPT-2 small", gpt2_params(), 1024 * 768),
]:
    print(f"{name}: {total:,d} parameters, position table {100 * table_size / total:.2f}%")
# --8<-- [end:share]

# --8<-- [start:exercise_cache]
gpt2_table = posenc.LearnedPositionalEmbedding(max_positions=1024, dim=768)
new_token = torch.randn(1, 1, 768)  # one token generated with a KV cache
for cached in (1022, 1023, 1024):
    try:
        gpt2_table(new_token, offset=cached)
        print(f"{cached} tokens in the cache: ok")
    except ValueError as err:
        print(f"{cached} tokens in the cache: {err}")
# --8<-- [end:exercise_cache]

# --8<-- [start:exercise_llama]
d_model, context = 4096, 4096
print(
    f"a learned table for {context} positions at d_model {d_model}: {context * d_model:,d} parameters"
)
print(
    f"the sinusoidal encoding: {sum(p.numel() for p in posenc.SinusoidalPositionalEncoding(d_model).parameters())} parameters"
)
# --8<-- [end:exercise_llama]
