"""MIPS indexes: the index checks of :mod:`bayesbandit.testing` on every engine, exact answers, Annoy's
forest, atomic saves."""

from __future__ import annotations

import numpy as np
import pytest

from bayesbandit.errors import CheckpointError, InvalidInput, UnknownArm
from bayesbandit.index import AnnoyIndex, ExactIndex, HNSWIndex, recall_at_k
from bayesbandit.index.exact import top_k
from bayesbandit.index.store import FeatureStore
from bayesbandit.testing.index import check_index_answers, check_index_bad_inputs, check_index_save_load

N, D = 5000, 16


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((N + 1000, D)), rng.standard_normal((60, D))


def brute_force(ids, vectors, q, k):
    return ids[np.argsort(-(vectors @ q), kind="stable")[:k]]


@pytest.mark.parametrize("n", [1, 7, 500, 40_000])
@pytest.mark.parametrize("k", [1, 3, 30, 100])
@pytest.mark.parametrize("ties", [False, True])
def test_top_k_is_the_first_k_of_a_stable_descending_sort(n, k, ties):
    rng = np.random.default_rng(n + k)
    scores = rng.integers(0, 5, n).astype(np.float32) if ties else rng.standard_normal(n).astype(np.float32)
    expected = np.argsort(-scores, kind="stable")[:k]
    np.testing.assert_array_equal(top_k(scores, k), expected)


def test_feature_store_matches_a_dict_for_dense_negative_and_huge_ids():
    rng = np.random.default_rng(3)
    ids = np.concatenate([np.arange(0, 3000, 3), -np.arange(1, 200), 2**40 + np.arange(100), [2**24, 2**24 - 1]])
    rng.shuffle(ids)
    vectors = rng.standard_normal((ids.size, 4))
    store, reference = FeatureStore(4, capacity=16), {}
    for chunk in np.array_split(np.arange(ids.size), 7):
        store.add(ids[chunk], vectors[chunk])
        reference.update(zip(ids[chunk].tolist(), vectors[chunk], strict=True))
        gone = rng.choice(np.array(list(reference)), size=40, replace=False)
        store.remove(gone)
        for item in gone.tolist():
            del reference[item]
        keys = np.array(list(reference))
        np.testing.assert_array_equal(store.get(keys), np.array([reference[i] for i in keys.tolist()]))
        assert sorted(store.ids.tolist()) == sorted(reference) and len(store) == len(reference)
        assert not store.held(gone).any() and store.held(keys).all()
        assert all(int(i) not in store for i in gone) and all(int(i) in store for i in keys[:50])
    with pytest.raises(UnknownArm):
        store.remove(gone[:1])
    with pytest.raises(InvalidInput, match="already"):
        store.add(keys[:1], np.ones((1, 4)))


def test_exact_index_is_brute_force_after_adds_and_removes(data):
    vectors, queries = data
    index = ExactIndex(D, dtype=np.float64)
    ids = np.arange(N) * 3 + 1  # ids are not positions
    index.add(ids, vectors[:N])
    gone = ids[::7]
    index.remove(gone)
    keep = ~np.isin(ids, gone)
    for q in queries[:10]:
        np.testing.assert_array_equal(index.query(q, 10), brute_force(ids[keep], vectors[:N][keep], q, 10))
    assert len(index) == keep.sum()


ENGINES = [
    pytest.param(lambda dim: ExactIndex(dim, dtype=np.float64), 1.0, id="exact"),
    pytest.param(
        lambda dim: AnnoyIndex(dim, n_trees=32, search_k=4000, min_changes=0, rebuild_fraction=0.5), 0.9, id="annoy"
    ),
    pytest.param(lambda dim: HNSWIndex(dim, ef=100), 0.9, id="hnsw"),
]


@pytest.mark.parametrize("make, min_recall", ENGINES)
def test_answers_after_build_adds_and_removes(make, min_recall):
    check_index_answers(make, min_recall=min_recall)


@pytest.mark.parametrize("make", [p.values[0] for p in ENGINES], ids=[p.id for p in ENGINES])
def test_bad_input_raises_and_leaves_the_index_unchanged(make):
    check_index_bad_inputs(make)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda dim: ExactIndex(dim), id="exact"),
        pytest.param(lambda dim: AnnoyIndex(dim, n_trees=8), id="annoy"),
        pytest.param(lambda dim: HNSWIndex(dim), id="hnsw"),
    ],
)
def test_save_load_round_trip(make):
    check_index_save_load(make)


