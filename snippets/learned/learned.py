"""Chapter "Learned absolute embeddings": a trainable table of position vectors (BERT, GPT-2).

Functions named ``show_*`` print a result with labels in the reader's language
(``lang="en"`` or ``"zh"``); each page calls them in a one-line block.

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
    random_rows = table.weight[:200]  # the untrained table above
sine_rows = posenc.sinusoidal(200, 768)
# the sinusoidal rows: neighbours far more alike than rows 100 apart; the random rows: neither
assert neighbour_similarity(sine_rows) > 0.9 > 0.5 > far_similarity(sine_rows)
assert abs(neighbour_similarity(random_rows)) < 0.05 and abs(far_similarity(random_rows)) < 0.05


def show_similarity(lang: str = "en") -> None:
    line = {
        "en": "{name}: neighbours {near:.2f}, 100 apart {far:.2f}",
        "zh": "{name}：相邻位置 {near:.2f}，相隔 100 个位置 {far:.2f}",
    }[lang]
    names = {
        "en": ("sinusoidal", "learned, untrained"),
        "zh": ("正弦位置编码", "未训练的位置嵌入"),
    }[lang]
    for name, rows in zip(names, (sine_rows, random_rows), strict=True):
        near, far = neighbour_similarity(rows), far_similarity(rows)
        print(line.format(name=name, near=near, far=far))


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
changed = (small.weight.detach() != before).any(dim=-1)  # (128,) True where a row moved
assert changed[:64].all() and not changed[64:].any()


def show_unseen_rows(lang: str = "en") -> None:
    line = {
        "en": "rows updated: {first} of the first 64, {last} of the last 64",
        "zh": "更新过的行：前 64 行里有 {first} 行，后 64 行里有 {last} 行",
    }[lang]
    print(line.format(first=int(changed[:64].sum()), last=int(changed[64:].sum())))


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
table_sizes = {
    name: posenc.LearnedPositionalEmbedding(max_positions, d_model).weight.numel()
    for name, (max_positions, d_model) in models.items()
}
assert all(table_sizes[name] == p * d for name, (p, d) in models.items())


def show_table_sizes(lang: str = "en") -> None:
    unit = {"en": "parameters", "zh": "个参数"}[lang]
    for name, (max_positions, d_model) in models.items():
        size = table_sizes[name]
        print(f"{name:13s} {max_positions:5d} x {d_model:4d} = {size:>9,d} {unit}")


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


def show_share(lang: str = "en") -> None:
    line = {
        "en": "{name}: {total:,d} parameters, position table {share:.2f}%",
        "zh": "{name}：共 {total:,d} 个参数，位置表占 {share:.2f}%",
    }[lang]
    for name, total in [("BERT-base", bert_params()), ("GPT-2 small", gpt2_params())]:
        share = 100 * table_sizes[name] / total
        print(line.format(name=name, total=total, share=share))


# --8<-- [end:share]


# --8<-- [start:exercise_cache]
def show_cache_limit(lang: str = "en") -> None:
    line = {
        "en": "{cached} tokens in the cache: {result}",
        "zh": "缓存里有 {cached} 个 token：{result}",
    }[lang]
    ok = {"en": "ok", "zh": "可以"}[lang]
    gpt2_table = posenc.LearnedPositionalEmbedding(max_positions=1024, dim=768)
    new_token = torch.randn(1, 1, 768)  # one token generated with a KV cache
    for cached in (1022, 1023, 1024):
        try:
            gpt2_table(new_token, offset=cached)  # the new token sits at position `cached`
            print(line.format(cached=cached, result=ok))
        except ValueError as err:
            print(line.format(cached=cached, result=err))


# --8<-- [end:exercise_cache]


# --8<-- [start:exercise_llama]
def show_table_cost(lang: str = "en", context: int = 4096, d_model: int = 4096) -> None:
    learned = context * d_model  # one row of d_model numbers per position
    sinusoidal = sum(p.numel() for p in posenc.SinusoidalPositionalEncoding(d_model).parameters())
    lines = {
        "en": (
            f"a learned table for {context} positions at d_model {d_model}: {learned:,d} parameters",
            f"the sinusoidal encoding: {sinusoidal} parameters",
        ),
        "zh": (
            f"{context} 个位置、d_model = {d_model} 的位置嵌入表：{learned:,d} 个参数",
            f"正弦位置编码：{sinusoidal} 个参数",
        ),
    }[lang]
    print(*lines, sep="\n")


# --8<-- [end:exercise_llama]


show_similarity()
show_unseen_rows()
show_table_sizes()
show_share()
show_cache_limit()
show_table_cost()
