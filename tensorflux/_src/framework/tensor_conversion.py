"""Python values -> numpy arrays with TF's dtype rules, and `convert_to_tensor`.

TF's rules: Python ints become int32 (int64 when they don't fit), floats float32, bools
bool, str/bytes string; numpy arrays keep their dtype. A requested dtype must fit the
Python values: `Expected int32, got 1.5 of type 'float' instead.`
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework.operation import Tensor

_INT32 = np.iinfo(np.int32)

# (python type, conversion function, priority) - e.g. Variables register themselves here.
_conversion_functions = []


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Lets objects of `base_type` be used wherever a Tensor is expected."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda entry: entry[0])


def _leaves(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _fits(dtype, v) -> bool:
    if dtype.is_integer:
        return isinstance(v, (numbers.Integral, np.integer))
    if dtype.is_floating:
        return isinstance(v, (numbers.Real, np.integer, np.floating))
    if dtype.is_complex:
        return isinstance(v, (numbers.Number, np.number))
    if dtype == _dtypes.bool:
        return isinstance(v, (bool, np.bool_))
    if dtype == _dtypes.string:
        return isinstance(v, (bytes, str, np.bytes_, np.str_))
    return True


def _check_compatible(values, dtype):
    for v in _leaves(values):
        if v is None:
            raise ValueError("None values not supported.")
        if isinstance(v, np.ndarray):
            continue
        if not _fits(dtype, v):
            raise TypeError(f"Expected {dtype.name}, got {v!r} of type "
                            f"'{type(v).__name__}' instead.")


def _to_bytes_array(arr: np.ndarray) -> np.ndarray:
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1)):
        flat[i] = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    return out


def _dense_dims(values):
    dims = []
    while isinstance(values, (list, tuple)):
        dims.append(len(values))
        if not values:
            break
        values = values[0]
    return dims


def _python_to_numpy(values, dtype):
    if dtype is not None:
        _check_compatible(values, dtype)
    else:
        for v in _leaves(values):
            if v is None:
                raise ValueError("None values not supported.")
    try:
        if dtype is not None and dtype != _dtypes.string:
            return np.array(values, dtype=dtype.as_numpy_dtype)
        first = next(_leaves(values), None)
        if isinstance(first, (bytes, str)):
            # Strings as objects: numpy would decode bytes into a unicode array (and fail
            # on non-UTF-8 bytes such as b"\xff" mixed with str).
            arr = np.array(values, dtype=object)
            if list(arr.shape) != _dense_dims(values):
                raise ValueError
        else:
            arr = np.array(values)
    except OverflowError:
        raise ValueError(f"Can't convert Python int too large to "
                         f"{dtype.name if dtype else 'int64'}: {values!r}") from None
    except ValueError:
        raise ValueError(f"Argument must be a dense tensor: {values!r} - got a ragged "
                         f"nesting; wanted shape {_dense_dims(values)}.") from None
    if dtype == _dtypes.string and arr.size == 0:
        return arr.astype(object)  # numpy makes float64 of an empty list
    if arr.dtype.kind in "OUS":
        if any(not isinstance(v, (bytes, str, np.bytes_, np.str_)) for v in _leaves(values)):
            raise TypeError(f"Failed to convert object of type {type(values).__name__} to "
                            f"Tensor. Contents: {values!r}. Consider casting elements to a "
                            f"supported type.")
        # Not _to_bytes_array(arr): numpy's fixed-width bytes drop trailing NULs, which
        # binary strings (serialized protos, raw bytes) often end with.
        out = np.empty(arr.shape, dtype=object)
        out.reshape(-1)[:] = [v.encode("utf-8") if isinstance(v, str) else bytes(v)
                              for v in _leaves(values)]
        return out
    if dtype is None:
        # Python numbers: floats default to float32, ints to int32 when they fit.
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= _INT32.min
                                                          and arr.max() <= _INT32.max)):
            arr = arr.astype(np.int32)
    return arr


def make_ndarray(values, dtype=None, shape=None, verify_shape=False) -> np.ndarray:
    """The numpy value of `tf.constant(values, dtype, shape)` (TF1 semantics)."""
    dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
    if isinstance(values, (np.ndarray, np.generic)):
        arr = np.asarray(values)
        if dtype == _dtypes.string:
            arr = _to_bytes_array(arr) if arr.dtype != object else arr
        elif dtype is not None:
            arr = arr.astype(dtype.as_numpy_dtype)
        elif arr.dtype.kind in "US":
            arr = _to_bytes_array(arr)
    else:
        arr = _python_to_numpy(values, dtype)
    if arr.dtype.kind not in "biufcOV" and arr.dtype != object:
        raise TypeError(f"Unsupported numpy dtype {arr.dtype} for a Tensor.")
    if shape is None:
        return arr
    shape = tuple(int(d) for d in np.reshape(np.asarray(shape, dtype=np.int64), -1)) \
        if not isinstance(shape, int) else (shape,)
    size = int(np.prod(shape, dtype=np.int64))
    if verify_shape and arr.shape != shape:
        raise TypeError(f"Expected Tensor's shape: {shape}, got {arr.shape}.")
    if arr.size == size:
        return arr.reshape(shape)
    if arr.size > size:
        raise ValueError(f"Too many elements provided. Needed at most {size}, but received "
                         f"{arr.size}")
    if arr.size == 0:
        raise ValueError(f"Cannot create a tensor of shape {shape} from an empty value.")
    # TF1 fills the remaining elements with the last value given.
    flat = np.concatenate([arr.reshape(-1), np.repeat(arr.reshape(-1)[-1:], size - arr.size)])
    return flat.reshape(shape)


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """Converts Tensors, registered types, numpy and Python values into a Tensor."""
    preferred_dtype = preferred_dtype or dtype_hint
    if isinstance(value, Tensor):
        if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}: {value!r}")
        return value
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=False)
            if result is not NotImplemented:
                return result
    from tensorflux._src.ops.constant import constant
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name or "Const")


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    return [convert_to_tensor(v, dtype=dtype, name=None if name is None else f"{name}_{i}",
                              preferred_dtype=preferred_dtype) for i, v in enumerate(values)]


def _contains_tensor(value) -> bool:
    return any(isinstance(v, Tensor) or hasattr(v, "_as_graph_element") for v in _leaves(value))
