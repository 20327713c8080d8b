"""A fake Servable that follows the loader's contract, and helpers to serve it in-process.

FakeServable(version) answers, per signature (all rows independent, so batching is
invisible in the answers):
    serving_default  x float32 [?, 3]            -> y float32 [?, 2] = x[:, :2] * 2 + version
    two              a float32 [?, 2], b int32 [?] -> total float32 [?] = a.sum(1) + b,
                                                     b_twice int32 [?] = 2 b
    strings          s string [?]                -> upper string [?], upper_bytes string [?]
    classify         inputs string [?] (Examples with float feature "x" of 2 values)
                                                 -> classes string [?, 2] ("a", "b"),
                                                    scores float32 [?, 2] = x
    regress          inputs string [?] (Examples) -> outputs float32 [?] = sum of "x"
    fails            x float32 [?, 3]            -> raises RuntimeError
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

import tensorflux as tf
from tensorflux._src.io.example_proto import read_feature, read_feature_map
from tensorflux.serving.errors import InvalidInput, NotFound


@dataclass
class TensorInfo:
    name: str
    dtype: object
    shape: list


@dataclass
class SignatureDef:
    inputs: dict
    outputs: dict
    method_name: str = "tensorflow/serving/predict"


def _sig(inputs, outputs, method="tensorflow/serving/predict"):
    return SignatureDef(
        {k: TensorInfo(f"{k}:0", d, s) for k, (d, s) in inputs.items()},
        {k: TensorInfo(f"out_{k}:0", d, s) for k, (d, s) in outputs.items()}, method)


SIGNATURES = {
    "serving_default": _sig({"x": (tf.float32, [None, 3])}, {"y": (tf.float32, [None, 2])}),
    "two": _sig({"a": (tf.float32, [None, 2]), "b": (tf.int32, [None])},
                {"total": (tf.float32, [None]), "b_twice": (tf.int32, [None])}),
    "strings": _sig({"s": (tf.string, [None])},
                    {"upper": (tf.string, [None]), "upper_bytes": (tf.string, [None])}),
    "classify": _sig({"inputs": (tf.string, [None])},
                     {"classes": (tf.string, [None, 2]), "scores": (tf.float32, [None, 2])},
                     "tensorflow/serving/classify"),
    "regress": _sig({"inputs": (tf.string, [None])}, {"outputs": (tf.float32, [None])},
                    "tensorflow/serving/regress"),
    "fails": _sig({"x": (tf.float32, [None, 3])}, {"y": (tf.float32, [None, 2])}),
}


def _floats(serialized, name):
    kind, values = read_feature(read_feature_map(serialized)[name])
    return np.asarray(values, np.float32)


class FakeServable:
    def __init__(self, version=1, export_dir="", delay=0.0):
        self.version = version
        self.export_dir = export_dir
        self.delay = delay
        self.signatures = SIGNATURES
        self.calls = []            # (signature, {key: shape}) per run
        self.closed = False
        self._lock = threading.Lock()

    def run(self, signature_name, feeds):
        if signature_name not in self.signatures:
            raise NotFound(f"unknown signature {signature_name!r}")
        sig = self.signatures[signature_name]
        if set(feeds) != set(sig.inputs):
            raise InvalidInput(f"inputs {sorted(feeds)} do not match {sorted(sig.inputs)}")
        with self._lock:
            self.calls.append((signature_name, {k: np.shape(v) for k, v in feeds.items()}))
        if self.closed:
            raise RuntimeError("run on a closed servable")
        if self.delay:
            time.sleep(self.delay)
        if signature_name in ("serving_default",):
            x = np.asarray(feeds["x"], np.float32)
            return {"y": x[:, :2] * 2 + np.float32(self.version)}
        if signature_name == "two":
            a, b = feeds["a"], feeds["b"]
            return {"total": a.sum(1) + b.astype(np.float32), "b_twice": b * 2}
        if signature_name == "strings":
            up = np.array([v.upper() for v in feeds["s"]], dtype=object)
            return {"upper": up, "upper_bytes": up.copy()}
        if signature_name == "classify":
            scores = np.stack([_floats(s, "x") for s in feeds["inputs"]])
            classes = np.array([[b"a", b"b"]] * len(scores), dtype=object)
            return {"classes": classes, "scores": scores}
        if signature_name == "regress":
            return {"outputs": np.array([_floats(s, "x").sum() for s in feeds["inputs"]],
                                        np.float32)}
        raise RuntimeError("the model failed: division by zero in layer 3")

    def close(self):
        self.closed = True


class FakeLoader:
    """load_servable for a base dir of version dirs; a dir holding BROKEN fails to load."""

    def __init__(self, delay=0.0):
        self.loaded = {}
        self.delay = delay

    def __call__(self, export_dir, tags=("serve",)):
        if os.path.exists(os.path.join(export_dir, "BROKEN")):
            raise ValueError(f"{export_dir}: saved_model.pb is not a SavedModel")
        version = int(os.path.basename(export_dir))
        servable = FakeServable(version, export_dir, self.delay)
        self.loaded[version] = servable
        return servable


def make_base(tmp_path, *versions):
    base = tmp_path / "model"
    for v in versions:
        (base / str(v)).mkdir(parents=True)
    base.mkdir(exist_ok=True)
    return base


@contextlib.asynccontextmanager
async def serving(managers, limits=None, poll_seconds=0.0):
    """An aiohttp test client talking to a ModelServer on a loopback port."""
    from aiohttp.test_utils import TestClient, TestServer
    from tensorflux.serving.rest_api import Limits
    from tensorflux.serving.server import ModelServer

    server = ModelServer(managers, limits or Limits(), num_threads=8,
                         poll_seconds=poll_seconds)
    async with TestClient(TestServer(server.make_app())) as client:
        client.model_server = server
        yield client


def run(coroutine):
    return asyncio.run(coroutine)
