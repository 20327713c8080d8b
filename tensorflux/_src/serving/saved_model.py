"""`tf.saved_model` for TF1 programs: SavedModelBuilder, simple_save and loader.load, in
TensorFlow's SavedModel format.

    export_dir/
      saved_model.pb                      a SavedModel message: one MetaGraphDef per tag
                                          set (graph, collections, signatures, assets)
      variables/variables.index          the variables, a V2 checkpoint (tensor bundle)
      variables/variables.data-00000-of-00001
      assets/<file>                       copies of the assets_collection files

The files are TensorFlow's (saved_model.proto, meta_graph.proto): TensorFlow and
TensorFlow Serving load what is written here, and `load` reads SavedModels that
TensorFlow 1.x and 2.x `tf.compat.v1` code exported. Each MetaGraphDef comes from
train/meta_graph.py (the GraphDef under TF's op and attr names, VariableDef
collections); the main op is the `saved_model_main_op` collection (TF 1.15's
`legacy_init_op` is read too), assets are `asset_file_def` entries.

The builder captures the graph (as a MetaGraphDef) and host copies of the variables in
memory; `save()` writes everything under a temporary sibling (`<export_dir>.tmp<hex>`),
fsyncs it and renames it into place, so a crash leaves either no export_dir or a
complete one. Ops with no GraphDef form (a py_func's Python function, a dataset) are
left out with what depends on them; exporting a signature or main op that needs one
raises ValueError naming it.

`load` imports the meta graph into `sess.graph` (TensorFlow's resource variables run as
tensorflux variables, io/resource_variables.py), restores the variables (through the
graph's own Saver ops when its SaverDef names them, as TensorFlow does, else with a
Saver over the imported variables), feeds each asset tensor the path of its copy in
assets/, runs the main op, and returns the MetaGraphDef message.
"""

from __future__ import annotations

import os
import shutil
import uuid

import numpy as np
from google.protobuf import message as _message
from google.protobuf import text_format

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.framework.scoped_names import prepend_scope
from tensorflux._src.io import graph_def as _graph_def
from tensorflux._src.serving import signatures
from tensorflux._src.serving.signatures import SignatureDef
from tensorflux._src.train import atomic_write, checkpoint_format, meta_graph

# TF's names (tf.saved_model.constants)
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_FILENAME = SAVED_MODEL_FILENAME_PB
SAVED_MODEL_SCHEMA_VERSION = 1
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"


