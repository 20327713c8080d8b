"""The Distribution base class of tf.distributions (TF 1.15's API): public methods open
the distribution's name scope and call the subclass's `_method`, with TF's fallbacks
(prob from log_prob, stddev from variance, survival from cdf, ...); and the bases the
concrete distributions share (scalar events, broadcast float parameters)."""

from __future__ import annotations

import abc
import contextlib

import numpy as np

from tensorflux._src.distributions import util
from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import graph as _graph
from tensorflux._src.framework.operation import Tensor
from tensorflux._src.framework.tensor_conversion import convert_to_tensor
from tensorflux._src.framework.tensor_shape import TensorShape, as_shape
from tensorflux._src.ops.array import array_ops
from tensorflux._src.ops.math import math_ops, reduce_ops
from tensorflux._src.ops.debug import check_ops
from tensorflux._src.ops.shape_fns import static_value

__all__ = ["Distribution", "ReparameterizationType", "FULLY_REPARAMETERIZED",
           "NOT_REPARAMETERIZED"]


class _DistributionMeta(abc.ABCMeta):
    """TF's metaclass for distributions (it only decorates docstrings there)."""


class ReparameterizationType:
    """How samples are reparameterized: FULLY_REPARAMETERIZED (gradients flow through
    samples to the parameters) or NOT_REPARAMETERIZED."""

    def __init__(self, rep_type):
        self._rep_type = rep_type

    def __repr__(self):
        return "<Reparameteriation Type: %s>" % self._rep_type  # sic, as TF prints it

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def _convert_value(value, name, preferred_dtype):
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value, name=name)
    try:
        return convert_to_tensor(value, name=name, dtype=preferred_dtype)
    except (TypeError, ValueError):
        return convert_to_tensor(value, name=name)


