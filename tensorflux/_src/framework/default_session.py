"""The default-session stack behind `Tensor.eval()` and `Operation.run()`."""

from __future__ import annotations

import contextlib
import threading


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []

    @contextlib.contextmanager
    def get_controller(self, session):
        self.stack.append(session)
        try:
            yield session
        finally:
            if session in self.stack:
                self.stack.remove(session)


_stack = _DefaultSessionStack()


def get_default_session():
    """The innermost session made default by `with sess:` / `sess.as_default()`, or None."""
    return _stack.stack[-1] if _stack.stack else None


def as_default(session):
    return _stack.get_controller(session)


def _session_for(what, method, noun, graph, session):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(f"Cannot {what} using `{method}()`: No default session is "
                             f"registered. Use `with sess.as_default()` or pass an explicit "
                             f"session to `{method}(session=sess)`")
    if session.graph is not graph:
        raise ValueError(f"Cannot use the given session to {what}: the {noun}'s graph is "
                         f"different from the session's graph.")
    return session


def eval_using_default_session(tensor, feed_dict, graph, session=None):
    session = _session_for("evaluate tensor", "eval", "tensor", graph, session)
    return session.run(tensor, feed_dict)


def run_using_default_session(op, feed_dict, graph, session=None):
    _session_for("execute operation", "run", "operation", graph, session).run(op, feed_dict)
