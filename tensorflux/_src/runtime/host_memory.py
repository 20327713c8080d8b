"""Host memory kept for the next run: XLA:CPU's temporary buffers reused from malloc's
heaps instead of mapped in afresh by the kernel at every run.

XLA:CPU allocates each execution's temporary memory when the run starts and frees it
when it ends. By default that is one block holding all of a run's intermediates
(345 MB for a ResNet-50 training step at 64x64, batch 16), and glibc serves a block
that big with mmap and frees it with munmap, so every step page-faults its whole
temporary memory back in: the kernel zeroes and maps ~87,000 pages per ResNet-50
step, ~20% of the step's time in a profile.

Two settings together keep that memory in the process:
  - XLA packs the temporaries into several blocks of at most HEAP_BYTES
    (`xla_multiheap_size_constraint_per_heap`, added to every CPU compile by
    runtime/devices.py; a single array bigger than that still gets a block of its
    own);
  - glibc keeps freed blocks below its mmap threshold (32 MB, the most glibc allows)
    for reuse (mallopt): the main heap never maps (M_MMAP_MAX=0) and is not trimmed
    (M_TRIM_THRESHOLD), and worker threads' arenas keep their 64 MB heaps (M_TOP_PAD
    at a heap's size: glibc deletes a thread arena's empty heap only while its pad is
    smaller).
Measured on the development machine, same process, alternating, ResNet-50 step:
428 -> 367 ms, page faults per step 86,962 -> 984.

What it leaves: arrays over 32 MB (the Transformer LM's logits) are still mapped
afresh by worker threads (glibc maps every block bigger than a thread arena's heap),
and the process keeps the peak of its heaps instead of handing freed memory back.
M_ARENA_MAX=1 (every thread on the main heap) would keep those big blocks too, but it
slowed XLA's compiles by 25-60% (its threads contend for the one arena).

Applied when tensorflux is imported, only with glibc; TENSORFLUX_REUSE_HOST_MEMORY=0
(or false/off/no) in the environment before import leaves malloc and XLA's buffer
packing as they are.
"""

from __future__ import annotations

import ctypes
import os

HEAP_BYTES = 8 << 20  # XLA's temporaries in blocks of at most this (8 MB: see below)
# 8 MB rather than 16 or 32: blocks of 16-32 MB fill a 64 MB thread heap two at a time
# and make glibc open new heaps (ResNet-50: 6,503 faults per step at 16 MB, 984 at 8).

# mallopt parameters (glibc's malloc.h) and the values set.
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -2, -3, -4
SETTINGS = (
    (M_MMAP_THRESHOLD, 32 << 20),
    (M_MMAP_MAX, 0),
    (M_TRIM_THRESHOLD, 2**31 - 1),  # an int; -1 would overflow glibc's heap checks
    (M_TOP_PAD, 64 << 20),
)

_OFF = ("0", "false", "off", "no")


def wanted() -> bool:
    return os.environ.get("TENSORFLUX_REUSE_HOST_MEMORY", "1").strip().lower() not in _OFF


def _glibc():
    try:
        is_glibc = os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not a glibc system
        return None
    return ctypes.CDLL(None) if is_glibc else None


def install() -> bool:
    """Applies the malloc settings; False when off, not on glibc, or glibc refused one."""
    libc = _glibc() if wanted() else None
    if libc is None:
        return False
    return all(libc.mallopt(param, value) == 1 for param, value in SETTINGS)


INSTALLED = install()


def xla_options(device) -> dict:
    """XLA options that go with the malloc settings, for a compile on `device`."""
    if INSTALLED and getattr(device, "platform", None) == "cpu":
        return {"xla_multiheap_size_constraint_per_heap": HEAP_BYTES}
    return {}
