"""The MatchingFiles host record (tf.io.matching_files / tf.matching_files) and
`tf.train.match_filenames_once` over it.

MatchingFiles globs at run time as TF's Env::GetMatchingPaths: `*` and `?` stay within
one path component, `[...]` classes, hidden files match too, and fsspec URLs glob on
their filesystem (platform/gfile.py). The names of every pattern are joined and sorted
together; a pattern matching nothing adds nothing.

`match_filenames_once(pattern)` is TF1's local variable `matching_filenames` whose
initial value is that list; it is fixed when `tf.local_variables_initializer()` runs, so
later runs see the same list.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.tensor_shape import TensorShape
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, kernel_error
from tensorflux._src.ops.registry import OpDef, register
from tensorflux._src.platform import gfile
from tensorflux._src.train.variables import Variable

__all__ = ["matching_files", "match_filenames_once"]


def _matching_files_kernel(pattern):
    patterns = np.asarray(pattern, object)
    if patterns.ndim > 1:
        raise kernel_error(f"Input patterns tensor must be scalar or vector, but had shape: "
                           f"{dims_str(patterns.shape)}")
    names = []
    for p in patterns.reshape(-1):
        names.extend(gfile.get_matching_files_v2(
            p.decode("utf-8") if isinstance(p, bytes) else str(p)))
    out = np.empty(len(names), object)
    out[:] = sorted(n.encode("utf-8") for n in names)  # TF's kernel sorts all the matches
    return out


def _matching_files_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is not None and shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {shape.ndims}")
    return TensorShape([None])


# Stateful: the files on disk change between runs, so the op is never folded or cached.
register(OpDef("MatchingFiles", inputs=("pattern: string",), outputs=("filenames: string",),
               shape=_matching_files_shape, host=_matching_files_kernel, stateful=True,
               not_differentiable=True))


def matching_files(pattern, name=None):
    """The sorted names of the files matching the glob `pattern` (a string or a vector
    of them), found when the op runs."""
    return apply_op("MatchingFiles", name=name, pattern=pattern)


def match_filenames_once(pattern, name=None):
    """A local variable holding the files matching `pattern` (see the module doc)."""
    with _graph.name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(matching_files(pattern), name=scope, trainable=False,
                        validate_shape=False, collections=[GraphKeys.LOCAL_VARIABLES])
