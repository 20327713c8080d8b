"""Control flow between tensorflux and real TensorFlow through GraphDefs with a
FunctionDefLibrary (runs where `tensorflow` is importable; skipped in the main venv).
Ran with TF 2.21 in /work/tfvenv."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.framework import protos

tf_real = pytest.importorskip("tensorflow")

X = np.array([1.0, -2.0, 3.0], np.float32)


def _expected(x, limit):
    y = x * 2.0 if x.sum() > 0 else x - 1.0
    i, acc = 0, np.zeros(3, np.float32)
    while i < 4:
        acc = acc + x if i < 2 else acc * 1.5
        i += 1
    j, k = 1, 0
    while j < 100 and k < 5:
        j, k = j + 3, k + 1
    n, total = 0, 0.0
    while n < limit:
        total += float(np.sum(x)) * n
        n += 1
    return [y, i, acc, j, total]


def _control_flow(api, x, limit):
    """The same program in tensorflux or TF (`api`: a module with TF1's surface)."""
    y = api.cond(api.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)

    def body(i, acc):
        return i + 1, api.cond(i < 2, lambda: acc + x, lambda: acc * 1.5)

    i, acc = api.while_loop(lambda i, acc: i < 4, body, [api.constant(0), api.zeros([3])])
    j = api.while_loop(lambda j: j < 100, lambda j: j + 3, (api.constant(1),),
                       maximum_iterations=5, return_same_structure=True)[0]
    s = api.reduce_sum(x)
    _, total = api.while_loop(lambda n, t: n < limit,
                              lambda n, t: (n + 1, t + s * api.cast(n, api.float32)),
                              [api.constant(0), api.constant(0.0)])
    return [api.identity(t, name=f"out{k}") for k, t in enumerate([y, i, acc, j, total])]


@pytest.mark.parametrize("x,limit", [(X, 4), (-X, 1)])
def test_tensorflow_runs_tensorflux_control_flow(x, limit):
    with tf.Graph().as_default() as graph:
        xp = tf.placeholder(tf.float32, [3], name="x")
        lp = tf.placeholder(tf.int32, [], name="limit")
        outs = _control_flow(tf, xp, lp)
        with tf.Session() as sess:
            ours = sess.run(outs, {xp: x, lp: limit})
        from tensorflux._src.io.graph_def import graph_def
        wire = graph_def(graph, strict=True).SerializeToString()
    v1 = tf_real.compat.v1
    with tf_real.Graph().as_default() as g:
        v1.import_graph_def(v1.GraphDef.FromString(wire), name="")
        with v1.Session(graph=g) as sess:
            theirs = sess.run([t.name for t in outs], {"x:0": x, "limit:0": limit})
    for a, b, want in zip(theirs, ours, _expected(x, limit)):
        np.testing.assert_allclose(a, want, rtol=1e-6)
        np.testing.assert_allclose(b, want, rtol=1e-6)


def _tensorflow_graph():
    """A TF 2.x graph-mode program with control flow v2 (StatelessIf/StatelessWhile or
    If/While nodes, bodies in the library), and TF's outputs for two feeds."""
    v1 = tf_real.compat.v1
    with tf_real.Graph().as_default() as g:
        v1.enable_control_flow_v2()
        xp = v1.placeholder(tf_real.float32, [3], name="x")
        lp = v1.placeholder(tf_real.int32, [], name="limit")
        outs = _control_flow(_TFApi, xp, lp)
        # A cond whose branches return two values, one with a loop inside.
        a, b = tf_real.cond(xp[0] > 0,
                            lambda: (tf_real.while_loop(lambda v: tf_real.reduce_max(v) < 50.0,
                                                        lambda v: v * 2.0, [xp])[0], lp + 1),
                            lambda: (-xp, lp - 1))
        outs += [tf_real.identity(a, name="out5"), tf_real.identity(b, name="out6")]
        with v1.Session(graph=g) as sess:
            results = [((x, limit), sess.run(outs, {xp: x, lp: limit}))
                       for x, limit in ((X, 4), (-X, 1))]
        graph_def = g.as_graph_def()
    return graph_def, [t.name for t in outs], results


class _TFApi:
    """TF's tf.compat.v1 functions under the names _control_flow uses."""

    def __getattr__(self, name):
        return getattr(tf_real.compat.v1, name)


_TFApi = _TFApi()


def test_tensorflux_imports_tensorflow_control_flow_v2():
    graph_def, names, results = _tensorflow_graph()
    ops = {n.op for n in graph_def.node}
    assert ops & {"If", "StatelessIf"} and ops & {"While", "StatelessWhile"}
    assert len(graph_def.library.function) >= 6
    wire = protos.GraphDef.FromString(graph_def.SerializeToString())
    with tf.Graph().as_default():
        tf.import_graph_def(wire, name="")
        with tf.Session() as sess:
            for (x, limit), theirs in results:
                ours = sess.run(names, {"x:0": x, "limit:0": limit})
                for a, b in zip(ours, theirs):
                    np.testing.assert_allclose(a, b, rtol=1e-6)
                # and both agree with NumPy
                for a, want in zip(ours, _expected(x, limit)):
                    np.testing.assert_allclose(a, want, rtol=1e-6)
