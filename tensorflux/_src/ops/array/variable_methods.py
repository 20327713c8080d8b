"""`tf.Variable` methods for the scatter and gather ops: scatter_{add,sub,mul,div,min,max},
scatter_nd_{add,sub,update}, batch_scatter_update, gather_nd, sparse_read, count_up_to.

`attach(Variable)` adds them to the class (tensorflux/__init__.py calls it), so the
variables module needs nothing from this family. As TF1's RefVariable, the scatter
methods take an IndexedSlices-like `sparse_delta` (`.indices`, `.values`) and return the
updated ref. TF1's RefVariable raises AttributeError for gather_nd/sparse_read (only its
ResourceVariable has them); here every variable is a ref variable, so they read the
variable's snapshot as ResourceVariable's do, and programs written for resource
variables run unchanged.
"""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.array import gather_ops
from tensorflux._src.ops.array import variable_scatter as _vs
from tensorflux._src.ops.state import state_ops


def _check_sparse_delta(sparse_delta):
    if not (hasattr(sparse_delta, "indices") and hasattr(sparse_delta, "values")):
        raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")


def _scatter_method(fn):
    def method(self, sparse_delta, use_locking=False, name=None):
        _check_sparse_delta(sparse_delta)
        return fn(self._ref(), sparse_delta.indices, sparse_delta.values,
                  use_locking=use_locking, name=name)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _scatter_nd_method(fn):
    def method(self, indices, updates, name=None):
        return fn(self._ref(), indices, updates, use_locking=True, name=name)
    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
    """scatter_update per batch row (see tf.batch_scatter_update)."""
    return _vs.batch_scatter_update(self, sparse_delta.indices, sparse_delta.values,
                                    use_locking=use_locking, name=name)


def sparse_read(self, indices, name=None):
    """gather(variable, indices) along axis 0."""
    with _graph.name_scope("Gather" if name is None else name) as scope:
        return gather_ops.gather(self.value(), indices, name=scope)


def gather_nd(self, indices, name=None):
    """gather_nd(variable, indices)."""
    with _graph.name_scope("GatherNd" if name is None else name) as scope:
        return gather_ops.gather_nd(self.value(), indices, name=scope)


def count_up_to(self, limit):
    """Increments the variable until it reaches `limit` (see tf.count_up_to)."""
    return state_ops.count_up_to(self._ref(), limit=limit)


_METHODS = {
    "scatter_add": _scatter_method(state_ops.scatter_add),
    "scatter_sub": _scatter_method(state_ops.scatter_sub),
    "scatter_mul": _scatter_method(_vs.scatter_mul),
    "scatter_div": _scatter_method(_vs.scatter_div),
    "scatter_min": _scatter_method(_vs.scatter_min),
    "scatter_max": _scatter_method(_vs.scatter_max),
    "scatter_nd_add": _scatter_nd_method(_vs.scatter_nd_add),
    "scatter_nd_sub": _scatter_nd_method(_vs.scatter_nd_sub),
    "scatter_nd_update": _scatter_nd_method(_vs.scatter_nd_update),
    "batch_scatter_update": batch_scatter_update,
    "sparse_read": sparse_read,
    "gather_nd": gather_nd,
    "count_up_to": count_up_to,
}


def attach(variable_class):
    """Adds the methods the class does not define yet."""
    for name, method in _METHODS.items():
        if name not in variable_class.__dict__:
            setattr(variable_class, name, method)
