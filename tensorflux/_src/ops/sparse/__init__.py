"""Sparse tensors (tf.sparse): SparseTensor records and wrappers, sparse math, sparse
crosses and counts, serialization, and the sparse embedding lookups. Imports nothing: a
family is a folder."""
