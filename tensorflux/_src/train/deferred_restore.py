"""Restore-on-create for eager object checkpoints: `Checkpoint.restore` in eager mode
puts values into the variables that exist, and variables made later (an optimizer's
slots on its first apply, a layer's weights when it is first called) get theirs when
they appear, as TF's deferred restorations do.

Pending restores register a callback here; Optimizer.apply_gradients (after creating
slots) and Layer.__call__ (after build) call `objects_created()`.
"""

from __future__ import annotations

import weakref

_pending = weakref.WeakSet()  # restore statuses with values not yet put anywhere


def register(status):
    _pending.add(status)


def objects_created():
    for status in list(_pending):
        if status._restore_new_objects():
            _pending.discard(status)
