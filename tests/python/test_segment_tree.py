"""edgewise.SegmentTree against NumPy and an independent pure-Python sampler.

The pure-Python Philox4x32-10 and descent below are written from the contract
(segment_tree.hpp), not from the C++ drivers, so agreeing draws pin the Philox usage.
"""

import numpy as np
import pytest

import edgewise

MASK = 0xFFFFFFFF
SAMPLE_STREAM = 0x5345475452454531  # SegmentTree::kSampleStream, "SEGTREE1"


def philox4x32_10(counter, key):
    c, k = list(counter), list(key)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k[0]) & MASK, p1 & MASK, ((p0 >> 32) ^ c[3] ^ k[1]) & MASK, p0 & MASK]
        k = [(k[0] + 0x9E3779B9) & MASK, (k[1] + 0xBB67AE85) & MASK]
    return c


def reference_tree(priorities):
    leaves = 1
    while leaves < len(priorities):
        leaves *= 2
    tree = np.zeros(2 * leaves, np.float32)
    tree[leaves:leaves + len(priorities)] = priorities
    for p in range(leaves - 1, 0, -1):
        tree[p] = tree[2 * p] + tree[2 * p + 1]
    return tree


def reference_draws(priorities, n, seed, stratified=False):
    tree = reference_tree(np.asarray(priorities, np.float32))
    leaves = len(tree) // 2
    out = []
    for i in range(n):
        b = philox4x32_10([i & MASK, i >> 32, SAMPLE_STREAM & MASK, SAMPLE_STREAM >> 32], [seed & MASK, seed >> 32])
        r = ((b[0] >> 5) * 2**26 + (b[1] >> 6)) / 2.0**53
        u = ((i + r) / n if stratified else r) * float(tree[1])
        node = 1
        while node < leaves:
            left, right = float(tree[2 * node]), float(tree[2 * node + 1])
            if left == 0 or (right != 0 and u >= left):
                u -= left
                node = 2 * node + 1
            else:
                node = 2 * node
        out.append(node - leaves)
    return np.array(out, np.int64)


