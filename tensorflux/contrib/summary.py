"""`tf.contrib.summary`: TF 1.15's summary writers that work eagerly and in graphs.

    writer = tf.contrib.summary.create_file_writer(logdir)
    with writer.as_default(), tf.contrib.summary.always_record_summaries():
        tf.contrib.summary.scalar("loss", loss)   # eagerly: written now
"""

from tensorflux._src.summary.contrib_summary import (  # noqa: F401
    SummaryWriter,
    all_summary_ops,
    always_record_summaries,
    audio,
    create_file_writer,
    create_summary_file_writer,
    flush,
    generic,
    histogram,
    image,
    never_record_summaries,
    record_summaries_every_n_global_steps,
    scalar,
    should_record_summaries,
    summary_writer_initializer_op,
)
