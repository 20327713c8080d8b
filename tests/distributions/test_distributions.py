"""tf.distributions against scipy.stats: densities, distribution functions, entropy and
moments (closed forms computed by scipy here), sample statistics with fixed seeds,
reparameterized gradients, KL divergences, shapes, names and argument checks."""

import numpy as np
import pytest
from scipy import stats

import tensorflux as tf
from tensorflux._src.ops.registry import all_ops

D = tf.distributions
F64 = tf.float64


def _ph(value):
    """A float64 placeholder for `value` (its shape unknown), so a test's graph is one
    compiled cluster."""
    value = np.asarray(value, np.float64)
    return tf.placeholder(F64, [None] * value.ndim), value


class _Graph:
    """Collects (tensor, expected) pairs and checks them in one run."""

    def __init__(self):
        self.feeds, self.checks = {}, []

    def ph(self, value):
        t, v = _ph(value)
        self.feeds[t] = v
        return t

    def expect(self, tensor, want, rtol=1e-9, atol=1e-12):
        self.checks.append((tensor, np.asarray(want), rtol, atol))

    def run(self):
        with tf.Session() as sess:
            got = sess.run([c[0] for c in self.checks], self.feeds)
        for (t, want, rtol, atol), value in zip(self.checks, got):
            np.testing.assert_allclose(value, want, rtol=rtol, atol=atol, err_msg=t.name)


