"""Random numbers: seeded stateful records (random_ops), stateless records keyed by a
seed (stateless_random_ops) or a key/counter pair (stateless_random_v2), and
tf.random.Generator (stateful_random_ops)."""
