"""The rest of tf.math: segment reductions, special functions, counting and sequences.

One module per family; the public namespace `tensorflux/math` imports them (no existing
op module does).
"""
