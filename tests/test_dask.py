"""DaskBoomerClassifier (gpurules.dask): a distributed fit equals the in-memory one."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install gpurules[dask])")
distributed = pytest.importorskip("distributed", reason="distributed is not installed")

from gpurules import BoomerClassifier  # noqa: E402
from gpurules.dask import DaskBoomerClassifier  # noqa: E402
from tests.reference.dask_clients import in_process_client, local_cluster  # noqa: E402

CHUNKS = (100, 80, 120)


@pytest.fixture(scope="module")
def client():
    with in_process_client(2) as c:
        yield c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n, A = sum(CHUNKS), 6
    X = rng.normal(size=(n, A)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, n)  # nominal
    X[:, 3] = np.round(X[:, 3], 1)
    X[rng.random((n, A)) < 0.05] = np.nan
    Y = np.stack([(X[:, 0] > 0.2) | (X[:, 2] == 1), X[:, 1] + X[:, 3] > 0,
                  rng.random(n) < 0.3], axis=1).astype(np.uint8)
    return X, Y


def _fits(client, data, **params):
    X, Y = data
    nominal = [2]
    local = BoomerClassifier(device="cpu", **params).fit(X, Y, nominal_feature_indices=nominal)
    dist = DaskBoomerClassifier(client=client, **params)
    dist.fit(da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(Y, chunks=(CHUNKS, -1)),
             nominal_feature_indices=nominal)
    return local, dist


def _same_model(a, b):
    assert str(a.model_) == str(b.model_)
    ma, mb = a.model_, b.model_
    for name, value in vars(ma).items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, getattr(mb, name), err_msg=name)


@pytest.mark.parametrize("params", [
    dict(feature_binning="equal-width"),
    dict(feature_binning="equal-frequency"),
    dict(feature_binning="equal-width", instance_sampling="with-replacement",
         feature_sampling="without-replacement"),
    dict(feature_binning="equal-frequency{bin_ratio=0.1}", head_type="complete",
         instance_sampling="without-replacement"),
    # the learner's other paths through the same protocol: packed Hessians and the
    # non-decomposable scale, a holdout set with global pruning, IREP on the sample's
    # left-out examples, rules regrown by post-optimization
    dict(feature_binning="equal-width", loss="logistic-non-decomposable"),
    dict(feature_binning="equal-width", holdout="random", global_pruning="post-pruning"),
    dict(feature_binning="equal-width", instance_sampling="without-replacement",
         rule_pruning="irep"),
    dict(feature_binning="equal-width", post_optimization="sequential"),
])
def test_same_model_as_in_memory(client, data, params):
    local, dist = _fits(client, data, max_rules=10, random_state=1, **params)
    assert 2 <= len(dist.model_) <= 10
    _same_model(local, dist)
    assert dist.device_ == "cpu" and dist.partition_devices_ == ["cpu"] * len(CHUNKS)
    np.testing.assert_array_equal(local.feature_importances_, dist.feature_importances_)


def test_one_partition(client, data):
    """With a single partition the leader runs CpuBackend's fused refinement loop (no
    other partition to ask): still the in-memory model; nothing crosses between workers."""
    X, Y = data
    params = dict(max_rules=8, feature_binning="equal-width",
                  instance_sampling="without-replacement")
    local = BoomerClassifier(device="cpu", **params).fit(X, Y)
    dist = DaskBoomerClassifier(client=client, **params)
    dist.fit(da.from_array(X, chunks=(len(X), -1)), Y)
    _same_model(local, dist)
    assert dist.received_bytes_.size and dist.received_bytes_.max() <= 2 * 8 * 2 * Y.shape[1]


def test_predict_on_dask_and_numpy(client, data):
    X, _ = data
    local, dist = _fits(client, data, max_rules=10, random_state=1,
                        feature_binning="equal-width")
    Xd = da.from_array(X, chunks=(CHUNKS, -1))
    for method in ("predict", "predict_proba", "decision_function"):
        lazy = getattr(dist, method)(Xd)
        assert isinstance(lazy, da.Array)
        expected = getattr(local, method)(X)
        np.testing.assert_array_equal(lazy.compute(), expected)
        np.testing.assert_array_equal(getattr(dist, method)(X), expected)


def test_one_d_labels(client, data):
    X, Y = data
    local = BoomerClassifier(device="cpu", max_rules=5, feature_binning="equal-width")
    local.fit(X, Y[:, 0])
    dist = DaskBoomerClassifier(client=client, max_rules=5, feature_binning="equal-width")
    dist.fit(da.from_array(X, chunks=(CHUNKS, -1)), Y[:, 0])
    _same_model(local, dist)
    Xd = da.from_array(X, chunks=(CHUNKS, -1))
    np.testing.assert_array_equal(dist.predict(Xd).compute(), local.predict(X))
    np.testing.assert_array_equal(dist.predict_proba(Xd).compute(), local.predict_proba(X))


def _recording(dist, hook):
    """Make ``dist`` call ``hook(backend, refine_rule, *args)`` in place of its backend's
    ``refine_rule`` (the client's one call per block of refinement steps)."""
    make = DaskBoomerClassifier._make_backend

    def keep(self, threads):
        backend = make(self, threads)
        refine = backend.refine_rule
        backend.refine_rule = lambda *args: hook(backend, refine, *args)
        return backend

    dist._make_backend = keep.__get__(dist)


def test_histogram_rows_are_the_only_per_refinement_traffic(client, data):
    """Per refinement step only the histogram rows of the sampled features (and those
    features) cross between workers: from the partitions on other workers than the
    leader's; the client gets one small answer per block."""
    from gpurules.backends.base import floyd_indices

    X, Y = data
    K = Y.shape[1]
    dist = DaskBoomerClassifier(client=client, max_rules=4, feature_binning="equal-width")
    blocks = []

    def record(backend, refine, uniforms, *args):
        before = len(backend.received_bytes)
        result = refine(uniforms, *args)
        blocks.append((backend, uniforms, result, backend.received_bytes[before:]))
        return result

    _recording(dist, record)
    dist.fit(da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(Y, chunks=(CHUNKS, -1)))
    backend = blocks[0][0]
    assert backend.leader == int(np.argmax(CHUNKS))
    leader_at = blocks[0][0].addresses[backend.leader]
    remote = sum(address != leader_at for address in backend.addresses)
    assert remote >= 1  # the test must see a histogram cross between workers
    offsets, A = backend.features.bin_offset, X.shape[1]
    for _, uniforms, (conditions, last, labels, _), sent in blocks:
        assert 1 <= len(sent) <= uniforms.shape[0] and len(conditions) <= len(sent)
        for r, received in enumerate(sent):
            features = floyd_indices(uniforms[r], A)
            rows = int(sum(offsets[f + 1] - offsets[f] for f in features))
            expected = remote * (features.nbytes + rows * (K + K + 1) * 8)
            if r == len(sent) - 1:  # the block's answer to the client
                expected += labels.nbytes + (0 if last is None else 2 * K * 8)
            assert received == expected
    assert sum(len(b[3]) for b in blocks) == len(backend.received_bytes)
    np.testing.assert_array_equal(dist.received_bytes_, backend.received_bytes)


@pytest.mark.parametrize("params, error, match", [
    (dict(feature_binning="none"), ValueError, "histogram search"),
    (dict(feature_binning="equal-width", device="gpu"), ValueError, "device='gpu' is not"),
    (dict(feature_binning="equal-width", marginal_probability_calibration="isotonic"),
     ValueError, "not supported"),
])
def test_unsupported_parameters(client, data, params, error, match):
    X, Y = data
    with pytest.raises(error, match=match):
        DaskBoomerClassifier(client=client, **params).fit(
            da.from_array(X, chunks=(CHUNKS, -1)), Y)


def test_unsupported_inputs(client, data):
    X, Y = data
    clf = DaskBoomerClassifier(client=client, feature_binning="equal-width")
    with pytest.raises(TypeError, match="dask.array X"):
        clf.fit(X, Y)
    with pytest.raises(TypeError, match="numeric"):
        clf.fit(da.from_array(X.astype(str), chunks=(CHUNKS, -1)), Y)
    with pytest.raises(ValueError, match="2-D"):
        clf.fit(da.from_array(X[:, 0], chunks=(CHUNKS,)), Y)
    with pytest.raises(ValueError, match="y is not aligned with X: it has 299 rows"):
        clf.fit(da.from_array(X, chunks=(CHUNKS, -1)), da.from_array(Y[:-1], chunks=(150, -1)))


def test_unknown_chunk_sizes_and_empty_partitions(client, data):
    """A filtered dask array (row counts unknown, one partition emptied) fits as its
    concatenation does; a y whose partitions do not line up with X's is a ValueError."""
    X, Y = data
    Xd = da.from_array(X, chunks=(CHUNKS, -1))
    keep = np.ones(len(X), bool)
    keep[CHUNKS[0]:CHUNKS[0] + CHUNKS[1]] = False  # the second partition becomes empty
    keep[::7] = False
    kept = Xd[da.from_array(keep, chunks=(CHUNKS,))]
    assert np.isnan(kept.chunks[0]).all()
    local = BoomerClassifier(device="cpu", max_rules=6, feature_binning="equal-width")
    local.fit(X[keep], Y[keep])
    dist = DaskBoomerClassifier(client=client, max_rules=6, feature_binning="equal-width")
    dist.fit(kept, Y[keep])
    _same_model(local, dist)
    np.testing.assert_array_equal(dist.predict(kept).compute(), local.predict(X[keep]))
    shifted = da.from_array(Y[keep], chunks=((50, 50, len(Y[keep]) - 100), -1))
    with pytest.raises(ValueError, match="partition 0 has 50 rows, X's 85"):
        dist.fit(kept, shifted)


@pytest.fixture(scope="module")
def frames(data):
    """(pandas X with a categorical column, dask X, pandas Y, dask Y) of ``data``."""
    dd = pytest.importorskip("dask.dataframe", reason="dask.dataframe needs pyarrow")
    pd = pytest.importorskip("pandas")
    X, Y = data
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    codes = np.where(np.isnan(X[:, 2]), -1, X[:, 2]).astype(int)
    frame["x2"] = pd.Categorical.from_codes(codes, categories=["a", "b", "c", "d"])
    labels = pd.DataFrame(Y, columns=["l0", "l1", "l2"])
    return frame, dd.from_pandas(frame, npartitions=3), labels, dd.from_pandas(labels, npartitions=3)


def test_dataframe_inputs(client, frames):
    """A dask DataFrame (categorical column = nominal feature, row counts unknown) with
    labels as a dask DataFrame or Series fits as BoomerClassifier on the pandas frame;
    prediction on dask frames is lazy and per partition."""
    frame, Xd, labels, Yd = frames
    local = BoomerClassifier(device="cpu", max_rules=8, feature_binning="equal-frequency")
    local.fit(frame, labels)
    dist = DaskBoomerClassifier(client=client, max_rules=8, feature_binning="equal-frequency")
    dist.fit(Xd, Yd)
    _same_model(local, dist)
    assert "x2 == " in str(dist.model_)
    for method in ("predict", "predict_proba", "decision_function"):
        lazy = getattr(dist, method)(Xd)
        assert isinstance(lazy, da.Array)
        np.testing.assert_array_equal(lazy.compute(), getattr(local, method)(frame))
        np.testing.assert_array_equal(getattr(dist, method)(frame),
                                      getattr(local, method)(frame))
    local.fit(frame, labels["l1"])
    dist.fit(Xd, Yd["l1"])
    _same_model(local, dist)
    np.testing.assert_array_equal(dist.predict(Xd).compute(), local.predict(frame))


def test_dataframe_errors(client, frames):
    dd = pytest.importorskip("dask.dataframe")
    frame, Xd, labels, Yd = frames
    clf = DaskBoomerClassifier(client=client, feature_binning="equal-width")
    with pytest.raises(TypeError, match="pandas DataFrame"):
        clf.fit(frame, labels)
    unknown = Xd.assign(x2=Xd["x2"].cat.as_unknown())
    with pytest.raises(ValueError, match="unknown categories.*categorize"):
        clf.fit(unknown, Yd)
    with pytest.raises(ValueError, match="neither numeric nor categorical"):
        clf.fit(Xd.assign(x0=Xd["x0"].astype(str)), Yd)
    with pytest.raises(ValueError, match="2-D"):
        clf.fit(Xd["x0"], Yd)
    with pytest.raises(ValueError, match="partition 0 has 120 rows, X's 100"):
        clf.fit(Xd, dd.from_pandas(labels, chunksize=120))


@pytest.mark.parametrize("lose", ["leader", "peer", "peer-mid-block"])
def test_lost_worker_stops_the_fit(data, lose):
    """A worker closed in the middle of a fit (the leader's, whose actor runs the
    refinement steps, or another partition's, which the leader calls: before the second
    block, or while a block runs) raises WorkerLostError naming it, and no model is
    left; fitting again on the worker that is left gives the in-memory model."""
    from gpurules.backends.dask.backend import WorkerLostError
    from gpurules.backends.dask.partition import PartitionState

    X, Y = data
    with local_cluster(2) as cluster, distributed.Client(cluster) as client:
        dist = DaskBoomerClassifier(client=client, max_rules=6, feature_binning="equal-width")
        lost, blocks = {}, []

        def closing(backend, refine, *args):
            blocks.append(1)
            if len(blocks) == 2:
                leader_at = backend.addresses[backend.leader]
                lost["address"] = address = leader_at if lose == "leader" else next(
                    a for a in backend.addresses if a != leader_at)
                if lose == "peer-mid-block":  # the peer closes its worker when asked
                    lost["partition"] = backend.addresses.index(address)
                else:
                    worker = next(w for w in cluster.workers.values()
                                  if w.address == address)
                    client.sync(worker.close)
            return refine(*args)

        histograms = PartitionState.histograms

        def closing_when_asked(self, features, condition=None):
            if condition is not None and lost.get("partition") is not None and \
                    distributed.get_worker().address == lost["address"]:
                lost["partition"] = None
                worker = distributed.get_worker()
                worker.loop.add_callback(worker.close)
            return histograms(self, features, condition)

        _recording(dist, closing)
        Xd = da.from_array(X, chunks=(CHUNKS, -1))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(PartitionState, "histograms", closing_when_asked)
            with pytest.raises(WorkerLostError, match="was lost.*must be restarted") as caught:
                dist.fit(Xd, Y)
        assert lost["address"] in str(caught.value)
        assert isinstance(caught.value, RuntimeError) and not hasattr(dist, "model_")
        del dist._make_backend
        assert len(client.nthreads()) == 1
        dist.fit(Xd, Y)
        local = BoomerClassifier(device="cpu", max_rules=6, feature_binning="equal-width")
        _same_model(local.fit(X, Y), dist)


def test_missing_dask_names_the_extra(monkeypatch):
    """Without distributed (or dask), fitting says which extra to install."""
    import sys

    from gpurules.dask import estimator

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(ImportError, match=r"pip install gpurules\[dask\]"):
        estimator._import_dask()


def test_leader_scans_small_histograms_on_one_thread():
    """The leader scans the summed rows on ``search_threads`` only from
    ``MIN_PARALLEL_WORK`` (row x output) visits on (as CpuBackend's searches)."""
    from types import SimpleNamespace

    from gpurules.backends.dask.leader import LeaderSearch
    from gpurules.jit.threads import MIN_PARALLEL_WORK

    def leader(K):
        return SimpleNamespace(K=K, state=SimpleNamespace(search_threads=2))

    assert LeaderSearch._scan_threads(leader(K=3), 200) == 1
    assert LeaderSearch._scan_threads(leader(K=1), MIN_PARALLEL_WORK) == 2
