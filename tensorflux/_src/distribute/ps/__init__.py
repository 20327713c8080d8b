"""Parameter-server training on Ray: ps and worker tasks are Ray actors.

`trainer.ParameterServerTraining` is the driver (public as
`tf.distribute.ParameterServerTraining`); `ps_task.py` and `worker_task.py` are the
actors, `model_layout.py` reads the model and puts its variables on ps shards with
`replica_device_setter`'s strategies, `checkpoints.py` commits one checkpoint from the
shards the ps tasks save. Nothing here imports Ray at import time: `ray_runtime.py`
loads it on first use.
"""
