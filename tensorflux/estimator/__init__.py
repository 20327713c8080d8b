"""`tf.estimator` (TF 1.15's core names): Estimator, EstimatorSpec, ModeKeys, RunConfig,
TrainSpec / EvalSpec / train_and_evaluate, WarmStartSettings, tf.estimator.export.
Canned estimators (TF 1.15's v1 classes): Linear*, DNN*, DNNLinearCombined*, Baseline*,
BoostedTrees*."""

from tensorflux._src.estimator.canned.baseline import (  # noqa: F401
    BaselineClassifier,
    BaselineRegressor,
)
from tensorflux._src.estimator.canned.boosted_trees import (  # noqa: F401
    BoostedTreesClassifier,
    BoostedTreesRegressor,
)
from tensorflux._src.estimator.canned.dnn import DNNClassifier, DNNRegressor  # noqa: F401
from tensorflux._src.estimator.canned.dnn_linear_combined import (  # noqa: F401
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
)
from tensorflux._src.estimator.canned.linear import (  # noqa: F401
    LinearClassifier,
    LinearRegressor,
)
from tensorflux._src.estimator.estimator import Estimator, WarmStartSettings  # noqa: F401
from tensorflux._src.estimator.model_fn import EstimatorSpec, ModeKeys  # noqa: F401
from tensorflux._src.estimator.run_config import RunConfig  # noqa: F401
from tensorflux._src.estimator.training import (  # noqa: F401
    EvalSpec,
    TrainSpec,
    train_and_evaluate,
)
from tensorflux._src.train.basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    ProfilerHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from tensorflux._src.train.session_run_hook import (  # noqa: F401
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from tensorflux._src.train.warm_starting import VocabInfo  # noqa: F401
from tensorflux.estimator import export, tpu  # noqa: F401
