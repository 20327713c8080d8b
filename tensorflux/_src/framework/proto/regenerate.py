"""Rebuilds descriptors.binpb from the .proto files beside it (a developer's tool).

    python tensorflux/_src/framework/proto/regenerate.py     (needs grpcio-tools)

tensorflux loads its messages from that FileDescriptorSet at import (see __init__.py),
so the runtime needs only the `protobuf` package, at any 4.21+ version, and no code
generated for one protobuf release. Source info is left out: the set stays small and
the same for the same .proto text.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUT = os.path.join(HERE, "descriptors.binpb")


def proto_files():
    return sorted(f for f in os.listdir(HERE) if f.endswith(".proto"))


def build(output=OUTPUT):
    from grpc_tools import protoc  # noqa: PLC0415 - a development-only dependency

    well_known = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    status = protoc.main(["protoc", f"-I{HERE}", f"-I{well_known}", "--include_imports",
                          f"--descriptor_set_out={output}", *proto_files()])
    if status != 0:
        raise SystemExit(f"protoc failed with status {status}")
    return output


if __name__ == "__main__":
    print(build(*sys.argv[1:]))
