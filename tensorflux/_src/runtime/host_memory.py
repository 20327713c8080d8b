"""Host memory kept for the next run: XLA:CPU's temporary buffer reused from malloc's
heap instead of mapped in afresh by the kernel at every run.

XLA:CPU allocates each execution's temporary memory when the run starts and frees it
when it ends, as one block holding all of a run's intermediates (345 MB for a
ResNet-50 training step at 64x64, batch 16). glibc serves a block that big with mmap
and frees it with munmap, so every step page-faulted its whole temporary memory back
in: the kernel zeroed and mapped ~87,000 pages per ResNet-50 step, ~20% of the step's
time in a profile.

Two settings together keep that memory in the process:
  - runs execute on the thread that calls them (`jax_cpu_enable_async_dispatch` off),
    so the block comes from the calling thread's heap: the main heap for a program's
    main thread. (With async dispatch a JAX worker thread allocates it, from a thread
    arena of 64 MB heaps, and glibc maps every bigger block whatever it is told.)
    XLA:CPU still defers a run to a worker thread while an input is not ready, and it
    copies a big NumPy array in (a fed batch) asynchronously: `ready_inputs` copies
    those first, on the calling thread.
  - glibc's main heap keeps what is freed (mallopt): it never maps (M_MMAP_MAX=0) and
    is not trimmed (M_TRIM_THRESHOLD), so the next run's block is the last one's.
Measured on the development machine, ResNet-50 training step, one process per
setting, alternating: 466 -> 398 ms and 525 -> 433 ms, page faults per step ~87,100
-> under 30.

Not chosen: M_ARENA_MAX=1 (every thread on the main heap, async dispatch kept) kept
the block as well, but slowed XLA's compiles by 25-60% (its compile threads contend
for the one arena); XLA's `xla_multiheap_size_constraint_per_heap` (temporaries in
blocks small enough for thread heaps) makes executables that XLA:CPU cannot
serialize ("Multiple temp buffer allocations found"), which the compilation cache
needs.

What it costs: the process keeps the peak of its main heap instead of handing freed
memory back; a run is no longer dispatched asynchronously (Session.run waits for its
results anyway), and other JAX code in the process runs inline too. A run called from
another thread allocates from that thread's arena and still maps its block afresh.

Applied when tensorflux is imported (before JAX starts its CPU client, which reads
the dispatch setting once), only with glibc; TENSORFLUX_REUSE_HOST_MEMORY=0 (or
false/off/no) in the environment before import leaves both as they are.
"""

from __future__ import annotations

import ctypes
import os

import jax
import numpy as np

from tensorflux._src.platform import env_switch

# mallopt parameters (glibc's malloc.h) and the values set.
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
SETTINGS = (
    (M_MMAP_MAX, 0),
    (M_TRIM_THRESHOLD, 2**31 - 1),  # the largest int; -1 would overflow glibc's checks
)


def wanted() -> bool:
    return not env_switch.is_off("TENSORFLUX_REUSE_HOST_MEMORY")


def _glibc():
    try:
        is_glibc = os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not a glibc system
        return None
    return ctypes.CDLL(None) if is_glibc else None


def install() -> bool:
    """Applies both settings; False when off, not on glibc, or glibc refused one."""
    libc = _glibc() if wanted() else None
    if libc is None or not all(libc.mallopt(p, v) == 1 for p, v in SETTINGS):
        return False
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    return True


INSTALLED = install()


# Host arrays at least this big are copied in before a run. Smaller ones were never
# seen to defer a run (measured up to 68 KB; a 64 MB feed did), and each copy here
# waits, so they are left to JAX.
_READY_BYTES = 1 << 16


def ready_inputs(args, device):
    """`args` with big NumPy arrays copied onto `device` (a CPU) and waited for, so the
    run that takes them executes on this thread (see above); unchanged otherwise."""
    if not INSTALLED or getattr(device, "platform", None) != "cpu":
        return args
    big = [i for i, a in enumerate(args)
           if isinstance(a, np.ndarray) and a.nbytes >= _READY_BYTES]
    if not big:
        return args
    args = list(args)
    for i in big:
        args[i] = jax.device_put(args[i], device)
    jax.block_until_ready([args[i] for i in big])
    return args
