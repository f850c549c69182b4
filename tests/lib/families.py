"""Model families as transformers ships them: configs built by their own config classes, tiny
models with random weights, and posenc's RoPE swapped in for theirs. Nothing is downloaded."""

from __future__ import annotations

import importlib
import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import torch
import transformers

import posenc


def quietly(make):
    """transformers logs warnings for configs it accepts anyway (e.g. factor < 1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            return make()
        finally:
            logging.disable(logging.NOTSET)


SMALL = dict(vocab_size=97, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
             num_attention_heads=4, pad_token_id=0, bos_token_id=1, eos_token_id=2)  # fmt: skip
TWO_TYPES = {"layer_types": ["sliding_attention", "full_attention"]}
GQA = {"num_key_value_heads": 2}


def longrope_dict(pairs: int, **extra: Any) -> dict[str, Any]:
    return {
        "rope_type": "longrope", "short_factor": [1.0 + 0.05 * i for i in range(pairs)],
        "long_factor": [1.0 + 0.5 * i for i in range(pairs)], **extra,
    }  # fmt: skip


class Family(NamedTuple):
    name: str
    package: str  # transformers.models.<package>
    config_class: str
    arguments: dict[str, Any]  # beyond SMALL
    layout: str = "half"  # the model's RoPE channel layout
    model_class: str | None = None  # a causal LM to compare logits with, if any
    seq: int = 24  # a sequence past the trained length where that length is set small

    def config(self):
        cls = getattr(transformers, self.config_class)
        return quietly(lambda: cls(**{**SMALL, **self.arguments}))


FAMILIES = [
    Family("llama-default", "llama", "LlamaConfig", {**GQA, "rope_parameters": {
        "rope_type": "default", "rope_theta": 5e5}}, model_class="LlamaForCausalLM"),
    Family("llama-linear", "llama", "LlamaConfig", {**GQA, "rope_parameters": {
        "rope_type": "linear", "factor": 4.0}}, model_class="LlamaForCausalLM"),
    Family("llama-dynamic", "llama", "LlamaConfig", {  # no trained length in the dict
        **GQA, "rope_parameters": {"rope_type": "dynamic", "factor": 2.0},
        "max_position_embeddings": 16}, model_class="LlamaForCausalLM"),
    Family("llama-llama3", "llama", "LlamaConfig", {**GQA, "rope_parameters": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 16, "rope_theta": 5e5}},
        model_class="LlamaForCausalLM"),
    Family("llama-yarn", "llama", "LlamaConfig", {  # yarn without original_max_position_embeddings
        **GQA, "rope_parameters": {"rope_type": "yarn", "factor": 4.0},
        "max_position_embeddings": 16}, model_class="LlamaForCausalLM"),
    Family("qwen2-yarn", "qwen2", "Qwen2Config", {**GQA, "rope_parameters": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
        "rope_theta": 1e6}}, model_class="Qwen2ForCausalLM"),
    Family("qwen3-yarn", "qwen3", "Qwen3Config", {**GQA, "head_dim": 32, "rope_parameters": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}},
        model_class="Qwen3ForCausalLM"),
    Family("mistral", "mistral", "MistralConfig", GQA, model_class="MistralForCausalLM"),
    Family("phi3-longrope", "phi3", "Phi3Config", {  # longrope without factor
        **GQA, "rope_parameters": longrope_dict(8), "original_max_position_embeddings": 16,
        "max_position_embeddings": 64}, model_class="Phi3ForCausalLM"),
    Family("phi3-longrope-partial", "phi3", "Phi3Config", {  # Phi-4-mini: partial, in the dict
        **GQA, "rope_parameters": longrope_dict(6, partial_rotary_factor=0.75),
        "original_max_position_embeddings": 16, "max_position_embeddings": 64},
        model_class="Phi3ForCausalLM"),
    Family("phi3-default", "phi3", "Phi3Config", GQA, model_class="Phi3ForCausalLM"),
    Family("gpt-neox", "gpt_neox", "GPTNeoXConfig", {}, model_class="GPTNeoXForCausalLM"),
    Family("gpt-neox-odd-width", "gpt_neox", "GPTNeoXConfig", {"hidden_size": 80},  # 20·0.25
           model_class="GPTNeoXForCausalLM"),
    Family("glm", "glm", "GlmConfig", {**GQA, "head_dim": 16}, layout="interleaved",
           model_class="GlmForCausalLM"),  # partial 0.5, interleaved pairs
    Family("gemma3", "gemma3", "Gemma3TextConfig", {**GQA, "head_dim": 16, **TWO_TYPES,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
        model_class="Gemma3ForCausalLM"),
    Family("gemma4", "gemma4", "Gemma4TextConfig",  # proportional, p = 0.25
           {"head_dim": 16, "global_head_dim": 32, **TWO_TYPES}),
    Family("lfm3", "lfm3", "Lfm3Config", {"head_dim": 16, **TWO_TYPES}),  # proportional
    Family("deepseek-v3", "deepseek_v3", "DeepseekV3Config", {
        "qk_rope_head_dim": 16, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_group": 1,
        "topk_group": 1, "max_position_embeddings": 2560, "rope_parameters": {
            "rope_type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 64, "beta_fast": 32, "beta_slow": 1}}),
    Family("gpt-oss", "gpt_oss", "GptOssConfig", {  # yarn, truncate False
        **GQA, "head_dim": 16, "num_local_experts": 4}, model_class="GptOssForCausalLM"),
    Family("smollm3", "smollm3", "SmolLM3Config", GQA, model_class="SmolLM3ForCausalLM"),
    Family("ministral3", "ministral3", "Ministral3Config", {  # 'type', keys to ignore
        **GQA, "head_dim": 16}, model_class="Ministral3ForCausalLM"),
    Family("qwen2-vl", "qwen2_vl", "Qwen2VLTextConfig", {"rope_parameters": {
        "rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 1e6}}),
    Family("phi", "phi", "PhiConfig", {}, model_class="PhiForCausalLM"),  # partial 0.5
    Family("stablelm", "stablelm", "StableLmConfig", GQA, model_class="StableLmForCausalLM"),
    Family("persimmon", "persimmon", "PersimmonConfig", {}, model_class="PersimmonForCausalLM"),
    Family("falcon", "falcon", "FalconConfig", {"num_kv_heads": 2},
           model_class="FalconForCausalLM"),
]  # fmt: skip


def layer_types(config) -> list[str | None]:
    """[None] for one rope_parameters dict, else the layer types it holds one dict for."""
    return [None] if "rope_type" in config.rope_parameters else sorted(config.rope_parameters)


def head_dim_of(config, layer_type: str | None) -> int:
    per_layer = getattr(config, "per_layer_config", None)
    if layer_type is not None and per_layer is not None:
        config = per_layer[layer_type]
    try:
        head_dim = config.head_dim
    except AttributeError:
        head_dim = None
    return head_dim or config.hidden_size // config.num_attention_heads


def hf_rotary(package: str, config):
    """The model's own rotary embedding module, built from the config."""
    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    (name,) = [n for n in dir(module) if n.endswith("RotaryEmbedding") and "Vision" not in n]
    return quietly(lambda: getattr(module, name)(config))