# -- writing ---------------------------------------------------------------------------------
class SavedModelBuilder:
    """TF1's `tf.saved_model.Builder`: add meta graphs (one per tag set), then `save()`."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        _check_export_dir(self._export_dir)
        self._saved_model = protos.SavedModel(
            saved_model_schema_version=SAVED_MODEL_SCHEMA_VERSION)
        self._variables = None  # {checkpoint key: numpy value}
        self._assets = {}  # filename in assets/ -> source path

    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Captures `sess.graph` and the current values of its variables under `tags`."""
        if self._variables is not None:
            raise AssertionError("Graph state including variables and assets has already been "
                                 "saved. Please invoke `add_meta_graph()` instead.")
        from tensorflux._src.train import saver as saver_lib

        saver_lib._check_session(sess)
        signature_def_map = _signature_protos(signature_def_map)
        variables = _saveables(sess.graph, saver)
        names = sorted(variables)
        values = saver_lib._read_variables(sess, [variables[n] for n in names])
        meta = self._meta_graph(sess.graph, tags, signature_def_map, assets_collection,
                                legacy_init_op, main_op, clear_devices, strip_default_attrs)
        self._variables = dict(zip(names, values))
        self._saved_model.meta_graphs.append(meta)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        """Adds the default graph under `tags`, sharing the variables already captured."""
        del saver  # the variables file is shared: its keys were fixed by the first graph
        if self._variables is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        signature_def_map = _signature_protos(signature_def_map)
        self._saved_model.meta_graphs.append(self._meta_graph(
            _graph.get_default_graph(), tags, signature_def_map, assets_collection,
            legacy_init_op, main_op, clear_devices, strip_default_attrs))

    def _meta_graph(self, graph, tags, signature_def_map, assets_collection, legacy_init_op,
                    main_op, clear_devices, strip_default_attrs):
        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Only one of main_op or legacy_init_op can be set.")
        init_op = main_op if main_op is not None else legacy_init_op
        if init_op is not None and not hasattr(init_op, "name"):
            raise TypeError(f"main_op needs to be an Operation: {init_op!r}")
        graph_def, dropped = _graph_def.exportable_graph_def(
            graph, strip_default_attrs=strip_default_attrs)
        _check_not_dropped(dropped, signature_def_map, init_op)
        meta = meta_graph.export_meta_graph(graph=graph, graph_def=graph_def,
                                            clear_devices=clear_devices,
                                            strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(str(t) for t in (tags or []))
        for key in sorted(signature_def_map):
            meta.signature_def[key].CopyFrom(signature_def_map[key])
        meta.asset_file_def.extend(self._add_assets(assets_collection))
        # The main op travels in its own collection (TF 1.15's builder).
        for key in (MAIN_OP_KEY, LEGACY_INIT_OP_KEY):
            if key in meta.collection_def:
                del meta.collection_def[key]
        if init_op is not None:
            meta.collection_def[MAIN_OP_KEY].node_list.value.append(_op_of(init_op).name)
        return meta

    def _add_assets(self, assets_collection):
        records = []
        for tensor in assets_collection or []:
            if tensor.op.type != "Const":
                raise ValueError(f"Asset tensor {tensor.name} must be a string constant (a file "
                                 f"path), got a {tensor.op.type} op")
            path = tensor.op.get_attr("value")
            path = np.asarray(path).reshape(-1)[0]
            path = path.decode() if isinstance(path, bytes) else str(path)
            filename = os.path.basename(path)
            if not os.path.isfile(path):
                raise errors.NotFoundError(None, None, f"Asset file {path} does not exist")
            previous = self._assets.get(filename)
            if previous is not None and os.path.abspath(previous) != os.path.abspath(path):
                raise ValueError(f"Two asset files are named {filename!r}: {previous} and "
                                 f"{path}")
            self._assets[filename] = path
            asset = protos.AssetFileDef(filename=filename)
            asset.tensor_info.CopyFrom(signatures.build_tensor_info(tensor)._to_proto())
            records.append(asset)
        return records

    def save(self, as_text=False):
        """Writes the SavedModel directory atomically; returns its path."""
        if self._variables is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        _check_export_dir(self._export_dir)
        parent = os.path.dirname(os.path.abspath(self._export_dir))
        os.makedirs(parent, exist_ok=True)
        tmp = f"{os.path.abspath(self._export_dir)}.tmp{uuid.uuid4().hex}"
        try:
            os.makedirs(os.path.join(tmp, VARIABLES_DIRECTORY))
            checkpoint_format.write(os.path.join(tmp, VARIABLES_DIRECTORY, VARIABLES_FILENAME),
                                    self._variables)
            if self._assets:
                os.makedirs(os.path.join(tmp, ASSETS_DIRECTORY))
                for filename, source in sorted(self._assets.items()):
                    shutil.copyfile(source, os.path.join(tmp, ASSETS_DIRECTORY, filename))
            if as_text:
                atomic_write.write_text(os.path.join(tmp, SAVED_MODEL_FILENAME_PBTXT),
                                        text_format.MessageToString(self._saved_model))
            else:
                atomic_write.write_bytes(os.path.join(tmp, SAVED_MODEL_FILENAME_PB),
                                         self._saved_model.SerializeToString(deterministic=True))
            _fsync_tree(tmp)
            _publish(tmp, self._export_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self._export_dir


Builder = SavedModelBuilder


def _signature_protos(signature_def_map):
    """{key: SignatureDef message} from SignatureDef objects or messages, with TF's
    checks."""
    out = {}
    for key, sig in (signature_def_map or {}).items():
        if isinstance(sig, SignatureDef):
            sig = sig._to_proto()
        elif not isinstance(sig, protos.SignatureDef):
            raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef, got "
                            f"{type(sig).__name__}")
        for info in list(sig.inputs.values()) + list(sig.outputs.values()):
            if not info.name or not info.dtype:
                raise AssertionError("All TensorInfo protos used in the SignatureDefs must "
                                     "have the name and dtype fields set.")
        out[key] = sig
    return out


def _check_export_dir(export_dir):
    if os.path.exists(export_dir) and (not os.path.isdir(export_dir) or os.listdir(export_dir)):
        raise AssertionError(f"Export directory already exists, and isn't empty. Please choose "
                             f"a different export directory, or delete all the contents of the "
                             f"specified directory: {export_dir}")


def _publish(tmp, export_dir):
    """The commit point: an empty export_dir is replaced, a non-empty one never."""
    try:
        os.replace(tmp, export_dir)
    except OSError:
        _check_export_dir(export_dir)
        raise
    atomic_write._fsync_directory(os.path.dirname(os.path.abspath(export_dir)))


def _fsync_tree(root):
    for directory, _, files in os.walk(root):
        for name in files:
            atomic_write._fsync_file(os.path.join(directory, name))
        atomic_write._fsync_directory(directory)


def _op_of(op_or_tensor):
    return getattr(op_or_tensor, "op", op_or_tensor)


def _saveables(graph, saver):
    """{checkpoint key: VariableV2 op} of what a default Saver of `graph` would save."""
    from tensorflux._src.train import saver as saver_lib

    if saver is not None:
        return dict(saver._variables)
    with graph.as_default():
        objects = graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + graph.get_collection(
            GraphKeys.SAVEABLE_OBJECTS)
        return saver_lib._names_to_variables(objects) if objects else {}


def _check_not_dropped(dropped, signature_def_map, init_op):
    if not dropped:
        return
    for key, sig in signature_def_map.items():
        for info in list(sig.inputs.values()) + list(sig.outputs.values()):
            op_name = info.name.rpartition(":")[0]
            if op_name in dropped:
                raise ValueError(f"Signature {key!r} needs {info.name}, which cannot be "
                                 f"exported: {dropped[op_name]}")
    if init_op is not None and _op_of(init_op).name in dropped:
        name = _op_of(init_op).name
        raise ValueError(f"main_op {name} cannot be exported: {dropped[name]}")


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None):
    """A SavedModel with one predict signature under "serving_default", tag "serve"."""
    signature_def_map = {signatures.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                         signatures.predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[signatures.SERVING], signature_def_map=signature_def_map,
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()


# -- reading ---------------------------------------------------------------------------------
def maybe_saved_model_directory(export_dir):
    """Whether `export_dir` holds a SavedModel."""
    export_dir = os.fspath(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, name))
               for name in (SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT))


