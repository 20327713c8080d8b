"""tensorflux internals. Importing this turns on JAX's 64-bit types, as TF has them."""

# First, before JAX starts its CPU client: big host buffers are reused between runs.
from tensorflux._src.runtime import host_memory  # noqa: F401

# isort: split
import logging

import jax

jax.config.update("jax_enable_x64", True)

# Random draws hash with threefry; on CPU its rounds compile unrolled (same bits, faster).
from tensorflux._src.compiler import threefry_cpu  # noqa: F401

# JAX probes for a TPU on first use and reports its absence at INFO level. TF1 programs
# that log at INFO (tf.app.run does, through absl) would print it on every start.
logging.getLogger("jax._src.xla_bridge").setLevel(logging.WARNING)
