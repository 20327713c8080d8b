"""MetaGraphs: `tf.train.export_meta_graph`, `import_meta_graph` and the `.meta` file.

A MetaGraphDef (TF's meta_graph.proto) is a GraphDef plus what a program needs to carry
on with it elsewhere: the graph's collections, a SaverDef, and for SavedModels the
signatures and assets. tensorflux writes and reads TF's message, so a `.meta` written
here imports into TensorFlow and the other way round.

Collections are stored as TF stores them (meta_graph.proto's CollectionDef):

    Variables (GLOBAL_VARIABLES, TRAINABLE_VARIABLES, ...)  bytes_list of VariableDefs
    Tensors and Operations                                  node_list of their names
    Python ints / floats / strings                          int64_list / float_list /
                                                            bytes_list

A collection that holds anything else (a PartitionedVariable, a QueueRunner, a Python
object) is left out with a warning, as TF's exporter does for what it cannot
serialize (TF serializes QueueRunners as QueueRunnerDefs; tensorflux does not yet, and
imports such a collection as raw bytes). On import each entry becomes a graph element
again, a VariableDef a `tf.Variable` over the imported ops (one object per variable,
shared by the collections that list it).

tensorflux Savers build no save/restore ops, so a MetaGraph exported here has no
SaverDef (TF's own `import_meta_graph` then makes a default Saver over the variables,
which reads tensorflux's checkpoints). A MetaGraph TF wrote keeps its SaverDef and its
Saver ops (io/checkpoint_ops.py runs them); `import_meta_graph` returns a tensorflux
Saver over the imported variables, which reads and writes the same checkpoint keys.
"""

from __future__ import annotations

import logging
import os

from google.protobuf import message as _message
from google.protobuf import text_format

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos, versions
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.operation import Operation, Tensor
from tensorflux._src.framework.scoped_names import prepend_scope, strip_scope
from tensorflux._src.io import graph_def as _graph_def
from tensorflux._src.io.graph_def_import import import_graph_def
from tensorflux._src.train import atomic_write

_log = logging.getLogger("tensorflux")

# The version string TF1 programs see in meta_info_def (what they were written for).
TENSORFLOW_VERSION = versions.VERSION
# Collections not exported: those TF's export_scoped_meta_graph skips, and SAVERS (TF
# stores each Saver's SaverDef there, but ours name no save/restore ops, and TF's
# Saver.from_proto refuses a SaverDef without them).
_UNEXPORTED = frozenset({"cond_context", "while_context", GraphKeys.SAVEABLE_OBJECTS,
                         "_unbound_inputs", GraphKeys.SAVERS})


# -- export ---------------------------------------------------------------------------------
def export_meta_graph(filename=None, meta_info_def=None, graph_def=None, saver_def=None,
                      collection_list=None, as_text=False, graph=None, export_scope=None,
                      clear_devices=False, clear_extraneous_savers=False,
                      strip_default_attrs=False, save_debug_info=False, **kwargs):
    """The MetaGraphDef of `graph` (the default graph); written to `filename` when given
    (binary, or text format with `as_text`). TF 1.15's tf.train.export_meta_graph."""
    del clear_extraneous_savers, save_debug_info  # no Saver ops to clear, no debug info
    if kwargs:
        raise TypeError(f"export_meta_graph() got unexpected keyword arguments "
                        f"{sorted(kwargs)}")
    graph = graph or _graph.get_default_graph()
    meta = protos.MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    if not meta.meta_info_def.tensorflow_version:
        meta.meta_info_def.tensorflow_version = TENSORFLOW_VERSION
    if not meta.meta_info_def.tensorflow_git_version:
        meta.meta_info_def.tensorflow_git_version = _producer()
    meta.meta_info_def.stripped_default_attrs = bool(strip_default_attrs)
    if graph_def is None:
        graph_def, dropped = _graph_def.exportable_graph_def(
            graph, strip_default_attrs=strip_default_attrs)
        if dropped:
            _log.warning("export_meta_graph leaves out %d op(s) with no GraphDef form and "
                         "those depending on them, e.g. %s", len(dropped),
                         "; ".join(f"{k} ({v})" for k, v in list(dropped.items())[:3]))
    meta.graph_def.CopyFrom(_scoped(graph_def, export_scope, clear_devices))
    if saver_def is not None and getattr(saver_def, "save_tensor_name", ""):
        meta.saver_def.CopyFrom(as_saver_def_proto(saver_def))
    keys = graph.get_all_collection_keys() if collection_list is None else collection_list
    kept = {strip_scope(n.name, export_scope) for n in graph_def.node}
    for key in sorted(set(keys), key=str):
        _export_collection(meta, graph, key, export_scope, kept)
    if filename is not None:
        write_meta_graph(meta, filename, as_text=as_text)
    return meta


