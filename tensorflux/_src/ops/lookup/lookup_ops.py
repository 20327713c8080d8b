"""Lookup-table records (host records, TF's op types) and their thin wrappers.

HashTableV2, MutableHashTableV2, MutableHashTableOfTensorsV2 and MutableDenseHashTableV2
create a table in the Session that runs them (table_kernels.py) and return its resource
handle; LookupTableFindV2 / InsertV2 / RemoveV2 / SizeV2 / ExportV2 / ImportV2,
InitializeTableV2 and InitializeTableFromTextFileV2 use it. Every one runs on the host:
keys are often strings, which never enter XLA, and the tables live in Python.

Static shapes follow TF's shape functions, which read the "handle data" a mutable
table's creating op attaches to its handle (key and value shapes): here the shape
function looks at the op that produced the handle.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.tensor_shape import TensorShape, unknown_shape
from tensorflux._src.ops.control import bodies
from tensorflux._src.ops.lookup import table_kernels
from tensorflux._src.ops.lookup.table_kernels import resolve
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import dims_str, merge_shapes, with_rank
from tensorflux._src.ops.registry import REQUIRED, OpDef, register
from tensorflux._src.ops.shape_fns import scalar

__all__ = []

_TYPES = _dtypes.ALL
_CREATE_ATTRS = {"container": "", "shared_name": "", "use_node_name_sharing": False,
                 "key_dtype": _TYPES, "value_dtype": _TYPES, "node_name": ""}


@contextlib.contextmanager
def init_scope():
    """TF's init_scope for table resources: outside control dependencies and bodies."""
    graph = _graph.get_default_graph()
    with graph.control_dependencies(None), bodies.outside_bodies(graph):
        yield


# -- creating tables ---------------------------------------------------------------------------
def _name(shared_name, node_name):
    return shared_name or node_name  # an unshared table is its op's own, per Session


def _hash_table(*, container, shared_name, key_dtype, value_dtype, node_name, session_state):
    name = _name(shared_name, node_name)
    return table_kernels.create(
        session_state, container, name, key_dtype, value_dtype,
        lambda: table_kernels.HashTable(name, key_dtype, value_dtype))


def _mutable_hash_table(*, container, shared_name, key_dtype, value_dtype, node_name,
                        session_state, value_shape=()):
    name = _name(shared_name, node_name)
    return table_kernels.create(
        session_state, container, name, key_dtype, value_dtype,
        lambda: table_kernels.MutableHashTable(name, key_dtype, value_dtype, value_shape))


def _mutable_tensors_table(*, container, shared_name, key_dtype, value_dtype, value_shape,
                           node_name, session_state):
    shape = tuple(TensorShape(value_shape).as_list())
    if len(shape) != 1:
        raise table_kernels._invalid(f"Default value must be a vector, got shape "
                                     f"{dims_str(shape)}")
    return _mutable_hash_table(container=container, shared_name=shared_name,
                               key_dtype=key_dtype, value_dtype=value_dtype,
                               node_name=node_name, session_state=session_state,
                               value_shape=shape)


def _dense_table(empty_key, deleted_key, *, container, shared_name, key_dtype, value_dtype,
                 value_shape, initial_num_buckets, max_load_factor, node_name, session_state):
    name = _name(shared_name, node_name)
    shape = tuple(TensorShape(value_shape).as_list())
    return table_kernels.create(
        session_state, container, name, key_dtype, value_dtype,
        lambda: table_kernels.MutableDenseHashTable(
            name, key_dtype, value_dtype, empty_key, deleted_key, shape, initial_num_buckets,
            max_load_factor))


for _type, _host, _extra in (
        ("HashTableV2", _hash_table, {}),
        ("MutableHashTableV2", _mutable_hash_table, {}),
        ("MutableHashTableOfTensorsV2", _mutable_tensors_table,
         {"value_shape": TensorShape([])})):
    register(OpDef(_type, outputs=("table_handle: resource",),
                   attrs={**_CREATE_ATTRS, **_extra}, shape=scalar, host=_host,
                   uses_session=True, not_differentiable=True))

register(OpDef(
    "MutableDenseHashTableV2", inputs=("empty_key: key_dtype", "deleted_key: key_dtype"),
    outputs=("table_handle: resource",),
    attrs={**_CREATE_ATTRS, "value_shape": TensorShape([]), "initial_num_buckets": 131072,
           "max_load_factor": 0.8},
    shape=scalar, host=_dense_table, uses_session=True, not_differentiable=True))


