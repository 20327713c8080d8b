"""SignatureDefs: TF's tag and signature constants, TensorInfo, SignatureDef and the
`tf.saved_model.signature_def_utils` / `tf.saved_model.utils` functions (TF 1.15
names, argument checks and messages)."""

from __future__ import annotations

from tensorflux._src.framework import dtypes as _dtypes
from tensorflux._src.framework import protos
from tensorflux._src.framework import tensor_shape
from tensorflux._src.framework.operation import Tensor

# -- tf.saved_model.tag_constants ----------------------------------------------------------
SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"

# -- tf.saved_model.signature_constants -----------------------------------------------------
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
SUPERVISED_TRAIN_METHOD_NAME = "tensorflow/supervised/training"
SUPERVISED_EVAL_METHOD_NAME = "tensorflow/supervised/eval"


class TensorInfo:
    """TF's TensorInfo: a signature's reference to a graph tensor.

    `dtype` is a tf.DType, `tensor_shape` a TensorShape, and `shape` the same as a
    list (None for an unknown dimension) or None when the rank is unknown.
    """

    def __init__(self, name="", dtype=None, tensor_shape_=None):
        self.name = name
        self.dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self.tensor_shape = (tensor_shape.unknown_shape() if tensor_shape_ is None
                             else tensor_shape.as_shape(tensor_shape_))

    @property
    def shape(self):
        return self.tensor_shape.as_list() if self.tensor_shape.ndims is not None else None

    def _as_dict(self):
        return {"name": self.name, "dtype": self.dtype.name if self.dtype else None,
                "shape": self.shape}

    def _to_proto(self):
        """TF's TensorInfo message."""
        return protos.TensorInfo(name=self.name, dtype=self.dtype.as_datatype_enum,
                                 tensor_shape=protos.shape_proto(self.tensor_shape))

    @classmethod
    def _from_proto(cls, proto):
        if proto.WhichOneof("encoding") != "name":
            raise ValueError(f"TensorInfo {proto} is not a dense tensor (coo_sparse and "
                             f"composite tensors are not supported in signatures)")
        return cls(proto.name, _dtypes.as_dtype(proto.dtype),
                   tensor_shape.TensorShape(None) if proto.tensor_shape.unknown_rank else
                   tensor_shape.TensorShape([None if d.size < 0 else d.size
                                             for d in proto.tensor_shape.dim]))

    def __eq__(self, other):
        return isinstance(other, TensorInfo) and self._as_dict() == other._as_dict()

    def __repr__(self):
        return (f"TensorInfo(name={self.name!r}, dtype={self.dtype.name if self.dtype else None}"
                f", shape={self.shape})")


class SignatureDef:
    """TF's SignatureDef: named inputs and outputs (TensorInfo) and a method name."""

    def __init__(self, inputs=None, outputs=None, method_name=""):
        self.inputs = dict(inputs or {})
        self.outputs = dict(outputs or {})
        self.method_name = method_name or ""

    def _as_dict(self):
        return {"method_name": self.method_name,
                "inputs": {k: v._as_dict() for k, v in sorted(self.inputs.items())},
                "outputs": {k: v._as_dict() for k, v in sorted(self.outputs.items())}}

    def _to_proto(self):
        """TF's SignatureDef message."""
        out = protos.SignatureDef(method_name=self.method_name)
        for key, info in self.inputs.items():
            out.inputs[key].CopyFrom(info._to_proto())
        for key, info in self.outputs.items():
            out.outputs[key].CopyFrom(info._to_proto())
        return out

    @classmethod
    def _from_proto(cls, proto):
        return cls({k: TensorInfo._from_proto(v) for k, v in proto.inputs.items()},
                   {k: TensorInfo._from_proto(v) for k, v in proto.outputs.items()},
                   proto.method_name)

    def __eq__(self, other):
        return isinstance(other, SignatureDef) and self._as_dict() == other._as_dict()

    def __repr__(self):
        return (f"SignatureDef(method_name={self.method_name!r}, inputs={self.inputs}, "
                f"outputs={self.outputs})")


