"""`tf.train`: optimizers, the global step, checkpoints and training sessions."""

from tensorflux._src.train.optimizer import (  # noqa: F401
    Optimizer, create_global_step, get_global_step, get_or_create_global_step,
)
from tensorflux._src.train.optimizers import *  # noqa: F401,F403
from tensorflux._src.train.learning_rate_decay import *  # noqa: F401,F403
from tensorflux._src.train.saver import Saver, SaverDef, global_step  # noqa: F401
from tensorflux._src.train.checkpoint_management import (  # noqa: F401
    CheckpointState, checkpoint_exists, generate_checkpoint_state_proto, get_checkpoint_mtimes,
    get_checkpoint_state, latest_checkpoint, remove_checkpoint, update_checkpoint_state,
)
from tensorflux._src.train.checkpoint_utils import (  # noqa: F401
    NewCheckpointReader, init_from_checkpoint, list_variables, load_checkpoint, load_variable,
)
from tensorflux._src.train.coordinator import Coordinator  # noqa: F401
from tensorflux._src.train.session_run_hook import (  # noqa: F401
    SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues,
)
from tensorflux._src.train.basic_session_run_hooks import *  # noqa: F401,F403
from tensorflux._src.train.monitored_session import *  # noqa: F401,F403
from tensorflux._src.io.example_proto import (  # noqa: F401
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample,
)
from tensorflux._src.queues.queue_runner import (  # noqa: F401
    QueueRunner, add_queue_runner, start_queue_runners,
)
from tensorflux._src.queues.input import (  # noqa: F401
    batch, batch_join, input_producer, limit_epochs, range_input_producer, shuffle_batch,
    shuffle_batch_join, slice_input_producer, string_input_producer,
)
from tensorflux._src.train.server_lib import (  # noqa: F401
    ClusterDef, ClusterSpec, JobDef, Server, ServerDef,
)
from tensorflux._src.train.device_setter import replica_device_setter  # noqa: F401
from tensorflux._src.train.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401

# IndexedSlices: sparse updates and the optimizers that make them.

# Training utilities: the rest of tf.train.
from tensorflux._src.train.moving_averages import ExponentialMovingAverage  # noqa: F401,E402
from tensorflux._src.queues.input import (  # noqa: F401,E402
    maybe_batch, maybe_batch_join, maybe_shuffle_batch, maybe_shuffle_batch_join,
)
from tensorflux._src.io.matching_files import match_filenames_once  # noqa: F401,E402
from tensorflux._src.train.coordinator import LooperThread  # noqa: F401,E402
from tensorflux._src.train.session_manager import SessionManager  # noqa: F401,E402
from tensorflux._src.train.supervisor import Supervisor, basic_train_loop  # noqa: F401,E402
from tensorflux._src.train.checkpoint_utils import checkpoints_iterator  # noqa: F401,E402
from tensorflux._src.train.optimizer import assert_global_step  # noqa: F401,E402
from tensorflux._src.summary.summary_iterator import summary_iterator  # noqa: F401,E402
from tensorflux import _train_queue_runner as queue_runner  # noqa: F401,E402
from tensorflux._src.train.warm_starting import VocabInfo, warm_start  # noqa: F401,E402
from tensorflux import _train_experimental as experimental  # noqa: F401,E402
from tensorflux._src.train.tracking import (  # noqa: F401,E402
    Checkpoint, CheckpointManager, CheckpointOptions,
)

# SDCA: stochastic dual coordinate ascent for linear models (tf.train.sdca_*).
from tensorflux._src.ops.state.sdca_ops import (  # noqa: F401,E402
    sdca_fprint, sdca_optimizer, sdca_shrink_l1,
)

# GraphDefs to files (TF 1.15 exports write_graph under tf.train and tf.io).
from tensorflux._src.io.write_graph import write_graph  # noqa: F401,E402
from tensorflux._src.train.meta_graph import (  # noqa: F401,E402
    export_meta_graph, import_meta_graph,
)