# -- shapes from the handle's table --------------------------------------------------------
def _handle_data(handle):
    """(key dtype, key shape, value dtype, value shape) of a mutable table's handle, as
    TF's handle data gives them; None when the producer attaches none (HashTableV2)."""
    producer = handle.op
    if producer.type == "MutableHashTableV2":
        value_shape = TensorShape([])
    elif producer.type == "MutableHashTableOfTensorsV2":
        value_shape = TensorShape(producer.get_attr("value_shape"))
    elif producer.type == "MutableDenseHashTableV2":
        return (producer.get_attr("key_dtype"), producer.inputs[0].shape,
                producer.get_attr("value_dtype"), TensorShape(producer.get_attr("value_shape")))
    else:
        return None
    return (producer.get_attr("key_dtype"), TensorShape([]), producer.get_attr("value_dtype"),
            value_shape)


def _check_table_types(data, key_dtype, value_dtype):
    for have, want in ((data[0], key_dtype), (data[2], value_dtype)):
        if have != want:
            raise ValueError(f"Trying to read value with wrong dtype. Expected "
                             f"{have._tf_name} got {want._tf_name}")


def _find_shape(op):
    with_rank(op.inputs[0].shape, 0)
    data = _handle_data(op.inputs[0])
    if data is None:
        return unknown_shape()
    _check_table_types(data, op.get_attr("Tin"), op.get_attr("Tout"))
    keys, key_shape = op.inputs[1].shape, data[1]
    if keys.ndims is None or key_shape.ndims is None:
        return unknown_shape()
    if keys.ndims < key_shape.ndims:
        raise ValueError(f"Expected keys to have suffix {key_shape._bracket_str()} but saw "
                         f"shape: {keys._bracket_str()}")
    return TensorShape(keys.as_list()[:keys.ndims - key_shape.ndims]).concatenate(data[3])


def _handle_only(op):
    with_rank(op.inputs[0].shape, 0)
    return []


def _insert_shape(op):
    with_rank(op.inputs[0].shape, 0)
    data = _handle_data(op.inputs[0])
    if data is not None:
        _check_table_types(data, op.get_attr("Tin"), op.get_attr("Tout"))
    return []


def _export_shape(op):
    with_rank(op.inputs[0].shape, 0)
    data = _handle_data(op.inputs[0])
    if data is None:
        return [TensorShape([None]), unknown_shape()]
    if op.inputs[0].op.type == "MutableDenseHashTableV2":  # its bucket arrays, as matrices
        key_size = data[1].num_elements()
        value_size = data[3].num_elements()
        return [TensorShape([None, key_size]), TensorShape([None, value_size])]
    return [TensorShape([None]), TensorShape([None]).concatenate(data[3])]


def _init_shape(op):
    with_rank(op.inputs[0].shape, 0)
    merge_shapes(with_rank(op.inputs[1].shape, 1), op.inputs[2].shape)
    return []


def _text_init_shape(op):
    with_rank(op.inputs[0].shape, 0)
    with_rank(op.inputs[1].shape, 0)
    return []


# -- using tables -----------------------------------------------------------------------------
_R = _dtypes.resource


def _find(table_handle, keys, default_value, *, Tin, Tout):  # noqa: N803 - TF's attr names
    table = resolve(table_handle)
    table.match_signature([_R, Tin, Tout], [Tout], [_R, table.key_dtype, table.value_dtype],
                          [table.value_dtype])
    keys, default_value = np.asarray(keys), np.asarray(default_value)
    table.check_find(keys, default_value)
    return table.find(keys, default_value)


def _insert(table_handle, keys, values, *, Tin, Tout):  # noqa: N803
    table = resolve(table_handle)
    table.match_signature([_R, Tin, Tout], [], [_R, table.key_dtype, table.value_dtype], [])
    keys, values = np.asarray(keys), np.asarray(values)
    table.check_insert(keys, values)
    table.insert(keys, values)
    return ()


def _import(table_handle, keys, values, *, Tin, Tout):  # noqa: N803
    table = resolve(table_handle)
    table.match_signature([_R, Tin, Tout], [], [_R, table.key_dtype, table.value_dtype], [])
    keys, values = np.asarray(keys), np.asarray(values)
    table.check_import(keys, values)
    table.import_values(keys, values)
    return ()


