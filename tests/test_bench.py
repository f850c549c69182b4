"""The benchmark suite runs and writes valid results; its candidate implementations are correct.

No timing is asserted anywhere: timings depend on the machine. The smoke run uses tiny sizes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench  # noqa: E402

import posenc  # noqa: E402


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_candidates_match_posenc(layout: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(16, layout=layout)
    q = torch.randn(2, 3, 10, 16, dtype=dtype)
    cos, sin = rope.cos_sin(10, dtype=dtype)
    expected = rope(q, q)[0].double()
    tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
    candidates = [bench.rope_hf_eager, bench.rope_fused]
    if layout == "interleaved":
        candidates.append(bench.rope_stack_flatten)
    for fn in candidates:
        got = fn(q, cos, sin, layout)
        assert got.shape == q.shape and got.dtype == dtype, fn.__name__
        torch.testing.assert_close(got.double(), expected, atol=tol, rtol=tol, msg=fn.__name__)


def test_fused_interleaved_handles_non_contiguous_input() -> None:
    torch.manual_seed(0)
    rope = posenc.RotaryEmbedding(8, layout="interleaved")
    q = torch.randn(2, 10, 3, 8).transpose(1, 2)  # (batch, heads, seq, dim), not contiguous
    cos, sin = rope.cos_sin(10)
    torch.testing.assert_close(bench.rope_fused(q, cos, sin, "interleaved"), rope(q, q)[0])


def test_smoke_run_writes_valid_json(tmp_path: Path, capsys) -> None:
    out = tmp_path / "smoke.json"
    assert bench.main(["--smoke", "--device", "cpu", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["schema"] == bench.SCHEMA and results["smoke"] is True
    assert {"cpu", "torch", "torch_threads"} <= set(results["machine"])
    rows = results["results"]
    assert {r["bench"] for r in rows} == {"rope", "alibi", "sinusoidal"}
    for row in rows:
        assert row["median_ms"] > 0 and row["q1_ms"] <= row["median_ms"] <= row["q3_ms"]
        assert row["ratio"] > 0
    for layout in ("half", "interleaved"):
        impls = {r["impl"] for r in rows if r["bench"] == "rope" and r["layout"] == layout}
        assert {"copy", "posenc", "hf_eager", "fused"} <= impls
    floors = [r for r in rows if r["impl"] == r["floor"]]
    assert floors and all(r["ratio"] == 1.0 for r in floors)
    printed = capsys.readouterr().out
    assert "targets" in printed and "rope half" in printed


def test_committed_results_are_complete() -> None:
    """The chapter reads benchmarks/results/cpu.json: a full (not smoke) CPU run."""
    results = json.loads((ROOT / "benchmarks" / "results" / "cpu.json").read_text())
    assert results["schema"] == bench.SCHEMA and results["smoke"] is False
    rope = [r for r in results["results"] if r["bench"] == "rope"]
    assert {r["shape"][2] for r in rope} >= {1024}
    assert {r["impl"] for r in rope} >= {"copy", "posenc", "hf_eager", "fused", "stack_flatten"}
