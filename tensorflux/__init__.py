"""tensorflux: the TensorFlow 1.x programming model, compiled to XLA through JAX.

    import tensorflux as tf
    a = tf.constant([1, 2], name="a")
    with tf.Session() as sess:
        print(sess.run(a + a))
"""

from tensorflux import _src  # noqa: F401  (enables 64-bit types first)
from tensorflux import dtypes, errors  # noqa: F401
from tensorflux._src.autodiff.gradients import *  # noqa: F401,F403
from tensorflux._src.autodiff.custom_gradient import *  # noqa: F401,F403
from tensorflux._src.ops import all_grads as _all_grads  # noqa: F401  (attaches the gradients)
from tensorflux._src.ops.state import training_ops as _training_ops  # noqa: F401
from tensorflux._src.framework.dtypes import (  # noqa: F401
    DType, as_dtype, bfloat16, bool, complex64, complex128, double, float16, float32,
    float64, half, int8, int16, int32, int64, resource, string, uint8, uint16, uint32,
    uint64, variant,
)
from tensorflux._src.framework.device import DeviceSpec  # noqa: F401
from tensorflux._src.framework.graph import (  # noqa: F401
    Graph, add_to_collection, add_to_collections, control_dependencies, device,
    get_collection, get_collection_ref, get_default_graph, name_scope, reset_default_graph,
)
from tensorflux._src.framework.operation import Operation, Tensor  # noqa: F401
from tensorflux._src.framework.tensor_conversion import (  # noqa: F401
    convert_to_tensor, register_tensor_conversion_function,
)
from tensorflux._src.framework.tensor_shape import Dimension, TensorShape  # noqa: F401
from tensorflux._src.ops import overloads as _overloads  # noqa: F401
from tensorflux._src.ops.constant import (  # noqa: F401
    constant, placeholder, placeholder_with_default,
)
from tensorflux._src.ops.math.math_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.math_ops import lin_space, linspace, range  # noqa: F401
from tensorflux._src.ops.math.complex_parts import *  # noqa: F401,F403
# Op families export their public functions through __all__.
from tensorflux._src.ops.array.array_ops import *  # noqa: F401,F403,E402
from tensorflux._src.ops.control.control_ops import *  # noqa: F401,F403
from tensorflux._src.ops.control.control_flow_ops import *  # noqa: F401,F403
from tensorflux._src.ops.control.functional_ops import *  # noqa: F401,F403
from tensorflux._src.ops.random.random_ops import *  # noqa: F401,F403
from tensorflux._src.ops.state.state_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.gather_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.generator_ops import *  # noqa: F401,F403
from tensorflux._src.ops.linalg.linalg_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.reduce_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.slicing_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.sort_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.sequence_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.segment_ops import *  # noqa: F401,F403
from tensorflux._src.framework.graph_keys import GraphKeys  # noqa: F401
from tensorflux._src.train.variables import *  # noqa: F401,F403
from tensorflux._src.train.variable_scope import *  # noqa: F401,F403
from tensorflux._src.ops.state.init_ops import *  # noqa: F401,F403
from tensorflux._src.ops.linalg.decomposition_ops import *  # noqa: F401,F403
from tensorflux._src.ops.math.clip_ops import *  # noqa: F401,F403
from tensorflux._src.ops.debug.debug_ops import *  # noqa: F401,F403
from tensorflux._src.ops.debug.check_ops import *  # noqa: F401,F403
from tensorflux._src.ops.control.script_ops import *  # noqa: F401,F403
from tensorflux._src.ops.array.host_ops import *  # noqa: F401,F403
from tensorflux._src.ops.strings.string_ops import *  # noqa: F401,F403
from tensorflux._src.framework.sparse_tensor import *  # noqa: F401,F403
from tensorflux._src.ops.strings.parsing_ops import *  # noqa: F401,F403
from tensorflux._src.runtime.config import (  # noqa: F401
    ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata, RunOptions,
)
from tensorflux._src.framework.default_session import get_default_session  # noqa: F401
from tensorflux._src.runtime.session import InteractiveSession, Session  # noqa: F401
from tensorflux._src.queues.data_flow_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue,
)
from tensorflux._src.io.readers import (  # noqa: F401
    FixedLengthRecordReader, IdentityReader, ReaderBase, TextLineReader, TFRecordReader,
    WholeFileReader, read_file, write_file,
)

