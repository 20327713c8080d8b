"""Math ops: elementwise (math_ops, complex_parts), reductions and scans (reduce_ops),
segment sums and reductions, special functions, counting, clipping, bitwise ops; the
gradient helpers (grad_helpers) and the gradients that need higher wrappers (math_grads,
reduce_grads). Imports nothing: a family is a folder."""
