"""Datasets that pick their elements from several inputs or by chance:
choose_from_datasets, sample_from_datasets and rejection_resample.

Random choices use NumPy generators seeded as the other random nodes are (the op's
seed and the graph seed, else fresh per iterator initialization); TF's Philox streams
are not reproduced, the distributions are.
"""

from __future__ import annotations

import functools

import numpy as np

from tensorflux._src.data import structure as _structure
from tensorflux._src.data.dataset_ops import Dataset, ElementError, pass_rng
from tensorflux._src.data.functions import StructuredFunction
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import errors, random_seed
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.type_spec import TensorSpec


def _common_structure(datasets):
    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    for dataset in datasets:
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Invalid `datasets`. `datasets` must be a list of "
                            f"`tf.data.Dataset` objects, got {type(dataset).__name__}.")
    first = datasets[0]._structure
    for dataset in datasets[1:]:
        if not first.same_types(dataset._structure):
            raise TypeError("All datasets must have the same type and class.")
    return datasets, functools.reduce(lambda a, b: a.most_specific_compatible(b),
                                      [d._structure for d in datasets])


class _Directed(Dataset):
    """Elements of `datasets`, each from the input the next choice names. A choice of
    an exhausted input is skipped; with stop_on_empty_dataset the first exhausted
    input ends the stream, as in TF's DirectedInterleave kernel."""

    def _setup(self, datasets, stop_on_empty_dataset, extra_children=()):
        self._datasets, self._structure = _common_structure(datasets)
        self._children = (*extra_children, *self._datasets)
        self._stop = bool(stop_on_empty_dataset)

    def _choices(self, ctx, active):
        raise NotImplementedError

    def _iterate(self, ctx):
        inputs = [d._iterate(ctx) for d in self._datasets]
        active = [True] * len(inputs)
        for choice in self._choices(ctx, active):
            if type(choice) is ElementError:
                yield choice
                continue
            if not 0 <= choice < len(inputs):
                yield ElementError(errors.InvalidArgumentError(
                    None, None, f"Selector index out of range: {choice} >= {len(inputs)}"))
                continue
            if not active[choice]:
                continue
            element = next(inputs[choice], None)
            if element is None:
                active[choice] = False
                if self._stop or not any(active):
                    return
                continue
            yield element


class ChooseFromDatasetsDataset(_Directed):
    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset):
        if not isinstance(choice_dataset, Dataset):
            raise TypeError("`choice_dataset` must be a dataset of scalar `tf.int64` tensors.")
        spec = choice_dataset._structure.specs
        if _structure.is_structure(choice_dataset._structure.template) or len(spec) != 1 or \
                not isinstance(spec[0], TensorSpec) or spec[0].dtype != _dtypes.int64 or \
                not spec[0].shape.is_compatible_with([]):
            raise TypeError("`choice_dataset` must be a dataset of scalar `tf.int64` tensors.")
        self._setup(datasets, stop_on_empty_dataset, (choice_dataset,))

    def _choices(self, ctx, active):
        for element in self._children[0]._iterate(ctx):
            yield element if type(element) is ElementError else int(element[0])


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    return ChooseFromDatasetsDataset(datasets, choice_dataset, stop_on_empty_dataset)


class SampleFromDatasetsDataset(_Directed):
    """Each element from an input drawn with probability proportional to `weights`
    (fixed, or the next element of a weights dataset); exhausted inputs drop out."""

    def __init__(self, datasets, weights, seed, stop_on_empty_dataset, rerandomize):
        self._weights_dataset = weights if isinstance(weights, Dataset) else None
        datasets = list(datasets)
        if self._weights_dataset is not None:
            specs = weights._structure.specs
            if len(specs) != 1 or specs[0].dtype not in (_dtypes.float32, _dtypes.float64):
                raise TypeError("`weights` must be a dataset of `tf.float32` elements.")
            if not specs[0].shape.is_compatible_with([len(datasets)]):
                raise TypeError("`weights` must be a dataset of `tf.float32` elements with "
                                "shape [len(datasets)].")
            self._weights = None
            extra = (weights,)
        else:
            self._weights = _weights_arg(weights, len(datasets))
            extra = ()
        self._setup(datasets, stop_on_empty_dataset, extra)
        self._tensor_args = (self._weights,)
        self._seeds = random_seed.get_seed(seed)
        self._rerandomize = bool(rerandomize)

    def _choices(self, ctx, active):
        epoch = ctx.next_pass(self)
        rng = pass_rng(self._seeds, ctx, epoch if self._rerandomize else 0)
        if self._weights_dataset is not None:
            for element in self._weights_dataset._iterate(ctx):
                if type(element) is ElementError:
                    yield element
                    continue
                yield _draw(rng, np.asarray(element[0], np.float64), active)
            return
        weights = np.asarray(ctx.value(self._weights), np.float64)
        while True:
            if not any(w > 0 and a for w, a in zip(weights, active)):
                return  # only inputs that can never be chosen are left
            yield _draw(rng, weights, active)


