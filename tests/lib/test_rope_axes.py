"""Multi-axis RoPE (posenc.rope_axes): equal to transformers' Qwen2-VL, Qwen2.5-VL, Qwen3-VL and
Pixtral (tables bit for bit, position ids exactly, logits of tiny random models), properties, and
bad input."""
# ruff: noqa: E501  (the bad-input table reads best one case per line)

import pytest
import torch
from transformers import (
    PixtralVisionConfig,
    Qwen2_5_VLConfig,
    Qwen2_5_VLForConditionalGeneration,
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    Qwen3VLConfig,
    Qwen3VLForConditionalGeneration,
    vision_utils,
)
from transformers.models.pixtral import modeling_pixtral
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl
from transformers.models.qwen2_vl import modeling_qwen2_vl
from transformers.models.qwen3_vl import modeling_qwen3_vl

import posenc
from posenc import rope_axes

ATOL = 1e-6  # float32 logits, rotation computed in another order: 2e-7 here; a wrong vision
# frequency split (halves vs parity) moves them by 1e-4, wrong text positions by 1e-2


def random_ids(*shape, high=5000):
    torch.manual_seed(0)
    return torch.randint(0, high, shape)


# ── tables: bit for bit ─────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("module", "config_cls"),
    [(modeling_qwen2_vl, Qwen2VLConfig), (modeling_qwen2_5_vl, Qwen2_5_VLConfig)],
)
@pytest.mark.parametrize("sections", [[16, 24, 24], [8, 28, 28]])
def test_contiguous_tables_match_qwen2_vl_bit_for_bit(module, config_cls, sections):
    rope = {"rope_type": "default", "rope_theta": 1e6, "mrope_section": sections}
    config = config_cls(text_config={"hidden_size": 512, "num_attention_heads": 4, "head_dim": 128, "rope_parameters": rope})  # fmt: skip
    rotary = getattr(module, f"{config_cls.__name__.removesuffix('Config')}RotaryEmbedding")(
        config.text_config
    )
    position_ids = random_ids(3, 2, 40)
    cos, sin = rotary(torch.zeros(1), position_ids)
    ours = rope_axes.mrope_cos_sin(position_ids, posenc.default_inv_freq(128, 1e6), sections)
    assert torch.equal(ours[0], cos) and torch.equal(ours[1], sin)


@pytest.mark.parametrize(
    ("head_dim", "sections"), [(128, [24, 20, 20]), (32, [6, 5, 5]), (16, [4, 2, 2])]
)
def test_interleaved_tables_match_qwen3_vl_bit_for_bit(head_dim, sections):
    rope = {"rope_type": "default", "rope_theta": 5e6, "mrope_section": sections}
    config = Qwen3VLConfig(text_config={"head_dim": head_dim, "rope_parameters": rope})
    rotary = modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding(config.text_config)
    position_ids = random_ids(3, 2, 40)
    cos, sin = rotary(torch.zeros(1), position_ids)
    inv_freq = posenc.default_inv_freq(head_dim, 5e6)
    ours = rope_axes.mrope_cos_sin(position_ids, inv_freq, sections, interleaved=True)
    assert torch.equal(ours[0], cos) and torch.equal(ours[1], sin)


def test_tables_in_bfloat16_are_the_float32_tables_rounded_like_transformers():
    config = Qwen2VLConfig(text_config={"hidden_size": 512, "num_attention_heads": 4})
    rotary = modeling_qwen2_vl.Qwen2VLRotaryEmbedding(config.text_config)
    position_ids = random_ids(3, 1, 30, high=100_000)
    cos, sin = rotary(torch.zeros(1, dtype=torch.bfloat16), position_ids)
    inv_freq = posenc.default_inv_freq(128, 1e6)
    ours = rope_axes.mrope_cos_sin(position_ids, inv_freq, [16, 24, 24], dtype=torch.bfloat16)
    assert ours[0].dtype == torch.bfloat16
    assert torch.equal(ours[0], cos) and torch.equal(ours[1], sin)


