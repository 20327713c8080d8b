"""`tf.tables_initializer`: one op running every table initializer of the graph."""

from __future__ import annotations

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.ops.control import control_ops

__all__ = ["tables_initializer", "initialize_all_tables"]


def tables_initializer(name="init_all_tables"):
    """Groups the ops in the TABLE_INITIALIZERS collection (a no-op when there are none)."""
    initializers = _graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return control_ops.group(*initializers, name=name)
    return control_ops.no_op(name=name)


def initialize_all_tables(name="init_all_tables"):
    """Deprecated TF1 name of tables_initializer."""
    return tables_initializer(name=name)
