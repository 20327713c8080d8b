"""What the peers share, free of any framework: the Transformer's config, the synthetic
batches, the optimizer settings and the check that a framework can be imported.

Every peer trains on the same batch for the same seed (drawn here with NumPy), so their
first losses are comparable, and every peer reads one TransformerConfig, so the
architectures cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np

# The image classifiers' step: Momentum as TF's MomentumOptimizer (v <- m*v + g;
# p <- p - lr*v) on the mean softmax cross-entropy, as `tensorflux bench` does.
LEARNING_RATE, MOMENTUM = 0.1, 0.9
IMAGE_CLASSIFIERS = ("resnet50", "mobilenet_v2")
# Batch norm of each classifier as the zoo configures it: (moving-average decay, epsilon).
BATCH_NORM = {"resnet50": (0.9, 1e-5), "mobilenet_v2": (0.999, 1e-3)}
PRECISIONS = ("float32", "bfloat16")
PAD_ID = 0        # padding targets get no loss (the zoo's convention; never drawn here)
FIRST_TOKEN = 2   # synthetic tokens avoid 0 (padding) and 1 (end of sequence)
MASK = -1e9       # added to attention logits that must get no weight, as the zoo does

# The architectures' tables, as the zoo builds them.
RESNET50_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))  # (width, blocks, stride)
# (expansion, output channels, repeats, first stride): the MobileNet v2 paper's table 2.
MOBILENET_V2_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """The zoo's Transformer (tensorflux/models/transformer.py) in the peers' words.

    Pre-layer-norm blocks (x + dropout(sublayer(layer_norm(x))), a final layer norm per
    stack), attention projections without biases, a feed-forward relu layer with biases,
    sinusoidal positions (sines in the first half of the channels, cosines in the second),
    one embedding matrix shared by source, target and the softmax (scaled by sqrt(d_model)
    on input), dropout on each sublayer's output and on the embedded inputs. No encoder
    layers makes it a decoder-only language model. Trained with Adam and the paper's
    warm-up schedule lr = learning_rate * d_model^-0.5 * min(step^-0.5, step *
    warmup^-1.5) on the label-smoothed cross-entropy of the non-padding targets.

    The defaults are the zoo's transformer_lm (GPT-2-small sized) at 256 tokens.
    """

    vocab_size: int = 50257
    seq_len: int = 256
    d_model: int = 768
    num_heads: int = 12
    num_encoder_layers: int = 0
    num_decoder_layers: int = 12
    d_ff: int = 3072
    dropout: float = 0.1
    label_smoothing: float = 0.0
    layer_norm_epsilon: float = 1e-6
    learning_rate: float = 1.0
    warmup_steps: int = 4000
    adam_beta1: float = 0.9
    adam_beta2: float = 0.98
    adam_epsilon: float = 1e-9

    @property
    def decoder_only(self) -> bool:
        return self.num_encoder_layers == 0

    def parameter_count(self) -> int:
        """Trainable values of this layout, counted by hand (the peers' tests compare each
        framework's real count with this and with the zoo's)."""
        d, f = self.d_model, self.d_ff
        attention, norm = 4 * d * d, 2 * d
        ffn = d * f + f + f * d + d
        encoder = self.num_encoder_layers * (attention + ffn + 2 * norm)
        encoder += norm if self.num_encoder_layers else 0
        cross = 0 if self.decoder_only else attention + norm
        decoder = self.num_decoder_layers * (attention + cross + ffn + 2 * norm) + norm
        return self.vocab_size * d + encoder + decoder


def learning_rate(config, step, minimum=min):
    """The warm-up schedule at `step` (counted from 1): a Python number, or a tensor when
    `step` is one and `minimum` is the framework's elementwise minimum."""
    return (config.learning_rate * config.d_model ** -0.5
            * minimum(step ** -0.5, step * config.warmup_steps ** -1.5))


def smoothing_constants(config, vocab=None):
    """(confidence, low, entropy) of the zoo's label smoothing: the label gets confidence,
    every other id `low`; the smoothed distribution's own entropy is subtracted so that a
    perfect model scores 0 (tensor2tensor's convention)."""
    vocab = vocab or config.vocab_size
    eps = config.label_smoothing
    confidence, low = 1.0 - eps, eps / (vocab - 1)
    entropy = -(confidence * math.log(confidence) + (vocab - 1) * low * math.log(low + 1e-20)
                ) if eps else 0.0
    return confidence, low, entropy


def positional_encoding(length, depth):
    """(length, depth) float32: sines of geometric wavelengths in the first half of the
    channels, cosines in the second (the zoo's layout)."""
    positions = np.arange(length, dtype=np.float64)[:, None]
    inv_freq = 1.0 / 10000.0 ** (np.arange(depth // 2, dtype=np.float64) * 2.0 / depth)
    angles = positions * inv_freq[None, :]
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1).astype(np.float32)


# -- initializers (NumPy, so that JAX and TensorFlow peers draw the same way) ------------------
def he_normal(rng, shape):
    """For kernels laid out (..., fan_in, fan_out): HWIO convolutions, dense (in, out)."""
    fan_in = int(np.prod(shape[:-1]))
    return rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)


def glorot_uniform(rng, shape):
    limit = np.sqrt(6.0 / (shape[0] + shape[-1]))
    return rng.uniform(-limit, limit, shape)


def normal_001(rng, shape):
    """ResNet's classifier kernel, as the zoo initializes it."""
    return rng.standard_normal(shape) * 0.01


def zeros(rng, shape):
    return np.zeros(shape)


def ones(rng, shape):
    return np.ones(shape)


# -- synthetic batches -----------------------------------------------------------------------
def synthetic_images(batch_size, image_size, num_classes, seed=0):
    """(images (N, S, S, 3) float32 NHWC, labels (N,) int64), the same for every peer."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch_size, image_size, image_size, 3)).astype(np.float32)
    return images, rng.integers(0, num_classes, batch_size).astype(np.int64)


def synthetic_tokens(batch_size, config, seed=0):
    """(source (N, T) or None, decoder inputs (N, T), targets (N, T)), int64.

    A language model reads T + 1 random tokens and predicts each next one; a seq2seq
    model reads a random source and the targets shifted right by one (a 0 in front).
    """
    rng = np.random.default_rng(seed)
    t = config.seq_len
    if config.decoder_only:
        tokens = rng.integers(FIRST_TOKEN, config.vocab_size, (batch_size, t + 1))
        return None, tokens[:, :-1], tokens[:, 1:]
    source = rng.integers(FIRST_TOKEN, config.vocab_size, (batch_size, t))
    targets = rng.integers(FIRST_TOKEN, config.vocab_size, (batch_size, t))
    inputs = np.concatenate([np.zeros((batch_size, 1), targets.dtype), targets[:, :-1]], 1)
    return source, inputs, targets


def check_precision(precision):
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be float32 or bfloat16, got {precision!r}")


def check_model(name):
    if name not in IMAGE_CLASSIFIERS:
        raise ValueError(f"no peer for {name!r}; peers: {', '.join(IMAGE_CLASSIFIERS)}")


# -- availability -----------------------------------------------------------------------------
def unavailable(module_name):
    """None when `module_name` imports; otherwise why not, in a few words."""
    try:
        importlib.import_module(module_name)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == module_name:
            return "not installed"
        return f"import failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None
