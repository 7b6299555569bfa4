"""Every architecture of the installed transformers, discovered and built small.

Discovery walks transformers' auto-mapping tables (never a hand-picked list):
every model type that has a model class in one of TASKS is an architecture.
Its candidate classes are tried in TASKS order (task heads first, the base
model last), and the first that builds offline with random weights, from a
small config, and runs eagerly on the inputs made here is the one measured.

    from hf_archs import discover, build
    archs = discover()                      # sorted by model type
    built = build(archs[0])                 # raises Skip(reason) when it cannot
    args, kwargs = built.make_inputs(2)
    out = built.model(*args, **kwargs)

The small config: the config class's defaults, then every field named in SMALL
that the config's constructor takes (and whose default has the same type) is
set to a small value, recursively through sub-configs (text/vision/audio,
encoder/decoder); per-layer lists are cut to the new layer count, special
token ids are moved inside the small vocabulary. When the small config does not
build or run, a second level keeps the widths (layers, vocab, positions and
image size only), under a parameter cap. Inputs come from the model's
`main_input_name` and forward signature (see `_inputs`). Decoders are called
with use_cache=False (no KV cache object in the output, as in zoo.py).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

SEQ = 16
VOCAB = 256
AUDIO_SAMPLES = 4000
MAX_PARAMS = 30_000_000

# (task, auto-mapping table) in the order a model type's classes are tried.
TASKS = (
    ("seq2seq-lm", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"),
    ("speech-seq2seq", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES"),
    ("masked-lm", "MODEL_FOR_MASKED_LM_MAPPING_NAMES"),
    ("causal-lm", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"),
    ("image-classification", "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES"),
    ("audio-classification", "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES"),
    ("video-classification", "MODEL_FOR_VIDEO_CLASSIFICATION_MAPPING_NAMES"),
    ("base", "MODEL_MAPPING_NAMES"),
)

# Config field -> small value (set when the constructor takes the field and its
# default has the same type). Level 1 sets all of these, level 2 only LEVEL2.
SMALL: dict[str, Any] = {
    # depth
    "num_hidden_layers": 2, "num_layers": 2, "n_layer": 2, "n_layers": 2, "encoder_layers": 2,
    "decoder_layers": 2, "num_encoder_layers": 2, "num_decoder_layers": 2, "text_layers": 2,
    "vision_layers": 2, "num_text_layers": 2, "num_vision_layers": 2, "depth": 2,
    # width
    "hidden_size": 64, "d_model": 64, "n_embd": 64, "dim": 64, "embed_dim": 64, "embedding_size": 64,
    "intermediate_size": 128, "ffn_dim": 128, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "d_ff": 128,
    "n_inner": 128, "hidden_dim": 128, "projection_dim": 32, "d_kv": 16, "head_dim": 16,
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4, "encoder_attention_heads": 4,
    "decoder_attention_heads": 4, "num_key_value_heads": 2, "multi_query_group_num": 2,
    # mixture of experts, latent attention
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "moe_num_experts": 4,
    "num_experts_per_tok": 2, "moe_topk": 2, "moe_intermediate_size": 64, "shared_expert_intermediate_size": 64,
    "n_shared_experts": 1, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1,
    "kv_lora_rank": 16, "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 16,
    # state space
    "state_size": 8, "ssm_state_size": 8, "d_state": 8, "time_step_rank": 8, "mamba_d_state": 8,
    "mamba_n_heads": 4, "mamba_d_head": 32, "n_groups": 1, "mamba_n_groups": 1,
    # tokens and positions
    "vocab_size": VOCAB, "max_position_embeddings": 128, "n_positions": 128, "max_source_positions": 32,
    "max_target_positions": 64, "n_ctx": 128,
    # images, audio, video
    "image_size": 64, "patch_size": 8, "window_size": 4, "num_channels": 3, "num_frames": 4, "tubelet_size": 2,
    "num_mel_bins": 16, "rotary_dim": 8, "codebook_dim": 64, "num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4,
}
LEVEL2 = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers", "decoder_layers",
          "num_encoder_layers", "num_decoder_layers", "text_layers", "vision_layers", "num_text_layers",
          "num_vision_layers", "vocab_size", "max_position_embeddings", "n_positions", "image_size")
# Per-stage lists (convnets, hierarchical transformers): every stage one block deep.
STAGE_LISTS = {"depths": 1, "num_blocks": 1, "block_repeats": 1, "num_heads": 2}
# Feature-extractor widths (wav2vec2 and its family): every conv 32 channels.
WIDTH_LISTS = {"conv_dim": 32}
LAYER_COUNT_KEYS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "decoder_layers")


class Skip(Exception):
    """The architecture cannot be built (or run eagerly) offline: the reason."""


@dataclass
class Arch:
    model_type: str
    candidates: list[tuple[str, str]]  # (task, class name), tried in order


@dataclass
class Built:
    arch: Arch
    task: str
    class_name: str
    level: int
    model: Any
    make_inputs: Callable[[int], tuple[tuple, dict]]
    params: int
    tried: list[str] = field(default_factory=list)  # why earlier candidates/levels failed


def discover() -> list[Arch]:
    """Every model type with a model class in TASKS, sorted by model type."""
    from transformers.models.auto import configuration_auto, modeling_auto
    found: dict[str, list[tuple[str, str]]] = {}
    for task, table in TASKS:
        for model_type, names in getattr(modeling_auto, table).items():
            if model_type not in configuration_auto.CONFIG_MAPPING_NAMES:
                continue
            cands = found.setdefault(model_type, [])
            for name in (names,) if isinstance(names, str) else names:
                if name not in [n for _, n in cands]:
                    cands.append((task, name))
    return [Arch(t, c) for t, c in sorted(found.items())]


# -- the small config -------------------------------------------------------------------------

def _init_params(cls) -> set[str]:
    return set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}


def _same_kind(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or default is None:
        return False
    return isinstance(default, int) and isinstance(value, int) or \
        isinstance(default, float) and isinstance(value, (int, float))


def _small_kwargs(config, level: int) -> dict:
    """Constructor kwargs for a small copy of `config` (a default config instance)."""
    from transformers import PreTrainedConfig
    cls = type(config)
    params = _init_params(cls)
    d = {k: v for k, v in config.to_dict().items() if k in params}
    keys = SMALL if level == 1 else {k: SMALL[k] for k in LEVEL2}
    mha = d.get("num_key_value_heads") == d.get("num_attention_heads")  # not grouped-query: keep it so
    old_layers = next((d[k] for k in LAYER_COUNT_KEYS if isinstance(d.get(k), int)), None)
    for k, v in keys.items():
        if k in d and _same_kind(d[k], v):
            d[k] = v
        elif k == "image_size" and isinstance(d.get(k), (list, tuple)) and len(d[k]) == 2:
            d[k] = [v, v]
    new_layers = next((d[k] for k in LAYER_COUNT_KEYS if isinstance(d.get(k), int)), None)
    for k, v in list(d.items()):
        if isinstance(v, list) and old_layers and len(v) == old_layers and new_layers and k not in STAGE_LISTS:
            d[k] = v[:new_layers]  # per-layer lists (layer_types, ...)
        if level == 1 and k in STAGE_LISTS and isinstance(v, list) and all(isinstance(x, int) for x in v):
            d[k] = [STAGE_LISTS[k]] * len(v)
        if level == 1 and k in WIDTH_LISTS and isinstance(v, (list, tuple)):
            d[k] = [WIDTH_LISTS[k]] * len(v)
    if level == 1 and isinstance(d.get("num_key_value_heads"), int) and isinstance(d.get("num_attention_heads"), int):
        d["num_key_value_heads"] = d["num_attention_heads"] if mha else \
            min(d["num_key_value_heads"], d["num_attention_heads"])
    vocab = d.get("vocab_size") if isinstance(d.get("vocab_size"), int) else None
    if vocab:
        spare = iter(range(vocab - 1, 2, -1))  # special ids moved to the top of the vocabulary
        for k, v in list(d.items()):
            if (k.endswith("_token_id") or k.endswith("_token_index")) and isinstance(v, int) \
                    and not isinstance(v, bool) and v >= vocab:
                d[k] = next(spare)
    for k in list(d):
        sub = getattr(config, k, None)
        if isinstance(sub, PreTrainedConfig):
            d[k] = dict(_small_kwargs(sub, level), model_type=sub.model_type)
    return d


def small_config(model_type: str, level: int = 1):
    from transformers import CONFIG_MAPPING
    cls = CONFIG_MAPPING[model_type]
    try:
        default = cls()
    except Exception as e:  # noqa: BLE001 - the reason is the result
        raise Skip(f"default config does not build: {_why(e)}") from e
    return cls(**_small_kwargs(default, level))


def _why(e: BaseException) -> str:
    """One line: the exception type and its first two non-empty message lines."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {' '.join(lines[:2])}"[:300]


