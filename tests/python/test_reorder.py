"""edgewise.train(reorder=...): nodes relabelled for locality before training, the
model's outputs returned in the caller's node order, the same predictions."""

import numpy as np
import pytest

import edgewise as ew
from test_train_api import small_graph


def run(data, reorder):
    return ew.train(data, epochs=15, dropout=0.0, seed=3, select="last", reorder=reorder)


@pytest.mark.parametrize("ordering", ["degree", "rcm"])
def test_reordered_training_returns_the_same_predictions_in_the_original_order(rng, ordering):
    data = small_graph(rng, n=200)
    plain = run(data, "none")
    reordered = run(data, ordering)
    assert reordered.logits.shape == plain.logits.shape
    assert reordered.embeddings.shape == plain.embeddings.shape
    # Same model up to float reassociation: rows must line up node by node.
    np.testing.assert_allclose(reordered.logits, plain.logits, atol=1e-3)
    np.testing.assert_allclose(reordered.embeddings, plain.embeddings, atol=1e-3)
    agree = (reordered.logits.argmax(1) == plain.logits.argmax(1)).mean()
    assert agree >= 0.99
    assert abs(reordered.test_acc - plain.test_acc) <= 2 / 50


def test_unknown_ordering_is_a_value_error_naming_it(rng):
    with pytest.raises(ValueError, match="ordering 'random'"):
        run(small_graph(rng), "random")


def test_node_ordering_is_a_permutation_that_narrows_a_shuffled_path(rng):
    n = 300
    label = rng.permutation(n)
    src = np.concatenate([label[:-1], label[1:]])
    dst = np.concatenate([label[1:], label[:-1]])
    for ordering in ("none", "degree", "rcm"):
        new_to_old = ew.node_ordering(n, src, dst, ordering)
        assert new_to_old.dtype == np.int64
        assert np.array_equal(np.sort(new_to_old), np.arange(n))
    old_to_new = np.argsort(ew.node_ordering(n, src, dst, "rcm"))
    assert np.abs(old_to_new[src] - old_to_new[dst]).max() == 1  # a path: RCM recovers it
    with pytest.raises(ValueError, match="src"):
        ew.node_ordering(3, np.array([0, 7]), np.array([1, 1]))
