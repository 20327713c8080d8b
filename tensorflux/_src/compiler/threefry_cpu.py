"""JAX's threefry hash on XLA:CPU with its rounds unrolled, as on its other platforms.

Every random draw here (the random ops, dropout, initializers, the stateless ops) hashes
counters with JAX's threefry2x32. On CPU, JAX lowers the hash's 20 rounds as a loop of
five steps over whole arrays (to compile faster), and XLA:CPU runs that loop step by
step: each step reads and writes both counter arrays and copies its loop state, so a
draw is memory-bound and poorly vectorized. Unrolled, the rounds are one elementwise
fusion. The bits are the same either way (the same hash); only the program differs.
Measured on the 2-core development machine: one (4, 128, 768) uniform draw (a dropout
mask of the Transformer LM) 1.4 -> 0.5 ms, 25 of them 88 -> 46 ms, compile time about
the same (1.4 vs 1.6 s).

`install` replaces JAX's CPU lowering rule for the primitive, process-wide: other JAX
code in the process gets the same values, sooner. Where a JAX version has moved these
private names, nothing is replaced and the rolled loop stays.
"""

from __future__ import annotations

import functools


def install() -> bool:
    """Registers the unrolled lowering for CPU; False when JAX's internals differ."""
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as threefry
        lowering = threefry._threefry2x32_lowering
        primitive = threefry.threefry2x32_p
    except (ImportError, AttributeError):
        return False
    unrolled = functools.partial(lowering, use_rolled_loops=False)
    mlir.register_lowering(primitive, mlir.lower_fun(unrolled, multiple_results=True),
                           platform="cpu")
    return True


INSTALLED = install()
