"""tf.nn: activations, softmax and cross-entropy (nn_ops), losses, normalization,
embeddings, sampled losses and candidate samplers, convolutions and pooling (records in
*_defs, gradients in conv_grads, wrappers in *_ops), RNNs, CTC, morphology. Imports
nothing: a family is a folder."""
