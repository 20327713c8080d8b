"""TF1's eager training programs (the TensorFlow-Examples eager API style): linear
regression with tfe.implicit_gradients + SGD, a tfe.Network of tf.layers.Dense trained
with Adam on digits through tfe.Iterator, and a defun'd step."""
import sys

import numpy as np

import tensorflux as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager
import digits_as_mnist

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
xs = [3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167]
ys = [1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221]
W, b = tfe.Variable(np.float32(0.5)), tfe.Variable(np.float32(-0.5))


def mse(inputs, labels):
    return tf.reduce_sum(tf.pow(inputs * W + b - labels, 2)) / (2 * len(xs))


sgd = tf.train.GradientDescentOptimizer(0.01)
grad = tfe.implicit_gradients(mse)
for _ in range(200):
    sgd.apply_gradients(grad(xs, ys))
w_np, b_np = np.polyfit(xs, ys, 1)
print("linear_cost %.4f" % float(mse(xs, ys)), "W %.3f b %.3f" % (W.numpy(), b.numpy()))

mnist = digits_as_mnist.read_data_sets("/tmp/data/")
it = tfe.Iterator(tf.data.Dataset.from_tensor_slices(
    (mnist.train.images, mnist.train.labels)).repeat().batch(128))


class Net(tfe.Network):
    def __init__(self):
        super().__init__()
        self.hidden = self.track_layer(tf.layers.Dense(64, activation=tf.nn.relu))
        self.out = self.track_layer(tf.layers.Dense(10))

    def call(self, x):
        return self.out(self.hidden(x))


net = Net()


def loss_fn(model, inputs, labels):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        logits=model(inputs), labels=labels))


def accuracy(model, inputs, labels):
    predicted = tf.argmax(tf.nn.softmax(model(inputs)), 1)
    return tf.reduce_mean(tf.cast(tf.equal(predicted, labels), tf.float32))


adam = tf.train.AdamOptimizer(0.001)
value_and_grad = tfe.implicit_value_and_gradients(loss_fn)
first = None
for step in range(steps):
    x, y = it.next()
    loss, grads = value_and_grad(net, x, tf.cast(y, tf.int64))
    first = float(loss) if first is None else first
    adam.apply_gradients(grads)
test_y = mnist.test.labels.astype(np.int64)
print("network_loss %.4f -> %.4f" % (first, float(loss)),
      "test_accuracy %.4f" % float(accuracy(net, mnist.test.images, test_y)))


@tfe.defun
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(net, x, y)
    variables = net.trainable_variables
    adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


for step in range(steps):
    x, y = it.next()
    loss = train_step(x, tf.cast(y, tf.int64))
print("defun_traces", len(train_step._concrete),
      "defun_test_accuracy %.4f" % float(accuracy(net, mnist.test.images, test_y)))
