"""`tf.contrib.seq2seq`'s implementation: decoders, helpers, attention, beam search."""