def test_scalar_distributions_match_scipy():
    g = _Graph()
    x = np.array([-1.5, 0.3, 2.0])

    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.7, 3.0])
    n = D.Normal(g.ph(loc), g.ph(scale))
    ref = stats.norm(loc, scale)
    xt = g.ph(x)
    for method, want in [("log_prob", ref.logpdf(x)), ("prob", ref.pdf(x)),
                         ("cdf", ref.cdf(x)), ("log_cdf", ref.logcdf(x)),
                         ("survival_function", ref.sf(x)),
                         ("log_survival_function", ref.logsf(x))]:
        g.expect(getattr(n, method)(xt), want)
    g.expect(n.log_cdf(g.ph([-30.0, -12.0, 10.0])),
             stats.norm.logcdf((np.array([-30.0, -12.0, 10.0]) - loc) / scale), rtol=1e-6)
    g.expect(n.quantile(g.ph([0.1, 0.5, 0.975])), ref.ppf([0.1, 0.5, 0.975]))
    for method, want in [("entropy", ref.entropy()), ("mean", ref.mean()),
                         ("variance", ref.var()), ("stddev", ref.std()), ("mode", loc)]:
        g.expect(getattr(n, method)(), want)

    p = np.array([0.2, 0.5, 0.9])
    b = D.Bernoulli(probs=g.ph(p), dtype=tf.int64)
    bl = D.Bernoulli(logits=g.ph(np.log(p / (1 - p))))
    k = np.array([1.0, 0.0, 1.0])
    for dist in (b, bl):
        g.expect(dist.log_prob(g.ph(k)), stats.bernoulli(p).logpmf(k))
        g.expect(dist.entropy(), stats.bernoulli(p).entropy())
        g.expect(dist.mean(), p)
        g.expect(dist.variance(), p * (1 - p))
        g.expect(dist.mode(), [0, 0, 1])
    g.expect(b.log_prob(g.ph(1.0)), np.log(p))  # the event broadcasts to the batch

    a, c0 = np.array([2.0, 0.5, 5.0]), np.array([3.0, 0.8, 1.5])
    be = D.Beta(g.ph(a), g.ph(c0))
    ref = stats.beta(a, c0)
    u = np.array([0.1, 0.45, 0.93])
    g.expect(be.log_prob(g.ph(u)), ref.logpdf(u))
    g.expect(be.prob(g.ph(u)), ref.pdf(u))
    g.expect(be.entropy(), ref.entropy())
    g.expect(be.mean(), ref.mean())
    g.expect(be.variance(), ref.var())
    g.expect(be.mode(), [0.3333333333333333, np.nan, 4.0 / 4.5])  # undefined: NaN

    conc, rate = np.array([0.7, 2.0, 9.0]), np.array([1.0, 0.5, 3.0])
    ga = D.Gamma(g.ph(conc), g.ph(rate))
    ref = stats.gamma(conc, scale=1 / rate)
    y = np.array([0.2, 3.0, 2.5])
    g.expect(ga.log_prob(g.ph(y)), ref.logpdf(y))
    g.expect(ga.entropy(), ref.entropy())
    g.expect(ga.mean(), ref.mean())
    g.expect(ga.variance(), ref.var())
    g.expect(ga.stddev(), ref.std())
    g.expect(ga.mode(), [np.nan, 2.0, 8.0 / 3.0])

    ex = D.Exponential(g.ph(rate))
    ref = stats.expon(scale=1 / rate)
    g.expect(ex.log_prob(g.ph(y)), ref.logpdf(y))
    g.expect(ex.log_survival_function(g.ph(y)), ref.logsf(y))
    g.expect(ex.entropy(), ref.entropy())
    g.expect(ex.mean(), ref.mean())
    g.expect(ex.variance(), ref.var())

    low, high = np.array([-1.0, 0.0, 2.0]), np.array([1.0, 0.5, 10.0])
    un = D.Uniform(g.ph(low), g.ph(high))
    ref = stats.uniform(low, high - low)
    v = np.array([0.0, 0.7, 2.0])  # inside, above, at low
    g.expect(un.prob(g.ph(v)), ref.pdf(v))
    g.expect(un.log_prob(g.ph(v)), ref.logpdf(v))
    g.expect(un.cdf(g.ph(v)), ref.cdf(v))
    g.expect(un.cdf(g.ph([-5.0, 0.25, 11.0])), ref.cdf([-5.0, 0.25, 11.0]))
    g.expect(un.entropy(), ref.entropy())
    g.expect(un.mean(), ref.mean())
    g.expect(un.variance(), ref.var())
    g.expect(un.stddev(), ref.std())
    g.expect(un.range(), high - low)

    la = D.Laplace(g.ph(loc), g.ph(scale))
    ref = stats.laplace(loc, scale)
    for method, want in [("log_prob", ref.logpdf(x)), ("cdf", ref.cdf(x)),
                         ("log_cdf", ref.logcdf(x)),
                         ("log_survival_function", ref.logsf(x))]:
        g.expect(getattr(la, method)(g.ph(x)), want)
    g.expect(la.log_cdf(g.ph([-60.0, -60.0, -60.0])), ref.logcdf(-60.0))
    g.expect(la.entropy(), ref.entropy())
    g.expect(la.mean(), ref.mean())
    g.expect(la.stddev(), ref.std())
    g.expect(la.mode(), loc)

    df = np.array([0.8, 1.5, 7.0])
    st = D.StudentT(g.ph(df), g.ph(loc), g.ph(scale))
    ref = stats.t(df, loc, scale)
    g.expect(st.log_prob(g.ph(x)), ref.logpdf(x))
    g.expect(st.prob(g.ph(x)), ref.pdf(x))
    g.expect(st.entropy(), ref.entropy())
    g.expect(st.mean(), [np.nan, -1.0, 2.0])  # undefined for df <= 1
    g.expect(st.variance(), [np.nan, np.inf, ref.var()[2]])  # infinite for 1 < df <= 2
    g.expect(st.mode(), loc)
    g.run()