def test_axial_halves_match_the_qwen_vision_encoders_bit_for_bit():
    grid = torch.tensor([[1, 8, 12], [2, 4, 6]])  # an image and a two-step video, in patches
    positions = vision_utils.get_vision_position_ids(grid, 2)  # (n, 2): block-major order
    ours_positions = torch.cat(
        [
            rope_axes.patch_positions(8, 12, merge_size=2),
            rope_axes.patch_positions(4, 6, merge_size=2).repeat(1, 2),
        ],
        dim=1,
    )
    assert torch.equal(ours_positions, positions.T)
    for rotary in (
        modeling_qwen2_vl.Qwen2VLVisionRotaryEmbedding(Qwen2VLConfig().vision_config),  # head 80
        modeling_qwen2_5_vl.Qwen2_5_VLVisionRotaryEmbedding(
            Qwen2_5_VLConfig(vision_config={"hidden_size": 1280}).vision_config
        ),  # fmt: skip
        modeling_qwen3_vl.Qwen3VLVisionRotaryEmbedding(Qwen3VLConfig().vision_config),  # head 72
    ):
        head_dim = 2 * 2 * rotary.inv_freq.shape[0]
        cos, sin = rotary(torch.zeros(1), positions)
        inv_freq = rope_axes.axial_inv_freq(head_dim, 10000.0)
        ours = rope_axes.axial_cos_sin(ours_positions, inv_freq)
        assert torch.equal(ours[0], cos) and torch.equal(ours[1], sin)


def test_axial_parity_matches_pixtral_bit_for_bit():
    config = PixtralVisionConfig()  # head_dim 64, theta 10000
    rotary = modeling_pixtral.PixtralVisionRotaryEmbedding(config)
    positions = rope_axes.patch_positions(5, 7)  # row-major, as Pixtral's meshgrid
    rows, cols = torch.meshgrid(torch.arange(5), torch.arange(7), indexing="ij")
    assert torch.equal(positions, torch.stack([rows.flatten(), cols.flatten()]))
    cos, sin = rotary(torch.zeros(1), positions.T)
    inv_freq = rope_axes.axial_inv_freq(64, config.rope_parameters["rope_theta"], split="parity")
    ours = rope_axes.axial_cos_sin(positions, inv_freq)
    assert torch.equal(ours[0], cos) and torch.equal(ours[1], sin)


def test_pixtral_rows_get_the_qwen_ladder_and_columns_the_steps_between():
    halves = rope_axes.axial_inv_freq(64, 10000.0)
    parity = rope_axes.axial_inv_freq(64, 10000.0, split="parity")
    assert torch.equal(parity[:16], halves[:16])  # rows: base^(-4k/d) in both
    assert (parity[16:] < halves[16:]).all() and (parity[16:-1] > halves[17:]).all()  # in between


# ── which axis each pair follows ────────────────────────────────────────────


def test_axes_of_qwen2_vl_and_qwen3_vl():
    contiguous = rope_axes.mrope_axes([16, 24, 24])
    assert contiguous == (0,) * 16 + (1,) * 24 + (2,) * 24
    interleaved = rope_axes.mrope_axes([24, 20, 20], interleaved=True)
    assert interleaved[:60] == (0, 1, 2) * 20 and interleaved[60:] == (0, 0, 0, 0)


def test_text_positions_give_ordinary_rope_bit_for_bit():
    positions = torch.arange(5000)
    inv_freq = posenc.default_inv_freq(128, 1e6)
    expected = posenc.rotary_cos_sin(positions, inv_freq)
    same_three = positions.expand(3, -1)
    for sections, interleaved in (([16, 24, 24], False), ([24, 20, 20], True)):
        cos, sin = rope_axes.mrope_cos_sin(same_three, inv_freq, sections, interleaved=interleaved)
        assert torch.equal(cos, expected[0]) and torch.equal(sin, expected[1])


