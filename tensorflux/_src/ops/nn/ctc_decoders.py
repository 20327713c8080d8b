"""CTC decoders: `tf.nn.ctc_greedy_decoder`, `ctc_beam_search_decoder` (and _v2).

Both are host records with NumPy kernels: the number of decoded labels, hence the shape
of the SparseTensors they return, depends on the data.

Greedy (best path): per frame the first class with the largest logit; a blank (class
num_classes - 1) emits nothing, and with merge_repeated a class equal to the previous
frame's is not emitted again. The second output is -sum_t max logit, per example.

Beam search follows TF's CTCBeamSearchDecoder (core/util/ctc/ctc_beam_search.h) step for
step: per frame the logits are normalized with log-softmax; every beam in the search
(a labeling prefix, stored as a node of a prefix tree) updates its probability of ending
in a blank and in its last label, in descending order of its previous probability; then
each beam that can still enter the search grows one child per non-blank class, and a
child whose probability beats the worst beam of a full search replaces it (the one
dropped is deactivated; the tree keeps it, so it can return later). The final beams are
sorted by total probability; `merge_repeated` merges consecutive equal labels of a beam
in the output (TF's "A B B B B" -> "A B"). Beams with equal probability are ordered by
when they entered the search, where TF's heap order is unspecified.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework.sparse_tensor import SparseTensor
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.nn.ctc import merge_dim
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import with_rank
from tensorflux._src.ops.registry import OpDef, REQUIRED, register

__all__ = ["ctc_greedy_decoder", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2"]

_F = (_dtypes.float32, _dtypes.float64)


def _check_inputs(inputs, seq_len):
    """TF's CTCDecodeHelper checks, with its messages and error classes."""
    if inputs.ndim != 3:
        raise errors.InvalidArgumentError(None, None, "inputs is not a 3-Tensor")
    max_time, batch = inputs.shape[:2]
    if max_time == 0:
        raise errors.InvalidArgumentError(None, None, "max_time is 0")
    if seq_len.ndim != 1:
        raise errors.InvalidArgumentError(None, None, "sequence_length is not a vector")
    if seq_len.shape[0] != batch:
        raise errors.FailedPreconditionError(
            None, None, f"len(sequence_length) != batch_size.  len(sequence_length):  "
            f"{seq_len.shape[0]} batch_size: {batch}")
    for b in range(batch):
        if not seq_len[b] <= max_time:
            raise errors.FailedPreconditionError(None, None,
                                                 f"sequence_length({b}) <= {max_time}")


def _store(sequences, top_paths):
    """(indices, values, shape) per path, as TF's StoreAllDecodedSequences lays them out."""
    outs = []
    for p in range(top_paths):
        rows = [seqs[p] for seqs in sequences]
        n = sum(len(r) for r in rows)
        indices = np.zeros((n, 2), np.int64)
        values = np.zeros(n, np.int64)
        offset = 0
        for b, row in enumerate(rows):
            indices[offset:offset + len(row), 0] = b
            indices[offset:offset + len(row), 1] = np.arange(len(row))
            values[offset:offset + len(row)] = row
            offset += len(row)
        width = max((len(r) for r in rows), default=0)
        outs.append((indices, values, np.array([len(rows), width], np.int64)))
    return outs


def _decoder_shape(op, top_paths):
    inputs = with_rank(op.inputs[0].shape, 3)
    seq_len = with_rank(op.inputs[1].shape, 1)
    batch = merge_dim(inputs[1], seq_len[0])
    return ([TensorShape([None, 2])] * top_paths + [TensorShape([None])] * top_paths
            + [TensorShape([2])] * top_paths + [TensorShape([batch, top_paths])])


# -- greedy ------------------------------------------------------------------------------------
def _greedy_kernel(inputs, sequence_length, merge_repeated):
    inputs, seq_len = np.asarray(inputs), np.asarray(sequence_length)
    _check_inputs(inputs, seq_len)
    _, batch, classes = inputs.shape
    blank = classes - 1
    log_prob = np.zeros((batch, 1), inputs.dtype)
    sequences = []
    for b in range(batch):
        frames = inputs[:seq_len[b], b]
        best = np.argmax(frames, axis=1) if len(frames) else np.zeros(0, np.int64)
        log_prob[b, 0] = -frames.max(axis=1).sum() if len(frames) else 0
        seq, prev = [], -1
        for c in best:
            if c != blank and not (merge_repeated and c == prev):
                seq.append(int(c))
            prev = c
        sequences.append([seq])
    (indices, values, shape), = _store(sequences, 1)
    return indices, values, shape, log_prob


register(OpDef(
    "CTCGreedyDecoder", inputs=("inputs: T", "sequence_length: int32"),
    outputs=("decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64",
             "log_probability: T"),
    attrs={"T": _F, "merge_repeated": False}, type_defaults={"T": _dtypes.float32},
    shape=lambda op: _decoder_shape(op, 1), host=_greedy_kernel, not_differentiable=True,
))


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True):
    """Best-path decoding of logits [max_time, batch, num_classes]: returns
    ([SparseTensor of decoded labels], -sum of the best logits [batch, 1])."""
    ix, values, shape, log_prob = apply_op(
        "CTCGreedyDecoder", inputs=inputs, sequence_length=sequence_length,
        merge_repeated=merge_repeated)
    return [SparseTensor(ix, values, shape)], log_prob


# -- beam search -------------------------------------------------------------------------------
_NEG = -np.inf


def _lse(a, b):
    if a == _NEG:
        return b
    if b == _NEG:
        return a
    return max(a, b) + np.log1p(np.exp(-abs(a - b)))


