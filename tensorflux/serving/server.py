"""The REST model server: TensorFlow Serving's HTTP API on aiohttp.

    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]              model status
    GET  /v1/models/{name}[/versions/{v}|/labels/{l}]/metadata     signature defs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:predict      instances / inputs
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:classify     examples -> results
    POST /v1/models/{name}[/versions/{v}|/labels/{l}]:regress      examples -> results
    GET  /v2/health/live, /v2/health/ready                         liveness / readiness

Every answer is JSON; every failure is {"error": "..."} with TF Serving's status code
(400 bad request, 404 unknown model / version / signature, 413 body too large, 429 batch
queue full, 500 the model failed). Handlers catch everything: a bad request is answered
and the server goes on serving the others.

Runs go to threads (a pool for plain runs, the batcher's pool with --enable_batching), so
the event loop only parses, routes and answers. A servable with an `answer_request(verb,
document)` method (tensorflux automl's models, which take raw records and preprocess them
inside) answers :predict / :classify / :regress documents itself, in the same pool.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from tensorflux.serving import rest_api
from tensorflux.serving.rest_api import ApiError, Limits

log = logging.getLogger("tensorflux.serving")

_VERSION = r"(?:/versions/(\d{1,19})|/labels/([^/:]+))?"
_PREDICT_PATH = re.compile(r"/v1/models/([^/:]+)" + _VERSION + r":(classify|regress|predict)",
                           re.IGNORECASE)
_STATUS_PATH = re.compile(r"/v1/models(?:/([^/:]+))?" + _VERSION + r"(?:/(metadata))?",
                          re.IGNORECASE)
_JSON = "application/json"
_OFFLOAD_BYTES = 256 << 10  # bodies larger than this are parsed off the event loop


def _servable_errors():
    """(InvalidInput, NotFound) of the loader's contract, once its module exists."""
    try:
        from tensorflux.serving.errors import InvalidInput, NotFound
    except ImportError:  # the export side is not installed: nothing raises them
        return (), ()
    return InvalidInput, NotFound


def _json_response(document, status=200):
    return web.Response(body=rest_api.dumps(document), status=status, content_type=_JSON)


def error_response(message, status):
    return _json_response({"error": str(message)}, status)


