"""`tf.random.Generator`: a counter-based generator whose state lives in an int64
variable (Philox: [counter_lo, counter_hi, key]; ThreeFry: [counter, key]).

Each draw is one `RngReadAndSkip` (returns the state and advances the counter by 256
per element, as TF's kernel) feeding a stateless V2 record keyed by that state, so a
run draws fresh numbers and a seeded generator repeats its sequence in every Session.
A generator's skips are chained by control dependencies in creation order: two draws
in one run then read successive states (TF serializes them on the resource), at the
price that fetching a later draw also advances the state for the earlier ones.
"""

from __future__ import annotations

import secrets

import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.array.generator_ops import zeros_like
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error, with_rank
from tensorflux._src.ops.random import stateless_random_ops as v1
from tensorflux._src.ops.random import stateless_random_v2  # noqa: F401  (the V2 records)
from tensorflux._src.ops.random.stateless_kernels import Algorithm, convert_alg_to_int
from tensorflux._src.ops.registry import OpDef, register

__all__ = []

STATE_TYPE = _dtypes.int64
PHILOX_STATE_SIZE = 3
THREEFRY_STATE_SIZE = 2
RNG_ALG_PHILOX = Algorithm.PHILOX.value
RNG_ALG_THREEFRY = Algorithm.THREEFRY.value
DEFAULT_ALGORITHM = RNG_ALG_PHILOX
_SKIP_PER_ELEMENT = 256  # TF's RngReadAndSkip advances the counter by 256 * delta


# -- RngReadAndSkip ------------------------------------------------------------------------------
def _read_and_skip(resource, alg, delta):
    n = resource.shape[0]
    if isinstance(alg, np.ndarray):
        want = {RNG_ALG_PHILOX: 3, RNG_ALG_THREEFRY: 2, 3: 3}.get(int(alg))
        if want is None:
            raise kernel_error(f"Unsupported algorithm id: {int(alg)}")
        if n != want:
            raise kernel_error(f"The size of the state must be {want}; got {n}")
    state = jnp.asarray(resource).view(jnp.uint64)
    c0 = state[0] + jnp.asarray(delta, jnp.uint64) * np.uint64(_SKIP_PER_ELEMENT)
    parts = [c0[None]]
    if n >= 3:  # a 128-bit counter: carry into its high word
        parts.append((state[1] + (c0 < state[0]).astype(jnp.uint64))[None])
    parts.append(state[len(parts):])
    new_state = jnp.concatenate(parts).view(jnp.int64)
    old = jnp.pad(jnp.asarray(resource), (0, max(0, 3 - n)))
    return new_state, old


def _read_and_skip_shape(op):
    with_rank(op.inputs[0].shape, 1)
    with_rank(op.inputs[1].shape, 0)
    with_rank(op.inputs[2].shape, 0)
    return TensorShape([3])


register(OpDef(
    "RngReadAndSkip", inputs=("resource: Ref(int64)", "alg: int32", "delta: uint64"),
    outputs=("value: int64",), shape=_read_and_skip_shape, lower=_read_and_skip,
    writes=("resource",), not_differentiable=True,
))


# -- states ------------------------------------------------------------------------------------
def _get_state_size(alg):
    if alg == RNG_ALG_PHILOX:
        return PHILOX_STATE_SIZE
    if alg == RNG_ALG_THREEFRY:
        return THREEFRY_STATE_SIZE
    raise ValueError(f"Unsupported algorithm id: {alg}")


def _get_counter_size(alg):
    return _get_state_size(alg) - 1


def _uint_to_int(n):
    return n - 2 ** 64 if isinstance(n, int) and n > 2 ** 63 - 1 else n


def _make_1d_state(state_size, seed):
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = int(seed)
        words = []
        for _ in range(state_size):  # 64-bit chunks of the (unbounded) Python integer
            words.append(seed & 0xFFFFFFFFFFFFFFFF)
            seed >>= 64
        seed = words
    if hasattr(seed, "op") and hasattr(seed, "dtype"):
        seed = array_ops.reshape(math_ops.cast(seed, STATE_TYPE), [-1])[:state_size]
        size = seed.shape[0].value
        if size is None or size < state_size:
            # Zeros on the *left*, as TF: a short seed becomes the key, not the counter.
            pad = math_ops.maximum(state_size - array_ops.shape(seed)[0], 0)
            seed = array_ops.pad(seed, array_ops.reshape(array_ops.stack([pad, 0]), [1, 2]))
        return seed
    flat = np.asarray([_uint_to_int(int(s)) for s in np.reshape(np.asarray(seed, object), -1)],
                      np.int64)[:state_size]
    return np.concatenate([np.zeros(state_size - flat.size, np.int64), flat])


