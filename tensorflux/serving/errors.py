"""Errors a Servable raises for a bad request (the server maps them to HTTP 400 / 404)."""

from __future__ import annotations


class InvalidInput(ValueError):
    """A request's inputs do not fit the signature (missing, unknown, shape, dtype)."""


class NotFound(KeyError):
    """An unknown signature (or model); the message names what is available."""

    def __str__(self):
        # KeyError's str() is the repr of its argument; the message reads better as is.
        return str(self.args[0]) if self.args else ""