def test_interleaved_layout_matches_posenc_interleaved_rotation():
    positions = random_ids(2, 9, high=50)  # (row, col) of 9 tokens
    inv_freq = rope_axes.axial_inv_freq(16)
    half = rope_axes.axial_cos_sin(positions, inv_freq)
    pairs = rope_axes.axial_cos_sin(positions, inv_freq, layout="interleaved")
    perm = posenc.interleaved_to_half_permutation(16)
    assert torch.equal(pairs[0][..., perm], half[0]) and torch.equal(pairs[1][..., perm], half[1])


def test_rotation_matches_transformers_apply():
    torch.manual_seed(0)
    q, k = torch.randn(2, 4, 30, 128), torch.randn(2, 2, 30, 128)
    position_ids = random_ids(3, 2, 30)
    cos, sin = rope_axes.mrope_cos_sin(
        position_ids, posenc.default_inv_freq(128, 1e6), [16, 24, 24]
    )
    expected_q, expected_k = modeling_qwen2_vl.apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(
        posenc.apply_rotary(q, cos[:, None], sin[:, None]), expected_q, atol=1e-6, rtol=0
    )
    torch.testing.assert_close(
        posenc.apply_rotary(k, cos[:, None], sin[:, None]), expected_k, atol=1e-6, rtol=0
    )


def test_scores_depend_only_on_offsets_along_each_axis():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 128), torch.randn(1, 1, 1, 128)
    inv_freq = posenc.default_inv_freq(128, 1e6)

    def score(q_ids, k_ids, interleaved):
        sections = [24, 20, 20] if interleaved else [16, 24, 24]
        ids = torch.tensor([q_ids, k_ids]).T  # (3, 2)
        cos, sin = rope_axes.mrope_cos_sin(ids, inv_freq, sections, interleaved=interleaved)
        rq = posenc.apply_rotary(q, cos[:1], sin[:1])
        rk = posenc.apply_rotary(k, cos[1:], sin[1:])
        return (rq * rk).sum().item()

    for interleaved in (False, True):
        base = score((5, 7, 9), (3, 2, 8), interleaved)
        shifted = score((105, 57, 19), (103, 52, 18), interleaved)  # same (dt, dh, dw)
        other = score((5, 7, 9), (3, 8, 2), interleaved)  # dh and dw swapped
        assert base == pytest.approx(shifted, abs=1e-3) and abs(base - other) > 0.1


# ── position ids ────────────────────────────────────────────────────────────


def tiny_config(config_cls, *, sections, head_dim=16, vision=None, **extra):
    text = {
        "vocab_size": 64, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": head_dim,
        "max_position_embeddings": 512,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": sections},
    }  # fmt: skip
    return config_cls(
        text_config=text, vision_config=vision, image_token_id=60, video_token_id=61,
        vision_start_token_id=62, vision_end_token_id=63, **extra,
    )  # fmt: skip


QWEN2_VISION = {"depth": 2, "embed_dim": 32, "hidden_size": 64, "num_heads": 2, "patch_size": 2}
QWEN25_VISION = {
    "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 2,
    "out_hidden_size": 64, "window_size": 8, "fullatt_block_indexes": [1], "tokens_per_second": 2,
}  # fmt: skip
QWEN3_VISION = {
    "depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 2,
    "out_hidden_size": 64, "num_position_embeddings": 64, "deepstack_visual_indexes": [0],
}  # fmt: skip


def tiny_model(kind):
    torch.manual_seed(0)
    if kind == "qwen2_vl":
        config = tiny_config(Qwen2VLConfig, sections=[2, 3, 3], vision=QWEN2_VISION)
        model = Qwen2VLForConditionalGeneration(config)
    elif kind == "qwen2_5_vl":
        config = tiny_config(Qwen2_5_VLConfig, sections=[2, 3, 3], vision=QWEN25_VISION)
        model = Qwen2_5_VLForConditionalGeneration(config)
    else:
        config = tiny_config(Qwen3VLConfig, sections=[4, 2, 2], vision=QWEN3_VISION)
        model = Qwen3VLForConditionalGeneration(config)
    return model.eval()