class _Beam:
    """A labeling prefix: its probabilities at the previous and the current frame."""

    __slots__ = ("parent", "label", "children", "old", "new", "order")

    def __init__(self, parent, label):
        self.parent, self.label = parent, label
        self.children = {}
        self.old = [_NEG, _NEG, _NEG]  # total, blank, label (log)
        self.new = [_NEG, _NEG, _NEG]
        self.order = 0

    def active(self):
        return self.new[0] != _NEG

    def child(self, label):
        c = self.children.get(label)
        if c is None:
            c = self.children[label] = _Beam(self, label)
        return c

    def labels(self, merge_repeated):
        out, prev, node = [], -1, self
        while node.parent is not None:
            if not merge_repeated or node.label != prev:
                out.append(node.label)
            prev, node = node.label, node.parent
        return out[::-1]


def _sorted(beams):
    return sorted(beams, key=lambda e: (-e.new[0], e.order))


def _beam_search(frames, beam_width, top_paths, merge_repeated):
    """TF's beam search over one example's frames [t, num_classes]."""
    classes = frames.shape[1] if frames.ndim == 2 else 0
    blank = classes - 1
    root = _Beam(None, -1)
    root.new = [0.0, 0.0, _NEG]
    leaves, counter = [root], [0]

    def push(entry):
        counter[0] += 1
        entry.order = counter[0]
        leaves.append(entry)

    for row in frames:
        row = row.astype(np.float64)
        top = row.max()
        logp = row - top - np.log(np.exp(row - top).sum())
        branches = _sorted(leaves)
        leaves.clear()
        for b in branches:
            b.old = list(b.new)
        for b in branches:
            if b.parent is not None:
                if b.parent.active():
                    previous = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                    b.new[2] = _lse(b.new[2], previous)
                b.new[2] += logp[b.label]
            b.new[1] = b.old[0] + logp[blank]
            b.new[0] = _lse(b.new[1], b.new[2])
            push(b)
        for b in branches:
            def candidate(total):
                return total > _NEG and (len(leaves) < beam_width or
                                         total > min(e.new[0] for e in leaves))
            if not candidate(b.old[0]):
                continue
            if len(leaves) == beam_width:
                # Only labels that beat the current worst beam can enter; the worst only
                # rises as children replace it, so the others are never candidates.
                worst = min(e.new[0] for e in leaves)
                previous_all = np.where(np.arange(classes - 1) == b.label, b.old[1], b.old[0])
                wanted = np.flatnonzero(logp[:-1] + previous_all > worst)
            else:
                wanted = range(classes - 1)
            for label in wanted:
                c = b.child(int(label))
                if c.active():
                    continue
                previous = b.old[1] if c.label == b.label else b.old[0]
                c.new = [logp[label] + previous, _NEG, logp[label] + previous]
                if candidate(c.new[0]):
                    if len(leaves) == beam_width:
                        worst = min(leaves, key=lambda e: (e.new[0], -e.order))
                        worst.new = [_NEG, _NEG, _NEG]
                        leaves.remove(worst)
                    push(c)
                else:
                    c.old = [_NEG, _NEG, _NEG]
                    c.new = [_NEG, _NEG, _NEG]
    if top_paths > beam_width:
        raise errors.InvalidArgumentError(None, None,
                                          "requested more paths than the beam width.")
    if top_paths > len(leaves):
        raise errors.InvalidArgumentError(None, None,
                                          "Less leaves in the beam search than requested.")
    best = _sorted(leaves)[:top_paths]
    return [e.labels(merge_repeated) for e in best], [e.new[0] for e in best]


def _beam_kernel(inputs, sequence_length, beam_width, top_paths, merge_repeated):
    inputs, seq_len = np.asarray(inputs), np.asarray(sequence_length)
    _check_inputs(inputs, seq_len)
    batch = inputs.shape[1]
    log_prob = np.zeros((batch, top_paths), inputs.dtype)
    sequences = []
    for b in range(batch):
        paths, scores = _beam_search(inputs[:seq_len[b], b], beam_width, top_paths,
                                     merge_repeated)
        sequences.append(paths)
        log_prob[b] = scores
    stored = _store(sequences, top_paths)
    return ([s[0] for s in stored] + [s[1] for s in stored] + [s[2] for s in stored]
            + [log_prob])


register(OpDef(
    "CTCBeamSearchDecoder", inputs=("inputs: T", "sequence_length: int32"),
    outputs=("decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"),
    attrs={"T": _F, "beam_width": REQUIRED, "top_paths": REQUIRED, "merge_repeated": True},
    type_defaults={"T": _dtypes.float32},
    shape=lambda op: _decoder_shape(op, op.get_attr("top_paths")), host=_beam_kernel,
    not_differentiable=True,
))


def _check_minimum(attr, value):
    if value < 1:
        raise ValueError(f"Attr '{attr}' of 'CTCBeamSearchDecoder' Op passed {value} less "
                         f"than minimum 1.")
    return int(value)


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """Beam search decoding of logits [max_time, batch, num_classes]: returns
    (top_paths SparseTensors of decoded labels, log-probabilities [batch, top_paths])."""
    top_paths = _check_minimum("top_paths", top_paths)
    outs = apply_op("CTCBeamSearchDecoder", inputs=inputs, sequence_length=sequence_length,
                    beam_width=_check_minimum("beam_width", beam_width), top_paths=top_paths,
                    merge_repeated=merge_repeated)
    ix, values, shapes = (outs[i * top_paths:(i + 1) * top_paths] for i in range(3))
    return [SparseTensor(*parts) for parts in zip(ix, values, shapes)], outs[-1]


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """ctc_beam_search_decoder without merging repeated labels of a beam."""
    return ctc_beam_search_decoder(inputs, sequence_length=sequence_length,
                                   beam_width=beam_width, top_paths=top_paths,
                                   merge_repeated=False)
