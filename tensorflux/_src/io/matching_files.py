"""The MatchingFiles op (TF's name) and `tf.train.match_filenames_once` over it.

`match_filenames_once(pattern)` is TF1's local variable `matching_filenames` whose
initial value is the sorted list of files matching the glob; it is fixed when
`tf.local_variables_initializer()` runs, so later runs see the same list.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.platform import gfile
from tensorflux._src.train.variables import Variable

__all__ = ["match_filenames_once"]


def _matching_files_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}")
    return TensorShape([None])


def _matching_files_kernel(pattern):
    if pattern.ndim > 1:
        raise errors.InvalidArgumentError(
            None, None, f"Input patterns tensor must be scalar or vector, but had shape: "
            f"[{','.join(str(d) for d in pattern.shape)}]")
    names = []
    for p in np.reshape(pattern, -1):
        p = p.decode("utf-8") if isinstance(p, bytes) else str(p)
        names.extend(gfile.get_matching_files_v2(p))
    # TF's kernel sorts all the matches.
    return np.array(sorted(n.encode("utf-8") for n in names), dtype=object).reshape(-1)


register(OpDef("MatchingFiles", inputs=("pattern: string",), outputs=("filenames: string",),
               shape=_matching_files_shape, host=_matching_files_kernel,
               not_differentiable=True))


def matching_files(pattern, name=None):
    """A string vector: the sorted files matching `pattern` (a glob, or a vector of
    them), read when the op runs."""
    return apply_op("MatchingFiles", name=name, pattern=pattern)


def match_filenames_once(pattern, name=None):
    """A local variable holding the files matching `pattern` (see the module doc)."""
    with _graph.name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(matching_files(pattern), name=scope, trainable=False,
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])
