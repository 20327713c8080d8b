"""TensorFlow's protocol buffers, as classes of the `protobuf` package.

The .proto files beside this module declare the TF messages tensorflux reads and
writes, with the package names, field names and field numbers of TensorFlow's own
.proto files, so the bytes and the text format are TF's. `regenerate.py` compiles them
into `descriptors.binpb` (a FileDescriptorSet); this module loads that set into a
private descriptor pool and makes a message class per message:

    from tensorflux._src.framework import proto
    GraphDef = proto.message_class("tensorflow.GraphDef")

A private pool rather than protobuf's default one: a process that also imports
TensorFlow (the interop tests, a user comparing the two) holds TF's copies of these
messages under the same full names, and the default pool refuses a second definition.
"""

from __future__ import annotations

import functools
import importlib.resources

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


@functools.cache
def pool() -> descriptor_pool.DescriptorPool:
    data = importlib.resources.files(__name__).joinpath("descriptors.binpb").read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(data)
    result = descriptor_pool.DescriptorPool()
    for file_proto in files.file:  # --include_imports lists dependencies first
        result.Add(file_proto)
    return result


def _get_message_class(descriptor):
    getter = getattr(message_factory, "GetMessageClass", None)
    if getter is not None:
        return getter(descriptor)
    return message_factory.MessageFactory(descriptor.file.pool).GetPrototype(descriptor)


@functools.cache
def message_class(full_name: str):
    """The protobuf class of one message, e.g. "tensorflow.GraphDef"."""
    return _get_message_class(pool().FindMessageTypeByName(full_name))


def enum_value(enum_full_name: str, name: str) -> int:
    """The number of one enum value, e.g. ("tensorflow.DataType", "DT_FLOAT") -> 1."""
    return pool().FindEnumTypeByName(enum_full_name).values_by_name[name].number
