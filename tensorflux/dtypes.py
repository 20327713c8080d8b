"""`tf.dtypes`: the DType class, TF's element types and the casts between them."""

import types as _types

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.dtypes import *  # noqa: F401,F403
from tensorflux._src.framework.dtypes import DType, as_dtype  # noqa: F401
from tensorflux._src.ops.math.math_ops import cast, complex, saturate_cast  # noqa: F401,A004
from tensorflux._src.ops.strings.string_ops import as_string  # noqa: F401

# `tf.dtypes.experimental`: the narrow float and integer types of later TF versions.
experimental = _types.ModuleType("tensorflux.dtypes.experimental")
for _name in ("float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
              "float8_e5m2fnuz", "int4", "uint4", "int2", "uint2", "float4_e2m1fn"):
    setattr(experimental, _name, getattr(_dtypes, _name))