def _producer():
    return f"tensorflux {versions.TENSORFLUX_VERSION}"


def write_meta_graph(meta, filename, as_text=False):
    """Writes `meta` to `filename` atomically (binary, or text format)."""
    filename = os.fspath(filename)
    if as_text:
        atomic_write.write_text(filename, text_format.MessageToString(meta))
    else:
        atomic_write.write_bytes(filename, meta.SerializeToString(deterministic=True))
    return filename


def write(filename, graph, saver_def=None, strip_default_attrs=False):
    """The `.meta` file Saver.save writes next to a checkpoint."""
    export_meta_graph(filename, graph=graph, saver_def=saver_def,
                      strip_default_attrs=strip_default_attrs)


def as_saver_def_proto(saver_def):
    """A SaverDef message from a SaverDef message or a tensorflux `train.SaverDef`."""
    if isinstance(saver_def, protos.SaverDef):
        return saver_def
    out = protos.SaverDef()
    for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name",
                  "max_to_keep", "sharded", "keep_checkpoint_every_n_hours", "version"):
        setattr(out, field, getattr(saver_def, field))
    return out


def _op_name(item):
    return getattr(item, "op", item).name


def _scoped(graph_def, export_scope, clear_devices):
    out = protos.GraphDef()
    out.versions.CopyFrom(graph_def.versions)
    out.library.CopyFrom(graph_def.library)
    for node in graph_def.node:
        name = strip_scope(node.name, export_scope)
        if name is None:
            continue
        copy = out.node.add()
        copy.CopyFrom(node)
        copy.name = name
        inputs = [strip_scope(i, export_scope) for i in node.input]
        if any(i is None for i in inputs):
            raise ValueError(f"Node {node.name} under export_scope {export_scope!r} takes "
                             f"inputs from outside it ({list(node.input)}); export a scope "
                             f"that holds the whole subgraph")
        del copy.input[:]
        copy.input.extend(inputs)
        if clear_devices:
            copy.device = ""
    return out


def _export_collection(meta, graph, key, export_scope, kept):
    from tensorflux._src.train.variables import Variable  # noqa: PLC0415

    if not isinstance(key, str) or key in _UNEXPORTED:
        return
    # Items whose ops were left out of the GraphDef (or are outside export_scope) go too.
    items = [v for v in graph.get_collection(key)
             if not hasattr(v, "name") or strip_scope(_op_name(v), export_scope) in kept]
    if not items:
        return
    collection = protos.CollectionDef()
    try:
        if all(isinstance(v, Variable) for v in items):
            values = [v.to_proto(export_scope) for v in items]
            collection.bytes_list.value.extend(
                v.SerializeToString() for v in values if v is not None)
        elif all(isinstance(v, (Tensor, Operation)) for v in items):
            names = [strip_scope(v.name, export_scope) for v in items]
            collection.node_list.value.extend(n for n in names if n is not None)
        elif all(isinstance(v, bool) or isinstance(v, int) for v in items):
            collection.int64_list.value.extend(int(v) for v in items)
        elif all(isinstance(v, float) for v in items):
            collection.float_list.value.extend(items)
        elif all(isinstance(v, (str, bytes)) for v in items):
            collection.bytes_list.value.extend(
                v.encode("utf-8") if isinstance(v, str) else v for v in items)
        else:
            kinds = sorted({type(v).__name__ for v in items})
            _log.warning("Issue encountered when serializing %s: its items (%s) have no "
                         "MetaGraphDef form; the collection is not exported.", key,
                         ", ".join(kinds))
            return
    except (TypeError, ValueError, AttributeError) as exc:
        _log.warning("Issue encountered when serializing %s: %s", key, exc)
        return
    if collection.WhichOneof("kind") is not None:
        meta.collection_def[key].CopyFrom(collection)


# -- import ---------------------------------------------------------------------------------
def read_meta_graph_file(filename):
    """A MetaGraphDef from a binary or text-format file (TF tries binary first)."""
    filename = os.fspath(filename)
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise IOError(f"File {filename} does not exist.") from None
    meta = protos.MetaGraphDef()
    try:
        meta.ParseFromString(data)
        return meta
    except _message.DecodeError:
        pass
    try:
        text_format.Merge(data.decode("utf-8"), meta)
    except (text_format.ParseError, UnicodeDecodeError) as exc:
        raise IOError(f"Cannot parse file {filename}: {exc}.") from None
    return meta