def test_vector_distributions_match_scipy():
    g = _Graph()
    logits = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
    probs = np.exp(logits)
    cat = D.Categorical(logits=g.ph(logits))
    catp = D.Categorical(probs=g.ph(probs))
    ks = np.array([2, 0])
    for dist in (cat, catp):
        g.expect(dist.log_prob(tf.constant(ks)), np.log(probs[[0, 1], ks]))
        g.expect(dist.entropy(), stats.entropy(probs, axis=-1))
        g.expect(dist.mode(), [2, 0])
    # TF 1.15's cdf sums the classes below k: P[X < k].
    g.expect(cat.cdf(tf.constant([2, 1])), [0.5, 0.6])
    g.expect(cat.prob(tf.constant([[1], [2]])),
             [[0.3, 0.1], [0.5, 0.3]])  # a [2, 1] event broadcasts against batch [2]

    alpha = np.array([[1.5, 2.0, 3.5], [0.7, 4.0, 1.2]])
    di = D.Dirichlet(g.ph(alpha))
    xs = np.array([[0.2, 0.3, 0.5], [0.1, 0.7, 0.2]])
    g.expect(di.log_prob(g.ph(xs)),
             [stats.dirichlet(a).logpdf(x) for a, x in zip(alpha, xs)])
    g.expect(di.entropy(), [stats.dirichlet(a).entropy() for a in alpha])
    g.expect(di.mean(), alpha / alpha.sum(-1, keepdims=True))
    g.expect(di.variance(), [stats.dirichlet(a).var() for a in alpha])
    g.expect(di.covariance(), [stats.dirichlet(a).cov() for a in alpha])
    g.expect(di.mode(), [(alpha[0] - 1) / (alpha[0].sum() - 3), [np.nan] * 3])

    counts = np.array([[1.0, 2.0, 3.0], [4.0, 0.0, 2.0]])
    dm = D.DirichletMultinomial(g.ph(6.0), g.ph(alpha))
    for i in range(2):
        ref = stats.dirichlet_multinomial(alpha[i], 6)
        g.expect(dm.log_prob(g.ph(counts))[i], ref.logpmf(counts[i]))
        g.expect(dm.mean()[i], ref.mean())
        g.expect(dm.variance()[i], ref.var())
        g.expect(dm.covariance()[i], ref.cov())

    p = np.array([0.2, 0.3, 0.5])
    mu = D.Multinomial(g.ph([6.0, 4.0]), probs=g.ph(p))
    ml = D.Multinomial(g.ph(6.0), logits=g.ph(np.log(p)))
    c2 = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 3.0]])
    g.expect(mu.log_prob(g.ph(c2)),
             [stats.multinomial(6, p).logpmf(c2[0]), stats.multinomial(4, p).logpmf(c2[1])])
    g.expect(ml.prob(g.ph(c2[0])), stats.multinomial(6, p).pmf(c2[0]))
    g.expect(mu.mean(), [6 * p, 4 * p])
    g.expect(mu.covariance(), [stats.multinomial(6, p).cov(), stats.multinomial(4, p).cov()])
    g.expect(mu.variance(), [6 * p * (1 - p), 4 * p * (1 - p)])
    g.run()


@pytest.mark.skipif(not {"Igamma", "Betainc"} <= set(all_ops()),
                    reason="needs the Igamma and Betainc ops of the math family")
def test_cdfs_from_special_functions():
    g = _Graph()
    conc, rate = np.array([0.7, 2.0]), np.array([1.0, 0.5])
    y = np.array([0.4, 3.0])
    g.expect(D.Gamma(g.ph(conc), g.ph(rate)).cdf(g.ph(y)),
             stats.gamma(conc, scale=1 / rate).cdf(y))
    g.expect(D.Exponential(g.ph(rate)).cdf(g.ph(y)), stats.expon(scale=1 / rate).cdf(y))
    a, b = np.array([2.0, 0.5]), np.array([3.0, 0.8])
    g.expect(D.Beta(g.ph(a), g.ph(b)).cdf(g.ph([0.3, 0.9])), stats.beta(a, b).cdf([0.3, 0.9]))
    df = np.array([1.5, 7.0])
    g.expect(D.StudentT(g.ph(df), g.ph([0.0, 1.0]), g.ph([1.0, 2.0])).cdf(g.ph([-1.0, 2.5])),
             stats.t(df, [0.0, 1.0], [1.0, 2.0]).cdf([-1.0, 2.5]), rtol=1e-7)
    g.run()


