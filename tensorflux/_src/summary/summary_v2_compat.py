"""The TF1 `tf.summary` names that concern TF2-style summaries and old tensor summaries:
`all_v2_summary_ops`, `initialize`, `get_summary_description`.

`all_v2_summary_ops()` is the `_SUMMARY_V2` collection that `tf.contrib.summary`'s
ops join (contrib_summary.py); `initialize()` runs its writers' init ops.
"""

from __future__ import annotations

import json

from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework import protos

__all__ = ["all_v2_summary_ops", "initialize", "get_summary_description"]

_SUMMARY_COLLECTION = "_SUMMARY_V2"  # TF's GraphKeys._SUMMARY_COLLECTION


def all_v2_summary_ops():
    """The V2-style summary ops of the default graph (not TF1's tf.summary ops)."""
    return _graph.get_collection(_SUMMARY_COLLECTION)


def initialize(graph=None, session=None):
    """Runs the summary writers' init ops in `session` (default: the default Session)
    and writes `graph`, if given, at step 0 (TF1.15's `tf.summary.initialize`); a no-op
    when executing eagerly."""
    from tensorflux._src.framework.behaviour import executing_eagerly
    from tensorflux._src.summary import contrib_summary
    if executing_eagerly():
        return
    writer = contrib_summary._state.writer
    if writer is None:
        raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")
    if session is None:
        from tensorflux._src.framework.default_session import get_default_session
        session = get_default_session()
        if session is None:
            raise ValueError("session must be passed if no default session exists")
    session.run(contrib_summary.summary_writer_initializer_op())
    if graph is not None:
        contrib_summary.write_graph(writer, graph)


def get_summary_description(node_def):
    """The SummaryDescription in a TensorSummary node's `description` attr (JSON)."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    value = node_def.attr["description"]
    text = getattr(value, "s", value)
    text = text.decode("utf-8") if isinstance(text, bytes) else str(text)
    fields = json.loads(text) if text.strip() else {}
    known = {"typeHint": "type_hint", "type_hint": "type_hint"}
    unknown = set(fields) - set(known)
    if unknown:
        raise ValueError(f'Message type "tensorflow.SummaryDescription" has no field named '
                         f'"{sorted(unknown)[0]}".')
    return protos.SummaryDescription(**{known[k]: v for k, v in fields.items()})
