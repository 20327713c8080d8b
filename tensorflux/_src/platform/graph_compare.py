"""`tf.test.assert_equal_graph_def`: two GraphDefs hold the same nodes, whatever their
order: same names, op types, devices, data inputs (in order), control inputs (as a set)
and attrs."""

from __future__ import annotations

from tensorflux._src.framework.protos import GraphDef

__all__ = ["assert_equal_graph_def"]


def _control_and_data(inputs):
    control = sorted(i for i in inputs if i.startswith("^"))
    data = [i for i in inputs if not i.startswith("^")]
    return data, control


def _graph_def_diff(actual, expected):
    """The first difference, in TF's wording, or None."""
    actual_nodes = {n.name: n for n in actual.node}
    for node in expected.node:
        if node.name not in actual_nodes:
            return f"Did not find expected node '{node.name}'"
    expected_names = {n.name for n in expected.node}
    for node in actual.node:
        if node.name not in expected_names:
            return f"Found unexpected node '{node.name}'"
    for want in expected.node:
        got = actual_nodes[want.name]
        if got.op != want.op:
            return (f"Node named '{want.name}' has op '{got.op}' that does not match "
                    f"expected '{want.op}'")
        if got.device != want.device:
            return (f"Node named '{want.name}' has device '{got.device}' that does not "
                    f"match expected '{want.device}'")
        got_data, got_control = _control_and_data(list(got.input))
        want_data, want_control = _control_and_data(list(want.input))
        if got_data != want_data:
            return (f"Node named '{want.name}' has inputs {got_data} that do not match "
                    f"expected {want_data}")
        if got_control != want_control:
            return (f"Node named '{want.name}' has control inputs {got_control} that do not "
                    f"match expected {want_control}")
        got_attrs, want_attrs = dict(got.attr), dict(want.attr)
        for key in sorted(set(got_attrs) | set(want_attrs)):
            if key not in got_attrs:
                return f"Node named '{want.name}' missing expected attr '{key}'"
            if key not in want_attrs:
                return f"Node named '{want.name}' has unexpected attr '{key}'"
            if got_attrs[key].SerializeToString() != want_attrs[key].SerializeToString():
                return (f"Node named '{want.name}' has attr '{key}' with value "
                        f"{got_attrs[key]} that does not match expected {want_attrs[key]}")
    return None


def assert_equal_graph_def(actual, expected, checkpoint_v2=False,
                           hash_table_shared_name=False):
    """Raises AssertionError naming the first difference between the two GraphDefs."""
    if not isinstance(actual, GraphDef):
        raise TypeError(f"Expected tf.GraphDef for actual, got {type(actual).__name__}")
    if not isinstance(expected, GraphDef):
        raise TypeError(f"Expected tf.GraphDef for expected, got {type(expected).__name__}")
    diff = _graph_def_diff(actual, expected)
    if diff:
        raise AssertionError(diff)
