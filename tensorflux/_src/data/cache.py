"""cache: the first full pass is recorded, later passes replay it.

With no filename the record is kept in memory for the iterator's life. With a filename
it is written to `<filename>.tfxcache` (NumPy's .npy records, no pickles) once a pass
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


def write_records(path, elements, opener=open):
    """Flat elements (lists of arrays) as .npy records: the count, then per array a
    string flag and the array (strings as their lengths and bytes). No pickles."""
    with opener(path, "wb") as f:
        _write(f, elements)


def read_records(path, n_components, opener=open):
    with opener(path, "rb") as f:
        yield from _read(f, n_components)


def _write(f, elements):
    np.save(f, np.int64(len(elements)))
    for element in elements:
        for component in element:
            array = np.asarray(component)
            is_string = array.dtype == object
            np.save(f, np.bool_(is_string))
            if is_string:  # strings: shape and lengths, then their bytes
                flat = [bytes(v) for v in array.ravel()]
                np.save(f, np.array([*array.shape, -1] + [len(v) for v in flat], np.int64))
                array = np.frombuffer(b"".join(flat), np.uint8)
            np.save(f, array, allow_pickle=False)


def _read(f, n_components):
    count = int(np.load(f))
    for _ in range(count):
        element = []
        for _ in range(n_components):
            is_string = bool(np.load(f))
            array = np.load(f, allow_pickle=False)
            if is_string:
                array = _strings(array, np.load(f, allow_pickle=False))
            element.append(array)
        yield element


def _strings(header, data):
    split = list(header).index(-1)
    shape, lengths = header[:split], header[split + 1:]
    ends = np.cumsum(lengths)
    raw = data.tobytes()
    values = [raw[end - n:end] for n, end in zip(lengths, ends)]
    out = np.empty(len(values), object)
    out[:] = values
    return out.reshape(shape)
