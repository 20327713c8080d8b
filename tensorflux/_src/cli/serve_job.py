"""`tensorflux serve`: TensorFlow Serving's REST API over exported models.

    tensorflux serve --model_name iris --model_base_path runs/iris/export --port 8501
    tensorflux serve --model_config_file models.config --enable_batching

Flags are tensorflow_model_server's. There is no gRPC endpoint: the REST API listens on
--rest_api_port when that is set, else on --port. The initial versions are loaded before
the port opens (as TF Serving does); new version directories are picked up every
--file_system_poll_wait_seconds (0: only at startup). SIGINT / SIGTERM stop it cleanly.
"""

from __future__ import annotations

import logging
import os
import sys

from tensorflux._src.cli.errors import UsageError
from tensorflux._src.platform.shutdown import serve_until_stopped, stop_event_on_signals

DEFAULT_PORT = 8500


def serve(model_name=None, model_base_path=None, port=None, rest_api_port=None,
          model_config_file=None, enable_batching=False, batching_parameters_file=None,
          model_version_policy=None, file_system_poll_wait_seconds=None,
          rest_api_num_threads=None, host=None, max_request_bytes=None, ready=None):
    """Loads the models, then serves until interrupted. `ready(port)` is called once up."""
    from tensorflux.serving import batching, model_manager, rest_api, server

    configs = _model_configs(model_name, model_base_path, model_config_file,
                             model_version_policy, model_manager)
    params = None
    if batching_parameters_file and not enable_batching:
        raise UsageError("--batching_parameters_file needs --enable_batching")
    if enable_batching:
        params = batching.BatchingParameters()
        if batching_parameters_file:
            try:
                with open(batching_parameters_file, encoding="utf-8") as f:
                    params = batching.parse_batching_parameters(f.read())
            except ValueError as exc:
                raise UsageError(f"{batching_parameters_file}: {exc}") from None
    listen_port = rest_api_port or port
    listen_port = DEFAULT_PORT if listen_port is None else listen_port
    if not 0 <= listen_port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {listen_port}")
    poll = 1.0 if file_system_poll_wait_seconds is None else file_system_poll_wait_seconds
    limits = rest_api.Limits(max_body_bytes=max_request_bytes or rest_api.Limits.max_body_bytes)

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname).1s serve] %(message)s")
    loader = _loader()
    def make_batcher(servable):
        return batching.Batcher(servable.run, params)
    managers = {}
    for config in configs:
        manager = model_manager.ModelManager(config, loader, make_batcher if params else None,
                                             on_change=server.settle_heap)
        manager.poll()
        if manager.last_poll_error:
            logging.getLogger("tensorflux.serving").warning("%s", manager.last_poll_error)
        managers[config.name] = manager
    model_server = server.ModelServer(managers, limits, rest_api_num_threads, poll)
    server.run_event_loop(_serve_forever(model_server, host or "0.0.0.0", listen_port, ready,
                                         server))


def _loader():
    try:
        from tensorflux.serving import load_servable
    except ImportError as exc:
        raise UsageError(f"the model loader is not available ({exc})") from None
    return load_servable


def _model_configs(model_name, model_base_path, model_config_file, policy, model_manager):
    if model_config_file:
        if model_base_path:
            raise UsageError("give either --model_config_file or --model_base_path, not both")
        with open(model_config_file, encoding="utf-8") as f:
            text = f.read()
        try:
            return model_manager.read_model_config(
                text, os.path.dirname(os.path.abspath(model_config_file)))
        except ValueError as exc:
            raise UsageError(f"{model_config_file}: {exc}") from None
    if not model_base_path:
        raise UsageError("give --model_base_path DIR (a directory of integer version "
                         "subdirectories) or --model_config_file FILE")
    if not os.path.isdir(model_base_path):
        raise UsageError(f"--model_base_path {model_base_path} is not a directory; export a "
                         f"model into {os.path.join(model_base_path, '1')} first")
    try:
        parsed = model_manager.parse_version_policy(policy or "latest")
    except ValueError as exc:
        raise UsageError(f"--model_version_policy: {exc}") from None
    return [model_manager.ModelConfig(model_name or "default",
                                      os.path.abspath(model_base_path), parsed)]


async def _serve_forever(model_server, host, port, ready, server):
    stop = stop_event_on_signals()
    runner = await server.start(model_server, host, port)
    bound = runner.addresses[0][1] if runner.addresses else port
    for name, manager in model_server.managers.items():
        versions = manager.available()
        print(f"serving {name} (versions {', '.join(map(str, versions)) or 'none yet'}) at "
              f"http://{host}:{bound}/v1/models/{name}", file=sys.stderr, flush=True)
    await serve_until_stopped(stop, runner, bound, ready)