class ModelServer:
    """Serves the models of `managers` ({name: ModelManager}) over HTTP."""

    def __init__(self, managers, limits: Limits = Limits(), num_threads=None,
                 poll_seconds=0.0):
        self.managers = dict(managers)
        self.limits = limits
        self.poll_seconds = poll_seconds
        threads = num_threads or 4 * (os.cpu_count() or 1)
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="serve")
        self._invalid_input, self._not_found = _servable_errors()
        self._poll_task = None

    # -- application ---------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=self.limits.max_body_bytes,
                              middlewares=[self._errors_middleware])
        app.router.add_get("/v2/health/live", self._live)
        app.router.add_get("/v2/health/ready", self._ready)
        app.router.add_route("*", "/v1/{tail:.*}", self._v1)
        app.on_startup.append(self._on_startup)
        app.on_cleanup.append(self._on_cleanup)
        return app

    async def _on_startup(self, app):
        if self.poll_seconds > 0:
            self._poll_task = asyncio.get_running_loop().create_task(self._poll_loop())

    async def _on_cleanup(self, app):
        if self._poll_task is not None:
            self._poll_task.cancel()
            try:
                await self._poll_task
            except asyncio.CancelledError:
                pass
        for manager in self.managers.values():
            manager.close()
        self._executor.shutdown(wait=False)

    async def _poll_loop(self):
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.poll_seconds)
            for manager in self.managers.values():
                try:
                    await loop.run_in_executor(None, manager.poll)
                except Exception:  # noqa: BLE001 - polling must go on
                    log.exception("polling %s failed", manager.name)

    @web.middleware
    async def _errors_middleware(self, request, handler):
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(exc, exc.status)
        except web.HTTPException as exc:  # unknown routes, 405, 413 from aiohttp itself
            if exc.status < 400:
                raise
            return error_response(exc.reason if exc.text is None or exc.text.startswith(
                f"{exc.status}:") else exc.text, exc.status)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the server never dies of a request
            return self._exception_response(exc)

    def _exception_response(self, exc):
        if self._invalid_input and isinstance(exc, self._invalid_input):
            return error_response(exc, 400)
        if self._not_found and isinstance(exc, self._not_found):
            return error_response(exc.args[0] if exc.args else exc, 404)
        if isinstance(exc, MemoryError):
            return error_response("out of memory while answering the request", 500)
        log.error("request failed: %s: %s", type(exc).__name__, exc)
        text = str(exc).splitlines()[0] if str(exc) else ""
        return error_response(f"{type(exc).__name__}: {text}", 500)

    # -- health --------------------------------------------------------------------------

    async def _live(self, request):
        return _json_response({"live": True})

    async def _ready(self, request):
        ready = bool(self.managers) and all(m.available() for m in self.managers.values())
        return _json_response({"ready": ready}, 200 if ready else 503)

    # -- /v1 -----------------------------------------------------------------------------

    async def _v1(self, request):
        path, method = request.path, request.method
        match = _PREDICT_PATH.fullmatch(path)
        if match and method == "POST":
            name, version, label, verb = match.groups()
            return await self._infer(request, name, _version(version), label, verb.lower())
        match = None if match else _STATUS_PATH.fullmatch(path)
        if match and method == "GET":
            name, version, label, metadata = match.groups()
            if name is None:
                raise ApiError("Missing model name in request.")
            manager = self._manager(name)
            if metadata:
                return self._metadata(manager, _version(version), label)
            return _json_response(manager.status(_version(version), label))
        raise ApiError(f"Malformed request: {method} {path[:200]}")

    def _manager(self, name):
        manager = self.managers.get(name)
        if manager is None:
            raise ApiError(f"Servable not found for request: Latest({name[:200]})", 404)
        return manager

    def _metadata(self, manager, version, label):
        handle = manager.acquire(version, label)
        try:
            return _json_response(rest_api.metadata_json(
                manager.name, handle.version, handle.servable.signatures))
        finally:
            manager.release(handle)

    async def _read_json(self, request):
        length = request.content_length
        if length is not None and length > self.limits.max_body_bytes:
            raise ApiError(f"The request body of {length:,} bytes is larger than the "
                           f"{self.limits.max_body_bytes:,} allowed", 413)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise ApiError(f"The request body is larger than the "
                           f"{self.limits.max_body_bytes:,} bytes allowed", 413) from None
        if len(body) > _OFFLOAD_BYTES:
            return await asyncio.get_running_loop().run_in_executor(
                self._executor, rest_api.parse_request, body)
        return rest_api.parse_request(body)

    async def _infer(self, request, name, version, label, verb):
        manager = self._manager(name)
        document = await self._read_json(request)
        handle = manager.acquire(version, label)
        try:
            answer_request = getattr(handle.servable, "answer_request", None)
            if answer_request is not None:
                # A servable that reads raw records itself (tensorflux automl: the
                # preprocessing lives in the model) answers the whole document.
                answer = await asyncio.get_running_loop().run_in_executor(
                    self._executor, answer_request, verb, document)
                return _json_response(answer)
            signature_name = rest_api.signature_name_of(document)
            signature = handle.servable.signatures.get(signature_name)
            if signature is None:
                raise ApiError(f'Serving signature name: "{signature_name[:200]}" not found in '
                               f'signature def', 404)
            if verb == "predict":
                feeds, fmt = rest_api.predict_feeds(document, signature, self.limits)
                outputs = await self._run(handle, signature_name, feeds)
                answer = rest_api.encode_predictions(outputs, fmt)
            else:
                method = rest_api.CLASSIFY_METHOD if verb == "classify" else \
                    rest_api.REGRESS_METHOD
                key = rest_api.example_input(signature, method)
                examples = rest_api.serialized_examples(document, self.limits)
                outputs = await self._run(handle, signature_name, {key: examples})
                answer = (rest_api.classification_results if verb == "classify" else
                          rest_api.regression_results)(outputs, len(examples))
        finally:
            manager.release(handle)
        return _json_response(answer)

    async def _run(self, handle, signature_name, feeds):
        batcher = handle.batcher
        if batcher is not None and batcher.batch_rows(feeds) is not None:
            return await batcher.run(signature_name, feeds)
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, handle.servable.run, signature_name, feeds)


def _version(text):
    if text is None:
        return None
    number = int(text)
    if number >= 1 << 63:
        raise ApiError(f"version {text} is out of the int64 range", 404)
    return number


def settle_heap():
    """Collects garbage, then moves every object alive now (JAX, the loaded models, the
    server) into the collector's permanent generation (`gc.freeze`).

    Requests allocate many short-lived containers (parsed JSON lists); with dozens in
    flight, some survive into the oldest generation and trigger full collections that
    walk the whole heap, ~18% of the event loop's CPU under load in `perf`, ~7% with the
    long-lived heap frozen. `tensorflux serve` calls this once the models are loaded and
    after each version change (unfreezing first, so an unloaded version is freed). The
    collection holds the GIL for a moment: requests pause briefly at those times."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def run_event_loop(coroutine):
    """Runs `coroutine` to completion on uvloop when it is installed (libuv's loop answers
    small HTTP requests with markedly less CPU per request than asyncio's own, and the
    server is bound by per-request work when batching amortizes the model), else on
    asyncio's default loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


async def start(server: ModelServer, host, port):
    """Starts serving on host:port; returns the aiohttp runner (await runner.cleanup())."""
    runner = web.AppRunner(server.make_app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    await site.start()
    return runner
