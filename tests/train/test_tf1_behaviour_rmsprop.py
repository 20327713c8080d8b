"""Centered RMSProp with momentum: 5 steps of TF1's ApplyCenteredRMSProp kernel
(core/kernels/training_ops.cc) written in NumPy, every slot checked under TF1's name."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.mark.parametrize("centered", [True, False])
def test_rmsprop_slots_after_five_steps(centered):
    w0 = np.array([1.0, -2.0, 0.5], np.float64)
    x = np.array([0.3, 1.0, -2.0], np.float64)
    w = tf.Variable(w0, name="w")
    loss = tf.reduce_sum(w * w * x) + tf.reduce_sum(tf.sin(w))
    opt = tf.train.RMSPropOptimizer(0.01, decay=0.8, momentum=0.7, epsilon=1e-6,
                                    centered=centered)
    train = opt.minimize(loss)
    # TF1's slot_creator names: rms, then mg (centered), then momentum.
    names = {"rms": "w/RMSProp", "mg": "w/RMSProp_1", "momentum": "w/RMSProp_2"} \
        if centered else {"rms": "w/RMSProp", "momentum": "w/RMSProp_1"}
    assert {n: opt.get_slot(w, n).op.name for n in opt.get_slot_names()} == names
    by_name = {v.op.name: v for v in tf.global_variables()}
    fetch = [w] + [by_name[names[k]] for k in sorted(names)]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train)
        got = sess.run(fetch)

    # Hyperparameters are float32 tensors cast to the variable's dtype, as in TF1.
    lr, rho, momentum, eps = (np.float64(np.float32(v)) for v in (0.01, 0.8, 0.7, 1e-6))
    var, ms, mg, mom = w0.copy(), np.ones(3), np.zeros(3), np.zeros(3)
    for _ in range(5):
        g = 2 * var * x + np.cos(var)
        ms = ms + (g * g - ms) * (1 - rho)
        if centered:
            mg = mg + (g - mg) * (1 - rho)
            denom = (ms - mg * mg) + eps
        else:
            denom = ms + eps
        mom = mom * momentum + g * lr / np.sqrt(denom)
        var = var - mom
    want = {"rms": ms, "mg": mg, "momentum": mom}
    np.testing.assert_allclose(got[0], var, rtol=1e-12)
    for k, value in zip(sorted(names), got[1:]):
        np.testing.assert_allclose(value, want[k], rtol=1e-12, err_msg=k)
