"""The character-level corpus: CPython standard-library source shipped in data/corpus.txt."""

from __future__ import annotations

from pathlib import Path

import torch

CORPUS = Path(__file__).resolve().parent / "data" / "corpus.txt"
# Newline plus printable ASCII: 96 symbols, token id = index in this string.
ALPHABET = "\n" + "".join(chr(c) for c in range(32, 127))
BLOCK = 8192  # the text is cut into blocks of this many characters; every 10th is held out


def encode(text: str) -> torch.Tensor:
    index = {ch: i for i, ch in enumerate(ALPHABET)}
    return torch.tensor([index[ch] for ch in text], dtype=torch.long)


def load_splits(path: Path = CORPUS) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, validation) token ids; blocks 9, 19, 29, ... of 8192 characters are validation."""
    ids = encode(path.read_text(encoding="ascii"))
    blocks = list(ids.split(BLOCK))
    train = torch.cat([b for i, b in enumerate(blocks) if i % 10 != 9])
    valid = torch.cat([b for i, b in enumerate(blocks) if i % 10 == 9])
    return train, valid