# -- inputs -----------------------------------------------------------------------------------

def _cfg(config, *names, default=None):
    """The first of `names` set on the config or one of its sub-configs."""
    from transformers import PreTrainedConfig
    subs = [config] + [getattr(config, k) for k in ("vision_config", "audio_config", "encoder", "text_config")
                       if isinstance(getattr(config, k, None), PreTrainedConfig)]
    for c in subs:
        for n in names:
            v = getattr(c, n, None)
            if v is not None and not isinstance(v, bool):
                return v
    return default


def _ids(config, batch, g, params) -> dict:
    import torch
    vocab = min(_cfg(config, "vocab_size", default=VOCAB), VOCAB)
    kw = {"input_ids": torch.randint(3, vocab - 16 if vocab > 32 else vocab, (batch, SEQ), generator=g)}
    if "attention_mask" in params:
        m = torch.ones(batch, SEQ, dtype=torch.long)
        m[0, SEQ - 3:] = 0  # one padded row: the mask is really used
        kw["attention_mask"] = m
    return kw


def _pixels(config, batch, g, params) -> dict:
    import torch
    size = _cfg(config, "image_size", default=64)
    h, w = (size, size) if isinstance(size, int) else tuple(size)[:2]
    ch = _cfg(config, "num_channels", default=3)
    frames = _cfg(config, "num_frames")
    shape = (batch, frames, ch, h, w) if isinstance(frames, int) else (batch, ch, h, w)
    return {"pixel_values": torch.randn(*shape, generator=g)}