def _remove(table_handle, keys, *, Tin):  # noqa: N803
    table = resolve(table_handle)
    table.match_signature([_R, Tin], [], [_R, table.key_dtype], [])
    keys = np.asarray(keys)
    table.check_remove(keys)
    table.remove(keys)
    return ()


def _size(table_handle):
    return np.int64(resolve(table_handle).size())


def _export(table_handle, *, Tkeys, Tvalues):  # noqa: N803
    return resolve(table_handle).export()


def _initializable(table):
    if not table.initializable:
        raise table_kernels._invalid(f"Table localhost {table.name} is not initializable")
    return table


def initializable_table(table_handle):
    """The table a handle names, if it can be initialized (TF's error otherwise)."""
    return _initializable(resolve(table_handle))


def _initialize(table_handle, keys, values, *, Tkey, Tval):  # noqa: N803
    table = initializable_table(table_handle)
    table.match_signature([_R, Tkey, Tval], [], [_R, table.key_dtype, table.value_dtype], [])
    keys, values = np.asarray(keys), np.asarray(values)
    if keys.ndim != 1:
        raise table_kernels._invalid(f"Keys must be a vector, but received shape"
                                     f"{dims_str(keys.shape)}")
    if values.ndim != 1:
        raise table_kernels._invalid(f"Values must be a vector, but received shape"
                                     f"{dims_str(values.shape)}")
    if keys.size != values.size:
        raise table_kernels._invalid(f"Keys and values must have the same size {keys.size} "
                                     f"vs {values.size}")
    table.initialize_from_tensors(keys, values)
    return ()


def _initialize_from_text_file(table_handle, filename, *, key_index, value_index, vocab_size,
                               delimiter):
    table = initializable_table(table_handle)
    if len(delimiter) != 1:
        raise table_kernels._invalid("delimiter should be only 1 char")
    filename = np.asarray(filename)
    if filename.ndim != 0:
        raise table_kernels._invalid(f"filename should be a single string, but got "
                                     f"{dims_str(filename.shape)}")
    path = filename.item()
    path = path.decode("utf-8") if isinstance(path, bytes) else str(path)
    if not path:
        raise table_kernels._invalid("filename cannot be empty.")
    table_kernels.check_text_file_dtypes(table, key_index, value_index)
    data = table_kernels.read_text_file(path)
    entries = table_kernels.text_file_entries(
        path, data, vocab_size, delimiter.encode("utf-8"), key_index, value_index,
        table.key_dtype, table.value_dtype)
    first = list(itertools.islice(entries, 1))  # TF reads the first line before anything

    def total_size():
        if vocab_size != -1:
            return vocab_size
        return sum(1 for _ in table_kernels._lines(data))

    try:
        table.initialize(itertools.chain(first, entries), total_size)
    except errors.FailedPreconditionError:
        if not table.initialized:
            raise
        # TF: a table initialized from a file already is left as it is (tables sharing a
        # file share the resource, through the initializer's shared name).
    return ()


_USE = dict(stateful=True, not_differentiable=True)
register(OpDef("LookupTableFindV2",
               inputs=("table_handle: resource", "keys: Tin", "default_value: Tout"),
               outputs=("values: Tout",), attrs={"Tin": _TYPES, "Tout": _TYPES},
               shape=_find_shape, host=_find, **_USE))
register(OpDef("LookupTableInsertV2",
               inputs=("table_handle: resource", "keys: Tin", "values: Tout"), outputs=(),
               attrs={"Tin": _TYPES, "Tout": _TYPES}, shape=_insert_shape, host=_insert,
               **_USE))
register(OpDef("LookupTableImportV2",
               inputs=("table_handle: resource", "keys: Tin", "values: Tout"), outputs=(),
               attrs={"Tin": _TYPES, "Tout": _TYPES}, shape=_insert_shape, host=_import,
               **_USE))
register(OpDef("LookupTableRemoveV2", inputs=("table_handle: resource", "keys: Tin"),
               outputs=(), attrs={"Tin": _TYPES}, shape=_handle_only, host=_remove, **_USE))
register(OpDef("LookupTableSizeV2", inputs=("table_handle: resource",),
               outputs=("size: int64",), shape=lambda op: with_rank(op.inputs[0].shape, 0),
               host=_size, **_USE))
register(OpDef("LookupTableExportV2", inputs=("table_handle: resource",),
               outputs=("keys: Tkeys", "values: Tvalues"),
               attrs={"Tkeys": _TYPES, "Tvalues": _TYPES}, shape=_export_shape, host=_export,
               **_USE))