def test_samples_follow_their_distributions_and_carry_gradients():
    # One graph (one compiled run): samples for KS / moment checks, and gradients of
    # sample averages through the reparameterized samplers against closed forms.
    n = 20000
    tf.set_random_seed(3)
    c = {k: tf.constant(v, F64) for k, v in dict(
        loc=1.0, scale=2.0, conc=[0.5, 4.0], rate=[2.0, 1.0], c1=[2.0, 0.5], c0=[3.0, 0.5],
        low=[-1.0, 2.0], high=[1.0, 5.0], df=[3.0, 30.0], alpha=[1.0, 2.0, 3.0]).items()}
    dists = {
        "normal": D.Normal(c["loc"], c["scale"]),
        "bernoulli": D.Bernoulli(probs=[0.3, 0.8]),
        "categorical": D.Categorical(probs=[[0.2, 0.5, 0.3]]),
        "beta": D.Beta(c["c1"], c["c0"]),
        "gamma": D.Gamma(c["conc"], c["rate"]),
        "exponential": D.Exponential(c["rate"]),
        "dirichlet": D.Dirichlet(c["alpha"]),
        "dirichlet_multinomial": D.DirichletMultinomial(5.0, [1.0, 2.0, 3.0]),
        "multinomial": D.Multinomial([3.0, 7.0], probs=[0.2, 0.3, 0.5]),
        "uniform": D.Uniform(c["low"], c["high"]),
        "laplace": D.Laplace(np.array([0.0, 3.0]), c["scale"] * [0.5, 0.25]),
        "student_t": D.StudentT(c["df"], np.array([0.0, 1.0]), c["scale"] * [0.5, 1.0]),
    }
    samples = {k: d.sample(n, seed=7) for k, d in dists.items()}
    assert samples["normal"].shape.as_list() == [n]
    assert samples["dirichlet"].shape.as_list() == [n, 3]
    assert samples["multinomial"].shape.as_list() == [n, 2, 3]
    mean = lambda k: tf.reduce_mean(samples[k], 0)  # noqa: E731
    # d E[f(X)] / d theta through the samples.
    terms = [
        (tf.reduce_mean(tf.square(samples["normal"])), ["loc", "scale"],
         [2 * 1.0, 2 * 2.0]),  # E[x^2] = loc^2 + scale^2
        (tf.reduce_sum(mean("gamma")), ["conc", "rate"],
         [[1 / 2.0, 1.0], [-0.5 / 4.0, -4.0]]),  # E[x] = conc / rate
        (tf.reduce_sum(mean("exponential")), ["rate"], [[-1 / 4.0, -1.0]]),
        (mean("beta")[0], ["c1", "c0"], [[3 / 25, 0.0], [-2 / 25, 0.0]]),
        (tf.reduce_sum(mean("uniform")), ["low", "high"], [[0.5, 0.5], [0.5, 0.5]]),
        (mean("dirichlet")[0], ["alpha"], [[5 / 36, -1 / 36, -1 / 36]]),  # a0 / sum(a)
        (tf.reduce_mean(tf.abs(samples["laplace"][:, 0])), ["scale"], [0.5]),
        (tf.reduce_mean(tf.square(samples["student_t"][:, 0])), ["scale"],
         [2 * 2.0 * 0.25 * 3.0]),  # E[x^2] = (0.5 scale)^2 df / (df - 2)
    ]
    grads = [tf.gradients(f, [c[k] for k in keys]) for f, keys, _ in terms]
    with tf.Session() as sess:
        s, got = sess.run([samples, grads])
    p = 1e-3
    for key, refs in [
            ("normal", [stats.norm(1.0, 2.0)]),
            ("beta", [stats.beta(2.0, 3.0), stats.beta(0.5, 0.5)]),
            ("gamma", [stats.gamma(0.5, scale=0.5), stats.gamma(4.0)]),
            ("exponential", [stats.expon(scale=0.5), stats.expon(scale=1.0)]),
            ("uniform", [stats.uniform(-1.0, 2.0), stats.uniform(2.0, 3.0)]),
            ("laplace", [stats.laplace(0.0, 1.0), stats.laplace(3.0, 0.5)]),
            ("student_t", [stats.t(3.0, 0.0, 1.0), stats.t(30.0, 1.0, 2.0)])]:
        for j, ref in enumerate(refs):
            col = s[key] if s[key].ndim == 1 else s[key][:, j]
            assert stats.kstest(col, ref.cdf).pvalue > p, (key, j)
    assert s["bernoulli"].dtype == np.int32
    np.testing.assert_allclose(s["bernoulli"].mean(0), [0.3, 0.8], atol=4 * 0.5 / np.sqrt(n))
    assert stats.chisquare(np.bincount(s["categorical"][:, 0], minlength=3),
                           n * np.array([0.2, 0.5, 0.3])).pvalue > p
    dirichlet = s["dirichlet"]
    np.testing.assert_allclose(dirichlet.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(dirichlet.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    np.testing.assert_allclose(np.cov(dirichlet.T), stats.dirichlet([1, 2, 3]).cov(),
                               atol=2e-3)
    dm = s["dirichlet_multinomial"]
    ref = stats.dirichlet_multinomial([1.0, 2.0, 3.0], 5)
    assert (dm.sum(-1) == 5).all()
    np.testing.assert_allclose(dm.mean(0), ref.mean(), atol=0.05)
    np.testing.assert_allclose(np.cov(dm.T), ref.cov(), atol=0.08)
    mn = s["multinomial"]
    assert (mn[:, 0].sum(-1) == 3).all() and (mn[:, 1].sum(-1) == 7).all()
    for j, count in enumerate([3, 7]):
        ref = stats.multinomial(count, [0.2, 0.3, 0.5])
        np.testing.assert_allclose(mn[:, j].mean(0), ref.mean(), atol=0.05)
        np.testing.assert_allclose(np.cov(mn[:, j].T), ref.cov(), atol=0.08)
    for (f, _, want), value in zip(terms, got):
        np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in value]),
                                   np.concatenate([np.ravel(w) for w in want]),
                                   rtol=0.08, atol=0.01, err_msg=f.name)
    assert D.Normal(0.0, 1.0).reparameterization_type is D.FULLY_REPARAMETERIZED
    assert D.Bernoulli(probs=0.5).reparameterization_type is D.NOT_REPARAMETERIZED
    assert D.Multinomial(2.0, probs=[0.5, 0.5]).reparameterization_type == \
        D.NOT_REPARAMETERIZED