def token_sequence(pieces, merge=2):
    """input_ids and mm_token_type_ids for pieces: an int (text), ("image"|"video", (t, h, w))."""
    ids, types = [], []
    for piece in pieces:
        if isinstance(piece, int):
            ids += [5 + i % 50 for i in range(piece)]
            types += [0] * piece
        else:
            kind, (t, h, w) = piece
            count = t * (h // merge) * (w // merge)
            ids += (
                [62] + [60 if kind == "image" else 61] * count + [63]
            )  # <vision_start> ... <vision_end>
            types += [0] + [1 if kind == "image" else 2] * count + [0]
    return torch.tensor([ids]), torch.tensor([types])


def posenc_pieces(pieces):
    """The same sequence for posenc: <vision_start> and <vision_end> are one text token each."""
    out = []
    for piece in pieces:
        if isinstance(piece, int):
            out.append(piece)
        else:
            out += [1, piece[1] if len(piece) == 2 else piece[1:], 1]
    merged = []  # adjacent text runs are one run
    for piece in out:
        if isinstance(piece, int) and merged and isinstance(merged[-1], int):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def test_position_ids_match_get_rope_index_for_text_and_images():
    pieces = [3, ("image", (1, 8, 12)), 4, ("image", (1, 6, 4)), 2]
    input_ids, types = token_sequence(pieces)
    grids = torch.tensor([[1, 8, 12], [1, 6, 4]])
    for kind in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl"):
        model = tiny_model(kind).model
        expected, delta = model.get_rope_index(input_ids, types, image_grid_thw=grids)
        ours = rope_axes.mrope_position_ids(posenc_pieces(pieces))
        assert torch.equal(ours, expected[:, 0]), kind
        assert int(ours.max()) + 1 - ours.shape[1] == int(delta)  # where decoding continues


def test_position_ids_match_get_rope_index_for_videos():
    # Qwen2-VL: temporal ids count temporal patches
    pieces = [2, ("video", (3, 8, 8)), 3]
    input_ids, types = token_sequence(pieces)
    expected, _ = tiny_model("qwen2_vl").model.get_rope_index(
        input_ids, types, video_grid_thw=torch.tensor([[3, 8, 8]])
    )
    assert torch.equal(rope_axes.mrope_position_ids(posenc_pieces(pieces)), expected[:, 0])
    # Qwen2.5-VL: the step is tokens_per_second (2) x seconds per temporal patch (0.75 s: 1.5)
    model = tiny_model("qwen2_5_vl").model
    expected, _ = model.get_rope_index(
        input_ids,
        types,
        video_grid_thw=torch.tensor([[3, 8, 8]]),
        second_per_grid_ts=torch.tensor([0.75]),
    )
    video = rope_axes.VisionGrid(3, 8, 8, time_interval=2 * 0.75)
    ours = rope_axes.mrope_position_ids([3, video, 4])
    assert torch.equal(ours, expected[:, 0])
    temporal = ours[0, 3:51].view(3, 16)  # 3 temporal patches of 4 x 4 tokens
    assert (
        temporal[:, 0].tolist() == [3, 4, 6] and (temporal == temporal[:, :1]).all()
    )  # 3 + ⌊k·1.5⌋


def test_position_ids_match_get_rope_index_for_qwen3_vl_frames():
    # Qwen3-VL cuts a video into frames, each after its timestamp text ("<0.5 seconds>")
    frames = [4, ("video", (1, 4, 6)), 4, ("video", (1, 4, 6)), 2]
    input_ids, types = token_sequence(frames)
    model = tiny_model("qwen3_vl").model
    expected, _ = model.get_rope_index(input_ids, types, video_grid_thw=torch.tensor([[2, 4, 6]]))
    assert torch.equal(rope_axes.mrope_position_ids(posenc_pieces(frames)), expected[:, 0])


def test_text_after_a_block_starts_at_its_largest_id_plus_one():
    for grid in [(1, 8, 12), (1, 12, 2), (5, 2, 2), (3, 4, 4, 2.0), (2, 2, 2, 10.0)]:
        ids = rope_axes.mrope_position_ids([3, grid, 2])
        block = ids[:, 3:-2]
        assert ids[:, -2].tolist() == [int(block.max()) + 1] * 3
        assert (ids[0, 3:-2] >= 3).all() and ids[:, :3].tolist() == [[0, 1, 2]] * 3


def test_both_rules_after_a_video_by_name():
    """transformers 5.23's get_rope_index goes on at s + max(h', w') after every vision block
    ("spatial_extent"); the paper, Qwen's code and transformers up to 5.2 after the block's
    largest id ("largest_id", the default). They agree after images and differ after a video
    whose temporal ids run past its rows and columns, for Qwen2-VL and Qwen2.5-VL alike."""
    image = [3, ("image", (1, 8, 12)), 2]
    for pieces, grid_key, grid in [
        (image, "image_grid_thw", [[1, 8, 12]]),
        ([2, ("video", (5, 4, 4)), 3], "video_grid_thw", [[5, 4, 4]]),
    ]:
        input_ids, types = token_sequence(pieces)
        theirs, _ = tiny_model("qwen2_vl").model.get_rope_index(
            input_ids, types, **{grid_key: torch.tensor(grid)}
        )
        spatial = rope_axes.mrope_position_ids(posenc_pieces(pieces), after_vision="spatial_extent")
        largest = rope_axes.mrope_position_ids(posenc_pieces(pieces))
        assert torch.equal(spatial, theirs[:, 0])
        assert torch.equal(largest, spatial) == (pieces is image)
    # Qwen2.5-VL's time steps: 3 temporal patches 1.5 ids apart run to id 3 + 3 = 6 > 3 + 1
    pieces = [2, ("video", (3, 4, 4)), 3]
    input_ids, types = token_sequence(pieces)
    theirs, _ = tiny_model("qwen2_5_vl").model.get_rope_index(
        input_ids, types, video_grid_thw=torch.tensor([[3, 4, 4]]),
        second_per_grid_ts=torch.tensor([0.75]),
    )  # fmt: skip
    video = rope_axes.VisionGrid(3, 4, 4, time_interval=1.5)
    ours = rope_axes.mrope_position_ids([3, video, 4], after_vision="spatial_extent")
    assert torch.equal(ours, theirs[:, 0])
    assert not torch.equal(ours, rope_axes.mrope_position_ids([3, video, 4]))


def test_position_ids_batch_with_stack_and_go_to_the_device_asked():
    a = rope_axes.mrope_position_ids([2, (1, 2, 2), 1])
    b = rope_axes.mrope_position_ids([4])
    batch = torch.stack([a, b], dim=1)
    assert batch.shape == (3, 2, 4) and batch.dtype == torch.int64
    assert rope_axes.mrope_position_ids([4], device="meta").device.type == "meta"


# ── tiny models: same logits with posenc's rotation ─────────────────────────

MODULES = {
    "qwen2_vl": modeling_qwen2_vl,
    "qwen2_5_vl": modeling_qwen2_5_vl,
    "qwen3_vl": modeling_qwen3_vl,
}
INTERLEAVED = {"qwen2_vl": False, "qwen2_5_vl": False, "qwen3_vl": True}


def use_posenc(monkeypatch, model, kind, *, interleaved=None):
    """Swap transformers' rotations (text and vision) for posenc's."""
    module = MODULES[kind]
    text = model.model.language_model.config
    head_dim = text.head_dim
    sections = text.rope_parameters["mrope_section"]
    interleaved = INTERLEAVED[kind] if interleaved is None else interleaved
    inv_freq = posenc.default_inv_freq(head_dim, text.rope_parameters["rope_theta"])

    def text_tables(x, position_ids):
        return rope_axes.mrope_cos_sin(
            position_ids, inv_freq, sections, interleaved=interleaved, dtype=x.dtype
        )

    def rotate(q, k, cos, sin, unsqueeze_dim=1):
        cos, sin = cos.unsqueeze(unsqueeze_dim), sin.unsqueeze(unsqueeze_dim)
        return posenc.apply_rotary(q, cos, sin), posenc.apply_rotary(k, cos, sin)

    visual = model.model.visual
    vision_head = visual.config.hidden_size // visual.config.num_heads
    if kind == "qwen2_vl":
        vision_head = visual.config.embed_dim // visual.config.num_heads
    vision_freq = rope_axes.axial_inv_freq(vision_head, 10000.0)

    def vision_positions(grid_thw, merge, kwargs=None):
        blocks = [
            rope_axes.patch_positions(h, w, merge_size=merge).repeat(1, t)
            for t, h, w in grid_thw.tolist()
        ]
        return torch.cat(blocks, dim=1).T  # (n, 2), as the encoder expects

    def vision_rotate(q, k, cos, sin):
        cos, sin = (
            cos.unsqueeze(-2),
            sin.unsqueeze(-2),
        )  # (seq, 1, head_dim) over (seq, heads, head_dim)
        return posenc.apply_rotary(q, cos, sin), posenc.apply_rotary(k, cos, sin)

    monkeypatch.setattr(model.model.language_model.rotary_emb, "forward", text_tables)
    monkeypatch.setattr(module, "apply_rotary_pos_emb", rotate)
    monkeypatch.setattr(
        visual.rotary_pos_emb, "forward", lambda x, p: rope_axes.axial_cos_sin(p.T, vision_freq)
    )
    monkeypatch.setattr(module, "get_vision_position_ids", vision_positions)
    monkeypatch.setattr(module, "apply_rotary_pos_emb_vision", vision_rotate)


def image_inputs(kind):
    pieces = [3, ("image", (1, 8, 12)), 4, ("image", (1, 4, 4)), 3]
    input_ids, types = token_sequence(pieces)
    grids = torch.tensor([[1, 8, 12], [1, 4, 4]])
    torch.manual_seed(1)
    pixels = torch.randn(
        int(grids.prod(-1).sum()), 3 * 2 * 2 * 2
    )  # channels x temporal x patch x patch
    inputs = {
        "input_ids": input_ids,
        "mm_token_type_ids": types,
        "pixel_values": pixels,
        "image_grid_thw": grids,
    }
    return inputs, rope_axes.mrope_position_ids(posenc_pieces(pieces))[:, None]


@pytest.mark.parametrize("kind", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl"])
def test_tiny_model_same_logits_with_posenc(monkeypatch, kind):
    model = tiny_model(kind)
    inputs, position_ids = image_inputs(kind)
    with torch.no_grad():
        expected = model(**inputs).logits
        use_posenc(monkeypatch, model, kind)
        actual = model(**inputs, position_ids=position_ids).logits
        # the test can fail: the sequence index as position changes the logits
        flat = model(
            **inputs, position_ids=torch.arange(position_ids.shape[-1]).expand(3, 1, -1)
        ).logits
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)
    assert (flat - expected).abs().max() > 1e-3


def test_tiny_qwen3_vl_needs_the_interleaved_order(monkeypatch):
    model = tiny_model("qwen3_vl")
    inputs, position_ids = image_inputs("qwen3_vl")
    with torch.no_grad():
        expected = model(**inputs).logits
        use_posenc(monkeypatch, model, "qwen3_vl", interleaved=False)
        contiguous = model(**inputs, position_ids=position_ids).logits
    assert (contiguous - expected).abs().max() > 1e-3


def test_tiny_qwen2_5_vl_video_same_logits_with_posenc(monkeypatch):
    model = tiny_model("qwen2_5_vl")
    pieces = [3, ("video", (2, 8, 8)), 4]
    input_ids, types = token_sequence(pieces)
    grid = torch.tensor([[2, 8, 8]])
    torch.manual_seed(2)
    pixels = torch.randn(2 * 8 * 8, 3 * 2 * 2 * 2)
    inputs = {"input_ids": input_ids, "mm_token_type_ids": types, "pixel_values_videos": pixels, "video_grid_thw": grid, "second_per_grid_ts": torch.tensor([1.0])}  # fmt: skip
    video = rope_axes.VisionGrid(2, 8, 8, time_interval=2 * 1.0)  # tokens_per_second x seconds
    position_ids = rope_axes.mrope_position_ids([4, video, 5])[:, None]
    with torch.no_grad():
        expected = model(**inputs).logits
        use_posenc(monkeypatch, model, "qwen2_5_vl")
        actual = model(**inputs, position_ids=position_ids).logits
    torch.testing.assert_close(actual, expected, atol=ATOL, rtol=0)


# ── bad input ───────────────────────────────────────────────────────────────

IDS = torch.zeros(3, 1, 4, dtype=torch.long)
F8 = posenc.default_inv_freq(16)

BAD = [
    ("sections not a list", lambda: rope_axes.mrope_axes(8), TypeError, "sections must be a list"),
    (
        "sections a tensor",
        lambda: rope_axes.mrope_axes(torch.tensor([2, 3, 3])),
        TypeError,
        "sections",
    ),
    (
        "two sections",
        lambda: rope_axes.mrope_axes([4, 4]),
        ValueError,
        "sections must have 3 entries",
    ),
    ("section zero", lambda: rope_axes.mrope_axes([0, 4, 4]), ValueError, r"sections\[0\]"),
    ("section float", lambda: rope_axes.mrope_axes([2.0, 3, 3]), TypeError, r"sections\[0\]"),
    (
        "interleaved not a bool",
        lambda: rope_axes.mrope_axes([2, 3, 3], interleaved=1),
        TypeError,
        "interleaved",
    ),
    (
        "unreachable interleaving",
        lambda: rope_axes.mrope_axes([2, 3, 3], interleaved=True),
        ValueError,
        "interleaves to",
    ),
    (
        "float position ids",
        lambda: rope_axes.mrope_cos_sin(IDS.float(), F8, [2, 3, 3]),
        TypeError,
        "position_ids",
    ),
    (
        "negative position ids",
        lambda: rope_axes.mrope_cos_sin(IDS - 1, F8, [2, 3, 3]),
        ValueError,
        "position_ids must be >= 0",
    ),
    (
        "two rows of ids",
        lambda: rope_axes.mrope_cos_sin(IDS[:2], F8, [2, 3, 3]),
        ValueError,
        "3 rows",
    ),
    (
        "ids without seq",
        lambda: rope_axes.mrope_cos_sin(IDS[:, 0, 0], F8, [2, 3, 3]),
        ValueError,
        "position_ids must have 2 or 3",
    ),
    (
        "sections vs inv_freq",
        lambda: rope_axes.mrope_cos_sin(IDS, F8, [2, 3, 4]),
        ValueError,
        "inv_freq must have one frequency",
    ),
    (
        "integer inv_freq",
        lambda: rope_axes.mrope_cos_sin(IDS, F8.long(), [2, 3, 3]),
        TypeError,
        "inv_freq",
    ),
    (
        "2-D inv_freq",
        lambda: rope_axes.mrope_cos_sin(IDS, F8[None], [2, 3, 3]),
        ValueError,
        "inv_freq",
    ),
    (
        "inv_freq on another device",
        lambda: rope_axes.mrope_cos_sin(IDS, F8.to("meta"), [2, 3, 3]),
        ValueError,
        "inv_freq must be on",
    ),
    (
        "integer dtype",
        lambda: rope_axes.mrope_cos_sin(IDS, F8, [2, 3, 3], dtype=torch.int32),
        TypeError,
        "dtype",
    ),
    (
        "attention_factor 0",
        lambda: rope_axes.mrope_cos_sin(IDS, F8, [2, 3, 3], attention_factor=0),
        ValueError,
        "attention_factor",
    ),
    (
        "attention_factor nan",
        lambda: rope_axes.mrope_cos_sin(IDS, F8, [2, 3, 3], attention_factor=float("nan")),
        ValueError,
        "attention_factor",
    ),
    (
        "axes out of range",
        lambda: rope_axes.multi_axis_cos_sin(IDS, F8, [0] * 7 + [3]),
        ValueError,
        "axes must name axes",
    ),
    (
        "axes a tensor",
        lambda: rope_axes.multi_axis_cos_sin(IDS, F8, torch.zeros(8, dtype=torch.long)),
        TypeError,
        "axes",
    ),
    (
        "negative axis",
        lambda: rope_axes.multi_axis_cos_sin(IDS, F8, [-1] * 8),
        ValueError,
        r"axes\[0\]",
    ),
    (
        "1-D positions",
        lambda: rope_axes.multi_axis_cos_sin(IDS[0, 0], F8, [0] * 8),
        ValueError,
        "axes first",
    ),
    (
        "unknown layout",
        lambda: rope_axes.multi_axis_cos_sin(IDS, F8, [0] * 8, layout="neox"),
        ValueError,
        "layout",
    ),
    (
        "pieces empty",
        lambda: rope_axes.mrope_position_ids([]),
        ValueError,
        "pieces must not be empty",
    ),
    (
        "pieces a tensor",
        lambda: rope_axes.mrope_position_ids(torch.tensor([3])),
        TypeError,
        "pieces",
    ),
    ("text run 0", lambda: rope_axes.mrope_position_ids([0]), ValueError, r"pieces\[0\]"),
    (
        "piece a string",
        lambda: rope_axes.mrope_position_ids([3, "image"]),
        TypeError,
        r"pieces\[1\]",
    ),
    (
        "grid of two",
        lambda: rope_axes.mrope_position_ids([(8, 8)]),
        ValueError,
        r"pieces\[0\] must be \(t, h, w\)",
    ),
    (
        "odd grid",
        lambda: rope_axes.mrope_position_ids([(1, 7, 8)]),
        ValueError,
        "h must be divisible",
    ),
    (
        "zero frames",
        lambda: rope_axes.mrope_position_ids([(0, 8, 8)]),
        ValueError,
        r"pieces\[0\]\[0\]",
    ),
    (
        "negative time",
        lambda: rope_axes.mrope_position_ids([(2, 8, 8, -1.0)]),
        ValueError,
        "time_interval|pieces\\[0\\]\\[3\\]",
    ),
    (
        "merge 0",
        lambda: rope_axes.mrope_position_ids([3], spatial_merge_size=0),
        ValueError,
        "spatial_merge_size",
    ),
    ("bad device", lambda: rope_axes.mrope_position_ids([3], device=3.5), TypeError, "device"),
    (
        "unknown rule after a video",
        lambda: rope_axes.mrope_position_ids([3], after_vision="transformers"),
        ValueError,
        "after_vision.*largest_id.*spatial_extent",
    ),
    (
        "patch grid not divisible",
        lambda: rope_axes.patch_positions(5, 4, merge_size=2),
        ValueError,
        "height must be divisible",
    ),
    ("patch width 0", lambda: rope_axes.patch_positions(4, 0), ValueError, "width"),
    (
        "head_dim not multiple of 4",
        lambda: rope_axes.axial_inv_freq(18),
        ValueError,
        "multiple of 4",
    ),
    ("odd head_dim", lambda: rope_axes.axial_inv_freq(15), ValueError, "head_dim"),
    ("base 1", lambda: rope_axes.axial_inv_freq(16, 1.0), ValueError, "base"),
    ("base a string", lambda: rope_axes.axial_inv_freq(16, "1e4"), TypeError, "base"),
    ("unknown split", lambda: rope_axes.axial_inv_freq(16, split="pairs"), ValueError, "split"),
    ("three coordinates for axial", lambda: rope_axes.axial_cos_sin(IDS, F8), ValueError, "2 rows"),
    (
        "odd axial inv_freq",
        lambda: rope_axes.axial_cos_sin(IDS[:2], F8[:7]),
        ValueError,
        "even length",
    ),
]


@pytest.mark.parametrize(("case", "call", "error", "match"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_argument(case, call, error, match):
    with pytest.raises(error, match=match):
        call()
