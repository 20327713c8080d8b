"""The host side of a training loop's input ("infeed"): a Dataset node that turns the
input_fn's per-step batches into one element per loop, each component stacked
[global_batch, steps, ...].

The batch stays the first axis so that `Replicas` splits every loop's input along it:
each device holds its own rows of every step, as each TPU core gets its shard. A loop
of K steps is one element, so one Session.run fetches all K batches at once; the last
element of a finite input may hold fewer steps (the loop runs as many as it has).
"""

from __future__ import annotations

import numpy as np

from tensorflux._src.data.dataset_ops import Dataset, ElementError, groups_of
from tensorflux._src.estimator.distribute import batch_major_dims
from tensorflux._src.framework import errors


class InfeedDataset(Dataset):
    """`steps_per_element` steps per element; a step's global batch joins
    `elements_per_step` consecutive input elements along axis 0 (PER_HOST_V2: one per
    replica)."""

    def __init__(self, input_dataset, steps_per_element, elements_per_step=1):
        structure = input_dataset._structure
        shapes = [[None if dims[0] is None else dims[0] * elements_per_step, None] + dims[1:]
                  for dims in batch_major_dims(input_dataset, "TPUEstimator")]
        self._children = (input_dataset,)
        self._steps, self._per_step = steps_per_element, elements_per_step
        self._structure = structure.with_shapes(shapes)

    def _iterate(self, ctx):
        steps = groups_of(self._children[0]._iterate(ctx), self._per_step, True)
        for group in groups_of(steps, self._steps, False):
            if type(group) is ElementError:
                yield group
                continue
            try:
                yield tuple(_stack(group, c) for c in range(len(group[0][0])))
            except ValueError:
                shapes = [[np.shape(e[c]) for e in step] for step in group
                          for c in range(len(step[0]))]
                yield ElementError(errors.InvalidArgumentError(
                    None, None, f"TPUEstimator runs {self._steps} steps per loop on "
                    f"batches of one static shape, but input_fn's batches differ in "
                    f"shape: {sorted(set(map(str, shapes)))[:4]}. Batch with "
                    f"dataset.batch(params['batch_size'], drop_remainder=True)."))


def _stack(group, component):
    # group: steps, each a list of flat elements; -> [global batch, steps, ...]
    per_step = [np.concatenate([element[component] for element in step], axis=0)
                if len(step) > 1 else np.asarray(step[0][component]) for step in group]
    return np.stack(per_step, axis=1)
