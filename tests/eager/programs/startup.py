"""tf.enable_eager_execution after a graph was built: TF1's ValueError."""
import tensorflux as tf

tf.constant(1.0)
try:
    tf.enable_eager_execution()
except ValueError as e:
    print("startup_error", e)
try:
    tf.enable_eager_execution(device_policy=7)
except ValueError as e:
    print("policy_error", e)
print("eager", tf.executing_eagerly())
