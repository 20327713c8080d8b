"""tensorflux internals. Importing this turns on JAX's 64-bit types, as TF has them."""

import jax

jax.config.update("jax_enable_x64", True)