# Program scaffolding: tf.app, tf.flags, tf.logging, tf.gfile, tf.test, tf.config, versions.
from tensorflux import (  # noqa: E402,F401
    app, config, flags, gfile, logging, resource_loader,
)
from tensorflux._src.framework.versions import (  # noqa: E402,F401
    COMPILER_VERSION, CXX11_ABI_FLAG, CXX_VERSION, GIT_VERSION, GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER, GRAPH_DEF_VERSION_MIN_PRODUCER, MONOLITHIC_BUILD, VERSION,
)
from tensorflux._src.platform.tf_logging import get_logger  # noqa: E402,F401

# Linear algebra: tf.linalg and its top-level names (cholesky, matrix_*, svd, norm, ...).
from tensorflux._src.ops.linalg.diag_ops import (  # noqa: E402,F401
    matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag,
)
from tensorflux._src.ops.linalg.factor_ops import (  # noqa: E402,F401
    cholesky, cholesky_solve, matrix_determinant, matrix_inverse, matrix_solve,
    matrix_solve_ls, matrix_triangular_solve,
)
from tensorflux._src.ops.linalg.linalg_impl import cross, norm, trace  # noqa: E402,F401
from tensorflux._src.ops.linalg.spectral_ops import (  # noqa: E402,F401
    matrix_square_root, self_adjoint_eig, self_adjoint_eigvals, svd,
)
from tensorflux import linalg  # noqa: E402,F401

# Signal processing (tf.signal, tf.spectral, top-level FFTs), tf.bitwise, tf.sets.
from tensorflux._src.ops.signal.fft_ops import *  # noqa: F401,F403,E402
from tensorflux import bitwise, sets, signal, spectral  # noqa: E402,F401

# The rest of tf.math: segment reductions, special functions, bincount, confusion_matrix.
from tensorflux._src.ops.math.accumulate import accumulate_n  # noqa: F401,E402
from tensorflux._src.ops.math.approx_topk import approx_top_k  # noqa: F401,E402
from tensorflux._src.ops.math.counting import *  # noqa: F401,F403,E402
from tensorflux._src.ops.math.segment_reductions import *  # noqa: F401,F403,E402
from tensorflux._src.ops.math.sparse_segments import *  # noqa: F401,F403,E402
from tensorflux._src.ops.math.special import (  # noqa: F401,E402
    betainc, igamma, igammac, lbeta, zeta,
)
from tensorflux._src.ops.nn.nn_ops import log_sigmoid  # noqa: F401,E402

# Random numbers: tf.random, tf.distributions, tf.initializers.
from tensorflux._src.framework.random_seed import get_seed  # noqa: F401,E402
from tensorflux._src.ops.random.stateless_random_v2 import random_index_shuffle  # noqa: F401,E402
from tensorflux._src.ops.state.table_init import *  # noqa: F401,F403,E402
from tensorflux import distributions, initializers, random  # noqa: F401,E402

# Array ops: scatter variants, space/batch/depth moves, patches, sequence_mask, tf.manip.
from tensorflux._src.ops.array.edit_distance import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.fake_quant import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.fingerprint import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.layout import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.moves import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.patches import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.search import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.shapes import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.tensor_scatter import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array.variable_scatter import *  # noqa: F401,F403,E402
from tensorflux._src.ops.array import variable_methods as _variable_methods  # noqa: E402
_variable_methods.attach(Variable)  # noqa: F405
from tensorflux import manip  # noqa: E402,F401

# Neural-network extras: CTC, fractional and generic pooling, morphology, samplers.
from tensorflux._src.ops.nn.conv_raw import *  # noqa: F401,F403,E402