def import_scoped_meta_graph(meta_graph_or_file, clear_devices=False, graph=None,
                             import_scope=None, input_map=None):
    """Imports the graph and collections; returns {name: Variable} of the variables
    imported (keyed by their name in the MetaGraph)."""
    meta = (read_meta_graph_file(meta_graph_or_file)
            if not isinstance(meta_graph_or_file, protos.MetaGraphDef) else meta_graph_or_file)
    graph = graph or _graph.get_default_graph()
    graph_def = meta.graph_def
    if clear_devices:
        graph_def = protos.GraphDef()
        graph_def.CopyFrom(meta.graph_def)
        for node in graph_def.node:
            node.device = ""
    with graph.as_default():
        import_graph_def(graph_def, input_map=input_map, name=import_scope or "")
    variables = {}
    for key in sorted(meta.collection_def):
        _import_collection(graph, key, meta.collection_def[key], import_scope, variables)
    return variables


# Collections whose bytes are VariableDefs (TF registers a proto function for each).
_VARIABLE_COLLECTIONS = frozenset({
    GraphKeys.GLOBAL_VARIABLES, GraphKeys.TRAINABLE_VARIABLES, GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES, GraphKeys.MOVING_AVERAGE_VARIABLES, GraphKeys.GLOBAL_STEP,
    GraphKeys.METRIC_VARIABLES, "trainable_resource_variables"})


def _import_collection(graph, key, collection, import_scope, variables):
    from tensorflux._src.train.variables import Variable  # noqa: PLC0415

    kind = collection.WhichOneof("kind")
    if kind == "node_list":
        for name in collection.node_list.value:
            graph.add_to_collection(key, graph.as_graph_element(
                prepend_scope(name, import_scope)))
    elif kind == "bytes_list" and key in _VARIABLE_COLLECTIONS:
        for raw in collection.bytes_list.value:
            proto = protos.VariableDef.FromString(raw)
            var = variables.get(proto.variable_name)
            if var is None:
                var = variables[proto.variable_name] = Variable.from_proto(
                    proto, import_scope=import_scope, graph=graph)
            graph.add_to_collection(key, var)
    elif kind == "bytes_list":
        for raw in collection.bytes_list.value:
            graph.add_to_collection(key, raw)
    elif kind == "int64_list":
        for value in collection.int64_list.value:
            graph.add_to_collection(key, int(value))
    elif kind == "float_list":
        for value in collection.float_list.value:
            graph.add_to_collection(key, float(value))


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None,
                      **kwargs):
    """TF 1.15's tf.train.import_meta_graph: imports a MetaGraphDef (or a `.meta` file)
    into the default graph with its collections; returns a Saver over the imported
    variables, or None when there are none."""
    from tensorflux._src.train.saver import Saver  # noqa: PLC0415 - Saver sits above

    input_map = kwargs.pop("input_map", None)
    kwargs.pop("return_elements", None)
    meta = (read_meta_graph_file(meta_graph_or_file)
            if not isinstance(meta_graph_or_file, protos.MetaGraphDef) else meta_graph_or_file)
    graph = _graph.get_default_graph()
    import_scoped_meta_graph(meta, clear_devices=clear_devices, graph=graph,
                             import_scope=import_scope, input_map=input_map)
    global_vars = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    if not global_vars:
        _log.info("Saver not created because there are no variables in the graph to "
                  "restore")
        return None
    saver_def = meta.saver_def if meta.HasField("saver_def") else None
    options = {}
    if saver_def is not None:
        options = {"max_to_keep": saver_def.max_to_keep or 5,
                   "keep_checkpoint_every_n_hours":
                       saver_def.keep_checkpoint_every_n_hours or 10000.0,
                   "sharded": saver_def.sharded}
    options.update(kwargs)
    var_list = checkpoint_var_list(global_vars, import_scope)
    try:
        return Saver(var_list=var_list, **options)
    except ValueError as exc:
        raise errors.InvalidArgumentError(None, None, f"import_meta_graph: cannot build a "
                                                      f"Saver for the imported variables: "
                                                      f"{exc}") from None


def checkpoint_var_list(global_vars, import_scope):
    """A Saver's var_list for imported variables: each under the name its checkpoint key
    has in the MetaGraph, its name without `import_scope` (partitioned parts are keyed
    by their slice info, so the list is kept as it is)."""
    if not import_scope or any(v._save_slice_info is not None for v in global_vars):
        return global_vars
    return {strip_scope(v.op.name, import_scope) or v.op.name: v for v in global_vars}
