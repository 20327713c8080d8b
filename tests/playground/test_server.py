"""The websocket protocol through aiohttp's test client (no browser)."""

import asyncio
import base64
import os

import numpy as np
import orjson
from aiohttp.test_utils import TestClient, TestServer

from tensorflux._src.playground import server
from tests.playground import numpy_net


def _run(coroutine):
    return asyncio.run(coroutine)


async def _client(tmp_path):
    client = TestClient(TestServer(server.make_app(str(tmp_path / "exports"))))
    await client.start_server()
    return client


async def _receive(ws, kind, timeout=60):
    """The next message of type `kind` (others are skipped)."""
    while True:
        msg = await ws.receive(timeout=timeout)
        message = orjson.loads(msg.data)
        if message["type"] == kind:
            return message


def test_page_and_static_files(tmp_path):
    async def go():
        client = await _client(tmp_path)
        try:
            page = await client.get("/")
            assert page.status == 200 and "playground.js" in await page.text()
            for name in ("playground.js", "playground.css"):
                assert (await client.get(f"/static/{name}")).status == 200
        finally:
            await client.close()
    _run(go())


def test_config_step_state_and_weight_edit(tmp_path):
    async def go():
        client = await _client(tmp_path)
        try:
            ws = await client.ws_connect("/ws")
            await ws.send_str(orjson.dumps({"type": "config", "config": {
                "dataset": "xor", "networkShape": "2", "learningRate": "oops"}}).decode())
            cfg = await _receive(ws, "config")
            assert cfg["config"]["learningRate"] == 0.03 and cfg["config"]["dataset"] == "xor"
            assert cfg["notes"] and cfg["notes"][0].startswith("learningRate: got 'oops'")
            assert "networkShape=2&" in cfg["query"]
            data = await _receive(ws, "data")
            assert len(data["train"]) == 250 and len(data["test"]) == 250
            state = await _receive(ws, "state")
            assert state["epoch"] == 0 and state["nodes"] == ["x", "y", "h0_0", "h0_1",
                                                              "output"]
            maps = np.frombuffer(base64.b64decode(state["maps"]), np.uint8).reshape(5, -1)
            assert maps.shape[1] == state["nodeGrid"] ** 2 == 25 ** 2
            # the X1 feature map: column 0 is x1 = -6 -> byte 0; X2 row 0 is x2 = +6
            assert maps[0, 0] == 0 and maps[1, 0] == 255 and maps[1, -1] == 0
            output = np.frombuffer(base64.b64decode(state["output"]), np.uint8)
            assert output.shape == (state["grid"] ** 2,)
            np.testing.assert_array_equal(maps[-1], output.reshape(50, 50)[::2, ::2].ravel())
            # the output map is the NumPy network of the streamed weights
            params = [(np.array(w), np.array(b)) for w, b in zip(state["weights"],
                                                                 state["biases"])]
            from tensorflux._src.playground import network
            out = numpy_net.forward(network.grid_points(), ["x", "y"], params, "tanh",
                                    "classification")[-1][:, 0]
            np.testing.assert_allclose(output, np.round((np.clip(out, -1, 1) + 1) * 127.5),
                                       atol=1)
            await ws.send_str('{"type": "step"}')
            stepped = await _receive(ws, "state")
            assert stepped["epoch"] == 1 and stepped["frame"] == state["frame"] + 1
            await ws.send_str('{"type": "setWeight", "layer": 0, "source": 1, "target": 0, '
                              '"value": 0.75}')
            edited = await _receive(ws, "state")
            assert edited["weights"][0][1][0] == 0.75
            await ws.send_str('{"type": "setBias", "layer": 1, "target": 0, "value": -2}')
            assert (await _receive(ws, "state"))["biases"][1] == [-2.0]
            await ws.send_str('{"type": "setWeight", "layer": 7, "source": 0, "target": 0, '
                              '"value": 1}')
            error = await _receive(ws, "error")
            assert "layer must be in [0, 2), got 7" in error["message"]
            await ws.send_str('{"type": "dance"}')
            assert "unknown message type 'dance'" in (await _receive(ws, "error"))["message"]
            await ws.send_str('{"type": "reset"}')
            assert (await _receive(ws, "state"))["epoch"] == 0
            # a display-only change does not rebuild (no data message, epoch kept)
            await ws.send_str(orjson.dumps({"type": "config", "config": {
                "dataset": "xor", "networkShape": "2", "learningRate": "0.3"}}).decode())
            await _receive(ws, "config")
            await ws.send_str('{"type": "graph"}')
            graph = await _receive(ws, "graph")
            names = {op["name"] for op in graph["ops"]}
            assert {"layer0/weights", "layer1/biases", "inputs", "predictions",
                    "metrics/train_loss", "heatmaps"} <= names
            await ws.close()
        finally:
            await client.close()
    _run(go())


