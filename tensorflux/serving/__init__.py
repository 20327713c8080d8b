"""tensorflux serving: load SavedModels and run their signatures (the model server)."""

from tensorflux.serving.errors import InvalidInput, NotFound  # noqa: F401
from tensorflux.serving.servable import Servable, load_servable  # noqa: F401
