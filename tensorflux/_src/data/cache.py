"""cache: the first full pass is recorded, later passes replay it.

With no filename the record is kept in memory for the iterator's life. With a filename
it is written to `<filename>.tfxcache` (.npy records, no pickles) once a pass
completes, atomically, and any later iterator, in this process or another, reads it
instead of computing the input again. A pass cut short records nothing.
"""

from __future__ import annotations

import os

import numpy as np

from tensorflux._src.data.dataset_ops import Dataset, ElementError
from tensorflux._src.train import atomic_write


class CacheDataset(Dataset):
    def __init__(self, input_dataset, filename=""):
        self._children = (input_dataset,)
        self._structure = input_dataset._structure
        self._filename = filename
        self._tensor_args = (filename,)

    def _iterate(self, ctx):
        filename = np.asarray(ctx.value(self._filename)).item()
        filename = filename.decode() if isinstance(filename, bytes) else str(filename)
        memory = ctx.memory(self)
        if "elements" in memory:
            yield from memory["elements"]
            return
        path = filename + ".tfxcache" if filename else None
        structure = self._structure
        if path and os.path.exists(path):
            for arrays in read_records(path, len(structure.flat_tensor_specs())):
                yield structure.from_arrays(arrays)
            return
        recorded = []
        for element in self._children[0]._iterate(ctx):
            if type(element) is not ElementError:  # a failed element is not replayed
                recorded.append(element)
            yield element
        memory["elements"] = recorded
        if path:
            atomic_write.write_with(path, lambda tmp: write_records(
                tmp, [structure.to_arrays(e) for e in recorded]))

    def _cardinality(self, ctx):
        return self._children[0]._cardinality(ctx)


def write_records(path, elements):
    """Flat elements (lists of arrays) as .npy records: the count, then the arrays."""
    with open(path, "wb") as f:
        write_array(f, np.int64(len(elements)))
        for element in elements:
            for array in element:
                write_array(f, array)


def read_records(path, n_components):
    with open(path, "rb") as f:
        count = int(read_array(f))
        for _ in range(count):
            yield [read_array(f) for _ in range(n_components)]


def write_array(f, array):
    """One array as a flag and .npy data (strings as their shape and lengths, then
    their bytes), without pickles; `f` needs only `write`."""
    array = np.asarray(array)
    is_string = array.dtype == object
    np.lib.format.write_array(f, np.asarray(is_string), allow_pickle=False)
    if is_string:
        flat = [bytes(v) for v in array.ravel()]
        np.lib.format.write_array(
            f, np.array([*array.shape, -1] + [len(v) for v in flat], np.int64),
            allow_pickle=False)
        array = np.frombuffer(b"".join(flat), np.uint8)
    np.lib.format.write_array(f, array, allow_pickle=False)


def read_array(f):
    """The array `write_array` wrote; EOFError at the end of `f` (needs only `read`)."""
    peek = getattr(f, "peek", None)
    if peek is not None and not peek(1):
        raise EOFError
    is_string = bool(np.lib.format.read_array(f, allow_pickle=False))
    array = np.lib.format.read_array(f, allow_pickle=False)
    if is_string:
        array = _strings(array, np.lib.format.read_array(f, allow_pickle=False))
    return array


def _strings(header, data):
    split = list(header).index(-1)
    shape, lengths = header[:split], header[split + 1:]
    ends = np.cumsum(lengths)
    raw = data.tobytes()
    values = [raw[end - n:end] for n, end in zip(lengths, ends)]
    out = np.empty(len(values), object)
    out[:] = values
    return out.reshape(shape)
