"""The hash functions TF's lookup kernels use, in pure Python.

- `fingerprint64`: FarmHash's Fingerprint64 (pyfarmhash), TF's StringToHashBucketFast,
  which buckets out-of-vocabulary keys (`Fingerprint64(key) % num_buckets`).
- `hash64`: TF's own Hash64 (core/lib/hash/hash.cc, a MurmurHash2-64 variant, seed
  0xDECAFCAFFE by default), which MutableDenseHashTable uses for string keys and the
  legacy StringToHashBucket uses for buckets.
- `hash64_combine`: TF's Hash64Combine, for dense tables whose keys are vectors.
- `siphash24`: SipHash-2-4, TF's StringToHashBucketStrong (a keyed hash).
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
_M = 0xC6A4A7935BD1E995
_R = 47
DEFAULT_SEED = 0xDECAFCAFFE


def fingerprint64(data: bytes) -> int:
    import farmhash  # pyfarmhash; imported on first use so `import tensorflux` stays light
    return int(farmhash.fingerprint64(data))


def hash64(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """TF's Hash64(data, n, seed)."""
    n = len(data)
    h = (seed ^ (n * _M)) & _MASK
    end = n - n % 8
    for i in range(0, end, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * _M) & _MASK
        k ^= k >> _R
        k = (k * _M) & _MASK
        h ^= k
        h = (h * _M) & _MASK
    rest = data[end:]
    if rest:
        for i in reversed(range(len(rest))):
            h ^= rest[i] << (8 * i)
        h = (h * _M) & _MASK
    h ^= h >> _R
    h = (h * _M) & _MASK
    h ^= h >> _R
    return h


def hash64_combine(a: int, b: int) -> int:
    """TF's Hash64Combine(a, b)."""
    return (a ^ ((b + 0x9E3779B97F4A7800 + (a << 10) + (a >> 4)) & _MASK)) & _MASK


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _MASK


def siphash24(key, data: bytes) -> int:
    """SipHash-2-4 of `data` under the 128-bit key (k0, k1), as two uint64 words."""
    k0, k1 = int(key[0]) & _MASK, int(key[1]) & _MASK
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, count):
        for _ in range(count):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(data)
    end = n - n % 8
    for i in range(0, end, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[end:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3
