"""The three string hashes of TF's StringToHashBucket records.

- `hash64`: TF's own Hash64 (core/lib/hash/hash.cc), a MurmurHash64A variant over
  little-endian 8-byte words, seeded with 0xDECAFCAFFE (StringToHashBucket, deprecated).
- `fingerprint64`: FarmHash's Fingerprint64, through the pyfarmhash bindings of Google's
  library (StringToHashBucketFast; the same function as tf.fingerprint).
- `fingerprint_cat64`: TF's FingerprintCat64, chaining fingerprints (SparseCross).
- `hash64_combine`: TF's Hash64Combine, for MutableDenseHashTable's vector keys.
- `siphash24`: SipHash-2-4 with a 128-bit key given as two 64-bit halves k0, k1 (the
  reference key bytes 0..15 are k0 = LE64(bytes 0..7), k1 = LE64(bytes 8..15)), as
  highwayhash::SipHash computes it for StringToHashBucketStrong. Written here: no small,
  maintained package exposes keyed SipHash-2-4.
"""

from __future__ import annotations

_MASK = (1 << 64) - 1
_SEED = 0xDECAFCAFFE


def hash64(data: bytes, seed: int = _SEED) -> int:
    m, r = 0xC6A4A7935BD1E995, 47
    n = len(data)
    h = (seed ^ (n * m)) & _MASK
    full = n - n % 8
    for i in range(0, full, 8):
        k = int.from_bytes(data[i:i + 8], "little")
        k = (k * m) & _MASK
        k ^= k >> r
        k = (k * m) & _MASK
        h ^= k
        h = (h * m) & _MASK
    tail = data[full:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * m) & _MASK
    h ^= h >> r
    h = (h * m) & _MASK
    h ^= h >> r
    return h


def hash64_combine(a: int, b: int) -> int:
    """TF's Hash64Combine(a, b)."""
    return (a ^ ((b + 0x9E3779B97F4A7800 + (a << 10) + (a >> 4)) & _MASK)) & _MASK


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's FingerprintCat64 (core/platform/fingerprint.h): two fingerprints combined,
    as SparseCross's hashed crosses chain them."""
    def shift_mix(value):
        return value ^ (value >> 47)

    mul = 0xC6A4A7935BD1E995
    result = fp1 ^ mul
    result ^= (shift_mix((fp2 * mul) & _MASK) * mul) & _MASK
    result = (result * mul) & _MASK
    result = (shift_mix(result) * mul) & _MASK
    return shift_mix(result)


def fingerprint64(data: bytes) -> int:
    import farmhash  # pyfarmhash
    return int(farmhash.fingerprint64(data))


def _rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & _MASK


def _sip_rounds(v0, v1, v2, v3, rounds):
    for _ in range(rounds):
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


def siphash24(k0: int, k1: int, data: bytes) -> int:
    k0, k1 = k0 & _MASK, k1 & _MASK
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    full = len(data) - len(data) % 8
    for i in range(0, full, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = _sip_rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3
