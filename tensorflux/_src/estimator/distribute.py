"""`RunConfig(train_distribute=..., eval_distribute=...)`: an Estimator trained or
evaluated with a `tf.distribute.MirroredStrategy`.

TF 1.15's Estimator hands each replica its own batch from the input_fn (its
MultiDeviceIterator gives consecutive elements to consecutive devices), so the input_fn's
batch size is per replica and a step consumes one batch per replica. Here the graph is
built once, in the strategy's scope, on the step's global batch: the batches of the
replicas on this host are joined along axis 0 (`ReplicaBatchesDataset`) and the
strategy's SPMD machinery splits the joined batch back over the devices, so each device
holds the rows its replica would have read. With a mean loss this is TF's update
(TF scales each replica's loss by 1/replicas and sums the gradients). A last,
incomplete group of batches is dropped, as TF's iterator stops when one device's input
ends.
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data.dataset_ops import Dataset, ElementError, groups_of


class ReplicaBatchesDataset(Dataset):
    """Each element joins `num_replicas` consecutive elements of `input_dataset` along
    axis 0 (the first replica's rows first)."""

    def __init__(self, input_dataset, num_replicas):
        shapes = [[None if dims[0] is None else dims[0] * num_replicas] + dims[1:]
                  for dims in batch_major_dims(
                      input_dataset, "An Estimator with a distribution strategy")]
        structure = input_dataset._structure
        self._children = (input_dataset,)
        self._num_replicas = num_replicas
        self._structure = structure.with_shapes(shapes)

    def _iterate(self, ctx):
        for group in groups_of(self._children[0]._iterate(ctx), self._num_replicas, True):
            if type(group) is ElementError:
                yield group
                continue
            yield tuple(np.concatenate([element[c] for element in group], axis=0)
                        for c in range(len(group[0])))


def batch_major_dims(input_dataset, who):
    """Each component's static dims, after checking the input_fn's Dataset is what
    `who` can split by rows: dense components of rank >= 1, the batch first."""
    structure = input_dataset._structure
    if not structure.all_dense:
        raise TypeError(f"{who} needs an input_fn of dense tensors (no SparseTensor, "
                        f"RaggedTensor or nested Dataset components); got "
                        f"{structure.describe()}")
    all_dims = []
    for spec in structure.specs:
        dims = spec.shape.as_list() if spec.shape.ndims is not None else None
        if not dims:
            raise ValueError(f"{who} needs batched input from input_fn (tensors of rank "
                             f">= 1, the batch first); got shape {spec.shape} in "
                             f"{structure.describe()}")
        all_dims.append(dims)
    return all_dims


def check_strategy(strategy, name):
    """`strategy` if it is a tensorflux distribution strategy, else TF's error."""
    if strategy is not None and not (hasattr(strategy, "scope")
                                     and hasattr(strategy, "num_replicas_in_sync")):
        raise ValueError(f"RunConfig.{name} must be a tf.distribute strategy such as "
                         f"tf.distribute.MirroredStrategy(); got {type(strategy).__name__}: "
                         f"{strategy!r}")
    return strategy


def local_replicas(strategy):
    """Replicas fed by this process: all of them, or this worker's share of a
    multi-worker strategy (each worker's input is joined across the workers)."""
    return strategy.num_replicas_in_sync // max(1, getattr(strategy, "num_workers", 1))


def distribute_input(result, strategy):
    """The input_fn's Dataset with one batch per local replica joined per step."""
    if not isinstance(result, Dataset):
        raise ValueError(f"With a distribution strategy (RunConfig.train_distribute / "
                         f"eval_distribute) the input_fn must return a tf.data.Dataset "
                         f"of per-replica batches; it returned {type(result).__name__}.")
    replicas = local_replicas(strategy)
    return result if replicas == 1 else ReplicaBatchesDataset(result, replicas)
