"""`tf.keras`: of Keras, tensorflux has what TF1 tutorials call around their graphs and
Estimators: `tf.keras.utils.get_file`. Keras models and layers are not part of it
(`tf.layers` is TF1's layer API here)."""

from tensorflux.keras import utils  # noqa: F401
