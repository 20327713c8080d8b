"""Sparse and ragged tensors (tf.sparse, tf.ragged): SparseTensor records and wrappers,
sparse math, crosses and counts, serialization, the sparse embedding lookups, and the
RaggedTensor composite with tf.ragged's functions. Imports nothing: a family is a
folder."""
