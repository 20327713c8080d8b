"""tf.train.Checkpoint files travel both ways between tensorflux and TensorFlow 2.x
(run where TensorFlow is installed: /work/tfvenv). tensorflux runs eagerly in a
subprocess (tests/eager/programs/checkpoints.py); TensorFlow's side is a tf.Module with
the same structure (model/dense/{kernel,bias}) and tf.compat.v1.train.AdamOptimizer,
whose object graph (beta1_power/beta2_power children, m/v slots) is TF1's."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "eager" / "programs" / "checkpoints.py"
X = np.arange(6, dtype=np.float32).reshape(2, 3) / 10


def _tensorflux(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TENSORFLUX_COMPILATION_CACHE="0")
    proc = subprocess.run([sys.executable, str(PROGRAM), *args], env=env, text=True,
                          capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = {}
    for line in proc.stdout.splitlines():
        key, _, rest = line.partition(" ")
        out[key] = np.array([float(v) for v in rest.split()], np.float32)
    return out


def _tf_objects():
    model, dense = tf.Module(), tf.Module()
    dense.kernel = tf.Variable(tf.random.stateless_normal([3, 2], seed=[1, 2]),
                               name="dense/kernel")
    dense.bias = tf.Variable(tf.zeros([2]), name="dense/bias")
    model.dense = dense
    opt = tf.compat.v1.train.AdamOptimizer(0.1, 0.9, 0.999, 1e-8)
    return model, opt


def _tf_step(model, opt):
    variables = [model.dense.kernel, model.dense.bias]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(X @ variables[0] + variables[1]))
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return [g.numpy() for g in grads]


def test_tensorflow_restores_a_tensorflux_checkpoint(tmp_path):
    prefix = str(tmp_path / "tfx")
    ours = _tensorflux(str(tmp_path), "write", prefix)
    model, opt = _tf_objects()
    status = tf.train.Checkpoint(model=model, optimizer=opt).restore(prefix + "-1")
    status.assert_existing_objects_matched()
    np.testing.assert_array_equal(model.dense.kernel.numpy().ravel(), ours["kernel"])
    np.testing.assert_array_equal(model.dense.bias.numpy().ravel(), ours["bias"])
    grads = _tf_step(model, opt)  # TF restores the slots as Adam creates them
    status.assert_consumed()
    m = opt.get_slot(model.dense.kernel, "m").numpy().ravel()
    np.testing.assert_allclose(m, 0.9 * ours["m"] + 0.1 * grads[0].ravel(), rtol=1e-6,
                               atol=1e-7)


def test_tensorflux_restores_a_tensorflow_checkpoint(tmp_path):
    model, opt = _tf_objects()
    _tf_step(model, opt)
    prefix = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "tf"))
    k = model.dense.kernel.numpy()
    m, v = (opt.get_slot(model.dense.kernel, s).numpy() for s in ("m", "v"))
    ours = _tensorflux(str(tmp_path), "read", prefix)
    # tensorflux restored TF's values, then took one Adam step of its own from them:
    # check the restored m and v through that step's update (NumPy).
    g = ours["grad"]
    beta1_power = opt._get_non_slot_variable("beta1_power").numpy()
    np.testing.assert_allclose(ours["beta1_power"], beta1_power * 0.9, rtol=1e-6)
    m_new = 0.9 * m.ravel() + 0.1 * g
    v_new = 0.999 * v.ravel() + 0.001 * g * g
    np.testing.assert_allclose(ours["m"], m_new, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ours["v"], v_new, rtol=1e-5, atol=1e-9)
    # TF1's Adam uses the powers before its step multiplies them.
    lr_t = 0.1 * np.sqrt(1 - opt._get_non_slot_variable("beta2_power").numpy()) / \
        (1 - beta1_power)
    np.testing.assert_allclose(ours["kernel"], k.ravel() - lr_t * m_new / (np.sqrt(v_new)
                                                                          + 1e-8), rtol=1e-5)
