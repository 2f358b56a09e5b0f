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
