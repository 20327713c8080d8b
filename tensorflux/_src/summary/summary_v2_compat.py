"""The TF1 `tf.summary` names that concern TF2-style summaries and old tensor summaries:
`all_v2_summary_ops`, `initialize`, `get_summary_description`.

tensorflux has TF1's summary ops only (no `tf.contrib.summary` writers), so, as in a TF1
graph without such a writer: `all_v2_summary_ops()` is the (empty) `_SUMMARY_V2`
collection, and `initialize()` raises TF's RuntimeError that no default writer exists.
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
    """Initializes the default V2 summary writer for graph mode (TF1.15's
    `tf.summary.initialize`); there is none here."""
    raise RuntimeError("No default tf.contrib.summary.SummaryWriter found")


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