contains_saved_model = maybe_saved_model_directory


def read_saved_model(export_dir):
    """The SavedModel message of `export_dir` (saved_model.pb, else .pbtxt)."""
    export_dir = os.fspath(export_dir)
    pb = os.path.join(export_dir, SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(export_dir, SAVED_MODEL_FILENAME_PBTXT)
    saved_model = protos.SavedModel()
    if os.path.isfile(pb):
        with open(pb, "rb") as f:
            try:
                saved_model.ParseFromString(f.read())
            except _message.DecodeError as exc:
                raise IOError(f"Cannot parse file {pb}: {exc}.") from None
    elif os.path.isfile(pbtxt):
        with open(pbtxt, encoding="utf-8") as f:
            try:
                text_format.Merge(f.read(), saved_model)
            except text_format.ParseError as exc:
                raise IOError(f"Cannot parse file {pbtxt}: {exc}.") from None
    else:
        raise IOError(f"SavedModel file does not exist at: {export_dir}/"
                      f"{{{SAVED_MODEL_FILENAME_PBTXT}|{SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def _find_meta_graph(saved_model, tags):
    available = []
    for meta in saved_model.meta_graphs:
        available.append(set(meta.meta_info_def.tags))
        if set(meta.meta_info_def.tags) == set(tags):
            return meta
    raise RuntimeError("MetaGraphDef associated with tags " + str(tags).strip("[]") +
                       " could not be found in SavedModel. To inspect available tag-sets in"
                       " the SavedModel, please use the SavedModel CLI: `saved_model_cli`"
                       "\navailable_tags: " + str(available))


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the meta graph tagged `tags` into `sess.graph`, restores its variables, runs
    its main op; returns its MetaGraphDef."""
    from tensorflux._src.train import saver as saver_lib

    saver_lib._check_session(sess)
    export_dir = os.fspath(export_dir)
    meta = _find_meta_graph(read_saved_model(export_dir), tags)
    graph = sess.graph
    with graph.as_default():
        meta_graph.import_scoped_meta_graph(meta, graph=graph, import_scope=import_scope)
        _restore_variables(sess, graph, meta, export_dir, import_scope, saver_kwargs)
        asset_feeds = _asset_feeds(graph, meta, export_dir, import_scope)
        init_op = _main_op(graph, meta, import_scope)
        if init_op is not None:
            sess.run(init_op, feed_dict=asset_feeds)
    return meta


def _restore_variables(sess, graph, meta, export_dir, import_scope, saver_kwargs):
    from tensorflux._src.train.saver import Saver

    prefix = os.path.join(export_dir, VARIABLES_DIRECTORY, VARIABLES_FILENAME)
    saver_def = meta.saver_def if meta.HasField("saver_def") else None
    if saver_def is not None and saver_def.restore_op_name:
        # The graph's own Saver ops, as TF's loader runs them.
        restore = prepend_scope(saver_def.restore_op_name, import_scope)
        filename = prepend_scope(saver_def.filename_tensor_name, import_scope)
        sess.run(restore, {filename: prefix})
        return
    variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
    if not variables:
        return
    if not checkpoint_format.exists(prefix):
        raise errors.NotFoundError(None, None, f"The SavedModel at {export_dir} has variables "
                                               f"but no variables file at {prefix}.index")
    var_list = meta_graph.checkpoint_var_list(variables, import_scope)
    Saver(var_list=var_list, **saver_kwargs).restore(sess, prefix)


def _asset_feeds(graph, meta, export_dir, import_scope):
    """{asset tensor: path of its copy in assets/}; a Const asset is repointed there."""
    assets = list(meta.asset_file_def)
    if ASSETS_KEY in meta.collection_def:  # TF before 1.13 kept them in a collection
        for packed in meta.collection_def[ASSETS_KEY].any_list.value:
            asset = protos.AssetFileDef()
            packed.Unpack(asset)
            assets.append(asset)
    feeds = {}
    for asset in assets:
        tensor = graph.get_tensor_by_name(prepend_scope(asset.tensor_info.name, import_scope))
        path = os.path.join(os.path.abspath(export_dir), ASSETS_DIRECTORY, asset.filename)
        value = np.array(path.encode("utf-8"), dtype=object)
        if tensor.op.type == "Const":
            tensor.op._set_attr("value", value)
            graph._version += 1
        feeds[tensor] = value
    return feeds


def _main_op(graph, meta, import_scope):
    for key in (MAIN_OP_KEY, LEGACY_INIT_OP_KEY):
        collection = meta.collection_def.get(key)
        if collection is not None and collection.node_list.value:
            if len(collection.node_list.value) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel main op. Found: "
                                   f"{list(collection.node_list.value)}")
            return graph.as_graph_element(prepend_scope(collection.node_list.value[0],
                                                  import_scope))
    return None
