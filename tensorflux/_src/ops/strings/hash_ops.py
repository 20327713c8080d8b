"""Strings to hash buckets: StringToHashBucket (TF's Hash64), StringToHashBucketFast
(FarmHash Fingerprint64) and StringToHashBucketStrong (keyed SipHash-2-4), host records;
each bucket is the unsigned 64-bit hash modulo num_buckets, as an int64.

Public names: tf.strings.to_hash_bucket / tf.string_to_hash_bucket (TF1's signature with
`string_tensor`), tf.strings.to_hash_bucket_fast / tf.string_to_hash_bucket_fast and
tf.strings.to_hash_bucket_strong / tf.string_to_hash_bucket_strong.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.ops.op_builder import apply_op
from tensorflux._src.ops.op_helpers import deprecated_argument_lookup, kernel_error
from tensorflux._src.ops.registry import OpDef, REQUIRED, register
from tensorflux._src.ops.shape_fns import unchanged
from tensorflux._src.ops.strings import hashing
from tensorflux._src.ops.strings.string_util import map_strings, ragged_elementwise

__all__ = ["string_to_hash_bucket", "string_to_hash_bucket_fast",
           "string_to_hash_bucket_strong"]


def _buckets(hash_fn):
    def kernel(strings, num_buckets):
        return map_strings(lambda s: hash_fn(s) % num_buckets, strings, np.int64)
    return kernel


def _legacy_kernel(string_tensor, num_buckets):
    return _buckets(hashing.hash64)(string_tensor, num_buckets)


def _fast_kernel(input, num_buckets):  # noqa: A002 - TF's argument name
    return _buckets(hashing.fingerprint64)(input, num_buckets)


def _strong_kernel(input, num_buckets, key):  # noqa: A002
    if len(key) != 2:
        raise kernel_error("Key must have 2 elements")
    k0, k1 = (int(k) for k in key)  # int64 attrs, read as uint64 (TF's memcpy)
    return _buckets(lambda s: hashing.siphash24(k0, k1, s))(input, num_buckets)


_COMMON = dict(outputs=("output: int64",), shape=unchanged, not_differentiable=True)
register(OpDef("StringToHashBucket", inputs=("string_tensor: string",),
               attrs={"num_buckets": REQUIRED}, host=_legacy_kernel, **_COMMON))
register(OpDef("StringToHashBucketFast", inputs=("input: string",),
               attrs={"num_buckets": REQUIRED}, host=_fast_kernel, **_COMMON))
register(OpDef("StringToHashBucketStrong", inputs=("input: string",),
               attrs={"num_buckets": REQUIRED, "key": REQUIRED}, host=_strong_kernel,
               **_COMMON))


def _num_buckets(op_type, num_buckets):
    """TF's `num_buckets: int >= 1` attr check, when the op is built."""
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)):
        raise TypeError(f"Expected int for argument 'num_buckets' not {num_buckets!r}.")
    if num_buckets < 1:
        raise ValueError(f"Attr 'num_buckets' of '{op_type}' Op passed {int(num_buckets)} "
                         f"less than minimum 1.")
    return int(num_buckets)


@ragged_elementwise
def string_to_hash_bucket(string_tensor=None, num_buckets=None, name=None,
                          input=None):  # noqa: A002 - TF1's alias of string_tensor
    """Hash64(s) % num_buckets for each string (TF's deprecated, process-stable hash);
    prefer to_hash_bucket_fast or to_hash_bucket_strong."""
    string_tensor = deprecated_argument_lookup("input", input, "string_tensor", string_tensor)
    return apply_op("StringToHashBucket", name=name, string_tensor=string_tensor,
                    num_buckets=_num_buckets("StringToHashBucket", num_buckets))


@ragged_elementwise
def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """FarmHash Fingerprint64(s) % num_buckets for each string: stable forever, not
    cryptographic."""
    return apply_op("StringToHashBucketFast", name=name, input=input,
                    num_buckets=_num_buckets("StringToHashBucketFast", num_buckets))


@ragged_elementwise
def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """SipHash-2-4(key, s) % num_buckets for each string; `key` is a list of two ints,
    the 64-bit halves of the 128-bit SipHash key."""
    if not isinstance(key, (list, tuple)):
        raise TypeError(f"Expected list for 'key' argument to 'string_to_hash_bucket_strong' "
                        f"Op, not {key!r}.")
    return apply_op("StringToHashBucketStrong", name=name, input=input,
                    num_buckets=_num_buckets("StringToHashBucketStrong", num_buckets),
                    key=tuple(int(k) for k in key))