def _mc_kl(ref_a, ref_b, n=200000, seed=0):
    x = ref_a.rvs(size=n, random_state=np.random.default_rng(seed))
    return np.mean(ref_a.logpdf(x) - ref_b.logpdf(x))


def test_kl_divergences():
    g = _Graph()
    # Normal, Gamma, Beta: scipy Monte Carlo; Bernoulli, Categorical: exact sums.
    na, nb = D.Normal(g.ph(1.0), g.ph(2.0)), D.Normal(g.ph(-0.5), g.ph(1.2))
    g.expect(D.kl_divergence(na, nb), _mc_kl(stats.norm(1, 2), stats.norm(-0.5, 1.2)),
             rtol=0.02)
    g.expect(na.kl_divergence(nb),
             np.log(1.2 / 2) + (4 + 1.5 ** 2) / (2 * 1.2 ** 2) - 0.5)  # closed form
    ga, gb = D.Gamma(g.ph(3.0), g.ph(2.0)), D.Gamma(g.ph(1.5), g.ph(0.7))
    g.expect(D.kl_divergence(ga, gb),
             _mc_kl(stats.gamma(3, scale=0.5), stats.gamma(1.5, scale=1 / 0.7)), rtol=0.02)
    ea = D.Exponential(g.ph(2.0))
    g.expect(D.kl_divergence(ea, gb),  # through Gamma's registration (the MRO)
             _mc_kl(stats.expon(scale=0.5), stats.gamma(1.5, scale=1 / 0.7)), rtol=0.02)
    ba, bb = D.Beta(g.ph(2.0), g.ph(3.0)), D.Beta(g.ph(0.7), g.ph(1.4))
    g.expect(D.kl_divergence(ba, bb), _mc_kl(stats.beta(2, 3), stats.beta(0.7, 1.4)),
             rtol=0.02)
    pa, pb = np.array([0.3, 0.9]), np.array([0.6, 0.5])
    g.expect(D.kl_divergence(D.Bernoulli(probs=g.ph(pa)), D.Bernoulli(probs=g.ph(pb))),
             pa * np.log(pa / pb) + (1 - pa) * np.log((1 - pa) / (1 - pb)))
    qa, qb = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])
    g.expect(D.kl_divergence(D.Categorical(probs=g.ph(qa)), D.Categorical(probs=g.ph(qb))),
             np.sum(qa * np.log(qa / qb)))
    a1, a2 = np.array([1.0, 2.0, 3.0]), np.array([2.0, 0.5, 1.0])
    x = stats.dirichlet(a1).rvs(200000, random_state=np.random.default_rng(1))
    mc = np.mean(stats.dirichlet(a1).logpdf(x.T) - stats.dirichlet(a2).logpdf(x.T))
    g.expect(D.kl_divergence(D.Dirichlet(g.ph(a1)), D.Dirichlet(g.ph(a2))), mc, rtol=0.02)
    g.expect(na.cross_entropy(nb), stats.norm(1, 2).entropy()
             + np.log(1.2 / 2) + (4 + 1.5 ** 2) / (2 * 1.2 ** 2) - 0.5)
    g.run()

    with pytest.raises(NotImplementedError,
                       match=r"No KL\(distribution_a \|\| distribution_b\) registered for "
                             r"distribution_a type Normal and distribution_b type Laplace"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Laplace(0.0, 1.0))
    with pytest.raises(ValueError, match=r"KL\(Normal \|\| Normal\) has already been "
                                         r"registered"):
        D.RegisterKL(D.Normal, D.Normal)(lambda a, b, name=None: None)
    with pytest.raises(TypeError, match="kl_fn must be callable"):
        D.RegisterKL(D.Normal, D.Laplace)(3)

    class MyNormal(D.Normal):
        pass

    @D.RegisterKL(MyNormal, D.Laplace)
    def _kl(a, b, name=None):
        return tf.constant(42.0)
    with tf.Session() as sess:
        assert sess.run(D.kl_divergence(MyNormal(0.0, 1.0), D.Laplace(0.0, 1.0))) == 42.0
        nan_kl = D.kl_divergence(D.Normal(0.0, float("nan")), D.Normal(0.0, 1.0),
                                 allow_nan_stats=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="returned NaN values"):
            sess.run(nan_kl)


