"""ResNet-50 v1.5, MobileNet v2 and the zoo's Transformer written directly in PyTorch.

The same architectures as the zoo and jax_models.py, written as a PyTorch user would:
torch.nn modules in eager mode (no torch.compile: it needs a C++ toolchain and minutes
of compiling, and eager is what PyTorch runs by default), NCHW images (PyTorch's
layout), `torch.optim` optimizers and `torch.autocast` for mixed precision.

    run = image_classifier_step("resnet50", batch_size=16, image_size=64)
    run()                       # one training step; returns the loss
    parameter_count("resnet50") # 25,557,032 trainable values for 1000 classes

Classifiers: bias-free convolutions each followed by batch norm (the zoo's decay and
epsilon), He-normal convolutions, a Glorot dense layer; SGD with momentum 0.9, which
PyTorch defines as TF's MomentumOptimizer does (v <- m*v + g; p <- p - lr*v), on the
mean softmax cross-entropy. Transformer: common.TransformerConfig, attention through
`F.scaled_dot_product_attention` (PyTorch's fused kernel), Adam with the warm-up
schedule set before each step (PyTorch's Adam adds epsilon after the bias correction
where TF adds it before; with epsilon 1e-9 the steps are the same to float32 rounding).

`precision="bfloat16"` runs the forward pass under `torch.autocast(dtype=bfloat16)`:
float32 parameters, bfloat16 convolutions and matmuls, the loss in float32.

On a CUDA GPU the classifiers run as PyTorch's performance guide advises: the model and
images in channels-last memory (NHWC, what tensor-core convolutions read) and cuDNN
choosing its convolution algorithms by timing them (`cudnn.benchmark`), so the peer is
as fast as a careful PyTorch user would make it.

torch is imported on first use; `unavailable()` says why it cannot be. Before that,
OMP_WAIT_POLICY defaults to PASSIVE (set it to override): the peers share one process
and its cores, and with OpenMP's default of spinning idle workers, PyTorch's threads
wait for cores that other processes hold; on this project's busy 2-core machines that
made a ResNet-50 step 5-7x slower than with sleeping workers.
"""

from __future__ import annotations

import math
import os

from . import common
from .common import LEARNING_RATE, MOMENTUM, TransformerConfig

NAME, KEY, FRAMEWORK = "PyTorch", "torch", "torch"
SHORT = "torch"  # its table columns' label
_MODULES = {}  # the nn.Module classes, defined on first use (they need torch)


def _torch():
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read once, when torch loads
    import torch
    return torch


def unavailable():
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return common.unavailable(FRAMEWORK)


def version():
    return _torch().__version__


def _device():
    return "cuda" if _torch().cuda.is_available() else "cpu"