def test_play_streams_with_acks_and_export(tmp_path):
    async def go():
        client = await _client(tmp_path)
        try:
            ws = await client.ws_connect("/ws")
            await ws.send_str(orjson.dumps({"type": "config", "config": {
                "dataset": "gauss"}}).decode())
            await _receive(ws, "state")
            await ws.send_str('{"type": "play"}')
            epochs = []
            for _ in range(5):
                state = await _receive(ws, "state")
                epochs.append(state["epoch"])
                await ws.send_str(orjson.dumps({"type": "ack",
                                                "frame": state["frame"]}).decode())
            assert epochs == sorted(epochs) and epochs[-1] >= 5
            await ws.send_str('{"type": "pause"}')
            await ws.send_str('{"type": "export"}')
            exported = await _receive(ws, "exported")
            assert os.path.isdir(exported["savedModel"]) and exported["savedModel"].endswith(
                os.path.join("exports", "1"))
            assert os.path.isfile(exported["program"])
            from tensorflux.serving import load_servable
            got = load_servable(exported["savedModel"]).run(
                "serving_default", {"inputs": exported["points"]})["predictions"]
            np.testing.assert_allclose(got[:, 0], exported["predictions"], rtol=1e-5)
            await ws.close()
        finally:
            await client.close()
    _run(go())


def test_survives_a_tab_closing_mid_step_and_many_tabs(tmp_path):
    async def go():
        client = await _client(tmp_path)
        try:
            tabs = [await client.ws_connect("/ws") for _ in range(6)]
            for i, ws in enumerate(tabs):
                await ws.send_str(orjson.dumps({"type": "config", "config": {
                    "networkShape": str(1 + i % 3)}}).decode())
            for ws in tabs:
                await _receive(ws, "state")
                await ws.send_str('{"type": "play"}')
            # close half of them while their steps are running, unacknowledged
            for ws in tabs[::2]:
                await ws.close()
            for ws in tabs[1::2]:
                for _ in range(3):
                    state = await _receive(ws, "state")
                    await ws.send_str(orjson.dumps({"type": "ack",
                                                    "frame": state["frame"]}).decode())
            for ws in tabs[1::2]:
                await ws.close()
            for _ in range(200):
                if not client.app[server.TABS]:
                    break
                await asyncio.sleep(0.05)
            assert not client.app[server.TABS]
            # the server still serves a new tab
            ws = await client.ws_connect("/ws")
            await ws.send_str('{"type": "config", "config": {}}')
            assert (await _receive(ws, "state"))["epoch"] == 0
            await ws.close()
        finally:
            await client.close()
    _run(go())


def test_a_burst_of_configs_builds_the_last_and_later_messages_use_it(tmp_path):
    async def go():
        client = await _client(tmp_path)
        try:
            ws = await client.ws_connect("/ws")
            for width in range(1, 7):
                await ws.send_str(orjson.dumps({"type": "config", "config": {
                    "networkShape": f"{width},{width}"}}).decode())
            await ws.send_str('{"type": "step"}')
            datas, states = 0, []
            while not states or states[-1]["epoch"] != 1:
                message = orjson.loads((await ws.receive(timeout=60)).data)
                datas += message["type"] == "data"
                if message["type"] == "state":
                    states.append(message)
            assert states[-1]["nodes"][-7:] == ["h1_0", "h1_1", "h1_2", "h1_3", "h1_4",
                                                "h1_5", "output"]
            assert datas < 6 and len(states) == datas + 1
            await ws.close()
        finally:
            await client.close()
    _run(go())
