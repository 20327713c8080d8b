"""Peers for `tensorflux bench --compare`: the zoo's models written directly in JAX
(jax_models.py) and, when those libraries are importable, in PyTorch and TensorFlow.

Each peer builds a training step for one batch size and returns `run()`, which does one
step and returns the loss as a NumPy value (so a timed loop waits for the device, as a
tensorflux `Session.run` fetching the loss does).
"""