def posenc_rope(config, layer_type: str | None, **kwargs) -> posenc.RotaryEmbedding:
    """posenc's RotaryEmbedding for a config: its dict and two fields, passed unchanged."""
    params = config.rope_parameters if layer_type is None else config.rope_parameters[layer_type]
    return posenc.RotaryEmbedding(
        head_dim_of(config, layer_type),
        scaling=params,
        max_position_embeddings=config.max_position_embeddings,
        ignore_keys=config.ignore_keys_at_rope_validation,
        **kwargs,
    )


def tiny_model(family: Family, seed: int = 0):
    torch.manual_seed(seed)
    config = family.config()
    config._attn_implementation = "eager"
    return quietly(lambda: getattr(transformers, family.model_class)(config).eval())


class _PositionIds(torch.nn.Module):
    """Stands in for a model's rotary embedding: hands the position ids (and layer type) on."""

    def forward(self, x, position_ids, layer_type=None):
        return position_ids, layer_type


@contextmanager
def posenc_swapped_in(model, package: str, ropes: dict) -> Iterator[None]:
    """Run ``model`` with posenc's RoPE: ``ropes`` maps layer type (None) to RotaryEmbedding.

    The model's rotary embedding passes the position ids through instead of cos/sin, and
    the module's ``apply_rotary_pos_emb`` calls posenc with them.
    """
    module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
    replaced = []
    for name, child in list(model.named_modules()):
        if type(child).__name__.endswith("RotaryEmbedding"):
            parent, _, attribute = name.rpartition(".")
            replaced.append((model.get_submodule(parent), attribute, child))
            setattr(model.get_submodule(parent), attribute, _PositionIds())

    def apply(q, k, positions, layer_type, *args, **kwargs):
        rope = ropes[layer_type]
        if q.shape[-1] == rope.head_dim:
            return rope(q, k, positions)
        # Phi and Persimmon cut the rotated channels off themselves and pass only those.
        cos, sin = (t[:, None] for t in rope.cos_sin(positions, dtype=q.dtype))
        return tuple(posenc.apply_rotary(x, cos, sin, layout=rope.layout) for x in (q, k))

    original = module.apply_rotary_pos_emb
    module.apply_rotary_pos_emb = apply
    try:
        yield
    finally:
        module.apply_rotary_pos_emb = original
        for parent, attribute, child in replaced:
            setattr(parent, attribute, child)
