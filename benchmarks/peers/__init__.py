"""Peers for `tensorflux bench --compare`: the zoo's ResNet-50, MobileNet v2 and
Transformer written directly in JAX (jax_models.py), PyTorch (torch_models.py) and
TensorFlow 2 (tf_models.py); common.py holds what they share (the Transformer's config,
the synthetic batches, the optimizer settings).

Every peer module has the same face, and imports its framework only when a step is
built, so a missing framework costs nothing until it is asked for:

    NAME, KEY, FRAMEWORK        # "PyTorch", "torch" (its key in bench.json), "torch"
    SHORT                       # "torch": its label in the table's column titles
    unavailable()               # None, or why not ("not installed")
    version()
    image_classifier_step(name, batch_size, image_size, num_classes, precision) -> run
    transformer_step(batch_size, config, precision) -> run
    parameter_count(name, num_classes, image_size, config=None)

`run()` does one training step and returns the loss as a NumPy value (so a timed loop
waits for the device, as a tensorflux `Session.run` fetching the loss does).
"""