# Framework utilities: tf.nest, dtypes, type specs, graph and session helpers.
from tensorflux import nest  # noqa: E402,F401
from tensorflux import xla  # noqa: E402,F401
from tensorflux._src.autodiff.gradients import UnconnectedGradients  # noqa: E402,F401
from tensorflux._src.framework.behaviour import *  # noqa: E402,F401,F403
# Eager execution (tf.enable_eager_execution, GradientTape, tf.function).
from tensorflux._src.eager.context import enable_eager_execution  # noqa: E402,F401
from tensorflux._src.eager.function import function  # noqa: E402,F401
from tensorflux._src.eager.tape import GradientTape  # noqa: E402,F401
from tensorflux._src.framework.dtypes import (  # noqa: E402,F401
    QUANTIZED_DTYPES, qint8, qint16, qint32, quint8, quint16,
)
from tensorflux._src.framework.errors import OpError  # noqa: E402,F401
from tensorflux._src.framework.tensor_shape import dimension_value  # noqa: E402,F401
from tensorflux._src.framework.type_spec import (  # noqa: E402,F401
    TensorSpec, TypeSpec, type_spec_from_value,
)
from tensorflux._src.framework.tensor_util import (  # noqa: E402,F401
    make_ndarray, make_tensor_proto,
)
from tensorflux._src.ops.control.graph_utils import *  # noqa: E402,F401,F403
from tensorflux._src.runtime.session_ops import (  # noqa: E402,F401
    delete_session_tensor, get_session_handle, get_session_tensor,
)
from tensorflux._src.train.module import Module  # noqa: E402,F401
from tensorflux._src.train.variables import (  # noqa: E402,F401
    VariableAggregation, VariableSynchronization, variable_creator_scope,
)

# Sparse and ragged tensors: tf.sparse, sparse_* top-level names, tf.ragged.
from tensorflux._src.ops.sparse.sparse_ops import (  # noqa: F401,E402
    sparse_concat, sparse_fill_empty_rows, sparse_reorder, sparse_reshape, sparse_slice,
    sparse_split, sparse_tensor_to_dense, sparse_to_dense,
)
from tensorflux._src.ops.sparse.sparse_compose import (  # noqa: F401,E402
    sparse_mask, sparse_merge, sparse_placeholder, sparse_reset_shape, sparse_retain,
    sparse_to_indicator, sparse_transpose,
)
from tensorflux._src.ops.sparse.sparse_math import *  # noqa: F401,F403,E402
from tensorflux._src.ops.sparse.sparse_io import (  # noqa: F401,E402
    deserialize_many_sparse, serialize_many_sparse, serialize_sparse,
)
from tensorflux._src.ops.sparse.ragged_tensor import (  # noqa: F401,E402
    RaggedTensor, RaggedTensorSpec,
)
from tensorflux._src.ops.sparse.ragged_ops import (  # noqa: F401,E402
    ragged_fill_empty_rows, ragged_fill_empty_rows_grad,
)
from tensorflux._src.ops.sparse import ragged_indexing as _ragged_indexing  # noqa: F401,E402
from tensorflux import ragged, sparse  # noqa: F401,E402

# IndexedSlices: sparse gradients and the optimizers' sparse updates.
from tensorflux._src.framework.indexed_slices import (  # noqa: E402,F401
    IndexedSlices, IndexedSlicesSpec, IndexedSlicesValue, convert_to_tensor_or_indexed_slices,
)
from tensorflux._src.ops.math import indexed_slices_ops as _indexed_slices_ops  # noqa: E402,F401

# TensorArray, raw_rnn (seq2seq lives in tf.contrib.seq2seq).
from tensorflux._src.ops.control.tensor_array_ops import (  # noqa: E402,F401
    TensorArray, TensorArraySpec,
)

# Lookup tables: tf.lookup, index tables, tables_initializer.
from tensorflux import lookup  # noqa: E402,F401