register(OpDef("InitializeTableV2",
               inputs=("table_handle: resource", "keys: Tkey", "values: Tval"), outputs=(),
               attrs={"Tkey": _TYPES, "Tval": _TYPES}, shape=_init_shape, host=_initialize,
               **_USE))
register(OpDef("InitializeTableFromTextFileV2",
               inputs=("table_handle: resource", "filename: string"), outputs=(),
               attrs={"key_index": REQUIRED, "value_index": REQUIRED, "vocab_size": -1,
                      "delimiter": "\t"},
               shape=_text_init_shape, host=_initialize_from_text_file, **_USE))


# -- wrappers (TF's gen_lookup_ops) ----------------------------------------------------------
def _created(handle):
    op = handle.op
    op._attrs["node_name"] = op.name  # the Session resource of an unshared table
    if op._container and not op._attrs.get("container"):
        op._attrs["container"] = op._container
    return handle


def hash_table_v2(key_dtype, value_dtype, container="", shared_name="",
                  use_node_name_sharing=False, name=None):
    return _created(apply_op(
        "HashTableV2", name=name, key_dtype=key_dtype, value_dtype=value_dtype,
        container=container, shared_name=shared_name or "",
        use_node_name_sharing=use_node_name_sharing))


def mutable_hash_table_v2(key_dtype, value_dtype, container="", shared_name="",
                          use_node_name_sharing=False, name=None):
    return _created(apply_op(
        "MutableHashTableV2", name=name, key_dtype=key_dtype, value_dtype=value_dtype,
        container=container, shared_name=shared_name or "",
        use_node_name_sharing=use_node_name_sharing))


def mutable_hash_table_of_tensors_v2(key_dtype, value_dtype, container="", shared_name="",
                                     use_node_name_sharing=False, value_shape=(), name=None):
    return _created(apply_op(
        "MutableHashTableOfTensorsV2", name=name, key_dtype=key_dtype,
        value_dtype=value_dtype, container=container, shared_name=shared_name or "",
        use_node_name_sharing=use_node_name_sharing, value_shape=TensorShape(value_shape)))


def mutable_dense_hash_table_v2(empty_key, deleted_key, value_dtype, container="",
                                shared_name="", use_node_name_sharing=False, value_shape=(),
                                initial_num_buckets=131072, max_load_factor=0.8, name=None):
    return _created(apply_op(
        "MutableDenseHashTableV2", name=name, empty_key=empty_key, deleted_key=deleted_key,
        value_dtype=value_dtype, container=container, shared_name=shared_name or "",
        use_node_name_sharing=use_node_name_sharing, value_shape=TensorShape(value_shape),
        initial_num_buckets=int(initial_num_buckets), max_load_factor=float(max_load_factor)))


def lookup_table_find_v2(table_handle, keys, default_value, name=None):
    return apply_op("LookupTableFindV2", name=name, table_handle=table_handle, keys=keys,
                    default_value=default_value)


def lookup_table_insert_v2(table_handle, keys, values, name=None):
    return apply_op("LookupTableInsertV2", name=name, table_handle=table_handle, keys=keys,
                    values=values)


def lookup_table_import_v2(table_handle, keys, values, name=None):
    return apply_op("LookupTableImportV2", name=name, table_handle=table_handle, keys=keys,
                    values=values)


def lookup_table_remove_v2(table_handle, keys, name=None):
    return apply_op("LookupTableRemoveV2", name=name, table_handle=table_handle, keys=keys)


def lookup_table_size_v2(table_handle, name=None):
    return apply_op("LookupTableSizeV2", name=name, table_handle=table_handle)


def lookup_table_export_v2(table_handle, Tkeys, Tvalues, name=None):  # noqa: N803
    return apply_op("LookupTableExportV2", name=name, table_handle=table_handle, Tkeys=Tkeys,
                    Tvalues=Tvalues)


def initialize_table_v2(table_handle, keys, values, name=None):
    return apply_op("InitializeTableV2", name=name, table_handle=table_handle, keys=keys,
                    values=values)


def initialize_table_from_text_file_v2(table_handle, filename, key_index, value_index,
                                       vocab_size=-1, delimiter="\t", name=None):
    return apply_op("InitializeTableFromTextFileV2", name=name, table_handle=table_handle,
                    filename=filename, key_index=int(key_index), value_index=int(value_index),
                    vocab_size=int(vocab_size), delimiter=delimiter)
