"""TensorFlow's protocol-buffer messages, as `protobuf` classes.

The messages are declared in the .proto files of `framework/proto/` with TF's package,
field names and numbers (graph.proto, meta_graph.proto, summary.proto ...), so what
tensorflux writes is what TensorFlow writes and reads, in binary and in text format.
This module names the classes the rest of tensorflux uses; converting tensors to and
from TensorProto (`make_tensor_proto`, `make_ndarray`) needs dtypes and is in
tensor_util.py.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError  # noqa: F401 - what parsing raises

from tensorflux._src.framework.proto import message_class

_M = message_class

# types.proto, tensor.proto
SerializedDType = _M("tensorflow.SerializedDType")
TensorShapeProto = _M("tensorflow.TensorShapeProto")
ResourceHandleProto = _M("tensorflow.ResourceHandleProto")
TensorProto = _M("tensorflow.TensorProto")
VariantTensorDataProto = _M("tensorflow.VariantTensorDataProto")

# graph.proto
VersionDef = _M("tensorflow.VersionDef")
AttrValue = _M("tensorflow.AttrValue")
NameAttrList = _M("tensorflow.NameAttrList")
NodeDef = _M("tensorflow.NodeDef")
OpDef = _M("tensorflow.OpDef")
OpList = _M("tensorflow.OpList")
FunctionDefLibrary = _M("tensorflow.FunctionDefLibrary")
FunctionDef = _M("tensorflow.FunctionDef")
GraphDef = _M("tensorflow.GraphDef")

# meta_graph.proto
MetaGraphDef = _M("tensorflow.MetaGraphDef")
CollectionDef = _M("tensorflow.CollectionDef")
TensorInfo = _M("tensorflow.TensorInfo")
SignatureDef = _M("tensorflow.SignatureDef")
AssetFileDef = _M("tensorflow.AssetFileDef")
SavedModel = _M("tensorflow.SavedModel")
SaverDef = _M("tensorflow.SaverDef")
VariableDef = _M("tensorflow.VariableDef")
SaveSliceInfoDef = _M("tensorflow.SaveSliceInfoDef")
QueueRunnerDef = _M("tensorflow.QueueRunnerDef")
CheckpointState = _M("tensorflow.CheckpointState")

# checkpoint.proto (V2 checkpoints: io/tensor_bundle.py)
TensorSliceProto = _M("tensorflow.TensorSliceProto")
BundleHeaderProto = _M("tensorflow.BundleHeaderProto")
BundleEntryProto = _M("tensorflow.BundleEntryProto")

# trackable_object_graph.proto (tf.train.Checkpoint: train/tracking.py)
TrackableObjectGraph = _M("tensorflow.TrackableObjectGraph")

# summary.proto (and event.proto)
SummaryDescription = _M("tensorflow.SummaryDescription")
HistogramProto = _M("tensorflow.HistogramProto")
SummaryMetadata = _M("tensorflow.SummaryMetadata")
Summary = _M("tensorflow.Summary")
Event = _M("tensorflow.Event")
LogMessage = _M("tensorflow.LogMessage")
SessionLog = _M("tensorflow.SessionLog")
TaggedRunMetadata = _M("tensorflow.TaggedRunMetadata")

# example.proto
BytesList = _M("tensorflow.BytesList")
FloatList = _M("tensorflow.FloatList")
Int64List = _M("tensorflow.Int64List")
Feature = _M("tensorflow.Feature")
Features = _M("tensorflow.Features")
FeatureList = _M("tensorflow.FeatureList")
FeatureLists = _M("tensorflow.FeatureLists")
Example = _M("tensorflow.Example")
SequenceExample = _M("tensorflow.SequenceExample")

# step_stats.proto
NodeExecStats = _M("tensorflow.NodeExecStats")
DeviceStepStats = _M("tensorflow.DeviceStepStats")
StepStats = _M("tensorflow.StepStats")

# config.proto, rewriter_config.proto (tf.ConfigProto and friends: runtime/config.py)
ConfigProto = _M("tensorflow.ConfigProto")
GPUOptions = _M("tensorflow.GPUOptions")
GraphOptions = _M("tensorflow.GraphOptions")
OptimizerOptions = _M("tensorflow.OptimizerOptions")
ThreadPoolOptionProto = _M("tensorflow.ThreadPoolOptionProto")
RPCOptions = _M("tensorflow.RPCOptions")
SessionMetadata = _M("tensorflow.SessionMetadata")
ClusterDef = _M("tensorflow.ClusterDef")
JobDef = _M("tensorflow.JobDef")
RunOptions = _M("tensorflow.RunOptions")
RunMetadata = _M("tensorflow.RunMetadata")
RunMetadataProto = RunMetadata  # the name timeline.py used before tf.RunMetadata was it
CallableOptions = _M("tensorflow.CallableOptions")
RewriterConfig = _M("tensorflow.RewriterConfig")


def shape_proto(shape) -> TensorShapeProto:
    """TensorShapeProto of a concrete shape, a TensorShape, or None (unknown rank)."""
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    sizes = [getattr(d, "value", d) for d in dims]  # Dimension objects or ints
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if s is None else int(s))
                                 for s in sizes])
