"""Stopping a long-running asyncio server (`tensorflux serve`, `tensorflux playground`)
cleanly on Ctrl-C or SIGTERM: the signal sets an event the server awaits, so its runner
is cleaned up instead of the process dying mid-request."""

from __future__ import annotations

import asyncio
import signal


def stop_event_on_signals():
    """An asyncio.Event set by SIGINT or SIGTERM; call inside the running loop. Where the
    loop cannot take signal handlers (not the main thread, Windows) the event is only set
    by whoever else holds it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return stop


async def serve_until_stopped(stop, runner, bound, ready=None):
    """Tells `ready` (if given) the port the started aiohttp `runner` is bound to, serves
    until `stop` is set, then cleans the runner up, on errors too."""
    if ready is not None:
        ready(bound)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
