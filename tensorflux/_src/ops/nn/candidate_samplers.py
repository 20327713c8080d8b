"""The other candidate samplers: all classes, a fixed unigram distribution (from a vocab
file or a list of counts), and a unigram distribution learned from the true classes
seen so far. Outputs and expected counts follow the uniform samplers'
(`nn_sampling_ops.py`): (sampled_candidates [num_sampled], true_expected_count
[batch, num_true], sampled_expected_count [num_sampled]).
"""

from __future__ import annotations

import secrets

import jax
import jax.numpy as jnp
import numpy as np

from tensorflux._src.framework import errors, random_seed
from tensorflux._src.ops.nn.nn_sampling_ops import (  # noqa: F401  (the two re-exported)
    CandidateSamples, _sample, _sampler_shape, log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler",
           "all_candidate_sampler", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler"]

_INT32_MAX = 2 ** 31 - 1


def _check_true_classes(true_classes, range_max):
    """TF's kernel rejects true classes outside [0, range_max) at run time."""
    from tensorflux._src.compiler import effects
    flat = jnp.reshape(true_classes, -1)
    ok = jnp.all((flat >= 0) & (flat < range_max))

    def message(values):
        bad = values[(values < 0) | (values >= range_max)][0]
        return f"`true_candidate` out of range [0, {range_max}), received {bad}"

    effects.check(ok, message, data=(flat,))


# -- AllCandidateSampler -------------------------------------------------------------------------
def _all_lower(true_classes, num_sampled):
    ones = jnp.ones(true_classes.shape, jnp.float32)
    return (jnp.arange(num_sampled, dtype=jnp.int64), ones,
            jnp.ones([num_sampled], jnp.float32))


_OUTPUTS = ("sampled_candidates: int64", "true_expected_count: float",
            "sampled_expected_count: float")
register(OpDef(
    "AllCandidateSampler", inputs=("true_classes: int64",), outputs=_OUTPUTS,
    attrs={"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED, "seed": 0,
           "seed2": 0},
    shape=lambda op: _sampler_shape(op, has_range=False), lower=_all_lower,
    not_differentiable=True,
))


def _seeds(seed):
    seed1, seed2 = random_seed.get_seed(seed)
    return {"seed": seed1 or 0, "seed2": seed2 or 0}


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class [0, num_sampled) as the sample, each with expected count 1."""
    outs = apply_op("AllCandidateSampler", name=name, true_classes=true_classes,
                    num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                    **_seeds(seed))
    return CandidateSamples(*outs)


# -- FixedUnigramCandidateSampler ----------------------------------------------------------------
def _fixed_weights(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard,
                   unigrams):
    """The shard's weights as TF's FixedUnigramSampler builds them: reserved ids weigh 0,
    then one weight ** distortion per vocabulary entry (the last CSV field of each line
    of vocab_file, or each of unigrams), keeping the ids with id % num_shards == shard."""
    if not vocab_file and not unigrams:
        raise kernel_error("Must provide either vocab_file or unigrams.")
    if vocab_file and unigrams:
        raise kernel_error("Must only provide one of vocab_file and unigrams.")
    weights = [0.0 for word_id in range(num_reserved_ids) if word_id % num_shards == shard]
    word_id = len(weights)
    if vocab_file:
        try:
            with open(vocab_file, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError as e:
            raise errors.NotFoundError(None, None, f"{vocab_file}; {e.strerror}") from None
        values = []
        for line in lines:
            cols = line.split(",")
            if word_id % num_shards == shard:
                try:
                    values.append(float(cols[-1]))
                except ValueError:
                    raise kernel_error(f"Wrong vocabulary format at line: {line}") from None
            word_id += 1
    else:
        values = [w for i, w in enumerate(unigrams, word_id) if i % num_shards == shard]
    weights += [float(np.float32(w) ** np.float32(distortion)) for w in values]
    if len(weights) != range_max:
        raise kernel_error(f"range is {range_max} must be equal to weights size  "
                           f"{len(weights)}")
    return np.asarray(weights, np.float64)


def _fixed_lower(key, true_classes, num_sampled, unique, range_max, vocab_file, distortion,
                 num_reserved_ids, num_shards, shard, unigrams):
    weights = _fixed_weights(range_max, vocab_file, distortion, num_reserved_ids, num_shards,
                             shard, list(unigrams))
    _check_true_classes(true_classes, range_max)
    table = jnp.asarray(weights / weights.sum())
    log_table = jnp.log(table)

    def probability(values, range_max):
        return table[jnp.clip(values, 0, range_max - 1)]

    def draws(k, n, range_max):
        return jax.random.categorical(k, log_table, shape=(n,)).astype(jnp.int64)

    return _sample(key, true_classes, num_sampled, unique, range_max, probability, draws)


register(OpDef(
    "FixedUnigramCandidateSampler", inputs=("true_classes: int64",), outputs=_OUTPUTS,
    attrs={"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED,
           "range_max": REQUIRED, "vocab_file": "", "distortion": 1.0,
           "num_reserved_ids": 0, "num_shards": 1, "shard": 0, "unigrams": (), "seed": 0,
           "seed2": 0},
    shape=_sampler_shape, lower=_fixed_lower, random=True, not_differentiable=True,
))


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes from fixed unigram weights (vocab_file or unigrams) raised to
    `distortion`; reserved ids are never drawn, and a shard samples its own ids."""
    if int(num_shards) < 1:
        raise ValueError(f"Value for attr 'num_shards' of {num_shards} must be at least "
                         f"minimum 1")
    if int(shard) < 0:
        raise ValueError(f"Value for attr 'shard' of {shard} must be at least minimum 0")
    outs = apply_op("FixedUnigramCandidateSampler", name=name, true_classes=true_classes,
                    num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                    range_max=int(range_max), vocab_file=str(vocab_file),
                    distortion=float(distortion), num_reserved_ids=int(num_reserved_ids),
                    num_shards=int(num_shards), shard=int(shard),
                    unigrams=tuple(float(u) for u in unigrams), **_seeds(seed))
    return CandidateSamples(*outs)


# -- LearnedUnigramCandidateSampler --------------------------------------------------------------
# Its distribution changes with every batch of true classes, so the counts live with
# the Session (one per op, like TF's kernel object): a host record.
class _LearnedUnigram:
    def __init__(self, range_max, seed, seed2):
        self.counts = np.ones(range_max, np.float64)  # every class starts with weight 1
        entropy = (seed, seed2) if (seed, seed2) != (0, 0) else secrets.randbits(64)
        self.rng = np.random.default_rng(entropy)

    def sample(self, num_sampled, unique):
        p = self.counts / self.counts.sum()
        if not unique:
            return self.rng.choice(p.size, num_sampled, p=p), num_sampled, p
        picked, seen, tries = [], set(), 0
        while len(picked) < num_sampled:  # TF's loop: draw until num_sampled distinct
            for value in self.rng.choice(p.size, 2 * num_sampled, p=p):
                tries += 1
                if value not in seen:
                    seen.add(value)
                    picked.append(value)
                    if len(picked) == num_sampled:
                        break
        return np.asarray(picked), tries, p

    def close(self):
        pass


def _expected_count(p, num_sampled, num_tries):
    if num_tries == num_sampled:
        return (p * num_sampled).astype(np.float32)
    return (-np.expm1(num_tries * np.log1p(-p))).astype(np.float32)


def _learned_kernel(true_classes, *, num_true, num_sampled, unique, range_max, seed, seed2,
                    session_state):
    from tensorflux._src.compiler import effects
    true_classes = np.asarray(true_classes, np.int64)
    flat = true_classes.reshape(-1)
    bad = flat[(flat < 0) | (flat >= range_max)]
    if bad.size:
        raise kernel_error(f"`true_candidate` out of range [0, {range_max}), received "
                           f"{bad[0]}")
    key = ("LearnedUnigramCandidateSampler", effects.current_op())
    state = session_state.resources.get(key)
    if state is None:
        state = session_state.resources.setdefault(key, _LearnedUnigram(range_max, seed, seed2))
    sampled, tries, p = state.sample(num_sampled, unique)
    outs = (sampled.astype(np.int64), _expected_count(p[true_classes], num_sampled, tries),
            _expected_count(p[sampled], num_sampled, tries))
    np.add.at(state.counts, flat, 1.0)  # after sampling, as TF's kernel
    return outs


register(OpDef(
    "LearnedUnigramCandidateSampler", inputs=("true_classes: int64",), outputs=_OUTPUTS,
    attrs={"num_true": REQUIRED, "num_sampled": REQUIRED, "unique": REQUIRED,
           "range_max": REQUIRED, "seed": 0, "seed2": 0},
    shape=_sampler_shape, host=_learned_kernel, uses_session=True, not_differentiable=True,
))


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes from a unigram distribution over the true classes seen so far in
    this Session (every class starts with weight 1)."""
    if range_max > _INT32_MAX:
        raise ValueError(f"Value of range_max:{range_max} is too large to handle")
    outs = apply_op("LearnedUnigramCandidateSampler", name=name, true_classes=true_classes,
                    num_true=int(num_true), num_sampled=int(num_sampled), unique=bool(unique),
                    range_max=int(range_max), **_seeds(seed))
    return CandidateSamples(*outs)
