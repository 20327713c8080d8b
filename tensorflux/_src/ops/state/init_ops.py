"""Initializers (`tf.zeros_initializer()`, `tf.glorot_uniform_initializer()`, ...).

An initializer is called with (shape, dtype, partition_info) and builds the ops that
produce a variable's initial value, with TF1's formulas (variance scaling's truncated
normal is corrected by 0.8796..., the stddev of a unit normal truncated at 2).
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import tensor_shape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.constant import constant
from tensorflux._src.ops.linalg.decomposition_ops import qr
from tensorflux._src.ops.math import math_ops
from tensorflux._src.ops.random import random_ops

__all__ = [
    "zeros_initializer", "ones_initializer", "constant_initializer",
    "random_normal_initializer", "truncated_normal_initializer", "random_uniform_initializer",
    "uniform_unit_scaling_initializer", "variance_scaling_initializer",
    "glorot_uniform_initializer", "glorot_normal_initializer", "orthogonal_initializer",
    "identity_initializer", "he_normal", "he_uniform", "lecun_normal", "lecun_uniform",
]

_TRUNCATED_STDDEV = 0.87962566103423978  # stddev of N(0, 1) truncated to [-2, 2]


def _shape_list(shape):
    return [int(d) for d in tensor_shape.as_shape(shape).as_list()]


class Initializer:
    """Base class: `init(shape, dtype=None, partition_info=None)` returns a Tensor."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class Zeros(Initializer):
    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        return constant(0, dtype=dtype, shape=_shape_list(shape), name="zeros")


class Ones(Initializer):
    def __init__(self, dtype=_dtypes.float32):
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        return constant(1, dtype=dtype, shape=_shape_list(shape), name="ones")


class Constant(Initializer):
    def __init__(self, value=0, dtype=_dtypes.float32, verify_shape=False):
        if not np.isscalar(value) and not isinstance(value, (list, tuple, np.ndarray)):
            raise TypeError(f"Invalid type for initial value: {type(value).__name__} "
                            f"(expected Python scalar, list or tuple of values, or numpy.ndarray).")
        self.value, self.dtype, self.verify_shape = value, _dtypes.as_dtype(dtype), verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        verify = self.verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=dtype, shape=_shape_list(shape), verify_shape=verify)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=_dtypes.float32):
        self.mean, self.stddev, self.seed, self.dtype = mean, stddev, seed, _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_normal(_shape_list(shape), self.mean, self.stddev,
                                        _dtypes.as_dtype(dtype or self.dtype), seed=self.seed)


class TruncatedNormal(RandomNormal):
    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.truncated_normal(_shape_list(shape), self.mean, self.stddev,
                                           _dtypes.as_dtype(dtype or self.dtype), seed=self.seed)


class RandomUniform(Initializer):
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=_dtypes.float32):
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_ops.random_uniform(_shape_list(shape), self.minval, self.maxval,
                                         _dtypes.as_dtype(dtype or self.dtype), seed=self.seed)


def _fans(shape):
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))  # conv kernels: (..., in, out)
    return shape[-2] * receptive, shape[-1] * receptive


class VarianceScaling(Initializer):
    """Samples with variance scale / n, n = fan_in, fan_out or their average."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 dtype=_dtypes.float32):
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"  # TF1's legacy name
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.seed, self.dtype = seed, _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        # A part of a partitioned variable scales by the full variable's fans (TF1).
        fan_in, fan_out = _fans(shape if partition_info is None
                                else _shape_list(partition_info.full_shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            return random_ops.truncated_normal(shape, 0.0, math.sqrt(scale) / _TRUNCATED_STDDEV,
                                               dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)


class GlorotUniform(VarianceScaling):
    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None, dtype=_dtypes.float32):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class UniformUnitScaling(Initializer):
    """TF1's deprecated uniform_unit_scaling: U(-sqrt(3/fan_in)*factor, ...)."""

    def __init__(self, factor=1.0, seed=None, dtype=_dtypes.float32):
        self.factor, self.seed, self.dtype = factor, seed, _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        scale_shape = shape if partition_info is None else _shape_list(partition_info.full_shape)
        input_size = float(np.prod(scale_shape[:-1])) if scale_shape else 1.0
        limit = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(shape, -limit, limit,
                                         _dtypes.as_dtype(dtype or self.dtype), seed=self.seed)


class Orthogonal(Initializer):
    """A (scaled) orthogonal matrix from the QR decomposition of a normal sample."""

    def __init__(self, gain=1.0, seed=None, dtype=_dtypes.float32):
        self.gain, self.seed, self.dtype = gain, seed, _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        flat = (max(rows, cols), min(rows, cols))
        sample = random_ops.random_normal(list(flat), dtype=dtype, seed=self.seed)
        q, r = qr(sample)
        # Make the decomposition unique: Q's columns take the signs of R's diagonal.
        diag_sign = math_ops.sign(array_ops.diag_part(r))
        q = q * diag_sign
        if rows < cols:
            q = array_ops.transpose(q)
        return self.gain * array_ops.reshape(q, shape)


class Identity(Initializer):
    def __init__(self, gain=1.0, dtype=_dtypes.float32):
        self.gain, self.dtype = gain, _dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = _shape_list(shape)
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices.")
        dtype = _dtypes.as_dtype(dtype or self.dtype)
        return constant(self.gain * np.eye(*shape), dtype=dtype)


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
random_uniform_initializer = RandomUniform
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity


def he_normal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def lecun_normal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed=None):
    return VarianceScaling(1.0, "fan_in", "uniform", seed)
