"""`tensorflux.distillation`: knowledge distillation (Hinton et al. 2015), a tensorflux
extension in tf.losses' style, not a TF 1.15 name (TF had no distillation loss, so it is
kept out of `tf.losses`). See `tensorflux/_src/layers/distillation.py` for the formula.

    from tensorflux import distillation
    loss = distillation.distillation_loss(labels, student_logits, teacher_logits,
                                          temperature=4.0, soft_weight=0.7)

`tensorflux train --teacher RUN_DIR` trains a student with it (docs/architecture.md).
"""

from tensorflux._src.layers.distillation import distillation_loss, soft_targets  # noqa: F401
