"""Walks the op registry: every registered op type is checked against NumPy."""

import importlib
import pkgutil

import pytest

import tests.ops
from tensorflux._src.ops.registry import all_ops
from tensorflux._src.ops.registry import lookup
from tests.ops.harness import gradient_dtypes, run_case, run_gradient_case

# Op types whose behaviour is checked elsewhere, with where.
_OPTIMIZER_TEST = "tests/train/test_optimizers.py (5 steps against NumPy update rules)"
_VARIABLE_TEST = "tests/train/test_variables.py (state, ordering, initialization)"
_RANDOM_TEST = "tests/ops/test_random.py (seeds, statistics)"
EXEMPT = {
    "Const": "tests/framework/test_constant.py (values, dtype inference, shapes)",
    "Placeholder": "tests/runtime/test_session.py (feeding, errors)",
    "NoOp": "tests/train/test_variables.py (initializer groups)",
    "BroadcastGradientArgs": "every broadcasting op's gradient case (its inputs are static)",
    "Where": "tests/runtime/test_host_ops.py (output shape depends on the data)",
    "NonMaxSuppressionV3": "tests/ops/test_image_nms.py (host kernel, hand-worked cases)",
    "ReportUninitializedVariables": "tests/train/test_variables.py",
    **{op: "tests/train/test_queues.py (blocking queues in the Session, runner threads)"
       for op in ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2",
                  "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2",
                  "QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2",
                  "QueueIsClosedV2", "CountUpTo")},
    **{op: "tests/io/test_checkpoint_ops.py (TF's checkpoint fixture, sharded save + merge)"
       for op in ("SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename",
                  "ShardedFilespec")},
    **{op: "tests/io/test_readers.py (records of files the tests write)"
       for op in ("WholeFileReaderV2", "IdentityReaderV2", "TextLineReaderV2",
                  "FixedLengthRecordReaderV2", "TFRecordReaderV2", "ReaderReadV2",
                  "ReaderReadUpToV2", "ReaderNumRecordsProducedV2",
                  "ReaderNumWorkUnitsCompletedV2", "ReaderResetV2", "ReadFile", "WriteFile")},
    **{op: "tests/control_flow/ (values against NumPy loops, gradients against finite "
           "differences)"
       for op in ("If", "While", "Scan", "FunctionalGrad", "_BodyParameter", "_AtMostOneTrue")},
    **{op: "tests/ops/test_debug_ops.py (run-time checks and printing, TF's messages)"
       for op in ("Assert", "CheckNumerics", "Print", "PrintV2")},
    **{op: "tests/data/test_dataset.py (element streams against Python expectations)"
       for op in ("MakeIterator", "IteratorGetNext", "IteratorToStringHandle")},
    **{op: "tests/ops/test_script_ops.py (Python functions as host steps)"
       for op in ("PyFunc", "PyFuncStateless")},
    **{op: "tests/ops/test_host_ops.py (data-dependent output shapes, host kernels)"
       for op in ("Unique", "UniqueWithCounts", "ListDiff", "DynamicPartition",
                  "DynamicStitch")},
    **{op: "tests/ops/test_string_ops.py (string tensors, host kernels)"
       for op in ("StringJoin", "StringSplit", "StringSplitV2", "AsString", "StringToNumber",
                  "StringLength", "StringUpper", "StringLower")},
    **{op: "tests/ops/test_parsing_ops.py (Example records and raw bytes, host kernels)"
       for op in ("ParseExample", "ParseExampleV2", "ParseSingleExample", "_BatchOfOne",
                  "_UnbatchOne", "DecodeRaw", "SerializeTensor", "ParseTensor")},
    **{op: "tests/ops/test_image_ops.py (NumPy resize references, hand-computed values, "
           "finite-difference gradients; codecs against Pillow)"
       for op in ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
                  "ResizeBilinearGrad", "ResizeNearestNeighborGrad", "ResizeBicubicGrad",
                  "RGBToHSV", "HSVToRGB", "AdjustContrastv2", "AdjustSaturation", "AdjustHue",
                  "DecodePng", "DecodeJpeg", "DecodeGif", "DecodeBmp", "DecodeImage",
                  "EncodePng", "EncodeJpeg")},
    **{op: _VARIABLE_TEST for op in ("VariableV2", "Assign", "AssignAdd", "AssignSub",
                                      "ScatterUpdate", "ScatterAdd", "ScatterSub",
                                      "IsVariableInitialized")},
    **{op: _RANDOM_TEST for op in ("RandomStandardNormal", "RandomUniform", "RandomUniformInt",
                                    "TruncatedNormal", "RandomShuffle", "Multinomial",
                                    "RandomGamma", "RandomPoissonV2")},
    **{op: "tests/ops/test_nn_ops.py (sampler statistics, expected counts, nce/sampled "
           "softmax losses; ComputeAccidentalHits is a host op with data-dependent shapes)"
       for op in ("UniformCandidateSampler", "LogUniformCandidateSampler",
                  "ComputeAccidentalHits")},
    **{op: _OPTIMIZER_TEST for op in ("ApplyGradientDescent", "ApplyMomentum", "ApplyAdam",
                                       "ApplyAdagrad", "ApplyAdadelta", "ApplyRMSProp",
                                       "ApplyCenteredRMSProp", "ApplyFtrlV2",
                                       "ApplyProximalGradientDescent")},
    **{op: "tests/summary/test_summaries.py (serialized Summary protos, read back by "
           "TensorBoard's event reader)"
       for op in ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
                  "TensorSummaryV2", "MergeSummary")},
    "Timestamp": "tests/framework/test_graph_utils.py (the clock at run time)",
    **{op: "tests/runtime/test_session_handles.py (values kept in the Session)"
       for op in ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor")},
    # Issue 19's families, one block each (linalg, signal, math, random, array, nn).

    # linalg

    # signal
    **{op: "tests/ops/test_set_ops.py (host kernels returning SparseTensors, against Python "
           "set arithmetic)"
       for op in ("SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
                  "SparseToSparseSetOperation")},

    # math

    # random
    **{op: "tests/ops/test_stateless_random.py (same seed, same numbers; distributions "
           "against scipy.stats)"
       for op in ("StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal",
                  "StatelessRandomUniformInt", "StatelessRandomUniformFullInt",
                  "StatelessMultinomial", "StatelessRandomBinomial", "StatelessRandomGammaV2",
                  "StatelessRandomPoisson", "StatelessParameterizedTruncatedNormal",
                  "StatelessRandomGetKeyCounter", "StatelessRandomUniformV2",
                  "StatelessShuffle", "RandomIndexShuffle")},
    **{op: "tests/ops/test_random_generator.py (tf.random.Generator: state, streams, "
           "distributions)"
       for op in ("RngReadAndSkip", "StatelessRandomNormalV2", "StatelessTruncatedNormalV2",
                  "StatelessRandomUniformIntV2", "StatelessRandomUniformFullIntV2")},
    **{op: "tests/ops/test_candidate_samplers.py (samples and expected counts against the "
           "samplers' distributions)"
       for op in ("AllCandidateSampler", "FixedUnigramCandidateSampler",
                  "LearnedUnigramCandidateSampler")},

    # array
    **{op: "tests/ops/test_array_scatter.py (variable updates against NumPy, repeated and "
           "out-of-range indices)"
       for op in ("ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax", "ScatterNdUpdate",
                  "ScatterNdAdd", "ScatterNdSub")},
    **{op: "tests/ops/test_array_ops.py (host kernels: hand-worked distances, TF's golden "
           "fingerprints)"
       for op in ("EditDistance", "Fingerprint")},

    # nn
    **{op: "tests/ops/test_nn_extras_ctc.py (data-dependent output shapes: decoders against "
           "TF's published values and brute-force enumeration, collapse against NumPy)"
       for op in ("CTCGreedyDecoder", "CTCBeamSearchDecoder", "_CollapseRepeatedLabels")},
    **{op: "tests/ops/test_nn_extras_pool.py (random cells: outputs against NumPy pooling "
           "over the fetched sequences, the sequence rules, finite-difference gradients)"
       for op in ("FractionalMaxPool", "FractionalAvgPool")},

    # Issue 20's families.

    # sparse
    **{op: "tests/ops/test_sparse_ops.py (host kernels with data-dependent sizes against "
           "NumPy densified expectations, TF's index errors, finite-difference gradients)"
       for op in ("SparseReshape", "SparseConcat", "SparseSlice", "SparseSplit",
                  "SparseFillEmptyRows")},
    **{op: "tests/ops/test_sparse_math.py (sums, reductions, elementwise max/min and "
           "cross-type adds against dense NumPy; TF's messages; finite-difference gradients)"
       for op in ("SparseAdd", "SparseReduceSumSparse", "SparseReduceMaxSparse",
                  "SparseSparseMaximum", "SparseSparseMinimum", "SparseDenseCwiseAdd")},
    **{op: "tests/ops/test_sparse_features.py (serialization round trips, TF's golden "
           "FarmHash crosses, counts against Python, embedding lookups against NumPy)"
       for op in ("SerializeSparse", "SerializeManySparse", "DeserializeSparse",
                  "DeserializeManySparse", "SparseCross", "SparseCrossV2",
                  "DenseCountSparseOutput", "SparseCountSparseOutput",
                  "RaggedCountSparseOutput")},
    **{op: "tests/ops/test_ragged.py (ragged rows against Python lists)"
       for op in ("RaggedRange", "RaggedFillEmptyRows")},

    # indexed
    **{op: "tests/train/test_sparse_updates.py (each optimizer's dense and sparse updates "
           "against NumPy implementations of TF's formulas, repeated and unique indices)"
       for op in ("SparseApplyProximalGradientDescent", "SparseApplyMomentum",
                  "SparseApplyAdagrad", "SparseApplyProximalAdagrad", "SparseApplyAdagradDA",
                  "SparseApplyFtrl", "SparseApplyFtrlV2", "SparseApplyRMSProp",
                  "SparseApplyCenteredRMSProp", "SparseApplyAdadelta",
                  "_DeduplicateIndexedSlices", "ApplyProximalAdagrad", "ApplyAdagradDA",
                  "ApplyFtrl")},

    # tensorarray
    **{op: "tests/control_flow/test_tensor_array.py (values against NumPy, gradients "
           "against finite differences in and outside loops, TF's kernel errors)"
       for op in ("TensorArrayV3", "TensorArrayGradV3", "TensorArrayWriteV3",
                  "TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayScatterV3",
                  "TensorArrayConcatV3", "TensorArraySplitV3", "TensorArraySizeV3",
                  "TensorArrayCloseV3")},

    # lookup
    **{op: "tests/ops/test_lookup_static.py, tests/ops/test_lookup_mutable.py (tables in "
           "the Session against Python dicts, FarmHash/TF hash values, TF's errors)"
       for op in ("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2",
                  "MutableDenseHashTableV2", "LookupTableFindV2", "LookupTableInsertV2",
                  "LookupTableImportV2", "LookupTableRemoveV2", "LookupTableSizeV2",
                  "LookupTableExportV2", "InitializeTableV2", "InitializeTableFromTextFileV2",
                  "InitializeTableFromDataset")},

    # data
    **{op: "tests/data/test_dataset_io_options.py (Optional values and errors, cardinality "
           "of each node kind, fingerprints, save and load)"
       for op in ("IteratorGetNextAsOptional", "OptionalGetValue", "DatasetCardinality",
                  "DatasetFingerprint", "SaveDataset", "SerializeIterator",
                  "DeserializeIterator")},
    **{op: "tests/data/test_grouping_and_state.py and test_csv_sql_examples.py (folds and "
           "single elements against Python, TFRecord files read back)"
       for op in ("ReduceDataset", "DatasetToSingleElement", "DatasetToTFRecord")},
    **{op: "tests/data/test_variant_and_service.py (variant round trips; the tf.data "
           "service's registration and distributed_save against the datasets' elements)"
       for op in ("WrapDatasetVariant", "RegisterDatasetV2", "DistributedSave")},

    # io
    **{op: "tests/ops/test_strings_regex.py (RE2 patterns on Python's re, RE2's errors)"
       for op in ("RegexReplace", "StaticRegexReplace", "RegexFullMatch",
                  "StaticRegexFullMatch")},
    **{op: "tests/ops/test_strings_text.py (against Python's str and bytes methods)"
       for op in ("StringStrip", "Substr", "ReduceJoin", "UnsortedSegmentJoin", "StringFormat",
                  "StringNGrams")},
    **{op: "tests/ops/test_strings_hash.py (published SipHash and Hash64 vectors, TF's "
           "documented buckets)"
       for op in ("StringToHashBucket", "StringToHashBucketFast", "StringToHashBucketStrong")},
    **{op: "tests/ops/test_strings_unicode.py (against Python's codecs and unicodedata)"
       for op in ("UnicodeDecode", "UnicodeDecodeWithOffsets", "UnicodeEncode",
                  "UnicodeTranscode", "UnicodeScript")},
    **{op: "tests/io/test_io_strings.py (CSV, base64, zlib/gzip, globs, JSON Examples "
           "against the csv, base64, zlib, glob and protobuf modules)"
       for op in ("DecodeCSV", "EncodeBase64", "DecodeBase64", "DecodeCompressed",
                  "MatchingFiles", "DecodeJSONExample")},
    **{op: "tests/io/test_sequence_example.py (SequenceExamples built with protobuf)"
       for op in ("ParseSequenceExample", "ParseSingleSequenceExample")},
    **{op: "tests/io/test_audio_and_jpeg.py (WAV files from the wave module, images from "
           "Pillow)"
       for op in ("DecodeWav", "EncodeWav", "ExtractJpegShape", "DecodeAndCropJpeg",
                  "DecodeWebP")},
    **{op: "tests/io/test_proto_ops.py (messages built and parsed by the protobuf package)"
       for op in ("DecodeProtoV2", "EncodeProto")},
    "LMDBReader": "tests/io/test_lmdb_reader.py (databases written with the lmdb package)",

    # train
    **{op: "tests/train/test_queues_extras.py (priority order, accumulator means and "
           "staleness, blocking takes, TF's kernel errors)"
       for op in ("PriorityQueueV2", "ResourceConditionalAccumulator",
                  "SparseConditionalAccumulator", "ResourceAccumulatorApplyGradient",
                  "ResourceAccumulatorTakeGradient", "ResourceAccumulatorNumAccumulated",
                  "ResourceAccumulatorSetGlobalStep", "SparseAccumulatorApplyGradient",
                  "SparseAccumulatorTakeGradient")},
    "EagerPyFunc": "tests/train/test_train_misc_extras.py (eager values, outputs, gradient)",

    # feature_column

    # image
    **{op: "tests/ops/test_image_crop.py (NumPy samplers written from TF's kernels, "
           "finite-difference gradients, TF's errors)"
       for op in ("CropAndResize", "CropAndResizeGradImage", "CropAndResizeGradBoxes",
                  "ExtractGlimpse")},
    **{op: "tests/ops/test_image_boxes.py (TF's drawing loop in NumPy; the sampler's "
           "constraints, seeds and fallback)"
       for op in ("DrawBoundingBoxes", "DrawBoundingBoxesV2", "SampleDistortedBoundingBoxV2")},
    **{op: "tests/ops/test_image_nms_more.py (host kernels against Python greedy, Soft-NMS "
           "and per-class loops)"
       for op in ("NonMaxSuppressionV4", "NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps",
                  "CombinedNonMaxSuppression", "GenerateBoundingBoxProposals")},
    **{op: "tests/ops/test_image_codec_more.py (round trips through Pillow and imagecodecs)"
       for op in ("EncodeJpegVariableQuality", "DecodeWebP", "DecodeJxl")},

    # sdca
    **{op: "tests/train/test_sdca.py (closed-form dual updates, scipy's regularized optimum "
           "after SDCA epochs, duality gap, shrink formula, TF's fingerprints and errors)"
       for op in ("SdcaOptimizer", "SdcaOptimizerV2", "SdcaShrinkL1", "SdcaFprint")},

    # concurrency
    **{op: "tests/runtime/test_critical_section.py (host ops on a Session mutex: "
           "threads never interleave, serial executions in one run, release on failure)"
       for op in ("MutexV2", "MutexLock", "ConsumeMutexLock")},
    "BatchFunction": "tests/runtime/test_batch_function.py (concurrent callers' rows against "
                     "NumPy, batch sizes seen by the function, padding, timeout, TF's errors)",

}


def _all_cases():
    cases = []
    for info in pkgutil.iter_modules(tests.ops.__path__):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.ops.{info.name}")
            cases.extend(module.CASES)
    return cases


ALL_CASES = _all_cases()


@pytest.mark.parametrize("case", ALL_CASES, ids=[str(c) for c in ALL_CASES])
def test_op_matches_numpy(case):
    run_case(case)


def test_every_registered_op_has_a_numpy_case():
    covered = {case.op for case in ALL_CASES} | set(EXEMPT)
    missing = sorted(set(all_ops()) - covered)
    assert not missing, f"ops without a NumPy-checked case: {missing}"


GRAD_CASES = [c for c in ALL_CASES if c.grad and gradient_dtypes(c) is not None
              and not lookup(c.op).not_differentiable]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[str(c) for c in GRAD_CASES])
def test_op_gradient_matches_finite_differences(case):
    run_gradient_case(case)