def build_tensor_info(tensor):
    """The TensorInfo of a graph tensor (tf.saved_model.utils.build_tensor_info)."""
    from tensorflux._src.framework.sparse_tensor import SparseTensor
    if isinstance(tensor, SparseTensor):
        raise NotImplementedError("TensorInfo of a SparseTensor (coo_sparse) is not supported "
                                  "by tensorflux SavedModels; export its dense form.")
    if hasattr(tensor, "_as_graph_element"):
        tensor = tensor._as_graph_element()
    if not isinstance(tensor, Tensor):
        raise TypeError(f"build_tensor_info takes a Tensor, got {tensor!r} of type "
                        f"{type(tensor).__name__}")
    return TensorInfo(tensor.name, tensor.dtype.base_dtype, tensor.shape)


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The tensor a TensorInfo names, in `graph` (default: the default graph)."""
    from tensorflux._src.framework import graph as _graph
    graph = graph or _graph.get_default_graph()
    name = tensor_info.name
    if import_scope:
        name = f"{import_scope.rstrip('/')}/{name}"
    return graph.get_tensor_by_name(name)


def build_signature_def(inputs=None, outputs=None, method_name=None):
    return SignatureDef(inputs, outputs, method_name)


def predict_signature_def(inputs, outputs):
    if inputs is None or not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if outputs is None or not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               PREDICT_METHOD_NAME)


def classification_signature_def(examples, classes, scores):
    if examples is None:
        raise ValueError("Classification `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"Classification `examples` must be a string Tensor. Found "
                         f"`examples` of type {type(examples)}.")
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    examples_info = build_tensor_info(examples)
    if examples_info.dtype != _dtypes.string:
        raise ValueError(f"Classification input tensors must be of type string. Found "
                         f"tensors of type {examples_info.dtype.name}")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != _dtypes.string:
            raise ValueError(f"Classification classes must be of type string Tensor. Found "
                             f"tensors of type {info.dtype.name}.")
        outputs[CLASSIFY_OUTPUT_CLASSES] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != _dtypes.float32:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[CLASSIFY_OUTPUT_SCORES] = info
    return build_signature_def({CLASSIFY_INPUTS: examples_info}, outputs,
                               CLASSIFY_METHOD_NAME)


def regression_signature_def(examples, predictions):
    if examples is None:
        raise ValueError("Regression `examples` cannot be None.")
    if not isinstance(examples, Tensor):
        raise ValueError(f"Expected regression `examples` to be of type Tensor. Found "
                         f"`examples` of type {type(examples)}.")
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    examples_info = build_tensor_info(examples)
    if examples_info.dtype != _dtypes.string:
        raise ValueError(f"Regression input tensors must be of type string. Found tensors "
                         f"with type {examples_info.dtype.name}.")
    predictions_info = build_tensor_info(predictions)
    if predictions_info.dtype != _dtypes.float32:
        raise ValueError(f"Regression output tensors must be of type float. Found tensors "
                         f"with type {predictions_info.dtype.name}.")
    return build_signature_def({REGRESS_INPUTS: examples_info},
                               {REGRESS_OUTPUTS: predictions_info}, REGRESS_METHOD_NAME)


def is_valid_signature(signature_def):
    """Whether TensorFlow Serving can serve `signature_def` (classify, regress, predict)."""
    if signature_def is None:
        return False
    return (_is_valid_classification(signature_def) or _is_valid_regression(signature_def)
            or _is_valid_predict(signature_def))


def _is_valid_predict(sig):
    return sig.method_name == PREDICT_METHOD_NAME and bool(sig.inputs) and bool(sig.outputs)


def _is_valid_regression(sig):
    return (sig.method_name == REGRESS_METHOD_NAME
            and set(sig.inputs) == {REGRESS_INPUTS}
            and sig.inputs[REGRESS_INPUTS].dtype == _dtypes.string
            and set(sig.outputs) == {REGRESS_OUTPUTS}
            and sig.outputs[REGRESS_OUTPUTS].dtype == _dtypes.float32)


def _is_valid_classification(sig):
    if sig.method_name != CLASSIFY_METHOD_NAME or set(sig.inputs) != {CLASSIFY_INPUTS}:
        return False
    if sig.inputs[CLASSIFY_INPUTS].dtype != _dtypes.string:
        return False
    if not sig.outputs or set(sig.outputs) - {CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES}:
        return False
    classes = sig.outputs.get(CLASSIFY_OUTPUT_CLASSES)
    scores = sig.outputs.get(CLASSIFY_OUTPUT_SCORES)
    return ((classes is None or classes.dtype == _dtypes.string)
            and (scores is None or scores.dtype == _dtypes.float32))
