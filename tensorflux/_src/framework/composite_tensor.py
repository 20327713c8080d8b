"""`CompositeTensor`: a value made of dense component tensors (tf.SparseTensor,
tf.RaggedTensor), as TF's composite_tensor.py.

What the rest of the framework needs from a composite, in one place: `tf.nest` with
`expand_composites=True` opens it into `_components()` and rebuilds it with
`_from_components`; `Session.run` fetches its components and returns
`_value_from_components(values)` (a SparseTensorValue, a RaggedTensorValue), and a feed
keyed by a composite feeds each component from the value's matching part
(`_feed_components`).
"""

from __future__ import annotations


class CompositeTensor:
    """Base of values made of several dense tensors."""

    def _components(self):
        """The component Tensors (or composites), in nest's order."""
        raise NotImplementedError

    def _from_components(self, components):
        """A value like this one built from `components` (same order)."""
        raise NotImplementedError

    def _value_from_components(self, values):
        """What Session.run returns for this composite, from its fetched components."""
        raise NotImplementedError

    def _feed_components(self, value):
        """[(component tensor, its part of `value`)] for a feed keyed by this composite."""
        raise NotImplementedError

    def _flat_tensors(self):
        """Every dense tensor inside, nested composites opened."""
        out = []
        for c in self._components():
            out.extend(c._flat_tensors() if isinstance(c, CompositeTensor) else [c])
        return out

    def consumers(self):
        """The ops that read any component of this value (TF's `_consumers`)."""
        seen, out = set(), []
        for t in self._flat_tensors():
            for op in t.consumers():
                if op not in seen:
                    seen.add(op)
                    out.append(op)
        return out
