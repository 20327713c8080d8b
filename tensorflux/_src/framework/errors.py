"""`tf.errors`: TF's OpError hierarchy with its canonical error codes."""

from __future__ import annotations

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """An error raised while running an op; carries the op and TF's error code."""

    def __init__(self, node_def, op, message, error_code):
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def message(self):
        return self._message

    @property
    def op(self):
        return self._op

    @property
    def node_def(self):
        return self._node_def

    @property
    def error_code(self):
        return self._error_code

    def __reduce__(self):
        return type(self), (self._node_def, self._op, self._message)

    def __str__(self):
        return self._message


def _make(name, code, doc):
    def __init__(self, node_def, op, message, error_code=code):
        OpError.__init__(self, node_def, op, message, error_code)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc})


CancelledError = _make("CancelledError", CANCELLED, "An operation or step was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op received an invalid argument.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "A deadline expired before the operation could complete.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS,
                           "An entity that we attempted to create already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "The caller does not have permission to run an operation.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The request does not have valid authentication credentials.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "Some resource has been exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state to execute an operation.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "An operation iterated beyond the valid input range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED,
                           "The operation is not implemented or supported.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE,
                         "The runtime is currently unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")



class StaticValueRequired(InvalidArgumentError):
    """A lowering needed a compile-time value (a shape, a slice bound) but got a traced one.

    The runtime catches it and recompiles the cluster with its small integer inputs as
    compile-time constants (one executable per distinct value); only if that fails too
    does the user see it, as an InvalidArgumentError.
    """


_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError, RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError, ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError, INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
}


def exception_type_from_error_code(error_code):
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls):
    for code, klass in _CODE_TO_CLASS.items():
        if klass is cls:
            return code
    raise KeyError(cls)


class _Status:
    """What a `raise_exception_on_not_ok_status` block reports: TF's status fields."""

    def __init__(self):
        self.code = OK
        self.message = ""

    def set(self, code, message):
        self.code, self.message = code, message


class raise_exception_on_not_ok_status:  # noqa: N801 - TF's public name
    """A block given a status to fill in (`status.set(code, message)`); leaving it with
    a non-OK code raises that code's OpError subclass with the message, as TF1's
    C-API wrappers did."""

    def __enter__(self):
        self.status = _Status()
        return self.status

    def __exit__(self, exc_type, exc_value, traceback):
        if self.status.code != OK:
            raise exception_type_from_error_code(self.status.code)(
                None, None, self.status.message)
        return False