def test_annoy_rebuild_clears_the_pending_changes_and_keeps_recall(data):
    vectors, queries = data
    index, exact = AnnoyIndex(D, n_trees=32, search_k=4000, min_changes=10**6), ExactIndex(D, dtype=np.float64)
    for engine in (index, exact):
        engine.add(np.arange(N), vectors[:N])
        engine.remove(np.arange(0, 1000, 2))
    assert index.pending > 0
    index.rebuild()
    assert index.pending == 0 and recall_at_k(index, exact, queries, 10) >= 0.9


def test_annoy_answers_k_live_ids_however_much_of_the_forest_is_tombstoned(data, monkeypatch):
    vectors, queries = data
    index = AnnoyIndex(D, n_trees=8, min_changes=10**6)
    index.add(np.arange(1000), vectors[:1000])
    index.rebuild()
    dead = np.arange(0, 1000, 10)
    index.remove(dead)  # 10% of the forest tombstoned
    asked = []
    real = index._forest.get_nns_by_vector

    def spy(q, n, search_k):
        asked.append(n)
        return real(q, n, search_k=search_k)

    monkeypatch.setattr(index, "_forest", type("Spy", (), {"get_nns_by_vector": staticmethod(spy)})())
    for q in queries[:20]:
        answer = index.query(q, 10)
        assert answer.size == 10 and not np.isin(answer, dead).any()
    assert max(asked) < 40  # about k / 0.9 plus a margin, not k + 100 tombstones
    monkeypatch.undo()
    live = np.setdiff1d(np.arange(1000), dead)
    index.remove(live[5:])  # 5 live ids left among 1000 forest items
    for q in queries[:5]:
        assert sorted(index.query(q, 10).tolist()) == live[:5].tolist()


def test_annoy_rebuilds_when_the_changes_pass_the_threshold(data):
    vectors, _ = data
    index = AnnoyIndex(D, n_trees=4, rebuild_fraction=0.1, min_changes=50)
    index.add(np.arange(1000), vectors[:1000])
    assert index.num_builds == 1  # 1000 pending > max(100, 50)
    index.add(np.arange(1000, 1090), vectors[1000:1090])
    assert index.num_builds == 1 and index.pending == 90
    index.remove(np.arange(10))  # 100 pending, threshold 0.1 * 1080 = 108
    assert index.num_builds == 1 and index.pending == 100
    index.remove(np.arange(10, 20))  # 110 pending > 0.1 * 1070
    assert index.num_builds == 2 and index.pending == 0


def test_annoy_forest_is_fixed_by_seed_and_thread_count_and_survives_a_save(data, tmp_path):
    """Annoy's forest depends on how many threads build it; the count is a setting (never "all cores"),
    builds with the same settings answer alike however the threads are scheduled, and a loaded index
    keeps the count, so its next rebuild answers as the original's does."""
    vectors, queries = data

    def built(n_jobs):
        index = AnnoyIndex(D, n_trees=4, search_k=40, min_changes=10**6, n_jobs=n_jobs)
        index.add(np.arange(2000), vectors[:2000])
        index.rebuild()
        return index

    def answers(index):
        return [index.query(q, 10).tolist() for q in queries]

    assert all(answers(built(3)) == answers(built(3)) for _ in range(3))
    assert answers(built(1)) != answers(built(3))  # the thread count is part of the forest's seed
    original = built(3)
    path = tmp_path / "annoy"
    original.save(path)
    loaded = AnnoyIndex.load(path)
    for index in (original, loaded):
        index.remove(np.arange(0, 2000, 3))
        index.rebuild()
    assert loaded.n_jobs == 3 and answers(loaded) == answers(original)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidInput, match="'n_jobs'"):
            AnnoyIndex(D, n_jobs=bad)


def test_a_crash_mid_save_leaves_the_previous_save_loadable(data, tmp_path, monkeypatch):
    vectors, queries = data
    index = AnnoyIndex(D, n_trees=8)
    index.add(np.arange(1000), vectors[:1000])
    path = tmp_path / "catalogue"
    index.save(path)
    expected = [index.query(q, 10).tolist() for q in queries[:5]]
    index.add(np.arange(1000, 1500), vectors[1000:1500])

    def power_cut(source, target):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", power_cut)  # the save's final rename
    with pytest.raises(OSError, match="disk full"):
        index.save(path)
    monkeypatch.undo()
    loaded = AnnoyIndex.load(path)
    assert [loaded.query(q, 10).tolist() for q in queries[:5]] == expected
    path.write_bytes(b"garbage")
    with pytest.raises(CheckpointError):
        AnnoyIndex.load(path)