def test_pure_python_philox_matches_random123():
    assert philox4x32_10([0] * 4, [0] * 2) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox4x32_10([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0]) == [
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


def test_update_total_priorities_and_last_write_wins():
    tree = edgewise.SegmentTree(10)
    assert (tree.capacity, tree.leaf_count, len(tree), tree.device) == (10, 16, 10, "cpu")
    assert tree.total() == 0.0
    tree.update(np.array([3, 5, 3, 9, 3, 5]), np.array([1, 2, 3, 4, 7.5, 0], np.float32))
    np.testing.assert_array_equal(tree.priorities(), [0, 0, 0, 7.5, 0, 0, 0, 0, 0, 4])
    assert tree.priorities().dtype == np.float32
    assert tree.total() == 11.5
    assert "capacity=10" in repr(tree)


def test_sum_invariant_after_random_batches(rng):
    for capacity in (1, 7, 33, 1000):
        tree = edgewise.SegmentTree(capacity)
        values = np.zeros(capacity, np.float32)
        for batch in (1, 5, capacity, 3 * capacity):
            idx = rng.integers(0, capacity, size=batch)
            pri = rng.uniform(0, 10, size=batch).astype(np.float32)
            pri[rng.random(batch) < 0.2] = 0
            tree.update(idx, pri)
            for i, p in zip(idx, pri):  # sequentially: the last write wins
                values[i] = p
            np.testing.assert_array_equal(tree.priorities(), values)
            nodes = tree.nodes()
            leaves = tree.leaf_count
            np.testing.assert_array_equal(nodes[1:leaves], nodes[2:2 * leaves:2] + nodes[3:2 * leaves:2])
            np.testing.assert_array_equal(nodes, reference_tree(values))


def test_draws_match_the_independent_python_sampler(rng):
    for capacity, n, seed in ((7, 12, 20240601), (100, 300, 5), (1025, 200, 2**63 + 11)):
        pri = rng.uniform(0, 3, size=capacity).astype(np.float32)
        pri[rng.random(capacity) < 0.3] = 0
        pri[0] = 1
        tree = edgewise.SegmentTree(capacity)
        tree.update(np.arange(capacity), pri)
        for stratified in (False, True):
            got = tree.sample(n, seed, stratified=stratified)
            assert got.dtype == np.int64 and got.shape == (n,)
            np.testing.assert_array_equal(got, reference_draws(pri, n, seed, stratified))


def test_known_answer_sequence():
    tree = edgewise.SegmentTree(7)
    tree.update(np.arange(7), np.array([0.5, 0, 2, 1, 0, 3, 0.25]))
    np.testing.assert_array_equal(tree.sample(12, 20240601), [6, 2, 2, 0, 3, 3, 2, 2, 3, 2, 5, 2])
    np.testing.assert_array_equal(tree.sample(12, 20240601, stratified=True), [2, 2, 2, 2, 2, 3, 3, 5, 5, 5, 5, 5])


def test_frequencies_inside_a_fixed_seed_chi_square_band(rng):
    capacity, n = 50, 200_000
    pri = rng.uniform(0, 10, size=capacity).astype(np.float32)
    pri[[0, 13, 49]] = 0
    tree = edgewise.SegmentTree(capacity)
    tree.update(np.arange(capacity), pri)
    counts = np.bincount(tree.sample(n, 123), minlength=capacity)
    assert counts[pri == 0].sum() == 0
    expected = n * pri.astype(np.float64) / pri.astype(np.float64).sum()
    mask = pri > 0
    chi2 = (((counts - expected) ** 2)[mask] / expected[mask]).sum()
    df = mask.sum() - 1
    assert chi2 < df + 7 * np.sqrt(2 * df), chi2


def test_stratified_draws_are_sorted_and_cover_strata(rng):
    pri = rng.uniform(0, 1, size=300).astype(np.float32)
    tree = edgewise.SegmentTree(300)
    tree.update(np.arange(300), pri)
    draws = tree.sample(1000, 9, stratified=True)
    assert np.all(np.diff(draws) >= 0)
    expected = 1000 * pri.astype(np.float64) / pri.astype(np.float64).sum()
    assert np.all(np.abs(np.bincount(draws, minlength=300) - expected) <= 2)


@pytest.mark.parametrize(
    "indices, priorities, needle",
    [
        ([1, 10], [1, 1], "indices[1] (10) must lie in [0, 10)"),
        ([-1], [1], "indices[0] (-1) must lie in [0, 10)"),
        ([1, 2], [1, -1], "priorities[1] (-1) must be finite and >= 0"),
        ([1, 2], [np.nan, 1], "priorities[0] (nan) must be finite and >= 0"),
        ([1, 2], [1, np.inf], "priorities[1] (inf) must be finite and >= 0"),
        ([1, 2, 3], [1, 1], "indices.size() (3) must equal priorities.size() (2)"),
    ],
)
def test_bad_updates_raise_and_leave_the_tree_unchanged(indices, priorities, needle):
    tree = edgewise.SegmentTree(10)
    tree.update(np.array([0, 9]), np.array([1.0, 2.0]))
    before = tree.nodes()
    with pytest.raises(ValueError, match="SegmentTree::update") as info:
        tree.update(np.array(indices), np.array(priorities, np.float32))
    assert needle in str(info.value)
    np.testing.assert_array_equal(tree.nodes(), before)


def test_other_errors():
    tree = edgewise.SegmentTree(4)
    with pytest.raises(ValueError, match=r"total\(\) \(0\) must be finite and > 0"):
        tree.sample(3, 1)
    assert tree.sample(0, 1).shape == (0,)
    with pytest.raises(ValueError, match=r"n \(-1\) must be >= 0"):
        tree.sample(-1, 1)
    with pytest.raises(ValueError, match="capacity"):
        edgewise.SegmentTree(0)
    with pytest.raises(ValueError, match="integer array"):
        tree.update(np.array([0.5]), np.array([1.0]))
    with pytest.raises(ValueError, match="real numeric array"):
        tree.update(np.array([0]), np.array(["a"]))
    with pytest.raises(ValueError, match="unknown device"):
        edgewise.SegmentTree(4, device="tpu")
    if not edgewise.cuda_built():
        with pytest.raises(ValueError, match="built without CUDA"):
            edgewise.SegmentTree(4, device="cuda")


@pytest.mark.skipif(edgewise.cuda_device_count() == 0, reason="no GPU here")
def test_cuda_tree_draws_equal_the_cpu_tree(rng):
    pri = rng.uniform(0, 1, size=5000).astype(np.float32)
    idx = np.arange(5000)
    cpu, gpu = edgewise.SegmentTree(5000), edgewise.SegmentTree(5000, device="cuda")
    for tree in (cpu, gpu):
        tree.update(idx, pri)
    np.testing.assert_array_equal(gpu.nodes(), cpu.nodes())
    np.testing.assert_array_equal(gpu.priorities(), cpu.priorities())
    for stratified in (False, True):
        np.testing.assert_array_equal(gpu.sample(3000, 77, stratified), cpu.sample(3000, 77, stratified))