def _modules():
    """Defines this file's nn.Modules once torch is imported."""
    if _MODULES:
        return _MODULES
    torch = _torch()
    from torch import nn
    from torch.nn import functional as F

    def conv(c_in, c_out, kernel, stride=1, groups=1):
        # Padding (k - 1) / 2 on both sides: for even inputs the output size of TF's
        # "fixed padding" and "SAME", so every peer sees the same shapes.
        layer = nn.Conv2d(c_in, c_out, kernel, stride, (kernel - 1) // 2, groups=groups,
                          bias=False)
        nn.init.kaiming_normal_(layer.weight, mode="fan_in", nonlinearity="relu")
        return layer

    def batch_norm(channels, settings):
        decay, epsilon = settings
        return nn.BatchNorm2d(channels, eps=epsilon, momentum=1.0 - decay)

    def dense(c_in, c_out, bias=True):
        layer = nn.Linear(c_in, c_out, bias=bias)
        nn.init.xavier_uniform_(layer.weight)
        if bias:
            nn.init.zeros_(layer.bias)
        return layer

    # -- ResNet-50 v1.5 ---------------------------------------------------------------------
    class Bottleneck(nn.Module):
        """1x1 reduce -> 3x3 (strided: v1.5) -> 1x1 expand, plus the shortcut."""

        def __init__(self, c_in, width, stride, bn):
            super().__init__()
            self.conv1, self.bn1 = conv(c_in, width, 1), batch_norm(width, bn)
            self.conv2, self.bn2 = conv(width, width, 3, stride), batch_norm(width, bn)
            self.conv3, self.bn3 = conv(width, 4 * width, 1), batch_norm(4 * width, bn)
            nn.init.zeros_(self.bn3.weight)  # the zoo starts each block as the identity
            self.shortcut = None
            if stride != 1 or c_in != 4 * width:  # (N, C, H, W) -> (N, 4w, H/s, W/s)
                self.shortcut = nn.Sequential(conv(c_in, 4 * width, 1, stride),
                                              batch_norm(4 * width, bn))

        def forward(self, x):
            h = F.relu(self.bn1(self.conv1(x)))
            h = F.relu(self.bn2(self.conv2(h)))
            h = self.bn3(self.conv3(h))
            return F.relu(h + (x if self.shortcut is None else self.shortcut(x)))

    class ResNet50(nn.Module):
        def __init__(self, num_classes, bn=common.BATCH_NORM["resnet50"]):
            super().__init__()
            self.conv1, self.bn1 = conv(3, 64, 7, 2), batch_norm(64, bn)
            blocks, c_in = [], 64
            for width, count, stride in common.RESNET50_STAGES:
                for b in range(count):
                    blocks.append(Bottleneck(c_in, width, stride if b == 0 else 1, bn))
                    c_in = 4 * width
            self.blocks = nn.Sequential(*blocks)
            self.logits = dense(c_in, num_classes)
            nn.init.normal_(self.logits.weight, std=0.01)

        def forward(self, x):  # (N, 3, H, W) -> (N, classes)
            h = F.relu(self.bn1(self.conv1(x)))
            h = F.max_pool2d(h, 3, 2, 1)
            h = self.blocks(h)
            return self.logits(h.mean(dim=(2, 3)))

    # -- MobileNet v2 --------------------------------------------------------------------------
    class InvertedResidual(nn.Module):
        """1x1 expand -> ReLU6, 3x3 depthwise -> ReLU6, 1x1 linear projection (+ input)."""

        def __init__(self, c_in, expansion, c_out, stride, bn):
            super().__init__()
            mid = c_in * expansion
            self.expand = None
            if expansion != 1:
                self.expand = nn.Sequential(conv(c_in, mid, 1), batch_norm(mid, bn),
                                            nn.ReLU6())
            self.depthwise = nn.Sequential(conv(mid, mid, 3, stride, groups=mid),
                                           batch_norm(mid, bn), nn.ReLU6())
            self.project = nn.Sequential(conv(mid, c_out, 1), batch_norm(c_out, bn))
            self.residual = stride == 1 and c_in == c_out

        def forward(self, x):
            h = x if self.expand is None else self.expand(x)
            h = self.project(self.depthwise(h))
            return x + h if self.residual else h

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes, bn=common.BATCH_NORM["mobilenet_v2"]):
            super().__init__()
            layers = [conv(3, 32, 3, 2), batch_norm(32, bn), nn.ReLU6()]
            c_in = 32
            for expansion, channels, repeats, stride in common.MOBILENET_V2_BLOCKS:
                for r in range(repeats):
                    layers.append(InvertedResidual(c_in, expansion, channels,
                                                   stride if r == 0 else 1, bn))
                    c_in = channels
            layers += [conv(c_in, 1280, 1), batch_norm(1280, bn), nn.ReLU6()]
            self.features = nn.Sequential(*layers)
            self.logits = dense(1280, num_classes)

        def forward(self, x):
            return self.logits(self.features(x).mean(dim=(2, 3)))

    # -- the Transformer ------------------------------------------------------------------------
    class Attention(nn.Module):
        """Multi-head attention without projection biases."""

        def __init__(self, config):
            super().__init__()
            d = config.d_model
            self.heads = config.num_heads
            self.q, self.k, self.v, self.output = (dense(d, d, bias=False) for _ in range(4))

        def forward(self, x, memory, mask=None, causal=False):
            n, t, d = x.shape

            def split(h):  # (N, L, d) -> (N, heads, L, d/heads)
                return h.view(n, h.shape[1], self.heads, d // self.heads).transpose(1, 2)

            out = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(memory)),
                                                 split(self.v(memory)), attn_mask=mask,
                                                 is_causal=causal)
            return self.output(out.transpose(1, 2).reshape(n, t, d))

    class FeedForward(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.filter = dense(config.d_model, config.d_ff)
            self.output = dense(config.d_ff, config.d_model)

        def forward(self, x):
            return self.output(F.relu(self.filter(x)))

    class Sublayer(nn.Module):
        """Pre-norm residual: x + dropout(body(layer_norm(x)))."""

        def __init__(self, body, config):
            super().__init__()
            self.layer_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
            self.body = body
            self.dropout = nn.Dropout(config.dropout)

        def forward(self, x, *args, **kwargs):
            return x + self.dropout(self.body(self.layer_norm(x), *args, **kwargs))

    class SelfAttention(nn.Module):
        def __init__(self, config, causal):
            super().__init__()
            self.attention = Attention(config)
            self.causal = causal

        def forward(self, h, mask=None):
            return self.attention(h, h, mask, self.causal)

    class CrossAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.attention = Attention(config)

        def forward(self, h, memory, mask):
            return self.attention(h, memory, mask)

    class Layer(nn.Module):
        """An encoder layer (self-attention, feed-forward) or a decoder layer (causal
        self-attention, encoder-decoder attention when there is an encoder, feed-forward)."""

        def __init__(self, config, decoder):
            super().__init__()
            self.self_attention = Sublayer(SelfAttention(config, causal=decoder), config)
            self.encdec_attention = None
            if decoder and not config.decoder_only:
                self.encdec_attention = Sublayer(CrossAttention(config), config)
            self.ffn = Sublayer(FeedForward(config), config)

        def forward(self, x, self_mask=None, memory=None, memory_mask=None):
            x = self.self_attention(x, self_mask)
            if self.encdec_attention is not None:
                x = self.encdec_attention(x, memory, memory_mask)
            return self.ffn(x)

    class Transformer(nn.Module):
        def __init__(self, config):
            super().__init__()
            d = config.d_model
            self.config = config
            # One matrix for source, target and softmax weights.
            self.embedding = nn.Parameter(torch.randn(config.vocab_size, d) * d ** -0.5)
            self.register_buffer("positions", torch.from_numpy(
                common.positional_encoding(config.seq_len, d)), persistent=False)
            self.dropout = nn.Dropout(config.dropout)
            self.encoder = nn.ModuleList(Layer(config, decoder=False)
                                         for _ in range(config.num_encoder_layers))
            self.decoder = nn.ModuleList(Layer(config, decoder=True)
                                         for _ in range(config.num_decoder_layers))
            eps = config.layer_norm_epsilon
            self.encoder_norm = (nn.LayerNorm(d, eps=eps) if config.num_encoder_layers
                                 else None)
            self.decoder_norm = nn.LayerNorm(d, eps=eps)

        def embed(self, ids):
            x = F.embedding(ids, self.embedding) * math.sqrt(self.config.d_model)
            return self.dropout(x + self.positions[:ids.shape[1]])

        def forward(self, source, inputs):  # -> float32 logits (N, T, vocab)
            memory = memory_mask = None
            if source is not None:
                # (N, 1, 1, S), True where a key may be attended to (not padding).
                memory_mask = (source != common.PAD_ID)[:, None, None, :]
                x = self.embed(source)
                for layer in self.encoder:
                    x = layer(x, memory_mask)
                memory = self.encoder_norm(x)
            x = self.embed(inputs)
            for layer in self.decoder:
                x = layer(x, None, memory, memory_mask)
            return F.linear(self.decoder_norm(x), self.embedding).float()

    _MODULES.update(ResNet50=ResNet50, MobileNetV2=MobileNetV2, Transformer=Transformer)
    return _MODULES


_CLASSIFIERS = {"resnet50": "ResNet50", "mobilenet_v2": "MobileNetV2"}


def build(name, num_classes=1000, config=None):
    """The nn.Module of `name` ("resnet50", "mobilenet_v2" or "transformer")."""
    modules = _modules()
    if name == "transformer":
        return modules["Transformer"](config or TransformerConfig())
    common.check_model(name)
    return modules[_CLASSIFIERS[name]](num_classes)


def parameter_count(name, num_classes=1000, image_size=224, config=None):
    """Trainable values of a PyTorch peer (batch-norm statistics are buffers)."""
    model = build(name, num_classes, config)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _autocast(device, precision):
    """bfloat16 autocast on `device` (for a checked `precision`; cheap enough to enter
    in every timed step)."""
    torch = _torch()
    return torch.autocast(device, dtype=torch.bfloat16, enabled=precision == "bfloat16")


def image_classifier_step(name, batch_size, image_size=224, num_classes=1000,
                          precision="float32", seed=0, learning_rate=LEARNING_RATE):
    """An eager SGD-momentum training step on fixed random images; returns `run()`."""
    torch = _torch()
    from torch.nn import functional as F
    common.check_precision(precision)
    torch.manual_seed(seed)
    device = _device()
    model = build(name, num_classes).to(device).train()
    images, labels = common.synthetic_images(batch_size, image_size, num_classes, seed)
    x = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous().to(device)  # NCHW
    if device == "cuda":
        torch.backends.cudnn.benchmark = True
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.from_numpy(labels).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=MOMENTUM)

    def run():
        optimizer.zero_grad(set_to_none=True)
        with _autocast(device, precision):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()
        return loss.detach().cpu().numpy()

    return run


