"""TF1's program scaffolding (TF keeps these in python/platform): flags and `tf.app.run`,
`tf.logging`, `tf.gfile`, `tf.resource_loader` and `tf.test`."""
