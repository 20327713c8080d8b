"""One checkpoint from many ps tasks: each writes its shard, the driver commits it.

This is TF1's sharded save (each ps saves its variables, the chief merges the index),
in TF's V2 tensor-bundle format (train/checkpoint_format.py), so `tf.train.Saver`,
`tensorflux eval` and `tf.train.NewCheckpointReader` read the result as any other
checkpoint. For a checkpoint at step 100 of a job with 2 ps tasks:

    model.ckpt-100.data-00000-of-00002   written by ps 0 (atomically)
    model.ckpt-100.data-00001-of-00002   written by ps 1 (atomically)
    model.ckpt-100.index                 written by the driver once both shards exist
    checkpoint                           TF's state file, rewritten last

The index is the commit point and the state file names only committed checkpoints, so
a task killed mid-write leaves the previous checkpoint intact. The index records each
tensor's offset, size and CRC32C in its shard, so a shard left by an earlier incarnation
of the job can never pass for part of a newer checkpoint (reading it is a DataLossError).
`save_id(run, generation, step)` still names each save in the tasks' reports.
`CheckpointKeeper.clean` removes what a killed writer leaves: `.tmp` files and shards
whose index was never written. The checkpoint directory must be shared by the driver
and every ps task (one machine, or a network file system on a cluster).
"""

from __future__ import annotations

import glob
import os
import re

from tensorflux._src.train import checkpoint_format, checkpoint_management

_DATA_SUFFIX = re.compile(r"\.data-\d{5}-of-\d{5}$")


def save_id(run_id, generation, step):
    return f"{run_id}-g{generation}-s{step}"


def prefix_for(directory, basename, step):
    return os.path.join(directory, f"{basename}-{step}")


class CheckpointKeeper:
    """The driver's side: commits checkpoints whose shards are all written, keeps the
    newest `max_to_keep`, finds the latest and cleans up after killed writers."""

    def __init__(self, directory, basename="model.ckpt", max_to_keep=5):
        self.directory = directory
        self.basename = basename
        self.max_to_keep = max_to_keep
        os.makedirs(directory, exist_ok=True)
        state = checkpoint_management.get_checkpoint_state(directory)
        kept = state.all_model_checkpoint_paths if state else []
        self._kept = [p for p in kept if checkpoint_format.exists(p)]

    def prefix(self, step):
        return prefix_for(self.directory, self.basename, step)

    def latest(self):
        return checkpoint_management.latest_checkpoint(self.directory)

    def commit(self, step, shard_entries, shard_save_id, num_shards):
        """Writes the index of the checkpoint at `step` from every shard's entries, then
        the state file; deletes checkpoints beyond max_to_keep. Returns the prefix."""
        prefix = self.prefix(step)
        tensors = {}
        for entries in shard_entries:
            tensors.update(entries)
        checkpoint_format.write_index(prefix, tensors, num_shards, shard_save_id)
        kept = [p for p in self._kept if p != prefix] + [prefix]
        expired = kept[:-self.max_to_keep] if self.max_to_keep else []
        self._kept = kept[len(expired):]
        # The state file stops naming a checkpoint before its files are deleted.
        checkpoint_management.update_checkpoint_state_internal(
            self.directory, prefix, all_model_checkpoint_paths=self._kept)
        for old in expired:
            checkpoint_management.remove_checkpoint(old)
        return prefix

    def clean(self):
        """Removes temp files and data shards of checkpoints that were never committed.
        Call it only while no ps task is writing."""
        removed = []
        pattern = os.path.join(glob.escape(self.directory), glob.escape(self.basename))
        for path in glob.glob(pattern + "-*.tmp*") + glob.glob(
                os.path.join(glob.escape(self.directory), "checkpoint.tmp*")):
            removed.append(path)
            os.remove(path)
        for path in glob.glob(pattern + "-*.data-?????-of-?????"):
            if not checkpoint_format.exists(_DATA_SUFFIX.sub("", path)):
                removed.append(path)
                os.remove(path)
        return removed
