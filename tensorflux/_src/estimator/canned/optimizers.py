"""String names for optimizers, as TF 1.15's canned/optimizers.py accepts them.

A canned estimator's `optimizer` may be one of these names (built with the estimator's
default learning rate), an Optimizer instance, or a callable returning one."""

from tensorflux._src.train import optimizers as _opt
from tensorflux._src.train.optimizer import Optimizer

OPTIMIZER_CLS_NAMES = {
    "Adagrad": _opt.AdagradOptimizer,
    "Adam": _opt.AdamOptimizer,
    "Ftrl": _opt.FtrlOptimizer,
    "RMSProp": _opt.RMSPropOptimizer,
    "SGD": _opt.GradientDescentOptimizer,
}


def get_optimizer_instance(opt, learning_rate=None):
    """An Optimizer from a name, an instance or a zero-argument callable (TF's rules and
    messages: names need a learning rate; anything else must end as an Optimizer)."""
    if isinstance(opt, str):
        if opt in OPTIMIZER_CLS_NAMES:
            if not learning_rate:
                raise ValueError("learning_rate must be specified when opt is string.")
            return OPTIMIZER_CLS_NAMES[opt](learning_rate=learning_rate)
        raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                         f"{tuple(sorted(OPTIMIZER_CLS_NAMES))}")
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")  # noqa: TRY004
    return opt
