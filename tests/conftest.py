import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Each test starts with an empty default graph, as a new TF1 program would."""
    tf.reset_default_graph()
    yield
