"""NumPy-checked cases for fill, zeros/ones(_like), range, linspace and eye."""

import numpy as np

import tensorflux as tf
from tests.ops.harness import Case

F = (np.float32,)
FI = (np.float32, np.int32)

CASES = [
    Case("Fill", lambda v: tf.fill([2, 3], v), lambda v: np.full((2, 3), v), [((),)],
         FI + (np.bool_,)),
    # x only gives its shape, so it is an int tensor: nothing to differentiate there.
    Case("Fill", lambda x, v: tf.fill(tf.shape(x), v), lambda x, v: np.full(x.shape, v),
         [((3, 1, 2), ())], [(np.int32, np.float32)], name="Fill(shape of x)"),
    Case("Fill", lambda x: tf.zeros(tf.shape(x), dtype=tf.int64),
         lambda x: np.zeros(x.shape, np.int64), [((2, 3),)], (np.int32,),
         name="zeros(shape tensor)"),
    Case("Fill", lambda x: tf.ones([40, 30], dtype=x.dtype), lambda x: np.ones((40, 30), x.dtype),
         [((1,),)], (np.int32,), name="ones(big: Fill)"),
    Case("ZerosLike", tf.zeros_like, np.zeros_like, [((2, 3),)], FI + (np.bool_,)),
    Case("ZerosLike", lambda x: tf.zeros_like(x, optimize=False), np.zeros_like, [((3,),)], F,
         name="ZerosLike(optimize=False)"),
    Case("OnesLike", tf.ones_like, np.ones_like, [((2, 3),)], FI + (np.complex64,)),
    Case("OnesLike", lambda x: tf.ones_like(x, dtype=tf.int32),
         lambda x: np.ones(x.shape, np.int32), [((2, 2),)], F, name="ones_like(dtype)"),
    Case("Range", lambda x: tf.range(tf.shape(x)[0]),
         lambda x: np.arange(x.shape[0], dtype=np.int32), [((5, 2),)], F),
    Case("Range", lambda x: tf.range(1, tf.shape(x)[1], 2),
         lambda x: np.arange(1, x.shape[1], 2, dtype=np.int32), [((2, 8),)], F,
         name="Range(start, limit, delta)"),
    Case("Range", lambda x: tf.range(2.0, 0.0, -0.5, dtype=x.dtype),
         lambda x: np.arange(2.0, 0.0, -0.5).astype(x.dtype), [((1,),)], (np.float32, np.float64),
         name="Range(float, negative delta)"),
    Case("LinSpace", lambda a, b: tf.linspace(a, b, 5),
         lambda a, b: np.linspace(a, b, 5, dtype=a.dtype), [((), ())], (np.float32, np.float64)),
    Case("LinSpace", lambda a, b: tf.lin_space(a, b, 1), lambda a, b: np.array([a]),
         [((), ())], F, name="LinSpace(num=1)"),
    Case("OneHot", lambda x: tf.eye(3, num_columns=4, batch_shape=[2], dtype=x.dtype),
         lambda x: np.broadcast_to(np.eye(3, 4, dtype=x.dtype), (2, 3, 4)), [((1,),)], FI,
         name="eye(3, 4, batch_shape=[2])"),
    Case("OneHot", lambda x: tf.eye(tf.shape(x)[0], dtype=tf.bool),
         lambda x: np.eye(x.shape[0], dtype=bool), [((3,),)], F, name="eye(rows from shape)"),
]
