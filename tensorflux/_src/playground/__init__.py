"""`tensorflux playground`: TensorFlow Playground's page, trained by a tensorflux Session.

datasets.py  the original's six data sets (NumPy), config.py  the page's settings (URL state)
validated with defaults and notes, network.py  the graph, Session and one update per frame,
program.py  the equivalent TF1 program, server.py  the aiohttp app and websocket protocol.
"""
