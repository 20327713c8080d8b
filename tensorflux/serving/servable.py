"""A loaded SavedModel that runs its signatures: what the model server serves.

    servable = load_servable("exports/mnist/1")       # tags ("serve",)
    servable.signatures["serving_default"].inputs      # {key: TensorInfo(name, dtype, shape)}
    servable.run("serving_default", {"images": batch}) # {output key: np.ndarray}

`run` checks a request against the signature before anything runs: an unknown
signature raises NotFound, missing or unknown input keys, values that cannot be
converted to the input's dtype (JSON numbers for an int input that are not integers,
text for a float input, out-of-range integers) and shapes the signature does not accept
raise InvalidInput, each naming the input. Runs are serialized by a lock, so one
Servable can be shared by the threads of a server.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.serving import saved_model
from tensorflux._src.serving.signatures import SignatureDef
from tensorflux.serving.errors import InvalidInput, NotFound

__all__ = ["Servable", "load_servable"]


def load_servable(export_dir, tags=("serve",)) -> "Servable":
    """Loads the meta graph tagged `tags` of the SavedModel in `export_dir`."""
    from tensorflux._src.framework.graph import Graph
    from tensorflux._src.runtime.session import Session

    export_dir = os.fspath(export_dir)
    graph = Graph()
    session = Session(graph=graph)
    try:
        meta_graph = saved_model.load(session, list(tags), export_dir)
    except BaseException:
        session.close()
        raise
    graph.finalize()
    return Servable(export_dir, session, meta_graph)


class Servable:
    """One loaded model version; see the module docstring."""

    def __init__(self, export_dir, session, meta_graph):
        self.export_dir = export_dir
        self.meta_graph = meta_graph  # TF's MetaGraphDef message
        self._signatures = {key: SignatureDef._from_proto(sig)
                            for key, sig in meta_graph.signature_def.items()}
        self._session = session
        self._lock = threading.Lock()
        self._closed = False
        name = os.path.basename(os.path.normpath(export_dir))
        self.version = int(name) if name.isdigit() else None

    @property
    def signatures(self):
        """{signature key: SignatureDef}."""
        return dict(self._signatures)

    def signature(self, signature_name):
        try:
            return self._signatures[signature_name]
        except KeyError:
            available = ", ".join(sorted(self._signatures)) or "(none)"
            raise NotFound(f"unknown signature {signature_name!r}; available: "
                           f"{available}") from None

    def run(self, signature_name, feeds):
        """Runs a signature: {input key: array-like} -> {output key: np.ndarray}."""
        sig = self.signature(signature_name)
        if not isinstance(feeds, dict):
            raise InvalidInput(f"inputs must be a mapping of input names to values, got "
                               f"{type(feeds).__name__}")
        missing = [k for k in sig.inputs if k not in feeds]
        if missing:
            raise InvalidInput(f"missing input {missing[0]!r}"
                               + (f" (signature {signature_name!r} takes: "
                                  f"{', '.join(sorted(sig.inputs))})"
                                  if len(sig.inputs) > 1 else ""))
        unknown = [k for k in feeds if k not in sig.inputs]
        if unknown:
            raise InvalidInput(f"unknown input {unknown[0]!r}; signature {signature_name!r} "
                               f"takes: {', '.join(sorted(sig.inputs))}")
        feed_dict = {sig.inputs[k].name: _converted(k, feeds[k], sig.inputs[k])
                     for k in sig.inputs}
        keys = sorted(sig.outputs)
        fetches = [sig.outputs[k].name for k in keys]
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the servable {self.export_dir} is closed")
            values = self._session.run(fetches, feed_dict)
        return {k: np.asarray(v) for k, v in zip(keys, values)}

    def close(self):
        with self._lock:
            if not self._closed:
                self._closed = True
                self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"<Servable {self.export_dir!r} version={self.version} "
                f"signatures={sorted(self._signatures)}>")


def _shape_text(dims):
    return "[" + ", ".join("-1" if d is None else str(d) for d in dims) + "]"


def _converted(key, value, info):
    """`value` as an array of the input's dtype and an accepted shape, or InvalidInput."""
    dtype = info.dtype
    try:
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise InvalidInput(f"input {key!r} is not a rectangular array: {exc}") from None
    if array.dtype == object and array.size and isinstance(array.reshape(-1)[0], list):
        raise InvalidInput(f"input {key!r} is not a rectangular array")
    array = _as_dtype(key, array, dtype)
    expected = info.shape
    if expected is not None:
        ok = array.ndim == len(expected) and all(
            e is None or e == s for e, s in zip(expected, array.shape))
        if not ok:
            raise InvalidInput(f"input {key!r} has shape {_shape_text(array.shape)} but the "
                               f"signature expects {_shape_text(expected)}")
    return array


def _as_dtype(key, array, dtype):
    if dtype != _dtypes.string and array.dtype == dtype.as_numpy_dtype:
        # Already the input's dtype (the REST layer converts and checks every request
        # before it gets here): no copy, no second range check.
        return array
    if dtype == _dtypes.string:
        if array.dtype.kind in "SU" or array.dtype == object:
            flat = array.reshape(-1)
            out = np.empty(flat.shape, dtype=object)
            for i, v in enumerate(flat):
                if isinstance(v, str):
                    out[i] = v.encode("utf-8")
                elif isinstance(v, bytes):
                    out[i] = v
                else:
                    raise InvalidInput(f"input {key!r} expects strings, got "
                                       f"{type(v).__name__} {v!r}")
            return out.reshape(array.shape)
        raise InvalidInput(f"input {key!r} expects strings, got {array.dtype.name} values")
    target = np.dtype(dtype.as_numpy_dtype)
    kind = array.dtype.kind
    if kind not in "biufc":
        if array.size == 0:
            return np.zeros(array.shape, target)
        raise InvalidInput(f"input {key!r} expects {dtype.name} values, got "
                           f"{_describe(array)}")
    if target.kind == "b":
        if kind == "b":
            return array
        if kind in "iu" and np.isin(array, (0, 1)).all():
            return array.astype(bool)
        raise InvalidInput(f"input {key!r} expects bool values, got {array.dtype.name}")
    if target.kind in "iu":
        if kind == "c" or kind == "f" and not (np.isfinite(array).all()
                                               and (array == np.round(array)).all()):
            raise InvalidInput(f"input {key!r} expects {dtype.name} values, got "
                               f"non-integer numbers")
        if array.size:
            info = np.iinfo(target)
            if array.min() < info.min or array.max() > info.max:
                raise InvalidInput(f"input {key!r} has values out of the range of "
                                   f"{dtype.name} ({info.min}..{info.max})")
        return array.astype(target)
    if kind == "c" and target.kind != "c":
        raise InvalidInput(f"input {key!r} expects {dtype.name} values, got complex numbers")
    return array.astype(target)


def _describe(array):
    sample = array.reshape(-1)[0]
    return f"{type(sample).__name__} {sample!r}" if array.size else array.dtype.name
