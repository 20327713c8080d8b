"""The playground's aiohttp app: the page (static files) and one websocket per tab.

    GET /                 index.html          GET /static/<file>   playground.js / .css
    GET /ws               the websocket; JSON text messages both ways:

page -> server
    {"type": "config", "config": {setting: string, ...}}   the URL state; answered with
        {"type": "config", "config": validated, "notes": [...], "query": "..."}, then (when
        the network or data changed) {"type": "data", ...} and a "state"; in a burst of
        such configs only the last is built (older queued builds are skipped)
    {"type": "play"} / {"type": "pause"} / {"type": "step"} / {"type": "reset"}
    {"type": "ack", "frame": n}         the page drew frame n (while playing, the server
                                        sends frame n + 1 only after this, or 2 s later)
    {"type": "setWeight", "layer": l, "source": i, "target": j, "value": w}
    {"type": "setBias", "layer": l, "target": j, "value": b}
    {"type": "graph"}                   -> {"type": "graph", "ops": [{name, op, inputs,
                                        outputs}, ...]} of the Session's graph
    {"type": "export"}                  -> {"type": "exported", "savedModel": dir,
                                        "program": path, "points": [...], "predictions": [...]}
server -> page
    {"type": "state", "frame", "epoch", "trainLoss", "testLoss", "weights", "biases",
     "grid", "nodeGrid", "nodes", "maps", "output"}
        output: the output's heatmap, base64 uint8 [grid * grid] (0 = -1, 255 = +1, rows
        from x2 = +6 down); maps: every node's (features, hidden, output) at the coarser
        nodeGrid, base64 uint8 [len(nodes), nodeGrid * nodeGrid]
    {"type": "error", "message": "..."}  a bad message; the connection stays open

Session work (building, training, fetching, exporting) runs in a small thread pool shared
by all tabs, one job at a time per tab (a lock), so the event loop keeps answering; a tab
that closes mid-step has its step finish, its Session closed and nothing sent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

import orjson
from aiohttp import WSMsgType, web

from tensorflux._src.platform.shutdown import serve_until_stopped, stop_event_on_signals
from tensorflux._src.playground import config as config_lib
from tensorflux._src.playground import network as network_lib
from tensorflux._src.playground import program

log = logging.getLogger("tensorflux.playground")
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
DISPLAY_ONLY = {"learningRate", "regularizationRate", "showTestData", "discretize"}
MAX_HZ = 60.0
ACK_TIMEOUT = 2.0
EXECUTOR = web.AppKey("executor", ThreadPoolExecutor)
EXPORT_ROOT = web.AppKey("export_root", str)
TABS = web.AppKey("tabs", set)


class Tab:
    """One websocket: its network, its play loop."""

    def __init__(self, app, ws):
        self.app, self.ws = app, ws
        self.net = None
        self.config = None
        self.lock = asyncio.Lock()
        self.playing = False
        self.play_task = None
        self.frame = 0
        self.acked = 0
        self.generation = 0     # of the latest configuration needing a new network
        self.rebuilding = None  # the task building it

    async def run_job(self, fn, *args):
        async with self.lock:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self.app[EXECUTOR], fn, *args)

    async def send(self, message):
        if self.ws.closed:
            return False
        try:
            await self.ws.send_str(orjson.dumps(message).decode())
        except (ConnectionError, RuntimeError):
            return False
        return True

    # -- messages ------------------------------------------------------------------------

    async def handle(self, message):
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "config":
            await self.configure(message.get("config"))
            return
        if kind == "ack":
            self.acked = max(self.acked, int(message.get("frame", 0)))
            return
        if self.rebuilding is not None:
            await self.rebuilding  # what follows a config acts on its network
        if self.net is None:
            raise ValueError(f"send a config message before {kind!r}")
        elif kind == "play":
            self.playing = True
            if self.play_task is None or self.play_task.done():
                self.play_task = asyncio.ensure_future(self.play())
        elif kind == "pause":
            self.playing = False
        elif kind == "step":
            self.playing = False
            await self.send_state(await self.run_job(self.update))
        elif kind == "reset":
            self.playing = False
            await self.send_state(await self.run_job(self.reset))
        elif kind == "setWeight":
            args = [int(message["layer"]), int(message["source"]), int(message["target"]),
                    float(message["value"])]
            await self.send_state(await self.run_job(self.set_weight, *args))
        elif kind == "setBias":
            args = [int(message["layer"]), int(message["target"]), float(message["value"])]
            await self.send_state(await self.run_job(self.set_bias, *args))
        elif kind == "graph":
            await self.send({"type": "graph", "ops": await self.run_job(self.net.graph_ops)})
        elif kind == "export":
            await self.send(await self.run_job(self.export))
        else:
            raise ValueError(f"unknown message type {kind!r}; expected config, play, pause, "
                             f"step, reset, ack, setWeight, setBias, graph or export")

    async def configure(self, raw):
        cfg, notes = config_lib.validate(raw if raw is not None else {})
        rebuild = self.config is None or any(
            cfg[k] != self.config[k] for k in cfg if k not in DISPLAY_ONLY)
        self.config = cfg
        await self.send({"type": "config", "config": cfg, "notes": notes,
                         "query": config_lib.to_query(cfg)})
        if rebuild:
            # Built in the background, so that a burst of changes (a user clicking "+"
            # five times) builds only the last: queued builds of older configs skip.
            self.playing = False
            self.generation += 1
            self.rebuilding = asyncio.ensure_future(self._rebuild(cfg, self.generation))

    async def _rebuild(self, cfg, generation):
        try:
            state = await self.run_job(self.rebuild, cfg, generation)
        except Exception as exc:  # a failed build is reported; the tab stays open
            log.exception("playground build failed")
            await self.send({"type": "error", "message": f"{type(exc).__name__}: {exc}"})
            return
        if state is not None:
            await self.send(state.pop("data"))
            await self.send_state(state)

    # -- jobs (threads) ------------------------------------------------------------------

    def rebuild(self, cfg, generation):
        if generation != self.generation:
            return None  # a newer configuration is queued behind this one
        if self.net is not None:
            self.net.close()
        self.net = network_lib.Network(cfg)
        state = self.net.snapshot()
        net = self.net
        state["data"] = {"type": "data", "features": net.features,
                         "train": _points(net.train_x, net.train_y),
                         "test": _points(net.test_x, net.test_y)}
        return state

    def update(self):
        self.net.train(self.config["learningRate"], self.config["regularizationRate"])
        return self.net.snapshot()

    def reset(self):
        self.net.reset()
        return self.net.snapshot()

    def set_weight(self, layer, source, target, value):
        self.net.set_weight(layer, source, target, value)
        return self.net.snapshot()

    def set_bias(self, layer, target, value):
        self.net.set_bias(layer, target, value)
        return self.net.snapshot()

    def export(self):
        saved_model, path = self.net.export(self.app[EXPORT_ROOT])
        points = program.SAMPLE_POINTS
        return {"type": "exported", "savedModel": os.path.abspath(saved_model),
                "program": os.path.abspath(path), "points": points,
                "predictions": self.net.predict(points)[:, 0].tolist()}

    def close(self):
        if self.net is not None:
            self.net.close()
            self.net = None

    # -- streaming -----------------------------------------------------------------------

    async def send_state(self, state):
        self.frame += 1
        net = self.net
        message = {"type": "state", "frame": self.frame, "epoch": state["epoch"],
                   "trainLoss": state["trainLoss"], "testLoss": state["testLoss"],
                   "weights": [w.round(5).tolist() for w, _ in state["params"]],
                   "biases": [b.round(5).tolist() for _, b in state["params"]],
                   "grid": network_lib.GRID, "nodeGrid": network_lib.NODE_GRID,
                   "nodes": _node_ids(net),
                   "maps": network_lib.encode_maps(network_lib.node_maps(state["maps"])),
                   "output": network_lib.encode_maps(state["maps"][-1:])}
        return await self.send(message)

    async def play(self):
        """Trains and streams while playing: at most MAX_HZ frames a second, and never
        more than one frame ahead of the page (the next epoch runs while it draws)."""
        loop = asyncio.get_running_loop()
        pending = asyncio.ensure_future(self.run_job(self.update))
        last = 0.0
        try:
            while True:
                state = await pending
                if not self.playing or self.ws.closed:
                    if not self.ws.closed:
                        await self.send_state(state)
                    return
                wait = last + 1.0 / MAX_HZ - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not await self.send_state(state):
                    return
                last = loop.time()
                sent = self.frame
                pending = asyncio.ensure_future(self.run_job(self.update))
                deadline = time.monotonic() + ACK_TIMEOUT
                while self.acked < sent and time.monotonic() < deadline and \
                        not self.ws.closed and self.playing:
                    await asyncio.sleep(0.002)
        except Exception as exc:  # a failed step pauses this tab only
            log.exception("playground step failed")
            self.playing = False
            await self.send({"type": "error", "message": f"{type(exc).__name__}: {exc}"})


def _points(points, labels):
    return [[round(float(x), 4), round(float(y), 4), round(float(v), 4)]
            for (x, y), v in zip(points, labels)]


def _node_ids(net):
    ids = list(net.features)
    for i, width in enumerate(net.shape[1:-1]):
        ids += [f"h{i}_{j}" for j in range(width)]
    return ids + ["output"]


async def _index(request):
    return web.FileResponse(os.path.join(STATIC, "index.html"))


async def _websocket(request):
    ws = web.WebSocketResponse(heartbeat=30, max_msg_size=1 << 20)
    await ws.prepare(request)
    tab = Tab(request.app, ws)
    request.app[TABS].add(tab)
    try:
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            try:
                await tab.handle(orjson.loads(msg.data))
            except (ValueError, TypeError, KeyError) as exc:
                await tab.send({"type": "error", "message": f"{type(exc).__name__}: {exc}"})
    finally:
        tab.playing = False
        tab.generation += 1  # queued builds skip
        request.app[TABS].discard(tab)
        if tab.play_task is not None:
            try:
                await tab.play_task
            except Exception:  # already reported to the (closed) tab
                log.debug("play loop of a closed tab failed", exc_info=True)
        await tab.run_job(tab.close)
    return ws


def make_app(export_root="playground-exports", threads=2):
    app = web.Application()
    app[EXECUTOR] = ThreadPoolExecutor(threads, thread_name_prefix="playground")
    app[EXPORT_ROOT] = export_root
    app[TABS] = set()
    app.router.add_get("/", _index)
    app.router.add_get("/ws", _websocket)
    app.router.add_static("/static/", STATIC)

    async def _close_tabs(app):  # open websockets would hold the shutdown up
        for tab in list(app[TABS]):
            tab.playing = False
            await tab.ws.close(code=1001, message=b"server shutdown")
    app.on_shutdown.append(_close_tabs)

    async def _cleanup(app):
        app[EXECUTOR].shutdown(wait=False)
    app.on_cleanup.append(_cleanup)
    return app


async def start(host, port, export_root="playground-exports"):
    """Starts serving; returns (runner, bound port)."""
    runner = web.AppRunner(make_app(export_root), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    bound = runner.addresses[0][1] if runner.addresses else port
    return runner, bound


def serve(port=8080, host="127.0.0.1", export_dir="playground-exports", ready=None):
    """`tensorflux playground`: serves until SIGINT / SIGTERM; prints the page's URL."""
    
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {port}")

    async def forever():
        stop = stop_event_on_signals()
        runner, bound = await start(host, port, export_dir)
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        print(f"tensorflux playground at http://{shown}:{bound}/ (exports go to "
              f"{os.path.abspath(export_dir)})", flush=True)
        await serve_until_stopped(stop, runner, bound, ready)
    asyncio.run(forever())
