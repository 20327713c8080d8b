"""Ragged tensors (tf.ragged): the RaggedTensor composite, its conversion records, row
indexing, and tf.ragged's functions. Imports nothing: a family is a folder."""
