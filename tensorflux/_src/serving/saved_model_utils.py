"""`tf.saved_model.main_op` and `signature_def_utils.MethodNameUpdater` (TF 1.15's
main_op_impl.py and method_name_updater.py)."""

from __future__ import annotations

import logging
import os

from google.protobuf import text_format

from tensorflux._src.framework import graph as _graph
from tensorflux._src.ops.control.control_ops import group
from tensorflux._src.ops.state.table_init import tables_initializer
from tensorflux._src.serving import saved_model
from tensorflux._src.train import atomic_write
from tensorflux._src.train.variables import local_variables_initializer

_log = logging.getLogger("tensorflux")


def main_op():
    """The usual SavedModel main op: initializes local variables and tables."""
    return group(local_variables_initializer(), tables_initializer())


def main_op_with_restore(restore_op_name):
    """`main_op()`, then `restore_op_name`: a Saver's restore op, or its name (a
    SaverDef's restore_op_name)."""
    restore = restore_op_name
    if isinstance(restore, (str, bytes)):
        restore = _graph.get_default_graph().as_graph_element(
            restore.decode() if isinstance(restore, bytes) else restore)
    with _graph.control_dependencies([main_op()]):
        return group(restore)


class MethodNameUpdater:
    """Updates the `method_name` of signatures in a SavedModel's saved_model.pb(txt),
    e.g. a predict signature served as a classify one."""

    def __init__(self, export_dir):
        self._export_dir = os.fspath(export_dir)
        self._saved_model = saved_model.read_saved_model(self._export_dir)

    def replace_method_name(self, signature_key, method_name, tags=None):
        """Sets the method name of `signature_key` in every MetaGraph (tags None) or in the
        one whose tag set is `tags`."""
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, list):
            tags = [tags]
        found = False
        for meta in self._saved_model.meta_graphs:
            if tags is None or set(tags) == set(meta.meta_info_def.tags):
                if signature_key not in meta.signature_def:
                    raise ValueError(
                        f"MetaGraphDef associated with tags {tags} does not have a "
                        f"signature_def with key: '{signature_key}'. This means either you "
                        f"specified the wrong signature key or forgot to put the "
                        f"signature_def with the corresponding key in your SavedModel.")
                meta.signature_def[signature_key].method_name = method_name
                found = True
        if not found:
            raise ValueError(
                f"MetaGraphDef associated with tags {tags} could not be found in "
                f"SavedModel. This means either you specified invalid tags or your "
                f"SavedModel does not have a MetaGraphDef with the specified tags.")

    def save(self, new_export_dir=None):
        """Writes the updated saved_model file (text if it was read as text) to
        `new_export_dir`, or over the original; the write is atomic."""
        target = os.fspath(new_export_dir) if new_export_dir else self._export_dir
        as_text = os.path.isfile(os.path.join(self._export_dir,
                                              saved_model.SAVED_MODEL_FILENAME_PBTXT))
        if as_text:
            path = os.path.join(target, saved_model.SAVED_MODEL_FILENAME_PBTXT)
            atomic_write.write_text(path, text_format.MessageToString(self._saved_model))
        else:
            path = os.path.join(target, saved_model.SAVED_MODEL_FILENAME_PB)
            atomic_write.write_bytes(path,
                                     self._saved_model.SerializeToString(deterministic=True))
        _log.info("SavedModel written to: %s", path)
