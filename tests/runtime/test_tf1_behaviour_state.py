"""TF1's ref-variable semantics in one run: reads ordered after updates, unordered
updates of one variable, reads inside loop bodies. Expected values are worked out by
hand from TF1's rules (compiler/state.py states them)."""

import numpy as np

import tensorflux as tf


def test_reads_ordered_after_an_update_see_it():
    # TF1's `v/read` forwards the variable's buffer, so an op ordered after an update
    # reads the updated buffer, whichever way it reaches the variable.
    v = tf.Variable(1.0)
    snapshot = v.value()  # v/read: ordered after nothing
    update = tf.assign_add(v, 1.0)
    with tf.control_dependencies([update]):
        after_identity = tf.identity(v)
        after_read_value = v.read_value()
        doubled = v * 2.0
        plus_snapshot = snapshot + 0.0
    chained = tf.identity(after_identity) * 10.0  # ordered through its input
    unordered = v.value() * 1.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        got = sess.run([after_identity, after_read_value, doubled, plus_snapshot, chained,
                        unordered, update])
        assert got == [2.0, 2.0, 4.0, 2.0, 20.0, 1.0, 2.0]
        # The variable's snapshot itself, fetched with the update, is the start value.
        assert sess.run([snapshot, update]) == [2.0, 3.0]
        assert sess.run(v) == 3.0


def test_read_ordered_between_two_updates():
    v = tf.Variable(10.0)
    first = tf.assign(v, 3.0)
    with tf.control_dependencies([first]):
        middle = tf.identity(v)
        second = tf.assign_add(v, 4.0)  # reads 3.0 (ordered after `first`)
    with tf.control_dependencies([second]):
        last = v + 0.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([middle, last]) == [3.0, 7.0]
        assert sess.run(v) == 7.0


def test_unordered_updates_of_one_variable_all_apply():
    w = tf.Variable(0)
    both = tf.group(tf.assign_add(w, 1), tf.assign_add(w, 100))
    with tf.control_dependencies([both]):
        after = tf.identity(w)
    s = tf.Variable([0.0, 0.0, 0.0])
    scatters = tf.group(tf.scatter_add(s, [0, 2], [1.0, 2.0]),
                        tf.scatter_add(s, [2], [10.0]), tf.scatter_sub(s, [1], [5.0]))
    # An assign and an assign_add not ordered: both apply, in creation order.
    a = tf.Variable(0.0)
    mixed = tf.group(tf.assign(a, 5.0), tf.assign_add(a, 1.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([after, both])[0] == 101
        assert sess.run(w) == 101
        sess.run([scatters, mixed])
        np.testing.assert_array_equal(sess.run(s), [1.0, -5.0, 12.0])
        assert sess.run(a) == 6.0


def test_two_optimizers_updating_one_variable_in_one_run():
    w = tf.Variable([1.0, -2.0])
    loss = tf.reduce_sum(w * w)  # gradient 2w, taken at the run's start value
    train = tf.group(tf.train.GradientDescentOptimizer(0.1).minimize(loss),
                     tf.train.GradientDescentOptimizer(0.01).minimize(loss))
    with tf.Session() as sess:
        sess.run(w.initializer)
        sess.run(train)
        start = np.array([1.0, -2.0])
        np.testing.assert_allclose(sess.run(w), start - 0.1 * 2 * start - 0.01 * 2 * start,
                                   rtol=1e-6)


def test_while_loop_body_reads_what_earlier_iterations_assigned():
    v = tf.Variable(1.0)

    def body(i):
        with tf.control_dependencies([tf.assign(v, v * 2.0)]):
            return i + 1

    count = tf.while_loop(lambda i: i < 5, body, [0])

    u = tf.Variable(1.0)  # the assign as a loop output
    _, last = tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, tf.assign(u, u * 2.0)),
                            [0, 0.0])

    c = tf.Variable(1.0)  # the condition reads the variable the body doubles

    def doubling(i):
        with tf.control_dependencies([tf.assign(c, c * 2.0)]):
            return i + 1

    trips = tf.while_loop(lambda i: c < 100.0, doubling, [0])

    d = tf.Variable(1.0)  # a read ordered after the same iteration's assign sees it

    def step(i, y):
        bump = tf.assign(d, d + 1.0)
        with tf.control_dependencies([bump]):
            return i + 1, d * 10.0

    _, seen = tf.while_loop(lambda i, y: i < 3, step, [0, 0.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(count) == 5
        assert sess.run(v) == 32.0
        assert sess.run(last) == 32.0 and sess.run(u) == 32.0
        assert sess.run(trips) == 7  # 1 -> 2 -> ... -> 128
        assert sess.run(c) == 128.0
        assert sess.run(seen) == 40.0 and sess.run(d) == 4.0


def test_cond_branch_reads_the_variable_it_assigns():
    v = tf.Variable(3.0)
    p = tf.placeholder(tf.bool, [])

    def bump():
        a = tf.assign(v, v + 1.0)
        with tf.control_dependencies([a]):
            return v * 100.0

    out = tf.cond(p, bump, lambda: v * 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(out, {p: True}) == 400.0
        assert sess.run(out, {p: False}) == 4.0