def transformer_loss(logits, targets, config):
    """Mean label-smoothed cross-entropy over the non-padding targets (the zoo's loss)."""
    torch = _torch()
    from torch.nn import functional as F
    vocab = logits.shape[-1]
    if not config.label_smoothing:
        return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1),
                               ignore_index=common.PAD_ID)
    confidence, low, entropy = common.smoothing_constants(config, vocab)
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(-1, targets[..., None])[..., 0]
    xent = confidence * nll + low * (-log_probs.sum(-1) - nll) - entropy
    weights = (targets != common.PAD_ID).float()
    return (xent * weights).sum() / torch.clamp(weights.sum(), min=1.0)


def transformer_step(batch_size, config=TransformerConfig(), precision="float32", seed=0):
    """An eager Adam training step of the Transformer on fixed random tokens (with the
    config's dropout and label smoothing); returns `run()`."""
    torch = _torch()
    common.check_precision(precision)
    torch.manual_seed(seed)
    device = _device()
    model = build("transformer", config=config).to(device).train()
    source, inputs, targets = (None if a is None else torch.from_numpy(a).to(device)
                               for a in common.synthetic_tokens(batch_size, config, seed))
    optimizer = torch.optim.Adam(model.parameters(), lr=common.learning_rate(config, 1),
                                 betas=(config.adam_beta1, config.adam_beta2),
                                 eps=config.adam_epsilon)
    steps = [0]

    def run():
        steps[0] += 1
        for group in optimizer.param_groups:
            group["lr"] = common.learning_rate(config, steps[0])
        optimizer.zero_grad(set_to_none=True)
        with _autocast(device, precision):
            logits = model(source, inputs)
        loss = transformer_loss(logits, targets, config)
        loss.backward()
        optimizer.step()
        return loss.detach().cpu().numpy()

    return run
