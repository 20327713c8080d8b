"""TPUEstimator (TF 1.15's tf.compat.v1.estimator.tpu / tf.contrib.tpu) on tensorflux's
SPMD replicas: the model step runs over a device mesh, `iterations_per_loop` steps at a
time as one compiled on-device loop."""
