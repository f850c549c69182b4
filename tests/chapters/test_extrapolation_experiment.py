"""The extrapolation experiment of chapter 8: the quick profile runs end to end, and the
committed full results have the shape the chapter reads."""

from __future__ import annotations

import json
import math

import pytest
import torch

import posenc
from experiments.extrapolation import corpus, model, train
from experiments.extrapolation import results as results_file

ALL_NAMES = {
    "nope",
    "sinusoidal",
    "learned",
    "t5",
    "rope",
    "rope+pi",
    "rope+ntk",
    "rope+yarn",
    "alibi",
}


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory):
    threads = torch.get_num_threads()
    try:
        out = tmp_path_factory.mktemp("experiment") / "quick.json"
        report = train.main(["--quick", "--out", str(out)])
        return report, json.loads(out.read_text())
    finally:
        torch.set_num_threads(threads)


def test_quick_profile_runs_end_to_end(quick_report):
    report, written = quick_report
    assert written == json.loads(json.dumps(report))  # the file holds what run() returned
    assert written["profile"] == "quick"
    assert set(written["results"]) == ALL_NAMES
    for name, entry in written["results"].items():
        for length in ("128", "256", "512", "1024"):
            ppl = entry["perplexity"][length]
            if name == "learned" and length != "128":
                assert ppl is None  # no table row past position 127
            else:
                assert math.isfinite(ppl) and 1 < ppl < len(corpus.ALPHABET) * 2
        # 30 steps already beat the uniform guess ln(96) = 4.56 nats per character
        assert entry["final_train_loss"] < math.log(len(corpus.ALPHABET))
    assert written["wall_seconds"] > 0 and written["hardware"]["threads"] == 1


def test_rope_variants_equal_rope_at_training_length(quick_report):
    results = quick_report[1]["results"]
    for name in ("rope+pi", "rope+ntk", "rope+yarn"):
        assert results[name]["perplexity"]["128"] == results["rope"]["perplexity"]["128"]
        assert results[name]["perplexity"]["256"] != results["rope"]["perplexity"]["256"]


def test_corpus_split_is_fixed_and_ascii():
    train_ids, valid_ids = corpus.load_splits()
    assert len(train_ids) + len(valid_ids) == len(corpus.CORPUS.read_text(encoding="ascii"))
    assert 0.08 < len(valid_ids) / (len(train_ids) + len(valid_ids)) < 0.12
    assert int(train_ids.max()) < len(corpus.ALPHABET)


def test_learned_model_refuses_positions_past_training_length():
    lm = model.TinyLM("learned", vocab=len(corpus.ALPHABET), dim=16, heads=2, layers=1)
    lm(torch.zeros(1, 128, dtype=torch.long))
    with pytest.raises(ValueError, match="max_positions"):
        lm(torch.zeros(1, 129, dtype=torch.long))


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="method must be one of"):
        model.TinyLM("xpos", vocab=10)


def _frequencies(variant: dict, head_dim: int) -> torch.Tensor:
    return posenc.rope_inv_freq(head_dim, base=variant["base"], scaling=variant["scaling"])[0]


def test_rope_variants_stretch_what_each_method_promises():
    """At 4x the training length: PI slows every pair 4x; NTK-aware keeps the fastest pair and
    slows the slowest exactly 4x (so its period covers 4x the positions); YaRN keeps the fast
    pairs and slows the slow ones 4x. At the training length all equal plain RoPE."""
    head_dim, s = 16, 4
    plain = posenc.rope_inv_freq(head_dim)[0]
    variants = train.rope_variants(s * train.TRAIN_LEN, head_dim=head_dim)
    torch.testing.assert_close(_frequencies(variants["rope+pi"], head_dim), plain / s)
    ntk = _frequencies(variants["rope+ntk"], head_dim)
    torch.testing.assert_close(ntk[[0, -1]], torch.stack([plain[0], plain[-1] / s]))
    yarn = _frequencies(variants["rope+yarn"], head_dim)
    torch.testing.assert_close(yarn[[0, -1]], torch.stack([plain[0], plain[-1] / s]))
    for variant in train.rope_variants(train.TRAIN_LEN, head_dim=head_dim).values():
        torch.testing.assert_close(_frequencies(variant, head_dim), plain)


def test_committed_full_results_are_complete():
    report = results_file.load("full")  # checks the schema
    assert report["profile"] == "full"
    assert all(
        report["config"][k] == v for k, v in train.PROFILES["full"].items()
    )  # same as the code
    assert set(report["results"]) == ALL_NAMES
    assert report["wall_seconds"] > 0 and report["hardware"]["threads"] == 1


def test_t5_distances_past_training_share_a_trained_bucket():
    """Chapter 8: in a causal T5 bias with max_distance 128, distances seen in training
    (up to 127) already reach the last bucket, which every longer distance also uses."""
    distances = -torch.tensor([100, 127, 128, 500, 1023])  # key j - query i, past keys
    buckets = posenc.t5_relative_bucket(
        distances, bidirectional=False, num_buckets=32, max_distance=128
    )
    assert buckets.tolist()[1:] == [31, 31, 31, 31] and buckets[0] < 31
