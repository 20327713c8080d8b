"""Object-based checkpoints with eager execution: save / restore without a Session,
restore-on-create of layer weights and Adam slots, CheckpointManager, and TF's
object-graph proto in the bundle. Usage: checkpoints.py DIR [write PREFIX | read PREFIX]
(the last two for the TensorFlow interop test)."""
import os
import sys

import numpy as np

import tensorflux as tf
from tensorflux._src.framework import protos

tf.enable_eager_execution()
directory = sys.argv[1]
LR, B1, B2, EPS = 0.1, 0.9, 0.999, 1e-8


class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.dense = tf.layers.Dense(2)


x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3) / 10)


def step(model, opt):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(model.dense(x)))
    variables = model.dense.trainable_weights
    grads = tape.gradient(loss, variables)
    opt.apply_gradients(zip(grads, variables))
    return [g.numpy() for g in grads]


def values(model, opt):
    k, b = model.dense.kernel, model.dense.bias
    return {"kernel": k.numpy(), "bias": b.numpy(), "m": opt.get_slot(k, "m").numpy(),
            "v": opt.get_slot(k, "v").numpy(),
            "beta1_power": opt._get_non_slot_variable("beta1_power").numpy()}


def show(name, array):
    print(name, " ".join(repr(float(v)) for v in np.ravel(array)))


if len(sys.argv) > 2:  # interop: write a checkpoint for TF, or read TF's
    model, opt = Model(), tf.train.AdamOptimizer(LR, B1, B2, EPS)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    if sys.argv[2] == "write":
        tf.set_random_seed(0)
        step(model, opt)
        ckpt.save(sys.argv[3])  # <prefix>-1, with the save counter
    else:
        status = ckpt.restore(sys.argv[3])
        model.dense(x)  # builds the layer: its weights are restored as they are made
        grads = step(model, opt)  # slots are restored before the update uses them
        status.assert_consumed()
        show("grad", grads[0])
    for name, value in values(model, opt).items():
        show(name, value)
    sys.exit(0)

model, opt = Model(), tf.train.AdamOptimizer(LR, B1, B2, EPS)
step(model, opt)
ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
path = ckpt.save(os.path.join(directory, "ckpt"))
saved = values(model, opt)
step(model, opt)
status = ckpt.restore(path)
status.assert_consumed().assert_existing_objects_matched()
status.run_restore_ops()  # a no-op in eager mode
back = values(model, opt)
print("restore", os.path.basename(path),
      all(np.array_equal(saved[k], back[k]) for k in saved))

# A new program's objects: the layer is not built and Adam has no slots yet.
model2, opt2 = Model(), tf.train.AdamOptimizer(LR, B1, B2, EPS)
status = tf.train.Checkpoint(model=model2, optimizer=opt2).restore(path)
try:
    status.assert_consumed()
except AssertionError as e:
    print("not_consumed", str(e).split(":")[0])
model2.dense(x)
print("weights_on_build", np.array_equal(model2.dense.kernel.numpy(), saved["kernel"]))
grads = step(model2, opt2)
m_expected = B1 * saved["m"] + (1 - B1) * grads[0]
print("slots_on_create", float(np.abs(opt2.get_slot(model2.dense.kernel, "m").numpy()
                                      - m_expected).max()) < 1e-6)
status.assert_consumed()
print("consumed", "ok")

# The object graph, as TF stores it.
graph = protos.TrackableObjectGraph.FromString(
    tf.train.load_variable(path, "_CHECKPOINTABLE_OBJECT_GRAPH"))
root = graph.nodes[0]
print("object_graph", sorted(c.local_name for c in root.children),
      sum(len(n.slot_variables) for n in graph.nodes),
      min(a.checkpoint_key for n in graph.nodes for a in n.attributes
          if "OPTIMIZER_SLOT" in a.checkpoint_key))

manager = tf.train.CheckpointManager(ckpt, os.path.join(directory, "managed"), max_to_keep=2)
paths = [manager.save() for _ in range(3)]
print("manager", [os.path.basename(p) for p in manager.checkpoints],
      os.path.basename(manager.latest_checkpoint),
      os.path.exists(paths[0] + ".index"), os.path.exists(paths[2] + ".index"),
      os.path.basename(manager.save(checkpoint_number=100)))
