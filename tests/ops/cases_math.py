"""NumPy-checked cases for elementwise math ops."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case, nonzero, positive, uniform

REAL = (np.float32, np.float64, np.int32, np.int64)
FLOAT = (np.float32, np.float64)
BCAST = [((3,), (3,)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((), (2, 2))]

CASES = [
    Case("Add", tf.add, np.add, BCAST, REAL + (np.int8, np.uint8, np.complex64)),
    Case("Add", lambda x, y: x + y, np.add, BCAST, REAL, name="Add(operator)"),
    Case("Sub", tf.subtract, np.subtract, BCAST, REAL),
    Case("Mul", tf.multiply, np.multiply, BCAST, REAL + (np.complex128,)),
]
