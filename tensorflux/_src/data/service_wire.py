"""The tf.data service's wire format and connections (standard library sockets).

A message is a 4-byte big-endian length, a JSON header of that length, then the
header's `n_arrays` arrays in the .npy records of cache.write_array (no pickles, so a
peer cannot make this process run code). Elements travel as their flat arrays
(Structure.to_arrays: a dense component is one array, a SparseTensor three). A reply
whose header has "error" is re-raised as that tf.errors class.

Servers are `socketserver.ThreadingTCPServer`s bound to localhost: one thread per
connection, each serving requests until the peer closes. `stop` closes the listening
socket and every open connection and joins their threads, so nothing is left behind.
"""

from __future__ import annotations

import json
import socket
import socketserver
import struct
import threading
import time
import weakref

from tensorflux._src.data.cache import read_array, write_array
from tensorflux._src.framework import errors

# How long a client keeps retrying to connect (TF retries for much longer; a short
# budget keeps a wrong address from hanging a Session.run).
CONNECT_TIMEOUT_S = 2.0


def send(f, header, arrays=()):
    body = json.dumps({**header, "n_arrays": len(arrays)}).encode()
    f.write(struct.pack(">I", len(body)))
    f.write(body)
    for array in arrays:
        write_array(f, array)
    f.flush()


def _read_exact(f, n):
    data = f.read(n)
    if not data or len(data) < n:
        raise EOFError
    return data


def recv(f):
    (n,) = struct.unpack(">I", _read_exact(f, 4))
    header = json.loads(_read_exact(f, n))
    arrays = [read_array(f) for _ in range(header.pop("n_arrays", 0))]
    return header, arrays


def error_header(exc):
    """A tf.errors error (or any exception, as InternalError) as a reply header."""
    if isinstance(exc, errors.OpError):
        return {"error": type(exc).__name__, "message": exc.message}
    return {"error": "InternalError", "message": f"{type(exc).__name__}: {exc}"}


def raise_error(header):
    cls = getattr(errors, header["error"], errors.InternalError)
    raise cls(None, None, header["message"])


def split_address(address):
    """("host", port) from "host:port" (InvalidArgumentError otherwise)."""
    host, sep, port = str(address).rpartition(":")
    if not sep or not host or not port.isdigit():
        raise errors.InvalidArgumentError(
            None, None, f"Invalid tf.data service address {address!r}: expected "
            f"\"host:port\"")
    return host, int(port)


class Connection:
    """A client connection: `call(header, arrays)` sends a request and returns the reply
    (header, arrays); one request at a time."""

    def __init__(self, address, what="tf.data service server"):
        host, port = split_address(address)
        deadline = time.monotonic() + CONNECT_TIMEOUT_S
        while True:
            try:
                self._socket = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
                break
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise errors.UnavailableError(
                        None, None, f"Failed to connect to the {what} at {address}: "
                        f"{exc}") from None
                time.sleep(0.05)
        self._socket.settimeout(None)
        self._file = self._socket.makefile("rwb")
        self._lock = threading.Lock()
        self.address = address

    def call(self, header, arrays=()):
        with self._lock:
            try:
                send(self._file, header, arrays)
                reply, out = recv(self._file)
            except (OSError, EOFError) as exc:
                raise errors.UnavailableError(
                    None, None, f"Lost the connection to the tf.data service server at "
                    f"{self.address}: {exc or 'closed'}") from None
        if "error" in reply:
            raise_error(reply)
        return reply, out

    def close(self):
        try:
            self._file.close()
        finally:
            self._socket.close()


class _Handler(socketserver.StreamRequestHandler):
    def handle(self):
        try:
            self.server.owner._track(self.connection, True)
        except ReferenceError:  # the server object is being collected
            return
        try:
            while True:
                try:
                    header, arrays = recv(self.rfile)
                except (EOFError, OSError, ValueError):
                    return
                try:
                    reply = self.server.owner._handle(header, arrays)
                except ReferenceError:
                    return
                except Exception as exc:  # every failure goes back to the caller
                    reply = (error_header(exc), ())
                try:
                    send(self.wfile, *reply)
                except OSError:
                    return
        finally:
            try:
                self.server.owner._track(self.connection, False)
            except ReferenceError:
                pass


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = True
    allow_reuse_address = True


class Server:
    """A threaded TCP server on localhost:`port` (0: any free port) whose requests go to
    `_handle(header, arrays) -> (header, arrays)`."""

    def __init__(self, port):
        self._port = port
        self._tcp = None
        self._thread = None
        self._connections = set()
        self._connections_lock = threading.Lock()
        self._stopped = threading.Event()

    def _track(self, connection, add):
        with self._connections_lock:
            (self._connections.add if add else self._connections.discard)(connection)

    def start(self):
        if self._tcp is not None:
            return
        try:
            self._tcp = _TCPServer(("localhost", int(self._port)), _Handler)
        except OSError as exc:
            raise errors.UnavailableError(
                None, None, f"Could not start the server on port {self._port}: {exc}") \
                from None
        # A weak reference: the server's threads must not keep it alive, so that it
        # stops when the program drops it (TF's servers stop when deleted).
        self._tcp.owner = weakref.proxy(self)
        self._thread = threading.Thread(target=self._tcp.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name=f"{type(self).__name__}-{self.bound_port()}",
                                        daemon=True)
        self._thread.start()

    def bound_port(self):
        if self._tcp is None:
            raise errors.FailedPreconditionError(None, None, "The server is not started")
        return self._tcp.server_address[1]

    def join(self):
        self._stopped.wait()

    def stop(self):
        tcp, self._tcp = self._tcp, None
        if tcp is None:
            return
        tcp.shutdown()
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        tcp.server_close()  # joins the connection threads (block_on_close)
        self._thread.join()
        self._stopped.set()
