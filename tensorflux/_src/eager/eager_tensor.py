"""`EagerTensor`: a Tensor whose value is known, as eager execution returns them.

An eager op's outputs are ordinary `Tensor`s (shape inference, dtypes and every wrapper
work on them unchanged) whose class is switched to this one once the op has run
(`eager_graph.EagerGraph._add_op`). The value is a device buffer (a JAX array; numpy
object arrays for strings) in `_value`; `numpy()` copies it to the host once.

A variable's ref tensor (the output of its VariableV2 op) is an EagerTensor whose
`_value` is the variable's current buffer: writers replace it, reads snapshot it.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorflux._src.framework import errors
from tensorflux._src.framework.operation import Tensor

_ids = itertools.count(1)


class EagerTensor(Tensor):
    """A tensor holding a concrete value (see the module docstring)."""

    _is_eager = True
    # Set by EagerGraph: _value (device buffer), _numpy (host copy, lazily), _id.

    def _read(self):
        """The device value; a ref tensor's is its variable's current buffer."""
        source = getattr(self, "_ref_source", None)
        value = self._value if source is None else source._value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Error while reading resource variable {self._op.name} from "
                            f"Container: localhost. This could mean that the variable was "
                            f"uninitialized.")
        return value

    def numpy(self):
        """The value as a numpy array, a numpy scalar for 0-d tensors (as TF's)."""
        if self._dtype._is_ref_dtype:
            value = np.array(self._read())
            return value[()] if value.ndim == 0 else value
        host = self.__dict__.get("_numpy")
        if host is None:
            host = np.asarray(self._read())
            host = self._numpy = host[()] if host.ndim == 0 else host
        return host

    # -- Python protocol: values, not symbols ---------------------------------------------
    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self.numpy())
        return value if dtype is None else value.astype(dtype)

    def __bool__(self):
        return bool(self.numpy())

    def __nonzero__(self):
        return self.__bool__()

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        value = np.asarray(self.numpy())
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise TypeError(f"Only integer scalar tensors can be converted to an index; got "
                            f"a {self._dtype.name} tensor of shape {self._shape}")
        return int(value)

    def __len__(self):
        if self._shape.ndims == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return int(np.shape(self.numpy())[0])

    def __iter__(self):
        if self._shape.ndims == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(len(self)):
            yield self[i]

    def __format__(self, format_spec):
        return format(self.numpy(), format_spec) if format_spec else str(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (np.asarray, (self.numpy(),))

    def _numpy_text(self, is_repr=False):
        value = self.numpy()
        # A scalar shows as its value ("numpy=3.0"), as TF does; arrays as their repr.
        text = repr(value) if is_repr and np.ndim(value) else str(value)
        return "\n" + text if "\n" in text else text

    def __str__(self):
        return (f"tf.Tensor({self._numpy_text()}, shape={self._shape}, "
                f"dtype={self._dtype.name})")

    def __repr__(self):
        return (f"<tf.Tensor: id={self._id}, shape={self._shape}, dtype={self._dtype.name}, "
                f"numpy={self._numpy_text(is_repr=True)}>")

    # -- graph-only members -----------------------------------------------------------
    def eval(self, feed_dict=None, session=None):
        raise NotImplementedError("eval is not supported when eager execution is enabled, "
                                  "is .numpy() what you're looking for?")

    def consumers(self):
        raise NotImplementedError("Tensor.consumers is meaningless when eager execution is "
                                  "enabled.")

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def cpu(self):
        return self

    def gpu(self, gpu_index=0):
        return self


def make_eager(tensor, value):
    """Turns a Tensor just produced by an eager op into an EagerTensor holding `value`."""
    tensor.__class__ = EagerTensor
    tensor._value = value
    tensor._id = next(_ids)
    return tensor


def next_id():
    return next(_ids)
