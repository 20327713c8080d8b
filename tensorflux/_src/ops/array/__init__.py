"""Array ops: structure (array_ops), generators (generator_ops), indexing (gather_ops,
slicing_ops), sorting, host ops with data-dependent shapes, sequences, sets, layout moves,
scatter variants, patches, searches, fake quantization, edit distance; their gradients
that need higher wrappers in array_grads. Imports nothing: a family is a folder."""
