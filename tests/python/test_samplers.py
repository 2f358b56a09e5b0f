"""edgewise.NeighborSampler / LayerwiseSampler / SeedSampler from Python: blocks are
subgraphs of the input graph with min(fanout, degree) neighbours, dst nodes first,
reproducible from the seed; seed frequencies follow the priorities; errors are ValueError."""

import numpy as np
import pytest

import edgewise


def ring_graph(n=50, k=4):
    # Node v receives edges from v+1 .. v+k (mod n): in-degree k everywhere.
    src = np.concatenate([(np.arange(n) + d) % n for d in range(1, k + 1)])
    dst = np.concatenate([np.arange(n)] * k)
    return edgewise.Graph(np.stack([src, dst]), n), src, dst


def check_block(block, edges, fanout, degree):
    src_nodes, offsets, sources = block["src_nodes"], block["offsets"], block["sources"]
    assert len(src_nodes) == block["num_src"] and len(offsets) == block["num_src"] + 1
    assert len(np.unique(src_nodes)) == len(src_nodes)
    for i in range(block["num_dst"]):
        nbrs = src_nodes[sources[offsets[i]:offsets[i + 1]]]
        assert len(nbrs) == min(fanout, degree)
        assert len(np.unique(nbrs)) == len(nbrs)
        for u in nbrs:
            assert (int(u), int(src_nodes[i])) in edges
    assert np.all(offsets[block["num_dst"]:] == offsets[-1])


def test_neighbor_sampler_blocks():
    graph, src, dst = ring_graph()
    edges = set(zip(src.tolist(), dst.tolist()))
    sampler = edgewise.NeighborSampler(graph, [2, 3], seed=5)
    seeds = np.array([7, 3, 40], dtype=np.int64)
    mb = sampler.sample(seeds)
    assert np.array_equal(mb["seed_nodes"], seeds)
    b0, b1 = mb["blocks"]
    assert np.array_equal(b1["src_nodes"][:b1["num_dst"]], seeds)
    assert np.array_equal(b0["src_nodes"][:b0["num_dst"]], b1["src_nodes"])
    assert np.array_equal(mb["input_nodes"], b0["src_nodes"])
    check_block(b1, edges, 3, 4)
    check_block(b0, edges, 2, 4)
    assert b1["weights"] is None
    assert b1["graph"].num_nodes == b1["num_src"]
    # The same seed replays the same sequence of batches.
    again = edgewise.NeighborSampler(graph, [2, 3], seed=5).sample(seeds)
    assert np.array_equal(again["blocks"][0]["edge_ids"], b0["edge_ids"])


def test_neighbor_sampler_errors():
    graph, _, _ = ring_graph()
    with pytest.raises(ValueError, match=r"fanouts\[0\] \(0\)"):
        edgewise.NeighborSampler(graph, [0])
    sampler = edgewise.NeighborSampler(graph, [2])
    with pytest.raises(ValueError, match=r"seed_nodes\[1\] \(50\) must lie in \[0, 50\)"):
        sampler.sample(np.array([1, 50]))
    with pytest.raises(ValueError, match="repeats"):
        sampler.sample(np.array([1, 1]))


def test_layerwise_sampler_rows_sum_to_one():
    graph, _, _ = ring_graph()
    for scheme in ("ladies", "fastgcn"):
        mb = edgewise.LayerwiseSampler(graph, [20, 10], scheme=scheme, seed=1).sample(np.array([0, 10, 20]))
        for block in mb["blocks"]:
            off, w = block["offsets"], block["weights"]
            for i in range(block["num_dst"]):
                if off[i + 1] > off[i]:
                    assert w[off[i]:off[i + 1]].sum() == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="scheme"):
        edgewise.LayerwiseSampler(graph, [4], scheme="graphsaint")


def test_seed_sampler_frequencies_and_updates():
    p = np.array([0, 1, 2, 3, 4], dtype=np.float32)
    s = edgewise.SeedSampler(p, stratified=False)
    assert s.population == 4
    counts = np.zeros(5)
    for seed in range(2000):
        b = s.sample(4, seed)
        np.add.at(counts, b["nodes"], b["counts"])
    expected = 8000 * p / p.sum()
    chi2 = ((counts[1:] - expected[1:]) ** 2 / expected[1:]).sum()
    assert counts[0] == 0 and chi2 < 16.27  # 3 degrees of freedom, p = 0.001
    s.update_priorities(np.array([4]), np.array([0], dtype=np.float32))
    assert s.population == 3 and s.priorities[4] == 0
    assert 4 not in s.sample(3, 1)["draws"]
    with pytest.raises(ValueError, match="batch_size"):
        s.sample(4, 0)
    with pytest.raises(ValueError):
        s.update_priorities(np.array([5]), np.array([1], dtype=np.float32))


def test_sampler_arguments_of_the_wrong_shape_or_range_are_refused():
    graph, _, _ = ring_graph(n=6, k=2)
    with pytest.raises(ValueError, match=r"SeedSampler: priorities must be 1-D \(got 2-D\)"):
        edgewise.SeedSampler(np.ones((2, 3), np.float32))
    # A positive float64 that float32 rounds to 0 would silently never be drawn.
    with pytest.raises(ValueError, match=r"priorities\[1\] \(1e-50\) is positive but rounds to 0 in float32"):
        edgewise.SeedSampler(np.array([1.0, 1e-50, 2.0]))
    tiny = edgewise.SeedSampler(np.array([1.0, 1e-44, 0.0]))  # representable: kept
    assert tiny.priorities[1] > 0 and tiny.population == 2
    with pytest.raises(ValueError, match=r"update_priorities: values\[0\] \(1e-300\) is positive but rounds"):
        tiny.update_priorities(np.array([0]), np.array([1e-300]))
    with pytest.raises(ValueError, match=r"update_priorities: nodes must be 1-D"):
        tiny.update_priorities(np.array([[0]]), np.array([1.0]))
    assert tiny.priorities[0] == 1.0, "a refused update changes nothing"
    sampler = edgewise.NeighborSampler(graph, [2])
    with pytest.raises(ValueError, match=r"sample: seed_nodes must be 1-D \(got 2-D\)"):
        sampler.sample(np.array([[0, 1], [2, 3]]))
    # More draws than nodes are clamped to the node count (here 6): quick, and the same blocks.
    big = edgewise.LayerwiseSampler(graph, [10**9], seed=3)
    six = edgewise.LayerwiseSampler(graph, [6], seed=3)
    a, b = big.sample(np.array([0, 1])), six.sample(np.array([0, 1]))
    assert np.array_equal(a["blocks"][0]["src_nodes"], b["blocks"][0]["src_nodes"])
    assert np.array_equal(a["blocks"][0]["weights"], b["blocks"][0]["weights"])
