"""On/off switches read from the environment (TENSORFLUX_COMPILATION_CACHE,
TENSORFLUX_REUSE_HOST_MEMORY): on unless set to one of OFF."""

from __future__ import annotations

import os

OFF = ("0", "false", "off", "no")


def is_off(variable: str) -> bool:
    """Whether environment variable `variable` turns its feature off."""
    return os.environ.get(variable, "1").strip().lower() in OFF