def test_shapes_names_and_parameters():
    loc = tf.placeholder(tf.float32, [None, 3])
    n = D.Normal(loc, [1.0, 2.0, 3.0], name="noise")
    assert n.name == "noise/" and n.dtype == tf.float32
    assert n.batch_shape.as_list() == [None, 3] and n.event_shape.as_list() == []
    s = n.sample([4, 5], seed=1)
    assert s.shape.as_list() == [4, 5, None, 3] and s.op.name.startswith("noise/sample")
    lp = n.log_prob(0.0)
    assert lp.shape.as_list() == [None, 3] and lp.op.name.startswith("noise/log_prob")
    d = D.Dirichlet([[1.0, 2.0, 3.0]] * 2)
    assert d.batch_shape.as_list() == [2] and d.event_shape.as_list() == [3]
    assert d.sample(7).shape.as_list() == [7, 2, 3]
    m = D.Multinomial(5.0, logits=tf.zeros([2, 4]))
    assert m.batch_shape.as_list() == [2] and m.event_shape.as_list() == [4]
    c = D.Categorical(logits=tf.zeros([2, 5]))
    assert c.batch_shape.as_list() == [2] and c.sample().shape.as_list() == [2]
    assert c.dtype == tf.int32 and c.sample().dtype == tf.int32
    with tf.Session() as sess:
        bs, es, dbs, des, scalar, shaped = sess.run(
            [n.batch_shape_tensor(), n.event_shape_tensor(), d.batch_shape_tensor(),
             d.event_shape_tensor(), n.is_scalar_batch(), s], {loc: np.zeros([2, 3])})
    assert bs.tolist() == [2, 3] and es.tolist() == [] and dbs.tolist() == [2]
    assert des.tolist() == [3] and not scalar and shaped.shape == (4, 5, 2, 3)
    assert n.is_scalar_event() is not None
    assert set(n.parameters) == {"loc", "scale", "validate_args", "allow_nan_stats", "name"}
    copy = n.copy(scale=5.0)
    assert isinstance(copy, D.Normal) and copy.parameters["scale"] == 5.0
    assert D.Normal.param_static_shapes([10])["loc"].as_list() == [10]
    assert set(D.Gamma.param_static_shapes([2, 3])) == {"concentration", "rate"}
    assert repr(D.Normal(0.0, 1.0)) == ("<tfp.distributions.Normal 'Normal/' batch_shape=() "
                                        "event_shape=() dtype=float32>")
    assert str(D.Normal(0.0, 1.0, name="z")) == ('tfp.distributions.Normal("z/", '
                                                 'batch_shape=(), event_shape=(), '
                                                 'dtype=float32)')
    assert repr(D.FULLY_REPARAMETERIZED) == "<Reparameteriation Type: FULLY_REPARAMETERIZED>"
    assert isinstance(n, D.Distribution)
    with pytest.raises(NotImplementedError, match="covariance is not implemented: Normal"):
        n.covariance()


