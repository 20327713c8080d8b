"""`tensorflux serve` in a subprocess, and plain HTTP calls to it, for end-to-end tests."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def start_server(model_name, base, repo, *flags):
    """`tensorflux serve` for the models under `base`, on a free port: (process, the
    model's URL) once the model answers."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tensorflux", "serve", "--model_name", model_name,
         "--model_base_path", str(base), "--rest_api_port", str(port), "--host", "127.0.0.1",
         *flags], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/v1/models/{model_name}"
    for _ in range(600):
        try:
            if http("GET", url)[0] == 200:
                break
        except OSError:
            pass
        if server.poll() is not None:
            raise AssertionError(server.stdout.read())
        time.sleep(0.1)
    return server, url
