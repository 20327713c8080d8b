"""TF1's remaining array ops (issue 19): scatter variants, space/batch/depth moves,
patches, searches and histograms, shape utilities, fake quantization, edit distance.

Each module holds one responsibility; `tensorflux/__init__.py`, `nn.py`, `image.py` and
`manip.py` import the public names. No existing op module imports this package.
"""
