"""`tf.saved_model` for TF1 programs: SavedModelBuilder, simple_save and loader.load.

A SavedModel is a self-contained directory; loading it needs only `import tensorflux`,
not the code that built the model:

    export_dir/
      saved_model.json                     the meta graphs (below)
      variables/variables.data-00000-of-00001   variable values (TF's V2 tensor bundle,
      variables/variables.index                 as Saver writes: checkpoint_format.py)
      assets/<file>                        copies of the assets_collection files

saved_model.json is `{"format": "tensorflux.saved_model", "version": 1, "meta_graphs":
[...]}`; each meta graph (one per tag set; all share the variables file) is

    {"meta_info_def": {"tags": ["serve"], "tensorflow_version": "1.15",
                       "any_info": "tensorflux 0.1.0"},
     "graph_def": {...},                   the whole graph (serving/graph_io.py)
     "signature_def": {"serving_default": {"method_name": "tensorflow/serving/predict",
                        "inputs": {"x": {"name": "x:0", "dtype": "float32",
                                         "shape": [null, 4]}}, "outputs": {...}}},
     "variables": {"dense/kernel": "dense/kernel"},   checkpoint key -> VariableV2 op
     "asset_file_def": [{"tensor_name": "vocab:0", "filename": "vocab.txt"}],
     "main_op": "init_all_tables" | null}

The builder keeps what `add_meta_graph_and_variables` / `add_meta_graph` capture (the
graph as JSON, host copies of the variables) in memory; `save()` writes the whole
directory under a temporary sibling (`<export_dir>.tmp<hex>`), fsyncs it and renames it
into place, so a crash leaves either no export_dir or a complete one.

On load, the graph is rebuilt in `sess.graph`, every variable is assigned from the
variables file (no restore ops run), an asset tensor that is a Const is repointed at
the exported copy in assets/ (and fed so, as TF does, to the main op), and the main op
runs.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.graph_keys import GraphKeys
from tensorflux._src.serving import graph_io, signatures
from tensorflux._src.serving.signatures import SignatureDef, TensorInfo
from tensorflux._src.train import atomic_write, checkpoint_format

FORMAT = "tensorflux.saved_model"
VERSION = 1
SAVED_MODEL_FILENAME = "saved_model.json"
# TF's names (tf.saved_model.constants)
SAVED_MODEL_SCHEMA_VERSION = 1
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
MAIN_OP_KEY = "saved_model_main_op"
LEGACY_INIT_OP_KEY = "legacy_init_op"


# -- the in-memory forms ---------------------------------------------------------------------

class MetaInfoDef:
    def __init__(self, tags, tensorflow_version="1.15", any_info=""):
        self.tags = list(tags)
        self.tensorflow_version = tensorflow_version
        self.any_info = any_info


class AssetFileDef:
    def __init__(self, tensor_name, filename):
        self.tensor_info = TensorInfo(tensor_name)
        self.filename = filename


class MetaGraphDef:
    """What loader.load returns: TF's MetaGraphDef fields that matter to a caller."""

    def __init__(self, record):
        info = record["meta_info_def"]
        self.meta_info_def = MetaInfoDef(info["tags"], info.get("tensorflow_version", ""),
                                         info.get("any_info", ""))
        self.signature_def = {k: SignatureDef._from_dict(v)
                              for k, v in record["signature_def"].items()}
        self.asset_file_def = [AssetFileDef(a["tensor_name"], a["filename"])
                               for a in record.get("asset_file_def", [])]
        self.graph_def = record["graph_def"]
        self.collection_def = record["graph_def"].get("collection", {})
        self._record = record

    def __repr__(self):
        return (f"MetaGraphDef(tags={self.meta_info_def.tags}, "
                f"signature_def={sorted(self.signature_def)})")


# -- writing ---------------------------------------------------------------------------------

