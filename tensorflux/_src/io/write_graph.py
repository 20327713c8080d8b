"""`tf.io.write_graph` / `tf.train.write_graph`: a GraphDef to a file, as protobuf
text (`as_text=True`, protobuf's text_format) or binary, written atomically."""

from __future__ import annotations

import os

from google.protobuf import text_format

from tensorflux._src.train import atomic_write


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes the graph's GraphDef (a Graph or a GraphDef) to `logdir/name`, creating
    `logdir` if needed; returns the path, as TF does."""
    if hasattr(graph_or_graph_def, "as_graph_def"):
        graph_def = graph_or_graph_def.as_graph_def()
    else:
        graph_def = graph_or_graph_def
    if not hasattr(graph_def, "SerializeToString"):
        raise TypeError(f"write_graph: graph_or_graph_def must be a tf.Graph or a "
                        f"GraphDef, got {type(graph_or_graph_def).__name__}")
    os.makedirs(logdir, exist_ok=True)
    path = os.path.join(logdir, name)
    if as_text:
        atomic_write.write_text(path, message_to_text(graph_def))
    else:
        atomic_write.write_bytes(path, graph_def.SerializeToString(deterministic=True))
    return path


def message_to_text(message) -> str:
    """protobuf's text format of a message (what TF's write_graph writes)."""
    return text_format.MessageToString(message)