class Distribution(metaclass=_DistributionMeta):
    """A batch of probability distributions with TF 1.15's tf.distributions interface."""

    def __init__(self, dtype, reparameterization_type, validate_args, allow_nan_stats,
                 parameters=None, graph_parents=None, name=None):
        graph_parents = [] if graph_parents is None else graph_parents
        for i, t in enumerate(graph_parents):
            if t is None or not isinstance(t, Tensor):
                raise ValueError("Graph parent item %d is not a Tensor; %s." % (i, t))
        if not name or name[-1] != "/":  # not yet a name scope: make it unique
            with _graph.name_scope(name or type(self).__name__) as name:
                pass
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._allow_nan_stats = allow_nan_stats
        self._validate_args = validate_args
        parameters = dict(parameters or {})
        parameters.pop("self", None)
        self._parameters = parameters
        self._graph_parents = graph_parents
        self._name = name

    # -- parameter shapes --------------------------------------------------------------------
    @classmethod
    def param_shapes(cls, sample_shape, name="DistributionParamShapes"):
        """Shapes of the constructor's parameters giving samples of `sample_shape`."""
        with _graph.name_scope(name, values=[sample_shape]):
            return cls._param_shapes(sample_shape)

    @classmethod
    def param_static_shapes(cls, sample_shape):
        """param_shapes as TensorShapes (sample_shape must be fully known)."""
        if isinstance(sample_shape, TensorShape):
            if not sample_shape.is_fully_defined():
                raise ValueError("TensorShape sample_shape must be fully defined")
            sample_shape = sample_shape.as_list()
        params = cls.param_shapes(sample_shape)
        static_params = {}
        for name, shape in params.items():
            value = static_value(shape)
            if value is None:
                raise ValueError("sample_shape must be a fully-defined TensorShape or "
                                 "list/tuple")
            static_params[name] = TensorShape([int(d) for d in np.reshape(value, -1)])
        return static_params

    @staticmethod
    def _param_shapes(sample_shape):
        raise NotImplementedError("_param_shapes not implemented")

    # -- properties --------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def parameters(self):
        return {k: v for k, v in self._parameters.items()
                if not k.startswith("__") and k != "self"}

    @property
    def reparameterization_type(self):
        return self._reparameterization_type

    @property
    def allow_nan_stats(self):
        return self._allow_nan_stats

    @property
    def validate_args(self):
        return self._validate_args

    def copy(self, **override_parameters_kwargs):
        """A new distribution of this type from self.parameters updated by the kwargs."""
        return type(self)(**dict(self.parameters, **override_parameters_kwargs))

    # -- shapes -----------------------------------------------------------------------------
    def _batch_shape_tensor(self):
        raise NotImplementedError(
            "batch_shape_tensor is not implemented: {}".format(type(self).__name__))

    def batch_shape_tensor(self, name="batch_shape_tensor"):
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.batch_shape.as_list(), np.int32),
                                         name="batch_shape")
            return self._batch_shape_tensor()

    def _batch_shape(self):
        return TensorShape(None)

    @property
    def batch_shape(self):
        return as_shape(self._batch_shape())

    def _event_shape_tensor(self):
        raise NotImplementedError(
            "event_shape_tensor is not implemented: {}".format(type(self).__name__))

    def event_shape_tensor(self, name="event_shape_tensor"):
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.event_shape.as_list(), np.int32),
                                         name="event_shape")
            return self._event_shape_tensor()

    def _event_shape(self):
        return TensorShape(None)

    @property
    def event_shape(self):
        return as_shape(self._event_shape())

    def is_scalar_event(self, name="is_scalar_event"):
        with self._name_scope(name):
            return convert_to_tensor(
                self._is_scalar_helper(self.event_shape, self.event_shape_tensor),
                name="is_scalar_event")

    def is_scalar_batch(self, name="is_scalar_batch"):
        with self._name_scope(name):
            return convert_to_tensor(
                self._is_scalar_helper(self.batch_shape, self.batch_shape_tensor),
                name="is_scalar_batch")

    # -- sampling ---------------------------------------------------------------------------
    def _sample_n(self, n, seed=None):
        raise NotImplementedError("sample_n is not implemented: {}".format(
            type(self).__name__))

    def sample(self, sample_shape=(), seed=None, name="sample"):
        """Samples of shape sample_shape + batch_shape + event_shape."""
        with self._name_scope(name, values=[sample_shape]):
            if isinstance(sample_shape, (list, tuple)) and not sample_shape:
                sample_shape = np.zeros([0], np.int32)
            sample_shape = convert_to_tensor(sample_shape, dtype=_dtypes.int32,
                                             name="sample_shape")
            sample_shape, n = self._expand_sample_shape_to_vector(sample_shape,
                                                                   "sample_shape")
            samples = self._sample_n(n, seed)
            batch_event_shape = array_ops.shape(samples)[1:]
            final_shape = array_ops.concat([sample_shape, batch_event_shape], 0)
            samples = array_ops.reshape(samples, final_shape)
            return self._set_sample_static_shape(samples, sample_shape)

    # -- densities and distribution functions, with TF's fallbacks --------------------------------
    def _call(self, name, value, first, second, combine):
        with self._name_scope(name, values=[value]):
            value = _convert_value(value, "value", self.dtype)
            try:
                return getattr(self, first)(value)
            except NotImplementedError as original_exception:
                try:
                    return combine(getattr(self, second)(value))
                except NotImplementedError:
                    raise original_exception from None

    def log_prob(self, value, name="log_prob"):
        return self._call(name, value, "_log_prob", "_prob", math_ops.log)

    def prob(self, value, name="prob"):
        return self._call(name, value, "_prob", "_log_prob", math_ops.exp)

    def log_cdf(self, value, name="log_cdf"):
        return self._call(name, value, "_log_cdf", "_cdf", math_ops.log)

    def cdf(self, value, name="cdf"):
        return self._call(name, value, "_cdf", "_log_cdf", math_ops.exp)

    def log_survival_function(self, value, name="log_survival_function"):
        return self._call(name, value, "_log_survival_function", "cdf",
                          lambda c: math_ops.log1p(-c))

    def survival_function(self, value, name="survival_function"):
        return self._call(name, value, "_survival_function", "cdf", lambda c: 1.0 - c)

    def quantile(self, value, name="quantile"):
        with self._name_scope(name, values=[value]):
            return self._quantile(_convert_value(value, "value", self.dtype))

    def _not_implemented(method):  # noqa: N805 - a helper for the class body
        def fn(self, *args):
            raise NotImplementedError("{} is not implemented: {}".format(
                method, type(self).__name__))
        return fn

    _log_prob = _not_implemented("log_prob")
    _prob = _not_implemented("prob")
    _log_cdf = _not_implemented("log_cdf")
    _cdf = _not_implemented("cdf")
    _log_survival_function = _not_implemented("log_survival_function")
    _survival_function = _not_implemented("survival_function")
    _quantile = _not_implemented("quantile")
    _entropy = _not_implemented("entropy")
    _mean = _not_implemented("mean")
    _variance = _not_implemented("variance")
    _stddev = _not_implemented("stddev")
    _covariance = _not_implemented("covariance")
    _mode = _not_implemented("mode")
    del _not_implemented

    # -- statistics -----------------------------------------------------------------------
    def entropy(self, name="entropy"):
        """Shannon entropy in nats."""
        with self._name_scope(name):
            return self._entropy()

    def mean(self, name="mean"):
        with self._name_scope(name):
            return self._mean()

    def variance(self, name="variance"):
        with self._name_scope(name):
            try:
                return self._variance()
            except NotImplementedError as original_exception:
                try:
                    return math_ops.square(self._stddev())
                except NotImplementedError:
                    raise original_exception from None

    def stddev(self, name="stddev"):
        with self._name_scope(name):
            try:
                return self._stddev()
            except NotImplementedError as original_exception:
                try:
                    return math_ops.sqrt(self._variance())
                except NotImplementedError:
                    raise original_exception from None

    def covariance(self, name="covariance"):
        with self._name_scope(name):
            return self._covariance()

    def mode(self, name="mode"):
        with self._name_scope(name):
            return self._mode()

    def cross_entropy(self, other, name="cross_entropy"):
        from tensorflux._src.distributions import kullback_leibler
        with self._name_scope(name):
            return kullback_leibler.cross_entropy(self, other,
                                                  allow_nan_stats=self.allow_nan_stats)

    def kl_divergence(self, other, name="kl_divergence"):
        from tensorflux._src.distributions import kullback_leibler
        with self._name_scope(name):
            return kullback_leibler.kl_divergence(self, other,
                                                  allow_nan_stats=self.allow_nan_stats)

    def __str__(self):
        batch = (", batch_shape={}".format(self.batch_shape)
                 if self.batch_shape.ndims is not None else "")
        event = (", event_shape={}".format(self.event_shape)
                 if self.event_shape.ndims is not None else "")
        return "tfp.distributions.{}(\"{}\"{}{}, dtype={})".format(
            type(self).__name__, self.name, batch, event, self.dtype.name)

    def __repr__(self):
        return "<tfp.distributions.{} '{}' batch_shape={} event_shape={} dtype={}>".format(
            type(self).__name__, self.name, self.batch_shape, self.event_shape,
            self.dtype.name)

    # -- helpers ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _name_scope(self, name=None, values=None):
        with _graph.name_scope(self.name):
            with _graph.name_scope(name, values=([] if values is None else
                                                 [v for v in values if v is not None])
                                   + self._graph_parents) as scope:
                yield scope

    def _expand_sample_shape_to_vector(self, x, name):
        x_static = static_value(x)
        prod = (reduce_ops.reduce_prod(x) if x_static is None
                else np.prod(x_static, dtype=np.int32))
        ndims = x.shape.ndims
        if ndims is None:
            x = array_ops.reshape(x, [-1])
        elif ndims == 0:
            x = (convert_to_tensor(np.array([x_static], np.int32), name=name)
                 if x_static is not None else array_ops.reshape(x, [1]))
        elif ndims != 1:
            raise ValueError("Input is neither scalar nor vector.")
        return x, prod

    def _set_sample_static_shape(self, x, sample_shape):
        value = static_value(sample_shape)
        sample = TensorShape(None if value is None else [int(d) for d in value])
        ndims = x.shape.ndims
        sample_ndims, batch_ndims = sample.ndims, self.batch_shape.ndims
        event_ndims = self.event_shape.ndims
        if (ndims is None and None not in (sample_ndims, batch_ndims, event_ndims)):
            ndims = sample_ndims + batch_ndims + event_ndims
            x.set_shape([None] * ndims)
        if ndims is not None and sample_ndims is not None:
            x.set_shape(x.shape.merge_with(sample.concatenate([None] * (ndims - sample_ndims))))
        if ndims is not None and event_ndims is not None:
            x.set_shape(x.shape.merge_with(
                TensorShape([None] * (ndims - event_ndims)).concatenate(self.event_shape)))
        if batch_ndims is not None and ndims is not None:
            if sample_ndims is None and event_ndims is not None:
                sample_ndims = ndims - batch_ndims - event_ndims
            elif event_ndims is None and sample_ndims is not None:
                event_ndims = ndims - batch_ndims - sample_ndims
            if sample_ndims is not None and event_ndims is not None:
                x.set_shape(x.shape.merge_with(TensorShape([None] * sample_ndims).concatenate(
                    self.batch_shape).concatenate([None] * event_ndims)))
        return x

    def _is_scalar_helper(self, static_shape, dynamic_shape_fn):
        if static_shape.ndims is not None:
            return static_shape.ndims == 0
        shape = dynamic_shape_fn()
        if shape.shape.ndims is not None and shape.shape[0].value is not None:
            return shape.shape.as_list() == [0]
        return math_ops.equal(array_ops.shape(shape)[0], 0)


