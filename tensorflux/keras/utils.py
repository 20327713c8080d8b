"""`tf.keras.utils`: fetching data files into the local cache."""

from tensorflux._src.platform.get_file import get_file  # noqa: F401
