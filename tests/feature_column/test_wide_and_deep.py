"""A wide-and-deep classifier on feature columns, trained from a CSV file through
tf.data.experimental.make_csv_dataset: linear_model over hashed, vocabulary, crossed and
bucketized columns (the wide part) plus input_layer over embeddings and numeric columns
with dense layers (the deep part), logits summed. The data is synthetic with a known
rule; the model must lower its loss, beat the majority-class baseline clearly and rank
the held-out rows well (tf.metrics.auc)."""

import numpy as np

import tensorflux as tf

fc = tf.feature_column
EDUCATION = ["hs", "college", "bachelor", "master", "phd"]
FIELDS = ["age", "hours", "education", "occupation", "city", "label"]


def make_rows(rng, n):
    """Rows of a rule the columns can express: education, occupation, a cross of
    education with age above 40, and hours, plus noise."""
    edu_w = np.array([-1.5, -0.5, 0.3, 0.8, 1.2])
    occ_w = rng.normal(0, 1.2, 12)
    rows = []
    for _ in range(n):
        age = int(rng.integers(18, 70))
        hours = float(np.round(rng.uniform(10, 70), 1))
        edu = int(rng.integers(0, 5))
        occ = int(rng.integers(0, 12))
        city = int(rng.integers(0, 30))
        old = age >= 40
        logit = (edu_w[edu] + occ_w[occ % 12] + (1.5 if (old and edu >= 3) else 0.0)
                 - (1.0 if (not old and edu <= 1) else 0.0) + 0.04 * (hours - 40)
                 + rng.normal(0, 0.4))
        rows.append([age, hours, EDUCATION[edu], f"occ{occ}", f"city{city}", int(logit > 0)])
    return rows


def write_csv(path, rows):
    lines = [",".join(FIELDS)] + [",".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")


def columns():
    age = fc.numeric_column("age")
    age_buckets = fc.bucketized_column(age, [25., 30., 35., 40., 45., 50., 55., 60., 65.])
    hours = fc.numeric_column("hours", normalizer_fn=lambda x: (x - 40.) / 15.)
    education = fc.categorical_column_with_vocabulary_list("education", EDUCATION)
    occupation = fc.categorical_column_with_hash_bucket("occupation", 50)
    city = fc.categorical_column_with_hash_bucket("city", 64)
    wide = [age_buckets, education, occupation, city, hours,
            fc.crossed_column([education, age_buckets], 100)]
    deep = [fc.numeric_column("age", normalizer_fn=lambda x: (x - 44.) / 15.), hours,
            fc.indicator_column(education), fc.embedding_column(occupation, 4),
            fc.embedding_column(city, 3)]
    return wide, deep


def model(features):
    wide, deep = columns()
    wide_logits = fc.linear_model(features, wide)
    net = fc.input_layer(features, deep)
    for units in (16, 8):
        net = tf.layers.dense(net, units, activation=tf.nn.relu)
    return wide_logits + tf.layers.dense(net, 1)


def test_wide_and_deep_trains_from_csv(tmp_path):
    rng = np.random.default_rng(7)
    rows = make_rows(rng, 1500)
    train_rows, test_rows = rows[:1200], rows[1200:]
    write_csv(tmp_path / "train.csv", train_rows)
    write_csv(tmp_path / "test.csv", test_rows)
    defaults = [[0.0], [0.0], [""], [""], [""], [0]]

    train = tf.data.experimental.make_csv_dataset(
        str(tmp_path / "train.csv"), batch_size=128, column_defaults=defaults,
        label_name="label", shuffle=True, shuffle_seed=1, num_epochs=None)
    features, labels = train.make_one_shot_iterator().get_next()
    assert features["education"].dtype == tf.string and labels.dtype == tf.int32
    with tf.variable_scope("model"):
        logits = model(features)
    labels = tf.cast(tf.reshape(labels, [-1, 1]), tf.float32)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                  logits=logits))
    train_op = tf.train.AdamOptimizer(0.03).minimize(loss)

    test = tf.data.experimental.make_csv_dataset(
        str(tmp_path / "test.csv"), batch_size=100, column_defaults=defaults,
        label_name="label", shuffle=False, num_epochs=1)
    test_features, test_labels = test.make_one_shot_iterator().get_next()
    with tf.variable_scope("model", reuse=True):
        test_logits = model(test_features)[:, 0]
    predictions = tf.cast(test_logits > 0, tf.int32)
    auc, update_auc = tf.metrics.auc(test_labels, tf.sigmoid(test_logits))

    names = {v.name for v in tf.global_variables()}
    assert {"model/linear_model/age_bucketized_X_education/weights:0",
            "model/linear_model/bias_weights:0",
            "model/input_layer/occupation_embedding/embedding_weights:0"} <= names

    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
                  tf.tables_initializer()])
        for _ in range(150):
            losses.append(sess.run([train_op, loss])[1])
        correct, seen = 0, 0
        while True:
            try:
                got, want, _ = sess.run([predictions, test_labels, update_auc])
            except tf.errors.OutOfRangeError:
                break
            correct += int(np.sum(got == want))
            seen += len(want)
        auc = sess.run(auc)
    assert seen == len(test_rows)
    accuracy = correct / seen
    positive = np.mean([row[-1] for row in test_rows])
    baseline = max(positive, 1 - positive)  # always predicting the majority class
    print("loss", np.mean(losses[:10]), np.mean(losses[-20:]), "accuracy", accuracy,
          "baseline", baseline, "auc", auc)
    assert np.mean(losses[-20:]) < 0.7 * np.mean(losses[:10]), (losses[:10], losses[-20:])
    assert accuracy > baseline + 0.2, (accuracy, baseline)
    assert auc > 0.85, auc  # 0.5 is chance