# -- shared bases of the concrete distributions ----------------------------------------------
class ScalarEvent(Distribution):
    """A distribution over scalars: its event shape is []."""

    def _event_shape_tensor(self):
        return convert_to_tensor(np.zeros([0], np.int32))

    def _event_shape(self):
        return TensorShape([])


class BroadcastParameters(ScalarEvent):
    """A reparameterized distribution over scalars whose float parameters (`_param_names`,
    in the constructor's order) broadcast to its batch shape: Normal, Laplace, StudentT,
    Uniform, Gamma. Each parameter becomes an identity op named after it (after the checks
    validate_args adds) and the attribute `_<name>`."""

    _param_names = ()

    def __init__(self, values, checks, validate_args, allow_nan_stats, parameters, name):
        """values: the parameters, in `_param_names` order; checks(*values): the
        assertions validate_args adds."""
        with _graph.name_scope(name, values=list(values)) as name:
            with _graph.control_dependencies(checks(*values) if validate_args else []):
                params = [array_ops.identity(v, name=n)
                          for n, v in zip(self._param_names, values)]
                check_ops.assert_same_float_dtype(params)
        for n, t in zip(self._param_names, params):
            setattr(self, "_" + n, t)
        super().__init__(dtype=params[0].dtype, reparameterization_type=FULLY_REPARAMETERIZED,
                         validate_args=validate_args, allow_nan_stats=allow_nan_stats,
                         parameters=parameters, graph_parents=params, name=name)

    @classmethod
    def _param_shapes(cls, sample_shape):
        shape = convert_to_tensor(sample_shape, dtype=_dtypes.int32)
        return {n: shape for n in cls._param_names}

    def _params(self):
        return [getattr(self, "_" + n) for n in self._param_names]

    def _batch_shape_tensor(self):
        return util.dynamic_broadcast(*self._params())

    def _batch_shape(self):
        return util.static_broadcast(*(p.shape for p in self._params()))