def create_rng_state(seed, alg):
    """An RNG state for `alg` (name, Algorithm or id) from an integer or 1-D seed."""
    alg = convert_alg_to_int(alg)
    return _make_1d_state(_get_state_size(alg), seed)


def _convert_to_state_tensor(t):
    if hasattr(t, "op") and hasattr(t, "dtype"):
        return math_ops.cast(t, STATE_TYPE)
    if isinstance(t, (list, tuple)):
        t = [_uint_to_int(x) for x in t]
    elif isinstance(t, int):
        t = _uint_to_int(t)
    return convert_to_tensor(np.asarray(t, np.int64))


def _shape_tensor(shape):
    if isinstance(shape, (tuple, list)) and not shape:
        return convert_to_tensor(np.zeros([0], np.int64), name="shape")
    return v1.shape_tensor(shape)


def _alg_int(alg):
    alg = convert_alg_to_int(alg)
    if alg == Algorithm.AUTO_SELECT.value:
        return DEFAULT_ALGORITHM
    return alg


# -- Generator ---------------------------------------------------------------------------------
class Generator:
    """Random-number generator whose state is a variable (initialize it like any other)."""

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_seed(cls, seed, alg=None):
        alg = _alg_int(DEFAULT_ALGORITHM if alg is None else alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        alg = _alg_int(DEFAULT_ALGORITHM if alg is None else alg)
        # The OS's entropy, drawn when the generator is made.
        state = [_uint_to_int(secrets.randbits(64)) for _ in range(_get_state_size(alg))]
        return cls(state=np.asarray(state, np.int64), alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        alg = _alg_int(alg)
        counter = _convert_to_state_tensor(counter)
        key = _convert_to_state_tensor(key)
        counter.shape.assert_is_compatible_with([_get_state_size(alg) - 1])
        key.shape.assert_is_compatible_with([])
        state = array_ops.concat([counter, array_ops.reshape(key, [1])], 0)
        return cls(state=state, alg=alg)

    def __init__(self, copy_from=None, state=None, alg=None):
        from tensorflux._src.train.variables import Variable
        if copy_from is not None:
            if alg is not None or state is not None:
                raise ValueError("When `copy_from` is given, `state` and `alg` must be None.")
            self._alg = copy_from.algorithm
            self._state_var = Variable(copy_from.state, dtype=STATE_TYPE, trainable=False,
                                       name="StateVar")
        else:
            if alg is None or state is None:
                raise ValueError("Both `state` and `alg` must be given to create a "
                                 "Generator.")
            self._alg = _alg_int(alg)
            if isinstance(state, Variable):
                state.shape.assert_is_compatible_with([_get_state_size(self._alg)])
                self._state_var = state
            else:
                state = _convert_to_state_tensor(state)
                state.shape.assert_is_compatible_with([_get_state_size(self._alg)])
                self._state_var = Variable(state, dtype=STATE_TYPE, trainable=False,
                                           name="StateVar")
        self._last_skip = None

    # -- state ------------------------------------------------------------------------------
    @property
    def state(self):
        """The variable holding the state."""
        return self._state_var

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        """The key part of the state (its last element)."""
        return self._state_var.value()[-1]

    def reset(self, state):
        """An op that sets the state (run it in a Session)."""
        state = _convert_to_state_tensor(state)
        state.shape.assert_is_compatible_with([_get_state_size(self.algorithm)])
        return self._state_var.assign(state)

    def reset_from_seed(self, seed):
        return self._state_var.assign(create_rng_state(seed, self.algorithm))

    def reset_from_key_counter(self, key, counter):
        counter = _convert_to_state_tensor(counter)
        key = _convert_to_state_tensor(key)
        counter.shape.assert_is_compatible_with([_get_state_size(self.algorithm) - 1])
        key.shape.assert_is_compatible_with([])
        return self._state_var.assign(
            array_ops.concat([counter, array_ops.reshape(key, [1])], 0))

    def skip(self, delta):
        """Advances the counter as `delta` draws would; returns the state before (int64
        [3], right-padded with zeros)."""
        prev = self._last_skip
        if prev is not None and prev.graph is not _graph.get_default_graph():
            prev = None
        with _graph.control_dependencies([prev] if prev is not None else []):
            out = apply_op("RngReadAndSkip", resource=self._state_var._ref(),
                           alg=convert_to_tensor(np.int32(self.algorithm)),
                           delta=math_ops.cast(delta, _dtypes.uint64))
        self._last_skip = out.op
        return out

    def _prepare_key_counter(self, shape):
        counter_key = self.skip(reduce_ops.reduce_prod(shape))
        size = _get_counter_size(self.algorithm)
        counter = math_ops.cast(counter_key[:size], _dtypes.uint64)
        key = math_ops.cast(counter_key[size:size + 1], _dtypes.uint64)
        return key, counter

    def _draw(self, op_type, shape, name=None, **kwargs):
        key, counter = self._prepare_key_counter(shape)
        return apply_op(op_type, name=name, shape=shape, key=key, counter=counter,
                        alg=convert_to_tensor(np.int32(self.algorithm)), **kwargs)

    def _scaled(self, op_type, default_name, shape, mean, stddev, dtype, name):
        """mean + stddev * (a draw of `op_type`): normal and truncated_normal."""
        with _graph.name_scope(name, default_name, [shape, mean, stddev]) as scope:
            shape = _shape_tensor(shape)
            mean = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._draw(op_type, shape, dtype=dtype)
            return math_ops.add(rnd * stddev, mean, name=scope)

    # -- distributions ---------------------------------------------------------------------------
    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        return self._scaled("StatelessRandomNormalV2", "stateful_normal", shape, mean, stddev,
                            dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32,
                         name=None):
        return self._scaled("StatelessTruncatedNormalV2", "truncated_normal", shape, mean,
                            stddev, dtype, name)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        dtype = _dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(f"For integer dtype {dtype}, minval and maxval must be "
                                 f"both `None` or both non-`None`; got minval={minval} and "
                                 f"maxval={maxval}")
        elif maxval is None:
            maxval = 1
        with _graph.name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape = _shape_tensor(shape)
            if dtype.is_integer and minval is None:
                return self._draw("StatelessRandomUniformFullIntV2", shape, name=scope,
                                  dtype=dtype)
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                return self._draw("StatelessRandomUniformIntV2", shape, name=scope,
                                  minval=minval, maxval=maxval)
            rnd = self._draw("StatelessRandomUniformV2", shape, dtype=dtype)
            return math_ops.add(rnd * (maxval - minval), minval, name=scope)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        with _graph.name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            return self._draw("StatelessRandomUniformFullIntV2", _shape_tensor(shape),
                              name=scope, dtype=_dtypes.as_dtype(dtype))

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        """Binomial(counts, probs) draws; the parameters fill the trailing dimensions."""
        with _graph.name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts = convert_to_tensor(counts, name="counts")
            probs = convert_to_tensor(probs, name="probs")
            shape = _shape_tensor(shape)
            # The drawn state hashed into a seed for the stateless binomial record.
            seed = self._draw("StatelessRandomUniformFullIntV2", shape=[2],
                              dtype=_dtypes.int64)
            return apply_op("StatelessRandomBinomial", name=scope, shape=shape, seed=seed,
                            counts=counts, probs=probs, dtype=_dtypes.as_dtype(dtype))

    def _make_int64_keys(self, shape=()):
        return self.uniform_full_int(shape=shape, dtype=_dtypes.int64)

    def make_seeds(self, count=1):
        """[2, count] int64 seeds for the stateless ops."""
        keys = self._make_int64_keys(shape=[count])
        return array_ops.stack([keys, zeros_like(keys)])

    def split(self, count=1):
        """`count` new independent generators (the old one's state advances)."""
        keys = self._make_int64_keys(shape=[count])
        zeros = np.zeros([_get_state_size(self.algorithm) - 1], np.int64)
        return [Generator(state=array_ops.concat([zeros, array_ops.reshape(key, [1])], 0),
                          alg=self.algorithm)
                for key in array_ops.unstack(keys, num=count)]


_global = {"generator": None}


def get_global_generator():
    """The global generator (made from OS entropy on first use in the default graph)."""
    gen = _global["generator"]
    if gen is None or gen.state.graph is not _graph.get_default_graph():
        gen = _global["generator"] = Generator.from_non_deterministic_state()
    return gen


def set_global_generator(generator):
    """Replaces the global generator."""
    _global["generator"] = generator

