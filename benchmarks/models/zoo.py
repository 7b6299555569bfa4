"""The model corpus of issue #8: name -> builder.

A builder returns `(model, make_inputs)`: `model` is an `nn.Module` in eval mode
with random weights (seeded; nothing is downloaded: transformers models are
built from small configs), and `make_inputs(batch)` returns `(args, kwargs)`
for one call with that batch size (seeded, so every process builds the same
inputs). Configs are SMALL on purpose (2 layers, hidden 64-128, 16-32 tokens,
32-64 px images) so the whole corpus runs in minutes on two loaded cores.

    from benchmarks.models.zoo import MODELS, build
    model, make_inputs = build("bert")
    args, kwargs = make_inputs(2)
    out = model(*args, **kwargs)

Kinds: "hf-encoder", "hf-vision", "hf-seq2seq", "hf-decoder" (transformers) and
"classic" (written here). Decoder models are called with use_cache=False.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

SEQ = 16
IMG = 32
VOCAB = 256


@dataclass(frozen=True)
class Spec:
    name: str
    kind: str
    builder: Callable[[], tuple[Any, Callable[[int], tuple[tuple, dict]]]]


MODELS: dict[str, Spec] = {}


def _register(name: str, kind: str):
    def deco(fn):
        MODELS[name] = Spec(name, kind, fn)
        return fn
    return deco


def build(name: str):
    """The seeded model and its input factory (KeyError for an unknown name)."""
    import torch
    try:  # the small vocabularies trip transformers' token-id warnings
        import transformers
        transformers.logging.set_verbosity_error()
    except ImportError:
        pass
    spec = MODELS[name]
    torch.manual_seed(0)
    model, make_inputs = spec.builder()
    return model.eval(), make_inputs


# -- input factories ---------------------------------------------------------------------------

def _ids(vocab: int = VOCAB, seq: int = SEQ, mask: bool = True, **extra):
    def make(batch: int):
        import torch
        g = torch.Generator().manual_seed(1000 + batch)
        ids = torch.randint(3, vocab, (batch, seq), generator=g)
        kw = {"input_ids": ids}
        if mask:
            m = torch.ones(batch, seq, dtype=torch.long)
            m[0, seq - 3:] = 0  # one padded row: the mask is really used
            kw["attention_mask"] = m
        kw.update(extra)
        return (), kw
    return make


def _pixels(size: int = IMG, channels: int = 3, key: str | None = "pixel_values"):
    def make(batch: int):
        import torch
        g = torch.Generator().manual_seed(2000 + batch)
        x = torch.randn(batch, channels, size, size, generator=g)
        return ((), {key: x}) if key else ((x,), {})
    return make


# -- transformers: encoders ------------------------------------------------------------------

_ENC = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, max_position_embeddings=64)


@_register("bert", "hf-encoder")
def _bert():
    from transformers import BertConfig, BertModel
    return BertModel(BertConfig(**_ENC)), _ids()


@_register("roberta", "hf-encoder")
def _roberta():
    from transformers import RobertaConfig, RobertaModel
    return RobertaModel(RobertaConfig(**_ENC, pad_token_id=1)), _ids()


@_register("distilbert", "hf-encoder")
def _distilbert():
    from transformers import DistilBertConfig, DistilBertModel
    cfg = DistilBertConfig(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                           max_position_embeddings=64)
    return DistilBertModel(cfg), _ids()


@_register("albert", "hf-encoder")
def _albert():
    from transformers import AlbertConfig, AlbertModel
    return AlbertModel(AlbertConfig(**_ENC, embedding_size=32)), _ids()


@_register("electra", "hf-encoder")
def _electra():
    from transformers import ElectraConfig, ElectraModel
    return ElectraModel(ElectraConfig(**_ENC, embedding_size=32)), _ids()


@_register("mobilebert", "hf-encoder")
def _mobilebert():
    from transformers import MobileBertConfig, MobileBertModel
    cfg = MobileBertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, embedding_size=32, intra_bottleneck_size=32,
                           true_hidden_size=32, num_feedforward_networks=2, max_position_embeddings=64)
    return MobileBertModel(cfg), _ids()


@_register("deberta_v2", "hf-encoder")
def _deberta_v2():
    from transformers import DebertaV2Config, DebertaV2Model
    return DebertaV2Model(DebertaV2Config(**_ENC)), _ids()


@_register("mpnet", "hf-encoder")
def _mpnet():
    from transformers import MPNetConfig, MPNetModel
    return MPNetModel(MPNetConfig(**_ENC)), _ids()


# -- transformers: vision ---------------------------------------------------------------------

_VIT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            image_size=IMG, patch_size=8)


@_register("vit", "hf-vision")
def _vit():
    from transformers import ViTConfig, ViTModel
    return ViTModel(ViTConfig(**_VIT), add_pooling_layer=False), _pixels()


@_register("deit", "hf-vision")
def _deit():
    from transformers import DeiTConfig, DeiTModel
    return DeiTModel(DeiTConfig(**_VIT), add_pooling_layer=False), _pixels()


@_register("dinov2", "hf-vision")
def _dinov2():
    from transformers import Dinov2Config, Dinov2Model
    return Dinov2Model(Dinov2Config(**_VIT)), _pixels()


@_register("resnet", "hf-vision")
def _resnet():
    from transformers import ResNetConfig, ResNetModel
    cfg = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    return ResNetModel(cfg), _pixels()


@_register("convnext", "hf-vision")
def _convnext():
    from transformers import ConvNextConfig, ConvNextModel
    cfg = ConvNextConfig(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], patch_size=4)
    return ConvNextModel(cfg), _pixels()


@_register("swin", "hf-vision")
def _swin():
    from transformers import SwinConfig, SwinModel
    cfg = SwinConfig(image_size=IMG, patch_size=4, embed_dim=32, depths=[1, 1], num_heads=[2, 4], window_size=4)
    return SwinModel(cfg), _pixels()


@_register("clip_vision", "hf-vision")
def _clip_vision():
    from transformers import CLIPVisionConfig, CLIPVisionModel
    cfg = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                           image_size=IMG, patch_size=8)
    return CLIPVisionModel(cfg), _pixels()


# -- transformers: text towers, audio, seq2seq ---------------------------------------------------

@_register("clip_text", "hf-encoder")
def _clip_text():
    from transformers import CLIPTextConfig, CLIPTextModel
    cfg = CLIPTextConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=64)
    return CLIPTextModel(cfg), _ids()


@_register("whisper_encoder", "hf-encoder")
def _whisper_encoder():
    import torch
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    cfg = WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                        num_mel_bins=16, max_source_positions=16, vocab_size=VOCAB)

    def make(batch: int):
        g = torch.Generator().manual_seed(3000 + batch)
        # max_source_positions * 2 frames: the two convs halve the time axis.
        return (), {"input_features": torch.randn(batch, 16, 32, generator=g)}
    return WhisperEncoder(cfg), make


def _seq2seq_inputs(batch: int):
    import torch
    g = torch.Generator().manual_seed(4000 + batch)
    ids = torch.randint(3, VOCAB, (batch, SEQ), generator=g)
    dec = torch.randint(3, VOCAB, (batch, SEQ // 2), generator=g)
    return (), {"input_ids": ids, "decoder_input_ids": dec, "use_cache": False}


@_register("t5", "hf-seq2seq")
def _t5():
    from transformers import T5Config, T5Model
    cfg = T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
                   num_heads=4, relative_attention_num_buckets=8)
    return T5Model(cfg), _seq2seq_inputs


@_register("bart", "hf-seq2seq")
def _bart():
    from transformers import BartConfig, BartModel
    cfg = BartConfig(vocab_size=VOCAB, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                     max_position_embeddings=64)
    return BartModel(cfg), _seq2seq_inputs


# -- transformers: decoder LMs ----------------------------------------------------------------

_DEC = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=64, use_cache=False)


def _lm_inputs():
    return _ids(mask=False, use_cache=False)


@_register("gpt2", "hf-decoder")
def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64, use_cache=False)
    return GPT2LMHeadModel(cfg), _lm_inputs()


@_register("llama", "hf-decoder")
def _llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    return LlamaForCausalLM(LlamaConfig(**_DEC, num_key_value_heads=2)), _lm_inputs()


@_register("mistral", "hf-decoder")
def _mistral():
    from transformers import MistralConfig, MistralForCausalLM
    return MistralForCausalLM(MistralConfig(**_DEC, num_key_value_heads=2, sliding_window=8)), _lm_inputs()


@_register("qwen2", "hf-decoder")
def _qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    return Qwen2ForCausalLM(Qwen2Config(**_DEC, num_key_value_heads=2)), _lm_inputs()


@_register("gemma", "hf-decoder")
def _gemma():
    from transformers import GemmaConfig, GemmaForCausalLM
    return GemmaForCausalLM(GemmaConfig(**_DEC, num_key_value_heads=2, head_dim=16)), _lm_inputs()


@_register("phi", "hf-decoder")
def _phi():
    from transformers import PhiConfig, PhiForCausalLM
    return PhiForCausalLM(PhiConfig(**_DEC)), _lm_inputs()


@_register("opt", "hf-decoder")
def _opt():
    from transformers import OPTConfig, OPTForCausalLM
    cfg = OPTConfig(vocab_size=VOCAB, hidden_size=64, ffn_dim=128, num_hidden_layers=2, num_attention_heads=4,
                    max_position_embeddings=64, word_embed_proj_dim=64, use_cache=False)
    return OPTForCausalLM(cfg), _lm_inputs()


@_register("gpt_neo", "hf-decoder")
def _gpt_neo():
    from transformers import GPTNeoConfig, GPTNeoForCausalLM
    cfg = GPTNeoConfig(vocab_size=VOCAB, hidden_size=64, num_layers=2, num_heads=4, max_position_embeddings=64,
                       attention_types=[[["global", "local"], 1]], window_size=8, use_cache=False)
    return GPTNeoForCausalLM(cfg), _lm_inputs()


@_register("bloom", "hf-decoder")
def _bloom():
    from transformers import BloomConfig, BloomForCausalLM
    cfg = BloomConfig(vocab_size=VOCAB, hidden_size=64, n_layer=2, n_head=4, use_cache=False)
    return BloomForCausalLM(cfg), _lm_inputs()


# -- classic models written here ------------------------------------------------------------------

def _classic():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2, self.fc3 = nn.Linear(64, 128), nn.Linear(128, 128), nn.Linear(128, 10)

        def forward(self, x):
            return self.fc3(F.relu(self.fc2(F.gelu(self.fc1(x)))))

    class LeNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(1, 6, 5, padding=2), nn.Conv2d(6, 16, 5)
            self.f1, self.f2, self.f3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            x = torch.flatten(x, 1)
            return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.down is None else self.down(x)
            y = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(y)) + idt)

    class SmallResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            self.layers = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
            self.head = nn.Linear(64, 10)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))

    class EncoderBlock(nn.Module):
        """Pre-norm transformer encoder: self-attention + GELU MLP, 2 layers."""

        def __init__(self, d: int = 64, heads: int = 4) -> None:
            super().__init__()
            self.heads = heads
            self.emb = nn.Embedding(VOCAB, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, ids):
            x = self.emb(ids)
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class LSTMTagger(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(VOCAB, 32)
            self.lstm = nn.LSTM(32, 64, num_layers=2, batch_first=True)
            self.out = nn.Linear(64, 8)

        def forward(self, ids):
            h, _ = self.lstm(self.emb(ids))
            return self.out(h).log_softmax(-1)

    return MLP, LeNet, SmallResNet, EncoderBlock, LSTMTagger


def _tensor_input(*shape, dtype: str = "float"):
    def make(batch: int):
        import torch
        g = torch.Generator().manual_seed(5000 + batch)
        if dtype == "long":
            return (torch.randint(0, VOCAB, (batch, *shape), generator=g),), {}
        return (torch.randn(batch, *shape, generator=g),), {}
    return make


@_register("mlp", "classic")
def _mlp():
    return _classic()[0](), _tensor_input(64)


@_register("lenet", "classic")
def _lenet():
    return _classic()[1](), _tensor_input(1, 28, 28)


@_register("small_resnet", "classic")
def _small_resnet():
    return _classic()[2](), _tensor_input(3, IMG, IMG)


@_register("encoder_block", "classic")
def _encoder_block():
    return _classic()[3](), _tensor_input(SEQ, dtype="long")


@_register("lstm_tagger", "classic")
def _lstm_tagger():
    return _classic()[4](), _tensor_input(SEQ, dtype="long")


@_register("torch_transformer", "classic")
def _torch_transformer():
    import torch.nn as nn
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), _tensor_input(SEQ, 64)


def flatten_output(out: Any) -> list:
    """The tensors of a model's output, in a fixed order (ModelOutput, tuple,
    list, dict or tensor)."""
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if hasattr(out, "to_tuple"):
        out = out.to_tuple()
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten_output(o)]
    return []
