"""The CTC loss computation in JAX, and the host-side wording of CTCLoss's input errors.

`loss_and_grad` is Graves' forward-backward algorithm in log space, batched: the states
of example b are its extended label sequence l' = [blank, l1, blank, l2, ..., blank]
(U_b = 2 * len_b + 1 states, padded to S = 2 * L + 1). One `lax.scan` over time gives
the forward variables alpha, a reverse one the backward variables beta, both [T, B, S];
a state beyond U_b, or a step at or after sequence_length[b], stays log(0) or frozen.
The loss is -log p(l|x); its gradient with respect to the logits is TF's formula
(GravesTh eq. 7.28): softmax(logits) - sum over the states s with l'[s] = k of
alpha * beta / p, zero at t >= sequence_length[b], and softmax alone where no alignment
exists (the loss is then +inf), as TF's CTCLossCalculator computes it.

Transitions (TF's CTCLossCalculator, with ctc_merge_repeated):
  stay on s        allowed for blanks, and for labels when merge_repeated;
  s-1 -> s         always;
  s-2 -> s         for a label state whose label differs from l'[s-2], or any label
                   state when merge_repeated is off (repeats are then separate labels).

`sparse_to_dense` turns CTCLoss's sparse labels into the padded [B, L] form, applying
TF's per-batch rules (preprocess_collapse_repeated; a value >= num_classes - 1 ends the
sequence) with vectorized index arithmetic, and `validity` computes one flag for every
run-time error TF's kernel raises. The message itself is only needed when that flag
fails, so `first_error` recomputes it on the host with plain loops in TF's order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def _lse3(a, b, c):
    """log(exp(a) + exp(b) + exp(c)) elementwise, exact for -inf entries."""
    m = jnp.maximum(jnp.maximum(a, b), c)
    safe = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))
    return safe + jnp.log(jnp.exp(a - safe) + jnp.exp(b - safe) + jnp.exp(c - safe))


def _shift(x, k, fill):
    """x[..., s - k] along the last axis (`fill` for s < k)."""
    pad = jnp.full(x.shape[:-1] + (k,), fill, x.dtype)
    return jnp.concatenate([pad, x[..., :-k]], axis=-1)


def _unshift(x, k, fill):
    """x[..., s + k] along the last axis (`fill` past the end)."""
    pad = jnp.full(x.shape[:-1] + (k,), fill, x.dtype)
    return jnp.concatenate([x[..., k:], pad], axis=-1)


def loss_and_grad(logits, labels, label_length, seq_len, blank, merge_repeated):
    """(loss [B], d loss / d logits [T, B, C]) for time-major `logits` and dense `labels`
    [B, L] whose first label_length[b] entries are example b's labels."""
    steps, batch, classes = logits.shape
    dtype = logits.dtype
    label_length = jnp.asarray(label_length).astype(jnp.int32)
    seq_len = jnp.asarray(seq_len).astype(jnp.int32)
    if steps == 0 or batch == 0:
        # No frames: only an empty labeling has an alignment.
        loss = jnp.where(label_length == 0, 0.0, jnp.inf).astype(dtype)
        return loss, jnp.zeros(logits.shape, dtype)
    labels = jnp.asarray(labels).astype(jnp.int32)
    if labels.shape[1] == 0:
        labels = jnp.zeros((batch, 1), jnp.int32)
    num_states = 2 * labels.shape[1] + 1
    neg = jnp.array(-jnp.inf, dtype)
    logp = jax.nn.log_softmax(logits, axis=-1)

    s = jnp.arange(num_states)
    is_label = s % 2 == 1
    ext = jnp.where(is_label[None, :], labels[:, jnp.maximum(s - 1, 0) // 2], blank)  # [B, S]
    ext = jnp.clip(ext, 0, classes - 1)
    n_states = 2 * label_length + 1
    valid = s[None, :] < n_states[:, None]
    stay_ok = jnp.broadcast_to((~is_label) | merge_repeated, (batch, num_states))
    skip_ok = is_label[None, :] & (s[None, :] >= 2)
    if merge_repeated:
        skip_ok = skip_ok & (ext != _shift(ext, 2, -1))
    emit = jnp.take_along_axis(logp, jnp.broadcast_to(ext[None], (steps, batch, num_states)),
                               axis=2)
    emit = jnp.where(valid[None], emit, neg)
    time = jnp.arange(steps)

    def forward(alpha, xs):
        e, t = xs
        new = e + _lse3(jnp.where(stay_ok, alpha, neg), _shift(alpha, 1, neg),
                        jnp.where(skip_ok, _shift(alpha, 2, neg), neg))
        alpha = jnp.where((t < seq_len)[:, None], new, alpha)
        return alpha, alpha

    alpha0 = jnp.where((s < 2)[None, :], emit[0], neg)
    alpha_last, alphas = lax.scan(forward, alpha0, (emit[1:], time[1:]))
    alphas = jnp.concatenate([alpha0[None], alphas])

    end = jnp.stack([n_states - 1, n_states - 2], axis=1)
    finals = jnp.take_along_axis(alpha_last, jnp.maximum(end, 0), axis=1)
    finals = jnp.where(end >= 0, finals, neg)
    log_lik = jnp.logaddexp(finals[:, 0], finals[:, 1])
    log_lik = jnp.where(seq_len == 0, jnp.where(label_length == 0, 0.0, neg), log_lik)

    beta_init = jnp.where((s[None, :] == end[:, :1]) | (s[None, :] == end[:, 1:]), 0.0, neg)
    beta_init = beta_init.astype(dtype)
    skip_next = _unshift(skip_ok, 2, False)

    def backward(beta, xs):
        e_next, t = xs
        eb = beta + e_next
        new = _lse3(jnp.where(stay_ok, eb, neg), _unshift(eb, 1, neg),
                    jnp.where(skip_next, _unshift(eb, 2, neg), neg))
        new = jnp.where(valid, new, neg)
        beta = jnp.where((t >= seq_len - 1)[:, None], beta_init, new)
        return beta, beta

    _, betas = lax.scan(backward, beta_init, (emit[1:], time[:-1]), reverse=True)
    betas = jnp.concatenate([betas, beta_init[None]])

    found = jnp.isfinite(log_lik)
    occupancy = jnp.exp(alphas + betas - jnp.where(found, log_lik, 0.0)[None, :, None])
    occupancy = jnp.where(found[None, :, None], occupancy, 0.0).astype(dtype)
    per_class = jnp.zeros(logits.shape, dtype).at[
        time[:, None, None], jnp.arange(batch)[None, :, None], ext[None]].add(occupancy)
    grad = jnp.exp(logp) - per_class
    grad = jnp.where((time[:, None] < seq_len[None, :])[..., None], grad, 0.0)
    return (-log_lik).astype(dtype), grad.astype(dtype)


# -- CTCLoss's sparse labels ----------------------------------------------------------------
# These run on NumPy arrays when the labels are constants (evaluated while the run is
# compiled) and on traced JAX arrays otherwise; `xp` is the array module.
def _add_at(xp, size, index, values):
    """zeros(size) with values added at index; out-of-range indices are dropped."""
    if xp is np:
        out = np.zeros(size, np.int32)
        keep = (index >= 0) & (index < size)
        np.add.at(out, index[keep], values[keep])
        return out
    return jnp.zeros(size, jnp.int32).at[index].add(values, mode="drop")


def _group_exclusive_cumsum(xp, flags, start):
    """For each element, how many flagged elements precede it in its batch group (the
    groups are contiguous; `start[i]` is the index where i's group begins)."""
    flags = flags.astype(np.int32)
    exclusive = xp.cumsum(flags) - flags
    return exclusive - exclusive[start]


def sparse_to_dense(indices, values, batch, num_classes, cap, collapse):
    """(labels [B, cap], lengths [B], raw counts [B], flags) from sorted sparse labels.

    flags: (null_follows, negative) per element, for `validity`."""
    xp = np if isinstance(values, np.ndarray) and isinstance(indices, np.ndarray) else jnp
    n = values.shape[0]
    b = indices[:, 0].astype(np.int32) if n else xp.zeros([0], np.int32)
    b_safe = xp.clip(b, 0, max(batch - 1, 0))
    counts = _add_at(xp, batch, b, xp.ones(n, np.int32))
    starts = xp.cumsum(counts) - counts
    pos = xp.arange(n, dtype=np.int32) - starts[b_safe]
    start = xp.clip(xp.arange(n, dtype=np.int32) - pos, 0, max(n - 1, 0))
    values = values.astype(np.int32)
    prev = xp.concatenate([xp.full(min(n, 1), -1, np.int32), values[:-1]])
    keep = (pos == 0) | (values != prev) if collapse else xp.ones(n, bool)
    null = keep & (values >= num_classes - 1)
    label = keep & (values < num_classes - 1)
    null_follows = label & (_group_exclusive_cumsum(xp, null, start) > 0)
    negative = label & (values < 0)
    new_pos = _group_exclusive_cumsum(xp, label, start)
    lengths = _add_at(xp, batch, b, label.astype(np.int32))
    target = xp.where(label, new_pos, cap)
    if xp is np:
        dense = np.zeros((batch, cap), np.int32)
        keep = (target < cap) & (b >= 0) & (b < batch)
        dense[b[keep], target[keep]] = values[keep]
    else:
        dense = jnp.zeros((batch, cap), jnp.int32).at[b, target].set(values, mode="drop")
    return dense, xp.minimum(lengths, cap), counts, (null_follows, negative)


def validity(indices, seq_len, counts, flags, max_time, batch, ignore_longer):
    """One bool: none of TF's CTCLoss run-time errors applies."""
    xp = np if isinstance(counts, np.ndarray) else jnp
    n = indices.shape[0]
    ok = xp.all((seq_len <= max_time) & (seq_len >= 0)) & xp.all(counts > 0)
    if n:
        b, t = indices[:, 0], indices[:, 1]
        ok &= xp.all((b >= 0) & (b < batch) & (t >= 0))
        later = (b[1:] > b[:-1]) | ((b[1:] == b[:-1]) & (t[1:] > t[:-1]))
        ok &= xp.all(later)
        ok &= ~xp.any(flags[0]) & ~xp.any(flags[1])
    if not ignore_longer:
        ok &= xp.all(counts <= seq_len)
    return ok


def first_error(indices, values, seq_len, max_time, num_classes, collapse, ignore_longer):
    """TF's message for the first invalid input, checked in its kernel's order."""
    indices = np.asarray(indices, np.int64).reshape(-1, 2)
    values = np.asarray(values).reshape(-1)
    seq_len = np.asarray(seq_len).reshape(-1)
    batch = seq_len.shape[0]
    max_len = int(indices[:, 1].max()) + 1 if len(indices) else 0
    for i, (b, t) in enumerate(indices):
        text = f"indices[{i}] = [{b},{t}]"
        prefix = "label SparseTensor is not valid: "
        if not (0 <= b < batch and 0 <= t < max_len):
            return f"{prefix}{text} is out of bounds: need 0 <= index < [{batch},{max_len}]"
        if i and (b, t) < tuple(indices[i - 1]):
            return (f"{prefix}{text} is out of order. Many sparse ops require sorted "
                    f"indices.\n    Use `tf.sparse.reorder` to create a correctly ordered "
                    f"copy.\n\n")
        if i and (b, t) == tuple(indices[i - 1]):
            return f"{prefix}{text} is repeated"
    for b in range(batch):
        if seq_len[b] > max_time:
            return f"sequence_length({b}) <= {max_time}"
    for b in range(batch):
        if seq_len[b] < 0:
            return f"seq_len({b}) < 0"
    for b in range(batch):
        label = [int(v) for v in values[indices[:, 0] == b]]
        if not label:
            return f"Labels length is zero in batch {b}"
        kept, finished = [], False
        for i, v in enumerate(label):
            if i == 0 or not collapse or v != label[i - 1]:
                if v >= num_classes - 1:
                    finished = True
                elif finished:
                    return (f"Saw a non-null label (index >= num_classes - 1) following a "
                            f"null label, batch: {b} num_classes: {num_classes} labels: "
                            f"{','.join(map(str, kept))}")
                else:
                    kept.append(v)
        if any(v < 0 for v in kept):
            return (f"All labels must be nonnegative integers, batch: {b} labels: "
                    f"{','.join(map(str, kept))}")
        if not ignore_longer and len(label) > seq_len[b]:
            return (f"Not enough time for target transition sequence (required: "
                    f"{len(label)}, available: {seq_len[b]}){b}You can turn this error into "
                    f"a warning by using the flag ignore_longer_outputs_than_inputs")
    return "CTCLoss: invalid inputs"