def _draw(rng, weights, active):
    p = np.where(active, np.maximum(weights, 0), 0.0)
    total = p.sum()
    if total <= 0:
        return int(rng.integers(len(weights)))
    return int(rng.choice(len(weights), p=p / total))


def _weights_arg(weights, n):
    if weights is None:
        return np.ones(n, np.float32)
    if isinstance(weights, Tensor):
        tensor = weights
    else:
        tensor = convert_to_tensor(weights, preferred_dtype=_dtypes.float32, name="weights")
    if tensor.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError("`weights` must be convertible to a tensor of `tf.float32` or "
                        "`tf.float64` elements.")
    if not tensor.shape.is_compatible_with([n]):
        raise ValueError("`weights` must be a vector of length `len(datasets)`.")
    return tensor


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    return SampleFromDatasetsDataset(datasets, weights, seed, stop_on_empty_dataset,
                                     rerandomize_each_iteration)


class RejectionResampleDataset(Dataset):
    """(class, element) pairs whose classes follow `target_dist`: each element is kept
    with probability (target/initial)[c] / max(target/initial), the initial
    distribution given or estimated from the classes seen so far."""

    def __init__(self, dataset, class_func, target_dist, initial_dist=None, seed=None):
        self._children = (dataset,)
        self._class_function = StructuredFunction(class_func, dataset._structure,
                                                  "rejection_resample")
        specs = self._class_function.output_structure.specs
        if len(specs) != 1 or not isinstance(specs[0], TensorSpec) or \
                not specs[0].dtype.is_integer or not specs[0].shape.is_compatible_with([]):
            raise ValueError("`class_func` must return a scalar integer tensor.")
        self._functions = (self._class_function,)
        self._target = _distribution(target_dist, "target_dist")
        self._initial = None if initial_dist is None else _distribution(initial_dist,
                                                                        "initial_dist")
        self._tensor_args = (self._target, self._initial)
        self._seeds = random_seed.get_seed(seed)
        inner = dataset._structure
        self._structure = _structure.Structure((None, inner.template),
                                               [specs[0]] + list(inner.specs))

    def _iterate(self, ctx):
        class_of = ctx.function(self._class_function)
        target = np.asarray(ctx.value(self._target), np.float64)
        given = None if self._initial is None else np.asarray(ctx.value(self._initial),
                                                              np.float64)
        counts = np.zeros(len(target))
        rng = pass_rng(self._seeds, ctx, ctx.next_pass(self))
        for element in self._children[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                value = class_of(element)[0]
            except errors.OpError as exc:
                yield ElementError(exc)
                continue
            c = int(value)
            if not 0 <= c < len(target):
                yield ElementError(errors.InvalidArgumentError(
                    None, None, f"class_func returned the class {c}, outside [0, "
                    f"{len(target)}) of target_dist"))
                continue
            counts[c] += 1
            initial = given if given is not None else counts / counts.sum()
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(initial > 0, target / initial, 0.0)
            if rng.random() < ratio[c] / ratio.max():
                yield (value, *element)


def _distribution(value, name):
    if isinstance(value, Tensor):
        return value
    return convert_to_tensor(value, preferred_dtype=_dtypes.float32, name=name)


def rejection_resample(dataset, class_func, target_dist, initial_dist=None, seed=None):
    return RejectionResampleDataset(dataset, class_func, target_dist, initial_dist, seed)
