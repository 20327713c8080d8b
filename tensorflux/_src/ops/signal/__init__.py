"""Signal processing: FFT records and the tf.signal functions composed from them. Imports
nothing: a family is a folder."""
