"""The REST model server against TF Serving's API, on a fake Servable (tests/serving/fakes.py)
and, end to end, on a trained and exported model served by `tensorflux serve`."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import time
import types

import numpy as np
import pytest

from tensorflux.serving import batching, model_manager, rest_api
from tensorflux.serving.model_manager import ModelConfig, ModelManager

from tests.serving.fakes import FakeLoader, make_base, run, serving
from tests.serving.server_process import http as _http
from tests.serving.server_process import start_server


def _manager(tmp_path, *versions, policy="latest", make_batcher=None, loader=None, labels=None):
    base = make_base(tmp_path, *versions)
    config = ModelConfig("m", str(base), model_manager.parse_version_policy(policy),
                         labels or {})
    manager = ModelManager(config, loader or FakeLoader(), make_batcher)
    manager.poll()
    return manager, base


async def _call(client, method, path, body=None, raw=None):
    kwargs = {"data": raw} if raw is not None else ({"json": body} if body is not None else {})
    response = await client.request(method, path, **kwargs)
    return response.status, json.loads(await response.text())


def test_status_metadata_and_health(tmp_path):
    manager, _ = _manager(tmp_path, 1, 2, policy="all", labels={"stable": 1})

    async def body():
        async with serving({"m": manager}) as client:
            status, doc = await _call(client, "GET", "/v1/models/m")
            assert status == 200
            assert doc == {"model_version_status": [
                {"version": v, "state": "AVAILABLE",
                 "status": {"error_code": "OK", "error_message": ""}} for v in ("2", "1")]}
            status, doc = await _call(client, "GET", "/v1/models/m/versions/1")
            assert [s["version"] for s in doc["model_version_status"]] == ["1"]
            status, doc = await _call(client, "GET", "/v1/models/m/labels/stable")
            assert [s["version"] for s in doc["model_version_status"]] == ["1"]
            status, doc = await _call(client, "GET", "/v1/models/m/metadata")
            assert status == 200 and doc["model_spec"] == {
                "name": "m", "signature_name": "", "version": "2"}
            sigs = doc["metadata"]["signature_def"]["signature_def"]
            assert sigs["serving_default"] == {
                "inputs": {"x": {"dtype": "DT_FLOAT", "name": "x:0", "tensor_shape": {
                    "dim": [{"size": "-1", "name": ""}, {"size": "3", "name": ""}],
                    "unknown_rank": False}}},
                "outputs": {"y": {"dtype": "DT_FLOAT", "name": "out_y:0", "tensor_shape": {
                    "dim": [{"size": "-1", "name": ""}, {"size": "2", "name": ""}],
                    "unknown_rank": False}}},
                "method_name": "tensorflow/serving/predict"}
            assert sigs["classify"]["method_name"] == "tensorflow/serving/classify"
            assert sigs["two"]["inputs"]["b"]["dtype"] == "DT_INT32"
            _, doc = await _call(client, "GET", "/v1/models/m/versions/1/metadata")
            assert doc["model_spec"]["version"] == "1"
            assert (await _call(client, "GET", "/v2/health/live"))[0] == 200
            assert await _call(client, "GET", "/v2/health/ready") == (200, {"ready": True})
            for path in ("/v1/models/zz", "/v1/models/m/versions/7",
                         "/v1/models/m/labels/canary", "/v1/models/m/versions/7/metadata"):
                status, doc = await _call(client, "GET", path)
                assert status == 404 and doc["error"], path
    run(body())


def test_predict_row_and_columnar(tmp_path):
    manager, _ = _manager(tmp_path, 3)
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    expected = (np.array(x, np.float32)[:, :2] * 2 + 3).tolist()

    async def body():
        async with serving({"m": manager}) as client:
            assert await _call(client, "POST", "/v1/models/m:predict", {"instances": x}) == \
                (200, {"predictions": expected})
            assert await _call(client, "POST", "/v1/models/m/versions/3:predict",
                               {"inputs": x}) == (200, {"outputs": expected})
            assert await _call(client, "POST", "/v1/models/m:predict",
                               {"instances": [{"x": r} for r in x]}) == \
                (200, {"predictions": expected})
            assert await _call(client, "POST", "/v1/models/m:predict",
                               {"inputs": {"x": x}}) == (200, {"outputs": expected})
            # several outputs: a list of objects per row / a map of columns
            rows = [{"a": [1.0, 2.0], "b": 3}, {"a": [0.5, 0.5], "b": -1}]
            status, doc = await _call(client, "POST", "/v1/models/m:predict",
                                      {"signature_name": "two", "instances": rows})
            assert status == 200 and doc == {"predictions": [
                {"total": 6.0, "b_twice": 6}, {"total": 0.0, "b_twice": -2}]}
            status, doc = await _call(client, "POST", "/v1/models/m:predict", {
                "signature_name": "two", "inputs": {"a": [[1, 2], [0.5, 0.5]], "b": [3, -1]}})
            assert doc == {"outputs": {"total": [6.0, 0.0], "b_twice": [6, -2]}}
            # NaN and Infinity travel as TF Serving writes them
            response = await client.post("/v1/models/m:predict",
                                         data='{"instances": [[NaN, Infinity, 0]]}')
            text = await response.text()
            assert response.status == 200 and "NaN" in text and "Infinity" in text
    run(body())


@pytest.mark.parametrize("body, expected", [
    (b'{"instances": [[0.5, -2, 1e-3]], "signature_name": "s"}',
     {"instances": [[0.5, -2, 0.001]], "signature_name": "s"}),
    (b'{"a": [NaN, Infinity, -Infinity]}', {"a": [float("nan")] + [float("inf"), -float("inf")]}),
    # Integers past 64 bits stay exact (a fast parser would round them to floats).
    (b'{"a": [18446744073709551616, -9223372036854775809]}',
     {"a": [2 ** 64, -2 ** 63 - 1]}),
    (b'{"a": 1e400, "b": "\\ud800"}', {"a": float("inf"), "b": "\ud800"}),
    (b'\xef\xbb\xbf{"a": 1}', {"a": 1}),
])
def test_request_json_is_read_as_pythons_json_reads_it(body, expected):
    document = rest_api.parse_request(body)
    assert json.dumps(document, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert repr(document) == repr(expected)  # ints stay ints, floats floats


@pytest.mark.parametrize("body, words", [
    (b"[1, 2]", "Is not object"), (b"null", "Is not object"), (b'{"a": 1,}', "Parse error"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
])
def test_request_json_errors(body, words):
    with pytest.raises(rest_api.ApiError, match=words):
        rest_api.parse_request(body)


def test_b64_strings_in_and_out(tmp_path):
    manager, _ = _manager(tmp_path, 1)
    blob = bytes(range(200, 256)) + b"ab"

    async def body():
        async with serving({"m": manager}) as client:
            status, doc = await _call(client, "POST", "/v1/models/m:predict", {
                "signature_name": "strings",
                "instances": ["hello", {"b64": base64.b64encode(blob).decode()}]})
            assert status == 200
            first, second = doc["predictions"]
            assert first == {"upper": "HELLO",
                             "upper_bytes": {"b64": base64.b64encode(b"HELLO").decode()}}
            # not UTF-8: base64 even without the _bytes suffix, since JSON cannot hold it
            assert base64.b64decode(second["upper"]["b64"]) == blob.upper()
            assert base64.b64decode(second["upper_bytes"]["b64"]) == blob.upper()
            status, doc = await _call(client, "POST", "/v1/models/m:predict", {
                "signature_name": "strings", "instances": [{"b64": "!!notbase64"}]})
            assert status == 400 and "base64" in doc["error"]
    run(body())


def test_classify_and_regress(tmp_path):
    manager, _ = _manager(tmp_path, 1)

    async def body():
        async with serving({"m": manager}) as client:
            status, doc = await _call(client, "POST", "/v1/models/m:classify", {
                "signature_name": "classify",
                "examples": [{"x": [0.25, 0.75], "tag": "a"}, {"x": [1, 0.5]}]})
            assert status == 200
            assert doc == {"results": [[["a", 0.25], ["b", 0.75]], [["a", 1.0], ["b", 0.5]]]}
            status, doc = await _call(client, "POST", "/v1/models/m:regress", {
                "signature_name": "regress", "context": {"id": {"b64": "AAE="}},
                "examples": [{"x": [0.25, 0.75]}, {"x": 2.5}]})
            assert (status, doc) == (200, {"results": [1.0, 2.5]})
            # the signature must be of the verb's method; features must not repeat context
            status, doc = await _call(client, "POST", "/v1/models/m:classify",
                                      {"examples": [{"x": 1.0}]})
            assert status == 400 and "tensorflow/serving/classify" in doc["error"]
            status, doc = await _call(client, "POST", "/v1/models/m:regress", {
                "signature_name": "regress", "context": {"x": 1.0}, "examples": [{"x": 2.0}]})
            assert status == 400 and "'x'" in doc["error"]
            status, doc = await _call(client, "POST", "/v1/models/m:regress", {
                "signature_name": "regress", "examples": [{"x": [1, "a"]}]})
            assert status == 400 and "mixes" in doc["error"]
    run(body())


@pytest.mark.parametrize("path,body,code,words", [
    ("/v1/models/m:predict", {"instances": [[1, 2]]}, 400, ["'x'", "[?, 3]"]),
    ("/v1/models/m:predict", {"instances": [[1, 2, "a"]]}, 400, ["'x'", "DT_FLOAT"]),
    ("/v1/models/m:predict", {"instances": [[1, 2, 3], [4, 5]]}, 400, ["'x'", "ragged"]),
    ("/v1/models/m:predict", {"signature_name": "two", "instances": [{"a": [1, 2]}]}, 400,
     ["'b'"]),
    ("/v1/models/m:predict", {"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [1.5]}},
     400, ["'b'", "whole numbers"]),
    ("/v1/models/m:predict", {"signature_name": "two", "inputs": {"a": [[1, 2]], "b": [2**40]}},
     400, ["'b'", "range"]),
    ("/v1/models/m:predict", {"inputs": {"x": [[1, 2, 3]], "z": [1]}}, 400, ["'z'"]),
    ("/v1/models/m:predict", {"instances": [[1, 2, 3]], "inputs": [[1, 2, 3]]}, 400, ["not both"]),
    ("/v1/models/m:predict", {"signature_name": "nope", "instances": [1]}, 404, ["nope"]),
    ("/v1/models/nope:predict", {"instances": [1]}, 404, ["nope"]),
    ("/v1/models/m/versions/9:predict", {"instances": [[1, 2, 3]]}, 404, ["9"]),
    ("/v1/models/m:predict", {"signature_name": "fails", "instances": [[1, 2, 3]]}, 500,
     ["RuntimeError", "division by zero"]),
])
def test_errors_name_the_problem(tmp_path, path, body, code, words):
    manager, _ = _manager(tmp_path, 1)

    async def go():
        async with serving({"m": manager}) as client:
            status, doc = await _call(client, "POST", path, body)
            assert status == code, doc
            for word in words:
                assert word in doc["error"], doc
            # and the server goes on answering
            assert (await _call(client, "POST", "/v1/models/m:predict",
                                {"instances": [[0, 0, 0]]}))[0] == 200
    run(go())


def test_new_version_is_loaded_old_unloaded_after_in_flight(tmp_path):
    loader = FakeLoader()
    manager, base = _manager(tmp_path, 1, loader=loader)

    async def body():
        async with serving({"m": manager}, poll_seconds=0.05) as client:
            _, doc = await _call(client, "POST", "/v1/models/m:predict", {"inputs": [[0, 0, 0]]})
            assert doc == {"outputs": [[1.0, 1.0]]}
            held = manager.acquire()          # a request still in flight on version 1
            (base / "2").mkdir()
            for _ in range(100):              # the poll loop finds it without a restart
                await asyncio.sleep(0.05)
                if manager.available() == [2]:
                    break
            assert manager.available() == [2]
            _, doc = await _call(client, "POST", "/v1/models/m:predict", {"inputs": [[0, 0, 0]]})
            assert doc == {"outputs": [[2.0, 2.0]]}
            _, doc = await _call(client, "GET", "/v1/models/m")
            assert [(s["version"], s["state"]) for s in doc["model_version_status"]] == \
                [("2", "AVAILABLE"), ("1", "UNLOADING")]
            assert not loader.loaded[1].closed
            assert held.servable.run("serving_default", {"x": np.zeros((1, 3), np.float32)})
            manager.release(held)
            for _ in range(100):
                await asyncio.sleep(0.02)
                if loader.loaded[1].closed:
                    break
            assert loader.loaded[1].closed
            _, doc = await _call(client, "GET", "/v1/models/m/versions/1")
            assert doc["model_version_status"][0]["state"] == "END"
            # a version that fails to load leaves version 2 serving and shows the error
            (base / "3").mkdir()
            (base / "3" / "BROKEN").write_text("")
            await asyncio.get_running_loop().run_in_executor(None, manager.poll)
            _, doc = await _call(client, "GET", "/v1/models/m/versions/3")
            (entry,) = doc["model_version_status"]
            assert entry["state"] == "END"
            assert entry["status"]["error_code"] == "INVALID_ARGUMENT"
            assert "not a SavedModel" in entry["status"]["error_message"]
            _, doc = await _call(client, "POST", "/v1/models/m:predict", {"inputs": [[0, 0, 0]]})
            assert doc == {"outputs": [[2.0, 2.0]]}
            # fixed in place: tried again, served
            (base / "3" / "BROKEN").unlink()
            await asyncio.get_running_loop().run_in_executor(None, manager.poll)
            _, doc = await _call(client, "POST", "/v1/models/m:predict", {"inputs": [[0, 0, 0]]})
            assert doc == {"outputs": [[3.0, 3.0]]}
    run(body())


def test_version_changes_call_on_change_and_settle_heap_frees_unloaded_versions(tmp_path):
    import gc
    import weakref

    from tensorflux.serving import server
    changes = []
    base = make_base(tmp_path, 1)
    config = ModelConfig("m", str(base), model_manager.parse_version_policy("latest"), {})
    manager = ModelManager(config, FakeLoader(), on_change=lambda: changes.append(
        [(n, v.state) for n, v in sorted(manager._versions.items())]))
    manager.poll()
    assert changes == [[(1, "AVAILABLE")]]
    (base / "2").mkdir()
    manager.poll()
    for _ in range(200):  # version 1 unloads in its own thread
        if len(changes) == 3:
            break
        time.sleep(0.01)
    assert changes[1:] == [[(1, "AVAILABLE"), (2, "AVAILABLE")], [(1, "END"), (2, "AVAILABLE")]]

    # What settle_heap is for: a frozen object in a cycle outlives its last reference
    # until the next settle_heap unfreezes and collects (as after a version's unload).
    class Node:
        pass
    node = Node()
    node.cycle = node
    ref = weakref.ref(node)
    try:
        server.settle_heap()
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert ref() is not None
        server.settle_heap()
        assert ref() is None
    finally:
        gc.unfreeze()


def test_version_policies_and_config_file(tmp_path):
    manager, _ = _manager(tmp_path, 1, 2, 3, policy="specific:1,3")
    assert manager.available() == [1, 3]
    assert model_manager.parse_version_policy("latest:2").choose([1, 5, 3]) == {3, 5}
    with pytest.raises(ValueError):
        model_manager.parse_version_policy("newest")
    configs = model_manager.read_model_config("""
        model_config_list {
          config { name: "a" base_path: "/m/a" model_platform: "tensorflow"
                   model_version_policy { specific { versions: 2 versions: 4 } }
                   version_labels { key: "stable" value: 2 } }
          config { name: 'b' base_path: "rel/b" model_version_policy { all {} } }
        }""", "/cfg")
    assert [(c.name, c.base_path, str(c.policy), c.labels) for c in configs] == [
        ("a", "/m/a", "specific:2,4", {"stable": 2}), ("b", "/cfg/rel/b", "all", {})]


def test_batching_parameters_file_formats():
    text = """max_batch_size { value: 8 }
              batch_timeout_micros { value: 1000 }
              max_enqueued_batches { value: 4 }
              num_batch_threads { value: 2 }
              allowed_batch_sizes: 2 allowed_batch_sizes: 4 allowed_batch_sizes: 8"""
    expected = batching.BatchingParameters(8, 1000, 4, 2, (2, 4, 8))
    assert batching.parse_batching_parameters(text) == expected
    assert batching.parse_batching_parameters(json.dumps({
        "max_batch_size": 8, "batch_timeout_micros": 1000, "max_enqueued_batches": 4,
        "num_batch_threads": 2, "allowed_batch_sizes": [2, 4, 8]})) == expected
    with pytest.raises(ValueError, match="max_batch_size"):
        batching.parse_batching_parameters("max_batch_size: 8 allowed_batch_sizes: 4")
    with pytest.raises(ValueError, match="unknown"):
        batching.parse_batching_parameters("max_batch_sise: 8")


def test_batching_merges_concurrent_requests_and_pads(tmp_path):
    params = batching.BatchingParameters(max_batch_size=8, batch_timeout_micros=200_000,
                                         max_enqueued_batches=10, num_batch_threads=1,
                                         allowed_batch_sizes=(2, 4, 8))
    loader = FakeLoader()
    manager, _ = _manager(tmp_path, 1, loader=loader,
                          make_batcher=lambda s: batching.Batcher(s.run, params))
    servable = loader.loaded[1]

    async def body():
        async with serving({"m": manager}) as client:
            rows = [[[float(i), float(i + 1), 0.0]] for i in range(5)]
            rows[4] = rows[4] + [[7.0, 8.0, 9.0]]          # one request of 2 rows: 6 in all
            answers = await asyncio.gather(*[
                _call(client, "POST", "/v1/models/m:predict", {"instances": r}) for r in rows])
            for r, (status, doc) in zip(rows, answers):
                assert status == 200
                assert doc == {"predictions": (np.array(r)[:, :2] * 2 + 1).tolist()}
            # merged into one run, padded from 6 rows up to the allowed size 8
            assert servable.calls == [("serving_default", {"x": (8, 3)})]
            servable.calls.clear()
            _, doc = await _call(client, "POST", "/v1/models/m:predict",
                                 {"inputs": [[1, 1, 1]] * 3})
            assert servable.calls == [("serving_default", {"x": (4, 3)})]
            status, doc = await _call(client, "POST", "/v1/models/m:predict",
                                      {"inputs": [[1, 1, 1]] * 9})
            assert status == 400 and "maximum batch size 8" in doc["error"]
    run(body())


def test_an_open_batch_runs_at_its_timeout_even_when_the_timer_fires_early(monkeypatch):
    """The event loop's timers may fire a little before a deadline by the batcher's
    clock (uvloop's is millisecond-grained). The batch must run then anyway, not wait
    for another request that may never come."""
    real = time.monotonic
    reads = []

    def lagging_clock():  # the batch's creation reads the real time, later reads lag 2 ms
        reads.append(None)
        return real() - (0.002 if len(reads) > 1 else 0.0)

    monkeypatch.setattr(batching, "time", types.SimpleNamespace(monotonic=lagging_clock))
    params = batching.BatchingParameters(max_batch_size=8, batch_timeout_micros=5_000,
                                         max_enqueued_batches=10, num_batch_threads=1)
    batcher = batching.Batcher(lambda signature, feeds: {"y": feeds["x"] * 2}, params)

    async def one_request():
        x = np.arange(3, dtype=np.float32).reshape(1, 3)
        return await asyncio.wait_for(batcher.run("serving_default", {"x": x}), timeout=5)

    try:
        outputs = asyncio.run(one_request())
    finally:
        batcher.close()
    np.testing.assert_array_equal(outputs["y"], [[0.0, 2.0, 4.0]])
    assert batcher.batches_run == 1


def test_full_batch_queue_answers_429(tmp_path):
    params = batching.BatchingParameters(max_batch_size=1, batch_timeout_micros=0,
                                         max_enqueued_batches=1, num_batch_threads=1)
    loader = FakeLoader(delay=0.3)
    manager, _ = _manager(tmp_path, 1, loader=loader,
                          make_batcher=lambda s: batching.Batcher(s.run, params))

    async def body():
        async with serving({"m": manager}) as client:
            answers = await asyncio.gather(*[
                _call(client, "POST", "/v1/models/m:predict", {"instances": [[1, 2, 3]]})
                for _ in range(6)])
            codes = sorted(status for status, _ in answers)
            assert codes.count(200) >= 2 and 429 in codes and set(codes) <= {200, 429}
            for status, doc in answers:
                if status == 429:
                    assert "queue" in doc["error"]
                else:
                    assert doc == {"predictions": [[3.0, 5.0]]}
    run(body())


# -- end to end: train, export, `tensorflux serve` in a subprocess --------------------------

def _cli(*args, cwd):
    result = subprocess.run([sys.executable, "-m", "tensorflux", *args], cwd=cwd,
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.skipif(not os.path.exists(os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "tensorflux", "serving", "servable.py")),
                    reason="the SavedModel loader is not there")
def test_end_to_end_train_export_serve(tmp_path):
    from tensorflux.serving import load_servable

    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    run_dir, base = tmp_path / "run", tmp_path / "exports"
    _cli("train", "--dataset", "iris", "--epochs", "2", "--logdir", str(run_dir), cwd=repo)
    _cli("export", "--logdir", str(run_dir), "--export_dir", str(base), "--version", "1",
         cwd=repo)
    server, url = start_server("iris", base, repo, "--file_system_poll_wait_seconds", "0.2")
    try:
        status, doc = _http("GET", url)
        assert doc["model_version_status"][0]["state"] == "AVAILABLE"
        status, doc = _http("GET", url + "/metadata")
        sig = doc["metadata"]["signature_def"]["signature_def"]["serving_default"]
        assert sig["inputs"]["features"]["dtype"] == "DT_FLOAT"
        assert sig["inputs"]["features"]["tensor_shape"]["dim"][1]["size"] == "4"

        features = np.array([[5.1, 3.5, 1.4, 0.2], [6.7, 3.0, 5.2, 2.3]], np.float32)
        status, doc = _http("POST", url + ":predict", {"instances": features.tolist()})
        assert status == 200
        served = np.array([row["probabilities"] for row in doc["predictions"]])
        with load_servable(str(base / "1")) as servable:   # an in-process Session
            expected = servable.run("serving_default", {"features": features})
        np.testing.assert_allclose(served, expected["probabilities"], rtol=1e-5, atol=1e-6)
        assert [row["classes"] for row in doc["predictions"]] == \
            expected["classes"].tolist()

        examples = [{"features": row} for row in features.tolist()]
        status, doc = _http("POST", url + ":classify",
                            {"signature_name": "classify", "examples": examples})
        assert status == 200 and len(doc["results"]) == 2
        np.testing.assert_allclose([[s for _, s in r] for r in doc["results"]],
                                   expected["probabilities"], rtol=1e-5, atol=1e-6)
        assert [label for label, _ in doc["results"][0]] == ["0", "1", "2"]
        status, doc = _http("POST", url + ":predict", {"instances": [[1.0, 2.0]]})
        assert status == 400 and "features" in doc["error"]

        shutil.copytree(base / "1", base / "2")          # version 2 appears
        for _ in range(300):
            _, doc = _http("GET", url)
            if doc["model_version_status"][0] == {"version": "2", "state": "AVAILABLE",
                                                  "status": {"error_code": "OK",
                                                             "error_message": ""}}:
                break
            time.sleep(0.1)
        status, doc = _http("POST", url + "/versions/2:predict", {"inputs": features.tolist()})
        assert status == 200
        np.testing.assert_allclose(doc["outputs"]["probabilities"], expected["probabilities"],
                                   rtol=1e-5, atol=1e-6)
        assert _http("GET", url + "/versions/1")[1]["model_version_status"][0]["state"] in \
            ("UNLOADING", "END")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