def _audio(config, batch, g, params) -> dict:
    import torch
    ch = _cfg(config, "audio_channels")
    shape = (batch, ch, AUDIO_SAMPLES) if isinstance(ch, int) else (batch, AUDIO_SAMPLES)
    return {"input_values": torch.randn(*shape, generator=g)}


def _features(config, batch, g, params) -> dict:
    import torch
    mel = _cfg(config, "num_mel_bins")
    src = _cfg(config, "max_source_positions")
    feat = _cfg(config, "input_feat_per_channel", "feature_size", "input_dim")
    if isinstance(mel, int) and isinstance(src, int):
        shape = (batch, mel, 2 * src)  # whisper-like: (mel bins, frames), fixed length
    elif isinstance(feat, int):
        shape = (batch, 4 * SEQ, feat * _cfg(config, "input_channels", default=1))
    elif isinstance(mel, int):
        shape = (batch, 4 * SEQ, mel)
    else:
        raise Skip("input_features: no feature size found in the config")
    return {"input_features": torch.randn(*shape, generator=g)}


# Input name -> maker(config, batch, generator, forward parameters) -> kwargs.
INPUTS = {"input_ids": _ids, "pixel_values": _pixels, "input_values": _audio, "input_features": _features}


def _inputs(model, config, variant: int = 0) -> Callable[[int], tuple[tuple, dict]]:
    """make(batch) -> (args, kwargs) from main_input_name and the forward signature:
    variant 0 makes the main input only, variant 1 also every other input of
    INPUTS that forward takes (dual encoders such as CLIP need both)."""
    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    if main not in INPUTS:
        raise Skip(f"main input {main!r} is not one the sweep makes")
    names = [main] + ([n for n in INPUTS if n != main and n in params] if variant else [])
    enc_dec = bool(getattr(config, "is_encoder_decoder", False))

    def make(batch: int):
        import torch
        g = torch.Generator().manual_seed(1000 + batch)
        kw: dict = {}
        for n in names:
            kw.update(INPUTS[n](config, batch, g, params))
        if enc_dec and "decoder_input_ids" in params:
            dv = _cfg(config, "decoder_vocab_size", "vocab_size", default=VOCAB)
            kw["decoder_input_ids"] = torch.randint(3, max(4, min(dv, VOCAB) - 16), (batch, SEQ // 2), generator=g)
        if "use_cache" in params:
            kw["use_cache"] = False
        return (), kw
    return make


# -- building ---------------------------------------------------------------------------------

def _model_class(name: str):
    import transformers
    try:
        return getattr(transformers, name)
    except Exception as e:  # noqa: BLE001 - missing optional dependency, removed class
        raise Skip(f"{name} does not import: {_why(e)}") from e


def _instantiate(cls, config):
    import torch
    with torch.device("meta"):
        n = sum(p.numel() for p in cls(config).parameters())
    if n > MAX_PARAMS:
        raise Skip(f"{n / 1e6:.0f}M parameters with the small config (cap {MAX_PARAMS / 1e6:.0f}M)")
    torch.manual_seed(0)
    return cls(config).eval(), n


def build(arch: Arch, levels=(1, 2)) -> Built:
    """The first candidate class and config level that builds and runs eagerly on
    batches 2 and 3; Skip with every attempt's reason when none does."""
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    tried: list[str] = []
    configs: dict[int, Any] = {}  # level -> config, or the Skip/exception it raised
    for level in levels:
        try:
            configs[level] = small_config(arch.model_type, level)
        except Skip as e:
            raise Skip(str(e)) from e
        except Exception as e:  # noqa: BLE001
            configs[level] = e
            tried.append(f"L{level} config: {_why(e)}")
    for task, name in arch.candidates:
        try:
            cls = _model_class(name)
        except Skip as e:
            tried.append(f"{name}: {e}")
            continue
        for level in levels:
            config = configs[level]
            if isinstance(config, Exception):
                continue
            try:
                model, n = _instantiate(cls, config)
            except Exception as e:  # noqa: BLE001 - Skip (too big) included
                tried.append(f"{name} L{level}: {e if isinstance(e, Skip) else _why(e)}")
                continue
            for variant in (0, 1):
                try:
                    make = _inputs(model, config, variant)
                    with torch.no_grad():
                        for b in (2, 3):
                            args, kwargs = make(b)
                            torch.manual_seed(0)
                            model(*args, **kwargs)
                except Exception as e:  # noqa: BLE001 - Skip (no inputs) included
                    tried.append(f"{name} L{level}{'+' * variant}: {e if isinstance(e, Skip) else _why(e)}")
                    if isinstance(e, Skip):
                        break
                    continue
                return Built(arch, task, name, level, model, make, n, tried)
    raise Skip("; ".join(tried) or "no candidate class")
