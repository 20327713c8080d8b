"""`tf.contrib.seq2seq`: TF1's sequence-to-sequence library on tensorflux.

Decoders run as one compiled `tf.while_loop` over TensorArrays (see
`tensorflux/_src/seq2seq/decoder.py`); variable names are TF1's, so checkpoints of TF1
seq2seq models restore.
"""

from tensorflux._src.ops.nn.gather_tree import gather_tree  # noqa: F401
from tensorflux._src.seq2seq.attention_wrapper import (  # noqa: F401
    AttentionMechanism, AttentionWrapper, AttentionWrapperState, BahdanauAttention,
    BahdanauMonotonicAttention, LuongAttention, LuongMonotonicAttention, hardmax,
    monotonic_attention, safe_cumprod,
)
from tensorflux._src.seq2seq.basic_decoder import BasicDecoder, BasicDecoderOutput  # noqa: F401
from tensorflux._src.seq2seq.beam_search_decoder import (  # noqa: F401
    BeamSearchDecoder, BeamSearchDecoderOutput, BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput, gather_tree_from_array, tile_batch,
)
from tensorflux._src.seq2seq.decoder import Decoder, dynamic_decode  # noqa: F401
from tensorflux._src.seq2seq.helper import (  # noqa: F401
    CustomHelper, GreedyEmbeddingHelper, Helper, InferenceHelper, SampleEmbeddingHelper,
    ScheduledEmbeddingTrainingHelper, ScheduledOutputTrainingHelper, TrainingHelper,
)
from tensorflux._src.seq2seq.loss import sequence_loss  # noqa: F401

__all__ = [
    "AttentionMechanism", "AttentionWrapper", "AttentionWrapperState", "BahdanauAttention",
    "BahdanauMonotonicAttention", "LuongMonotonicAttention",
    "BasicDecoder", "BasicDecoderOutput", "BeamSearchDecoder", "BeamSearchDecoderOutput",
    "BeamSearchDecoderState", "CustomHelper", "Decoder", "FinalBeamSearchDecoderOutput",
    "GreedyEmbeddingHelper", "Helper", "InferenceHelper", "LuongAttention",
    "SampleEmbeddingHelper", "ScheduledEmbeddingTrainingHelper",
    "ScheduledOutputTrainingHelper", "TrainingHelper", "dynamic_decode", "gather_tree",
    "hardmax", "monotonic_attention", "safe_cumprod", "sequence_loss", "tile_batch",
]
