"""`tf.test.experimental`."""

import jax
import jax.numpy as jnp

__all__ = ["sync_devices"]


def sync_devices():
    """Waits until every device has finished the work queued on it (XLA dispatch is
    asynchronous; a tiny computation per device completes after what came before)."""
    jax.effects_barrier()
    for d in jax.devices():
        jax.device_put(jnp.zeros((), jnp.int32), d).block_until_ready()