class SavedModelBuilder:
    """TF1's `tf.saved_model.Builder`: add meta graphs (one per tag set), then `save()`."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        _check_export_dir(self._export_dir)
        self._meta_graphs = []
        self._variables = None  # {checkpoint key: numpy value}
        self._assets = {}  # filename in assets/ -> source path

    def _check_signatures(self, signature_def_map):
        for key, sig in (signature_def_map or {}).items():
            if not isinstance(sig, SignatureDef):
                raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef, got "
                                f"{type(sig).__name__}")
            for info in list(sig.inputs.values()) + list(sig.outputs.values()):
                if not info.name or info.dtype is None:
                    raise AssertionError("All TensorInfo protos used in the SignatureDefs must "
                                         "have the name and dtype fields set.")

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
        self._check_signatures(signature_def_map)
        variables = _saveables(sess.graph, saver)
        names = sorted(variables)
        values = saver_lib._read_variables(sess, [variables[n] for n in names])
        record = self._meta_graph(sess.graph, tags, signature_def_map, assets_collection,
                                  legacy_init_op, main_op, clear_devices, variables)
        self._variables = dict(zip(names, values))
        self._meta_graphs.append(record)

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        """Adds the default graph under `tags`, sharing the variables already captured."""
        if self._variables is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        self._check_signatures(signature_def_map)
        graph = _graph.get_default_graph()
        variables = {name: op for name, op in _saveables(graph, saver).items()
                     if name in self._variables}
        self._meta_graphs.append(self._meta_graph(graph, tags, signature_def_map,
                                                  assets_collection, legacy_init_op,
                                                  main_op, clear_devices, variables))

    def _meta_graph(self, graph, tags, signature_def_map, assets_collection, legacy_init_op,
                    main_op, clear_devices, variables):
        import tensorflux

        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Only one of main_op or legacy_init_op can be set.")
        init_op = main_op if main_op is not None else legacy_init_op
        if init_op is not None and not hasattr(init_op, "name"):
            raise TypeError(f"main_op needs to be an Operation: {init_op!r}")
        graph_def = graph_io.serialize(graph, clear_devices=clear_devices)
        signature_def_map = dict(signature_def_map or {})
        _check_not_dropped(graph_def, signature_def_map, init_op)
        return {
            "meta_info_def": {"tags": [str(t) for t in (tags or [])],
                              "tensorflow_version": "1.15",
                              "any_info": f"tensorflux {tensorflux.__version__}"},
            "graph_def": graph_def,
            "signature_def": {k: v._as_dict() for k, v in sorted(signature_def_map.items())},
            "variables": {name: op.name for name, op in sorted(variables.items())},
            "asset_file_def": self._add_assets(assets_collection),
            "main_op": None if init_op is None else _op_of(init_op).name,
        }

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
            records.append({"tensor_name": tensor.name, "filename": filename})
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
            _write_variables(os.path.join(tmp, VARIABLES_DIRECTORY, VARIABLES_FILENAME),
                             self._variables)
            if self._assets:
                os.makedirs(os.path.join(tmp, ASSETS_DIRECTORY))
                for filename, source in sorted(self._assets.items()):
                    shutil.copyfile(source, os.path.join(tmp, ASSETS_DIRECTORY, filename))
            document = {"format": FORMAT, "version": VERSION, "meta_graphs": self._meta_graphs}
            text = json.dumps(document, indent=1 if as_text else None)
            atomic_write.write_text(os.path.join(tmp, SAVED_MODEL_FILENAME), text)
            _fsync_tree(tmp)
            _publish(tmp, self._export_dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self._export_dir


Builder = SavedModelBuilder


def _write_variables(prefix, values):
    """Writes the variables file (a Saver checkpoint without the state file)."""
    checkpoint_format.write(prefix, values)


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


def _check_not_dropped(graph_def, signature_def_map, init_op):
    dropped = set(graph_def["dropped"])
    if not dropped:
        return
    for key, sig in signature_def_map.items():
        for info in list(sig.inputs.values()) + list(sig.outputs.values()):
            op_name = info.name.rpartition(":")[0]
            if op_name in dropped:
                raise ValueError(f"Signature {key!r} needs {info.name}, which depends on an op "
                                 f"that cannot be exported (its attrs hold Python objects, "
                                 f"e.g. a py_func): dropped ops {sorted(dropped)[:5]}")
    if init_op is not None and _op_of(init_op).name in dropped:
        raise ValueError(f"main_op {_op_of(init_op).name} depends on an op that cannot be "
                         f"exported")


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
    return os.path.isfile(os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME))


contains_saved_model = maybe_saved_model_directory


def read_saved_model(export_dir):
    path = os.path.join(os.fspath(export_dir), SAVED_MODEL_FILENAME)
    if not os.path.isfile(path):
        raise IOError(f"SavedModel file does not exist at: {os.fspath(export_dir)}/"
                      f"{{{SAVED_MODEL_FILENAME}}}")
    with open(path, encoding="utf-8") as f:
        try:
            document = json.load(f)
        except ValueError as exc:
            raise IOError(f"Cannot parse file {path}: {exc}") from None
    if document.get("format") != FORMAT:
        raise IOError(f"Cannot parse file {path}: not a tensorflux SavedModel")
    if document.get("version", 0) > VERSION:
        raise IOError(f"{path} has SavedModel format version {document['version']}; this "
                      f"tensorflux reads up to {VERSION}")
    return document


def _find_meta_graph(document, tags):
    available = []
    for record in document["meta_graphs"]:
        available.append(set(record["meta_info_def"]["tags"]))
        if set(record["meta_info_def"]["tags"]) == set(tags):
            return record
    raise RuntimeError("MetaGraphDef associated with tags " + str(tags).strip("[]") +
                       " could not be found in SavedModel. To inspect available tag-sets in"
                       " the SavedModel, please use the SavedModel CLI: `saved_model_cli`"
                       "\navailable_tags: " + str(available))


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the meta graph tagged `tags` into `sess.graph` and restores its variables."""
    from tensorflux._src.train import saver as saver_lib

    saver_lib._check_session(sess)
    export_dir = os.fspath(export_dir)
    document = read_saved_model(export_dir)
    record = _find_meta_graph(document, tags)
    graph = sess.graph
    with graph.as_default():
        ops = graph_io.import_graph(record["graph_def"], graph, import_scope)
    _restore_variables(sess, export_dir, record["variables"], ops)
    asset_feeds = _repoint_assets(export_dir, record.get("asset_file_def", []), ops)
    if record.get("main_op"):
        sess.run(ops[record["main_op"]], feed_dict=asset_feeds)
    return MetaGraphDef(record)


def _restore_variables(sess, export_dir, names, ops):
    from tensorflux._src.train import saver as saver_lib

    if not names:
        return
    prefix = os.path.join(export_dir, VARIABLES_DIRECTORY, VARIABLES_FILENAME)
    reader = checkpoint_format.CheckpointReader(prefix)
    shapes = reader.get_variable_to_shape_map()
    for key in names:
        if key not in shapes:
            raise errors.NotFoundError(None, None, f"Key {key} not found in checkpoint "
                                                   f"{prefix}")
    values = reader.get_tensors(sorted(names))
    saver_lib._assign_variables(sess, {ops[op_name]: values[key]
                                       for key, op_name in names.items()})


def _repoint_assets(export_dir, asset_file_defs, ops):
    feeds = {}
    for asset in asset_file_defs:
        op_name, _, index = asset["tensor_name"].rpartition(":")
        op = ops[op_name]
        path = os.path.join(os.path.abspath(export_dir), ASSETS_DIRECTORY, asset["filename"])
        value = np.array(path.encode("utf-8"), dtype=object)
        if op.type == "Const":
            op._set_attr("value", value)
            op.graph._version += 1
        feeds[op.outputs[int(index)]] = value
    return feeds
