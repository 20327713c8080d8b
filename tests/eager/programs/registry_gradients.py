"""Walks the op registry: for every differentiable op that can be driven generically
(float inputs of one type attr, no required attrs), GradientTape's gradient of the sum
of its outputs must match tf.gradients in graph mode on the same float64 inputs."""
import numpy as np

import tensorflux as tf
from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.registry import REQUIRED, all_ops

tf.enable_eager_execution()
rng = np.random.RandomState(0)
covered, skipped, mismatched = [], 0, []


def drivable(op_def):
    if op_def.lower is None or op_def.grad is None or op_def.random or op_def.stateful \
            or op_def.functional or op_def.host is not None or not op_def.input_args:
        return False
    if any(v is REQUIRED for v in op_def.default_attrs.values()):
        return False
    attrs = {a.type_attr for a in op_def.input_args}
    if len(attrs) != 1 or None in attrs or any(a.is_list or a.is_ref for a in op_def.input_args):
        return False
    allowed = op_def.type_attrs.get(next(iter(attrs)))
    return allowed is not None and tf.float64 in allowed


def summed(outs):
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    floats = [o for o in outs if o.dtype.base_dtype == tf.float64]
    return tf.add_n([tf.reduce_sum(o) for o in floats]) if floats else None


for name, op_def in sorted(all_ops().items()):
    if not drivable(op_def):
        skipped += 1
        continue
    values = [rng.uniform(0.2, 0.9, size=(2, 3)) for _ in op_def.input_args]
    try:
        xs = [tf.constant(v) for v in values]
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = summed(apply_op(name, **{a.name: x for a, x in zip(op_def.input_args, xs)}))
        if y is None:
            skipped += 1
            continue
        eager = tape.gradient(y, xs)
        with tf.Graph().as_default():
            gxs = [tf.constant(v) for v in values]
            gy = summed(apply_op(name, **{a.name: x for a, x in zip(op_def.input_args, gxs)}))
            graph_grads = tf.gradients(gy, gxs)
            fetch = [g for g in graph_grads if g is not None]
            with tf.Session() as sess:
                got = iter(sess.run(fetch))
            graph = [None if g is None else next(got) for g in graph_grads]
    except Exception:  # noqa: BLE001 - not drivable with these generic inputs
        skipped += 1
        continue
    ok = all((e is None) == (g is None) and (e is None or np.allclose(
        np.asarray(tf.convert_to_tensor(e)), g, rtol=1e-6, atol=1e-9, equal_nan=True))
        for e, g in zip(eager, graph))
    (covered if ok else mismatched).append(name)
print("covered", len(covered), "skipped", skipped, "mismatched", mismatched)
print("ops", " ".join(covered))
