"""1,000 malformed and hostile requests: each is answered with a 4xx and a JSON error, and
the server answers correctly afterwards."""

from __future__ import annotations

import asyncio
import json
import random

import numpy as np

from tensorflux.serving import batching
from tensorflux.serving.model_manager import ModelConfig, ModelManager
from tensorflux.serving.rest_api import Limits

from tests.serving.fakes import FakeLoader, make_base, run, serving

LIMITS = Limits(max_body_bytes=256 << 10, max_depth=16, max_elements=20_000)


def _hostile(rng):
    """(method, path, raw body bytes or None, headers) of one bad request."""
    kind = rng.randrange(16)
    predict = "/v1/models/m:predict"
    if kind == 0:    # garbage bytes
        return "POST", predict, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    if kind == 1:    # JSON that is not an object, or an empty body
        return "POST", predict, rng.choice([b"", b"   ", b"[1,2]", b"3", b'"x"', b"null",
                                            b"true", b"{", b'{"instances": [1,', b"\xff\xfe"])
    if kind == 2:    # wrong types for the request's fields
        field = rng.choice(["instances", "inputs", "signature_name", "examples"])
        value = rng.choice([None, 3, "x", {"a": 1}, True, [], {}, [None], [[None, 1, 2]]])
        return "POST", predict, json.dumps({field: value}).encode()
    if kind == 3:    # too many elements (rejected before the array is made)
        rows = rng.randrange(2_000, 4_000)
        return "POST", predict, json.dumps({"instances": [[0, 0, 0]] * rows}).encode()
    if kind == 4:    # deep nesting: past the tensor limit, or past the parser's
        depth = rng.choice([17, 40, 900, 5_000, 50_000])
        return "POST", predict, (b'{"instances": ' + b"[" * depth + b"1" + b"]" * depth + b"}")
    if kind == 5:    # bad base64
        text = rng.choice(["!!!", "abc", "a===", "\u00e9\u00e9", "", 5, None])
        if text == "":
            text = "%%%%"
        return "POST", predict, json.dumps({"signature_name": "strings",
                                            "instances": [{"b64": text}]}).encode()
    if kind == 6:    # unknown signatures, models, versions, labels
        path = rng.choice([predict, "/v1/models/nope:predict", "/v1/models/m/versions/42:predict",
                           "/v1/models/m/labels/x:predict", "/v1/models/m/versions/42",
                           "/v1/models/nope/metadata",
                           "/v1/models/m/versions/99999999999999999999:predict"])
        return "POST" if "predict" in path else "GET", path, json.dumps(
            {"signature_name": "nope" if path == predict else "serving_default",
             "instances": [[1, 2, 3]]}).encode()
    if kind == 7:    # wrong methods and paths
        method = rng.choice(["GET", "PUT", "DELETE", "PATCH", "POST"])
        path = rng.choice([predict if method != "POST" else "/v1/models/m",
                           "/v1/models", "/v1/models/m:explain", "/v1/", "/v2/health/live/x",
                           "/v1/models/m/metadata" if method != "GET" else "/v1/x",
                           "/../../etc/passwd", "/v1/models/..%2F..%2Fetc:predict"])
        return method, path, b'{"instances": [[1,2,3]]}'
    if kind == 8:    # wrong shapes and dtypes
        value = rng.choice([[[1, 2]], [[1, 2, 3, 4]], [1, 2, 3], [[[1, 2, 3]]], [["a", "b", "c"]],
                            [[True, 1, 2], 5], [[1, 2, 3], [4, 5]], [[1e400, "x", 3]],
                            [[{"b64": "AA=="}, 1, 2]], [[10**30, 1, 2]]])
        return "POST", predict, json.dumps({rng.choice(["instances", "inputs"]): value}).encode()
    if kind == 9:    # named inputs gone wrong
        body = rng.choice([
            {"signature_name": "two", "instances": [{"a": [1, 2]}]},
            {"signature_name": "two", "instances": [{"a": [1, 2], "b": 1}, {"a": [1, 2]}]},
            {"signature_name": "two", "instances": [{"a": [1, 2], "b": 1}, [1, 2]]},
            {"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [1.5]}},
            {"signature_name": "two", "inputs": [[1, 2]]},
            {"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [2**40]}},
            {"inputs": {"x": [[1, 2, 3]], "zz": 1}},
            {"instances": [[1, 2, 3]], "inputs": [[1, 2, 3]]},
            {"signature_name": "two", "instances": [{"a": [1, 2], "b": 1, "c": 2}]}])
        return "POST", predict, json.dumps(body).encode()
    if kind == 10:   # classify / regress with bad examples
        verb = rng.choice(["classify", "regress"])
        body = rng.choice([
            {"signature_name": verb, "examples": []},
            {"signature_name": verb, "examples": [1, 2]},
            {"signature_name": verb, "examples": [{"x": [[1, 2]]}]},
            {"signature_name": verb, "examples": [{"x": [1, "a"]}]},
            {"signature_name": verb, "examples": [{"x": None}]},
            {"signature_name": verb, "examples": [{"x": True}]},
            {"signature_name": verb, "examples": [{"x": 2**70}]},
            {"signature_name": verb, "examples": [{"x": {"b64": "@@"}}]},
            {"signature_name": verb, "context": [1], "examples": [{"x": 1.0}]},
            {"signature_name": verb, "context": {"x": 1.0}, "examples": [{"x": 1.0}]},
            {"signature_name": "serving_default", "examples": [{"x": 1.0}]},
            {"signature_name": verb, "examples": [{"x": [0.0] * 30_000}]}])
        return "POST", f"/v1/models/m:{verb}", json.dumps(body).encode()
    if kind == 11:   # a body over the size limit
        return "POST", predict, b'{"instances": [' + b"0," * (LIMITS.max_body_bytes // 2) + b"0]}"
    if kind == 12:   # random mutations of a good request, cut short
        good = bytearray(json.dumps({"instances": [[1.0, 2.0, 3.0]] * 4}).encode())
        for _ in range(rng.randrange(0, 6)):
            good[rng.randrange(len(good))] = rng.choice(b'[]{}",:0x\\\x00')
        return "POST", predict, bytes(good[:rng.randrange(1, len(good) - 1)])
    if kind == 13:   # a row of strings where numbers belong, NaN into an int input
        return "POST", predict, rng.choice([
            b'{"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [NaN]}}',
            b'{"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [Infinity]}}',
            b'{"instances": [["1", "2", "3"]]}',
            b'{"signature_name": "strings", "instances": [1, 2]}',
            b'{"signature_name": "strings", "instances": [["a"], "b"]}'])
    if kind == 14:   # requests on the health and status endpoints with odd names
        name = "".join(rng.choice("ab:/%._-") for _ in range(rng.randrange(1, 12)))
        return "GET", f"/v1/models/zz{name}/versions/x", None
    return "POST", predict, json.dumps({"signature_name": ["serving_default"],
                                        "instances": [[1, 2, 3]]}).encode()


def test_a_thousand_hostile_requests_get_4xx_and_service_goes_on(tmp_path):
    params = batching.BatchingParameters(max_batch_size=8, batch_timeout_micros=1000,
                                         max_enqueued_batches=100, num_batch_threads=2,
                                         allowed_batch_sizes=(4, 8))
    base = make_base(tmp_path, 1)
    manager = ModelManager(ModelConfig("m", str(base)), FakeLoader(),
                           lambda s: batching.Batcher(s.run, params))
    manager.poll()
    rng = random.Random(1234)
    requests = [_hostile(rng) for _ in range(1000)]

    async def send(client, method, path, body):
        response = await client.request(method, path, data=body,
                                        headers={"Content-Type": "application/json"})
        text = await response.text()
        return response.status, text

    async def body():
        async with serving({"m": manager}, limits=LIMITS) as client:
            answers = []
            for start in range(0, len(requests), 50):
                answers += await asyncio.gather(*[
                    send(client, *request) for request in requests[start:start + 50]])
            bad = [(request[:2], request[2][:80] if request[2] else None, status, text[:200])
                   for request, (status, text) in zip(requests, answers)
                   if not 400 <= status < 500]
            assert not bad, bad[:5]
            for status, text in answers:
                assert "error" in json.loads(text)
            assert {status for status, _ in answers} >= {400, 404, 413}
            # the server still answers, correctly
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            status, text = await send(client, "POST", "/v1/models/m:predict",
                                      json.dumps({"instances": x.tolist()}).encode())
            assert status == 200
            assert json.loads(text) == {"predictions": (x[:, :2] * 2 + 1).tolist()}
            status, text = await send(client, "GET", "/v1/models/m", None)
            assert status == 200 and "AVAILABLE" in text
    run(body())