# Input pipelines: the rest of tf.data.
from tensorflux._src.data.type_specs import OptionalSpec  # noqa: E402,F401

# Files and strings: the rest of tf.io, tf.strings and tf.audio.
from tensorflux._src.io.readers import LMDBReader  # noqa: F401,E402
from tensorflux._src.io import checkpoint_ops  # noqa: F401,E402 - SaveV2/RestoreV2 records
from tensorflux._src.ops.strings.hash_ops import *  # noqa: F401,F403,E402
from tensorflux._src.ops.strings.regex_ops import regex_replace  # noqa: F401,E402
from tensorflux._src.ops.strings.text_ops import (  # noqa: F401,E402
    reduce_join, string_strip, substr,
)
from tensorflux._src.io.matching_files import matching_files  # noqa: F401,E402
from tensorflux._src.ops.strings.csv_ops import decode_csv  # noqa: F401,E402
from tensorflux._src.ops.strings.encoding_ops import *  # noqa: F401,F403,E402
from tensorflux._src.ops.strings.json_example_ops import decode_json_example  # noqa: F401,E402
from tensorflux._src.ops.strings.sequence_parsing_ops import (  # noqa: F401,E402
    parse_single_sequence_example,
)
from tensorflux._src.ops.strings.sparse_feature import SparseFeature  # noqa: F401,E402
from tensorflux import audio  # noqa: F401,E402

# Training utilities: the rest of tf.train, partitioned variables, templates, queues.
from tensorflux._src.train.partitioned_variables import *  # noqa: F401,F403,E402
from tensorflux._src.train.template import make_template  # noqa: F401,E402
from tensorflux._src.queues.accumulators import (  # noqa: F401,E402
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator,
)
from tensorflux._src.queues.data_flow_ops import PriorityQueue  # noqa: F401,E402
from tensorflux._src.runtime.py_function import py_function  # noqa: F401,E402

# Feature columns: tf.feature_column.
from tensorflux import feature_column  # noqa: E402,F401

# Concurrency: tf.CriticalSection, tf.nondifferentiable_batch_function, NoneTensorSpec.
from tensorflux._src.runtime.critical_section import CriticalSection  # noqa: E402,F401
from tensorflux._src.framework.none_tensor import NoneTensorSpec  # noqa: E402,F401
from tensorflux._src.runtime.batch_function import (  # noqa: E402,F401
    nondifferentiable_batch_function,
)

from tensorflux._src.framework.protos import (  # noqa: E402,F401
    Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryMetadata,
)
# GraphDef interchange: the messages, tf.import_graph_def and tf.graph_util.
from tensorflux._src.framework.protos import (  # noqa: E402,F401
    AttrValue, GraphDef, MetaGraphDef, NameAttrList, NodeDef, TensorInfo,
)
from tensorflux._src.io.graph_def_import import import_graph_def  # noqa: E402,F401
from tensorflux import graph_util  # noqa: E402,F401
from tensorflux import (  # noqa: E402,F401
    debugging, io, layers, losses, math, metrics, nn, python_io, random, regularizers,
    strings, summary, train,
)
from tensorflux import image  # noqa: E402,F401
from tensorflux import data  # noqa: E402,F401
from tensorflux import queue  # noqa: E402,F401
from tensorflux import distribute  # noqa: E402,F401
from tensorflux import saved_model  # noqa: E402,F401
from tensorflux import estimator  # noqa: E402,F401

__version__ = "0.1.0"

__all__ = sorted(name for name in dir() if not name.startswith("_"))

from tensorflux import compat  # noqa: E402,F401  (mirrors __all__, so comes last)


# Imported on first use, so `import tensorflux` does not load them: `tf.contrib`,
# `tf.test` (unittest, absltest and absl's test flags) and `tf.keras` (get_file alone).
_LAZY_MODULES = ("contrib", "test", "keras")


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module(f"tensorflux.{name}")
    raise AttributeError(f"module 'tensorflux' has no attribute {name!r}")
