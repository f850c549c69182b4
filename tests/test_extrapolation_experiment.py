"""The extrapolation experiment of chapter 8: the quick profile runs end to end, and the
committed full results have the shape the chapter reads."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import torch

EXPERIMENT = Path(__file__).resolve().parents[1] / "experiments" / "extrapolation"
sys.path.insert(0, str(EXPERIMENT))

import corpus  # noqa: E402
import model  # noqa: E402
import train  # noqa: E402

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


def test_rope_variant_settings():
    variants = train.rope_variants(512, head_dim=16)
    assert variants["rope+pi"]["scaling"] == {"rope_type": "linear", "factor": 4.0}
    assert variants["rope+ntk"]["base"] == pytest.approx(10000 * 4 ** (16 / 14))
    assert variants["rope+yarn"]["scaling"]["original_max_position_embeddings"] == 128
    assert all(v["scaling"] is None for v in train.rope_variants(128, head_dim=16).values())


def test_committed_full_results_are_complete():
    path = EXPERIMENT / "results" / "full.json"
    report = json.loads(path.read_text())
    assert report["profile"] == "full"
    assert all(
        report["config"][k] == v for k, v in train.PROFILES["full"].items()
    )  # same as the code
    assert set(report["results"]) == ALL_NAMES
    assert report["wall_seconds"] > 0 and report["hardware"]["threads"] == 1


def test_t5_distances_past_training_share_a_trained_bucket():
    """Chapter 8: in a causal T5 bias with max_distance 128, distances seen in training
    (up to 127) already reach the last bucket, which every longer distance also uses."""
    import posenc

    distances = -torch.tensor([100, 127, 128, 500, 1023])  # key j - query i, past keys
    buckets = posenc.t5_relative_bucket(
        distances, bidirectional=False, num_buckets=32, max_distance=128
    )
    assert buckets.tolist()[1:] == [31, 31, 31, 31] and buckets[0] < 31
