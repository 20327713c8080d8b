"""`tf.errors`: exception classes and error codes raised by Session.run."""

from tensorflux._src.framework.errors import *  # noqa: F401,F403
from tensorflux._src.framework.errors import (  # noqa: F401
    OpError, CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
    NotFoundError, AlreadyExistsError, PermissionDeniedError, UnauthenticatedError,
    ResourceExhaustedError, FailedPreconditionError, AbortedError, OutOfRangeError,
    UnimplementedError, InternalError, UnavailableError, DataLossError,
    exception_type_from_error_code, error_code_from_exception_type,
)
from tensorflux._src.framework.errors import raise_exception_on_not_ok_status  # noqa: F401
