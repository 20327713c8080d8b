"""String hash buckets: SipHash-2-4 and TF's Hash64 against published test vectors, the
FarmHash buckets against pyfarmhash, and TF's documented bucket examples."""

import farmhash
import numpy as np
import pytest

import tensorflux as tf
from tensorflux._src.ops.strings import hashing
from tests.helpers import run

# SipHash-2-4 reference vectors (Aumasson & Bernstein): key bytes 00..0f, message bytes
# 00..n-1, the 64-bit result as its little-endian bytes.
SIPHASH_VECTORS = {
    0: "310e0edd47db6f72", 1: "fd67dc93c539f874", 2: "5a4fa9d909806c0d",
    3: "2d7efbd796666785", 4: "b7877127e09427cf", 5: "8da699cd64557618",
    6: "cee3fe586e46c9cb", 7: "37d1018bf50002ab", 8: "6224939a79f5f593",
    9: "b0e4a90bdf82009e", 10: "f3b9dd94c5bb5d7a", 11: "a7ad6b22462fb3f4",
    15: "e545be4961ca29a1",
}
# TF's hash_test.cc: (data, seed, Hash64).
HASH64_VECTORS = [(b"", 0xBC9F1D34, 0x4C61EA3EEDA4CB87),
                  (b"\x62", 0xBC9F1D34, 0x091309F7EF916C8A),
                  (b"\xc3\x97", 0xBC9F1D34, 0xA815BCDF1D1AF01C),
                  (b"\xe2\x99\xa5", 0xBC9F1D34, 0x02167564E4D06430),
                  (b"\xe1\x80\xb9\x32", 0xBC9F1D34, 0x8F7ED82FFC21071F),
                  (bytes([0x01, 0xc0] + [0] * 14 + [0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0,
                                                    0x14, 0, 0, 0, 0x18, 0x28] + [0] * 7
                         + [0x02] + [0] * 7), 0x12345678, 0xCE196580C97AFF1E)]


def test_siphash_reference_vectors():
    k0, k1 = int.from_bytes(bytes(range(8)), "little"), int.from_bytes(bytes(range(8, 16)),
                                                                       "little")
    for n, want in SIPHASH_VECTORS.items():
        got = hashing.siphash24(k0, k1, bytes(range(n)))
        assert got.to_bytes(8, "little").hex() == want, n


def _murmur64(data: bytes, seed: int) -> int:
    """MurmurHash64A as in TF's hash.cc, written over numpy uint64 words."""
    m, r = np.uint64(0xC6A4A7935BD1E995), np.uint64(47)
    with np.errstate(over="ignore"):
        h = np.uint64(seed) ^ (np.uint64(len(data)) * m)
        words = np.frombuffer(data[:len(data) // 8 * 8], "<u8")
        for k in words:
            k = k * m
            k ^= k >> r
            h = (h ^ (k * m)) * m
        tail = data[len(data) // 8 * 8:]
        if tail:
            h = (h ^ np.uint64(int.from_bytes(tail, "little"))) * m
        h ^= h >> r
        h = h * m
        h ^= h >> r
    return int(h)


def test_hash64_vectors():
    for data, seed, want in HASH64_VECTORS:
        assert _murmur64(data, seed) == want
        assert hashing.hash64(data, seed) == want


def test_buckets_against_references_and_tf_docs():
    words = ["Hello", "TensorFlow", "2.x", "", "ünï", "a" * 37]
    got = run({"fast_doc": tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3),
               "strong_doc": tf.strings.to_hash_bucket_strong(["Hello", "TF"], 3, [1, 2]),
               "fast": tf.string_to_hash_bucket_fast(words, 1000003),
               "strong": tf.string_to_hash_bucket_strong([words], 97, [2 ** 63 - 1, -5]),
               "legacy": tf.string_to_hash_bucket(words, 1000),
               "legacy_input": tf.strings.to_hash_bucket(input=[["x"]], num_buckets=7)})
    assert got["fast_doc"].tolist() == [0, 2, 2]
    assert got["strong_doc"].tolist() == [2, 0]
    assert got["fast"].dtype == np.int64
    assert got["fast"].tolist() == [farmhash.fingerprint64(w.encode()) % 1000003 for w in words]
    key = (2 ** 63 - 1, (-5) % 2 ** 64)
    assert got["strong"].tolist() == [[hashing.siphash24(*key, w.encode()) % 97
                                       for w in words]]
    assert got["legacy"].tolist() == [_murmur64(w.encode(), 0xDECAFCAFFE) % 1000 for w in words]
    assert got["legacy_input"].tolist() == [[_murmur64(b"x", 0xDECAFCAFFE) % 7]]
    assert tf.strings.to_hash_bucket_fast is tf.string_to_hash_bucket_fast
    assert tf.strings.to_hash_bucket_strong is tf.string_to_hash_bucket_strong
    x = tf.placeholder(tf.string, [None, 3])
    out = tf.strings.to_hash_bucket_fast(x, 10)
    assert out.dtype == tf.int64 and out.shape.as_list() == [None, 3]
    assert out.op.type == "StringToHashBucketFast"


def test_bucket_errors():
    with pytest.raises(ValueError, match="Attr 'num_buckets' of 'StringToHashBucketFast' Op "
                                         "passed 0 less than minimum 1."):
        tf.strings.to_hash_bucket_fast(["a"], 0)
    with pytest.raises(TypeError, match="Expected list for 'key' argument"):
        tf.strings.to_hash_bucket_strong(["a"], 3, 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key must have 2 elements"):
        run(tf.strings.to_hash_bucket_strong(["a"], 3, [1, 2, 3]))
