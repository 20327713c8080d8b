"""The unrolled CPU lowering of JAX's threefry hash gives the hash's published values."""

import jax
import numpy as np

from tensorflux._src.compiler import threefry_cpu  # installs the lowering

# Random123's known-answer vectors for Threefry-2x32 with 20 rounds:
# (key0, key1, counter0, counter1) -> (out0, out1).
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


def _hash(k0, k1, x0, x1):
    from jax._src.random.threefry2x32 import threefry2x32_p
    cpu = jax.devices("cpu")[0]
    args = [jax.device_put(a, cpu) for a in (k0, k1, x0, x1)]
    return jax.jit(lambda *a: threefry2x32_p.bind(*a))(*args)


def test_installed_and_unrolled():
    assert threefry_cpu.INSTALLED
    key = jax.device_put(jax.random.key(0), jax.devices("cpu")[0])
    text = jax.jit(lambda k: jax.random.uniform(k, (16,))).lower(key).as_text()
    assert "stablehlo.while" not in text


def test_known_answers_elementwise():
    args = [np.array([case[0][i] for case in KNOWN_ANSWERS], np.uint32) for i in range(4)]
    out0, out1 = _hash(*args)
    np.testing.assert_array_equal(np.asarray(out0), [c[1][0] for c in KNOWN_ANSWERS])
    np.testing.assert_array_equal(np.asarray(out1), [c[1][1] for c in KNOWN_ANSWERS])
