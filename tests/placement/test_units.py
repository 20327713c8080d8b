"""Colocation units (an op with its gradient ops, a variable with its reads and
updates, a constant with its only consumer) and unit positions, on a small training
graph whose units are listed by hand."""

import numpy as np

import tensorflux as tf
from tensorflux._src.placement import op_graph, units


def _training_graph():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4, 3], name="x")
        w = tf.get_variable("w", [3, 2])
        y = tf.matmul(x, w, name="mm")
        loss = tf.reduce_sum(tf.square(y, name="sq"), name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return graph, train, loss


def test_gradients_and_updates_join_their_forward_op_and_variable():
    graph, train, loss = _training_graph()
    g = op_graph.build(graph, [train, loss])
    unit_of = units.colocation_units(g)
    unit = dict(zip(g.names, unit_of))
    grads = [n for n in g.names if n.startswith("gradients/mm_grad/")]
    assert grads and all(unit[n] == unit["mm"] for n in grads)
    square_grads = [n for n in g.names if n.startswith("gradients/sq_grad/")]
    assert square_grads and all(unit[n] == unit["sq"] for n in square_grads)
    updates = [n for n in g.names if n.startswith("GradientDescent/update_w/")]
    assert updates and all(unit[n] == unit["w"] for n in updates)
    # TF colocates a read with its variable; the read is also a free op feeding only
    # the matmul's unit, so it joins one of them.
    assert unit["w/read"] in (unit["w"], unit["mm"])
    assert unit["mm"] != unit["sq"] != unit["w"]
    # The placeholder is free and feeds only the matmul and its gradient (one unit).
    assert unit["x"] == unit["mm"]
    # Units are numbered by their first op's position: x's unit (with mm) before w's.
    assert unit["mm"] < unit["w"] < unit["sq"]
    assert sorted(set(unit_of)) == list(range(unit_of.max() + 1))


def test_positions_are_ranks_pulled_towards_neighbours():
    # Four units in a chain 0-1-2-3 plus unit 4 created last but feeding units 0 and 1
    # (like a variable created after the ops it serves): one round moves it forward.
    g = op_graph.OpGraph(
        names=[f"op{i}" for i in range(5)], types=["MatMul"] * 5,
        edges=[(0, 1, 4), (1, 2, 4), (2, 3, 4), (4, 0, 4), (4, 1, 4)],
        flops=np.ones(5), bytes_accessed=np.zeros(5), output_bytes=np.zeros(5),
        param_bytes=np.zeros(5), pinned=[""] * 5)
    unit_of = np.arange(5)
    plain = units.unit_positions(g, unit_of, rounds=0)
    np.testing.assert_allclose(plain, (np.arange(5) + 0.5) / 5)
    # By hand: mixed = 0.5 * rank + 0.5 * mean(neighbour ranks), ranks 0.1 ... 0.9:
    # unit0 0.05 + 0.5*(0.3+0.9)/2 = 0.35, unit1 0.15 + 0.5*(0.1+0.5+0.9)/3 = 0.4,
    # unit2 0.25 + 0.5*(0.3+0.7)/2 = 0.5, unit3 0.35 + 0.5*0.5 = 0.6,
    # unit4 0.45 + 0.5*(0.1+0.3)/2 = 0.55. Order: 0, 1, 2, 4, 3.
    np.testing.assert_allclose(units.unit_positions(g, unit_of, rounds=1),
                               np.array([0, 1, 2, 4, 3]) / 5 + 0.1)