def test_argument_checks():
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both"):
        D.Bernoulli(probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="Must pass probs or logits, but not both"):
        D.Categorical()
    with pytest.raises(ValueError, match="must be of the same type"):
        D.Normal(tf.constant(0.0, tf.float64), tf.constant(1.0, tf.float32))
    with pytest.raises(ValueError, match="at least 2"):
        D.Categorical(logits=[[1.0]], validate_args=True)
    bad = [D.Normal(0.0, -1.0, validate_args=True).mean(),
           D.Gamma(-1.0, 1.0, validate_args=True).mean(),
           D.Beta(1.0, 2.0, validate_args=True).log_prob(1.5),
           D.Uniform(2.0, 1.0, validate_args=True).mean(),
           D.Bernoulli(probs=1.5, validate_args=True).mean(),
           D.Dirichlet([1.0, 2.0], validate_args=True).log_prob([0.5, 0.6]),
           D.Gamma(0.5, 1.0, allow_nan_stats=False).mode(),
           D.StudentT(0.5, 0.0, 1.0, allow_nan_stats=False).mean()]
    # Constant counts that cannot sum to total_count fail while the graph is built, as
    # TF 1.15's assert_equal does.
    with pytest.raises(tf.errors.InvalidArgumentError, match="counts must sum to"):
        D.Multinomial(3.0, probs=[0.5, 0.5], validate_args=True).log_prob([1.0, 1.0])
    with tf.Session() as sess:
        for t in bad:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(t)
        assert sess.run(D.Normal(0.0, 2.0, validate_args=True).mean()) == 0.0
