"""tf.contrib.summary eagerly: each call writes its Event at once. Writes into argv[1]."""
import sys

import numpy as np

import tensorflux as tf

tf.enable_eager_execution()
logdir = sys.argv[1]
summary = tf.contrib.summary
global_step = tf.train.get_or_create_global_step()
writer = summary.create_file_writer(logdir)
print("no_writer", summary.should_record_summaries().numpy())
with writer.as_default():
    print("default_off", summary.scalar("skipped", 1.0).numpy())
    with summary.always_record_summaries():
        print("recorded", summary.scalar("loss", tf.constant(1.5)).numpy())  # global step 0
        summary.scalar("lr", 0.25, family="opt", step=7)
        rng = np.random.RandomState(0)
        np.save(f"{logdir}/hist.npy", rng.randn(50).astype(np.float32))
        summary.histogram("weights", tf.constant(np.load(f"{logdir}/hist.npy")), step=3)
        pixels = rng.rand(2, 3, 4, 3).astype(np.float32)
        np.save(f"{logdir}/image.npy", pixels)
        summary.image("img", tf.constant(pixels), max_images=3, step=5)
        with summary.never_record_summaries():
            print("never", summary.scalar("never", 2.0).numpy())
    with summary.record_summaries_every_n_global_steps(3):
        for i in range(7):
            summary.scalar("every3", float(i) * 10)
            global_step.assign_add(1)
print("file_before_flush_close", len(tf.gfile.ListDirectory(logdir)))
writer.close()
try:
    summary.summary_writer_initializer_op()
except RuntimeError as e:
    print("init_op_error", e)
print("all_summary_ops", summary.all_summary_ops())
