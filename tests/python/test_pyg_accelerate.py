"""edgewise.torch.pyg.accelerate(): PyG's own layers and aggregations give the same
outputs and gradients with and without it, and deaccelerate() restores PyG exactly.

The layers are enumerated from torch_geometric.nn.conv itself: each one is either
in CASES (how to build and call it), or in NOT_RUNNABLE with the reason it cannot
run here, or built generically as ``cls(C, C_OUT)(x, edge_index)``; a layer PyG
adds later that fits none of these fails the test, so it gets looked at.
"""

import inspect
import sys
import threading
import warnings

import pytest

torch = pytest.importorskip("torch")
torch_geometric = pytest.importorskip("torch_geometric")
import torch_geometric.nn as pyg_nn  # noqa: E402
import torch_geometric.nn.aggr as pyg_aggr  # noqa: E402
import torch_geometric.nn.conv as pyg_conv  # noqa: E402
import torch_geometric.utils as pyg_utils  # noqa: E402

import edgewise.torch.pyg as ew_pyg  # noqa: E402
from edgewise.torch.pyg import _functional, _propagate, _structure  # noqa: E402

N, C, C_OUT = 30, 8, 6
RTOL = 1e-5

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(autouse=True)
def _restored(monkeypatch):
    # The graphs here are small: route every size to Edgewise, so the kernels are tested.
    monkeypatch.setattr(_functional, "MIN_ROUTED_ENTRIES", 0)
    ew_pyg.deaccelerate()
    yield
    ew_pyg.deaccelerate()


def _graph(seed=0, nodes=N, edges=150):
    """Random edges among the first nodes - 4 (the last 4 isolated), self loops and duplicates."""
    g = torch.Generator().manual_seed(seed)
    ei = torch.randint(0, nodes - 4, (2, edges), generator=g)
    loops = torch.arange(0, nodes - 4, 3).repeat(2, 1)
    ei = torch.cat([ei, loops, ei[:, :10]], dim=1)  # 10 duplicate edges
    E = ei.size(1)
    return dict(
        x=torch.randn(nodes, C, generator=g, dtype=torch.float64),
        edge_index=ei,
        edge_weight=torch.rand(E, generator=g, dtype=torch.float64) + 0.1,
        edge_attr=torch.randn(E, 3, generator=g, dtype=torch.float64),
        edge_type=torch.randint(0, 3, (E,), generator=g),
        pos=torch.randn(nodes, 3, generator=g, dtype=torch.float64),
        batch=torch.zeros(nodes, dtype=torch.int64),
        x_src=torch.randn(nodes + 7, C, generator=g, dtype=torch.float64),
    )


def _mlp(i=C, o=C_OUT):
    return torch.nn.Sequential(torch.nn.Linear(i, o), torch.nn.ReLU(), torch.nn.Linear(o, o))


def _bipartite(d):
    """Messages from x_src (N + 7 rows) into x (N rows)."""
    ei = d["edge_index"].clone()
    ei[0] = (ei[0] * 7) % (N + 7)
    return ei


# name -> [(variant, build(), call(model, data dict))]
CASES = {
    "SimpleConv": [("sum", lambda: pyg_conv.SimpleConv(), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
                   ("max", lambda: pyg_conv.SimpleConv("max"), lambda m, d: m(d["x"], d["edge_index"]))],
    "GCNConv": [
        ("plain", lambda: pyg_conv.GCNConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"])),
        ("weighted", lambda: pyg_conv.GCNConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
        ("target_to_source", lambda: pyg_conv.GCNConv(C, C_OUT, flow="target_to_source"),
         lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
        ("sparse_adj_t", lambda: pyg_conv.GCNConv(C, C_OUT, normalize=False),
         lambda m, d: m(d["x"], torch.sparse_coo_tensor(d["edge_index"].flip(0), d["edge_weight"], (N, N))
                        .coalesce().to_sparse_csr())),
    ],
    "ChebConv": [("K3", lambda: pyg_conv.ChebConv(C, C_OUT, 3), lambda m, d: m(d["x"], d["edge_index"],
                                                                            d["edge_weight"]))],
    "SAGEConv": [
        ("mean", lambda: pyg_conv.SAGEConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"])),
        ("max", lambda: pyg_conv.SAGEConv(C, C_OUT, aggr="max"), lambda m, d: m(d["x"], d["edge_index"])),
        ("min", lambda: pyg_conv.SAGEConv(C, C_OUT, aggr="min"), lambda m, d: m(d["x"], d["edge_index"])),
        ("sum", lambda: pyg_conv.SAGEConv(C, C_OUT, aggr="sum"), lambda m, d: m(d["x"], d["edge_index"])),
        ("multi", lambda: pyg_conv.SAGEConv(C, C_OUT, aggr=["mean", "max"]), lambda m, d: m(d["x"], d["edge_index"])),
        ("lstm", lambda: pyg_conv.SAGEConv(C, C_OUT, aggr="lstm"),
         lambda m, d: m(d["x"], pyg_utils.sort_edge_index(d["edge_index"], sort_by_row=False))),
        ("bipartite", lambda: pyg_conv.SAGEConv((C, C), C_OUT),
         lambda m, d: m((d["x_src"], d["x"]), _bipartite(d), size=(N + 7, N))),
        ("bipartite_max", lambda: pyg_conv.SAGEConv((C, C), C_OUT, aggr="max"),
         lambda m, d: m((d["x_src"], d["x"]), _bipartite(d))),
        ("sparse_adj_t", lambda: pyg_conv.SAGEConv(C, C_OUT),
         lambda m, d: m(d["x"], torch.sparse_coo_tensor(d["edge_index"].flip(0), torch.ones(d["edge_index"].size(1),
                        dtype=torch.float64), (N, N)).coalesce().to_sparse_csr())),
        ("normalize", lambda: pyg_conv.SAGEConv(C, C_OUT, normalize=True), lambda m, d: m(d["x"], d["edge_index"])),
        ("no_root", lambda: pyg_conv.SAGEConv(C, C_OUT, root_weight=False), lambda m, d: m(d["x"], d["edge_index"])),
        ("no_bias", lambda: pyg_conv.SAGEConv(C, C_OUT, bias=False), lambda m, d: m(d["x"], d["edge_index"])),
        ("project", lambda: pyg_conv.SAGEConv(C, C_OUT, project=True), lambda m, d: m(d["x"], d["edge_index"])),
        ("lazy", lambda: pyg_conv.SAGEConv(-1, C_OUT), lambda m, d: m(d["x"], d["edge_index"])),
        ("bipartite_no_dst", lambda: pyg_conv.SAGEConv((C, C), C_OUT),
         lambda m, d: m((d["x_src"], None), _bipartite(d), size=(N + 7, N))),
    ],
    "GraphConv": [
        ("add", lambda: pyg_conv.GraphConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
        ("mean", lambda: pyg_conv.GraphConv(C, C_OUT, aggr="mean"),
         lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
        ("max", lambda: pyg_conv.GraphConv(C, C_OUT, aggr="max"),
         lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"])),
    ],
    "GravNetConv": None,
    "GatedGraphConv": [("w", lambda: pyg_conv.GatedGraphConv(C, 2),
                        lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "ResGatedGraphConv": [("e", lambda: pyg_conv.ResGatedGraphConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"]))],
    "GATConv": [("h2", lambda: pyg_conv.GATConv(C, C_OUT, heads=2), lambda m, d: m(d["x"], d["edge_index"])),
                ("edge", lambda: pyg_conv.GATConv(C, C_OUT, edge_dim=3),
                 lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"])),
                ("mean_heads", lambda: pyg_conv.GATConv(C, C_OUT, heads=3, concat=False),
                 lambda m, d: m(d["x"], d["edge_index"])),
                ("bipartite", lambda: pyg_conv.GATConv((C, C), C_OUT, heads=2, add_self_loops=False),
                 lambda m, d: m((d["x_src"], d["x"]), _bipartite(d), size=(N + 7, N)))],
    "GATv2Conv": [("h2", lambda: pyg_conv.GATv2Conv(C, C_OUT, heads=2), lambda m, d: m(d["x"], d["edge_index"])),
                  ("bipartite", lambda: pyg_conv.GATv2Conv((C, C), C_OUT, heads=2, add_self_loops=False),
                   lambda m, d: m((d["x_src"], d["x"]), _bipartite(d)))],
    "TransformerConv": [("h2", lambda: pyg_conv.TransformerConv(C, C_OUT, heads=2),
                         lambda m, d: m(d["x"], d["edge_index"]))],
    "AGNNConv": [("plain", lambda: pyg_conv.AGNNConv(), lambda m, d: m(d["x"], d["edge_index"]))],
    "TAGConv": [("w", lambda: pyg_conv.TAGConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "GINConv": [("plain", lambda: pyg_conv.GINConv(_mlp()), lambda m, d: m(d["x"], d["edge_index"])),
                ("bipartite", lambda: pyg_conv.GINConv(_mlp()),
                 lambda m, d: m((d["x_src"], d["x"]), _bipartite(d), size=(N + 7, N)))],
    "GINEConv": [("e", lambda: pyg_conv.GINEConv(_mlp(), edge_dim=3),
                  lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "ARMAConv": [("w", lambda: pyg_conv.ARMAConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "SGConv": [("w", lambda: pyg_conv.SGConv(C, C_OUT, K=2),
                lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "SSGConv": [("w", lambda: pyg_conv.SSGConv(C, C_OUT, alpha=0.1),
                 lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "APPNP": [("w", lambda: pyg_conv.APPNP(K=3, alpha=0.1), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "MFConv": [("plain", lambda: pyg_conv.MFConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"]))],
    "RGCNConv": [("r3", lambda: pyg_conv.RGCNConv(C, C_OUT, 3), lambda m, d: m(d["x"], d["edge_index"],
                                                                            d["edge_type"]))],
    "FastRGCNConv": [("r3", lambda: pyg_conv.FastRGCNConv(C, C_OUT, 3),
                      lambda m, d: m(d["x"], d["edge_index"], d["edge_type"]))],
    "RGATConv": [("r3", lambda: pyg_conv.RGATConv(C, C_OUT, 3), lambda m, d: m(d["x"], d["edge_index"],
                                                                            d["edge_type"]))],
    "SignedConv": [("first", lambda: pyg_conv.SignedConv(C, C_OUT, first_aggr=True),
                    lambda m, d: m(d["x"], d["edge_index"][:, ::2], d["edge_index"][:, 1::2]))],
    "DNAConv": [("h1", lambda: pyg_conv.DNAConv(C, heads=1),
                 lambda m, d: m(d["x"].view(N, 1, C).repeat(1, 2, 1), d["edge_index"]))],
    "PointNetConv": [("pos", lambda: pyg_conv.PointNetConv(_mlp(C + 3, C_OUT)),
                      lambda m, d: m(d["x"], d["pos"], d["edge_index"]))],
    "GMMConv": [("e", lambda: pyg_conv.GMMConv(C, C_OUT, dim=3, kernel_size=2),
                 lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "NNConv": [("e", lambda: pyg_conv.NNConv(C, C_OUT, torch.nn.Linear(3, C * C_OUT), aggr="mean"),
                lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "CGConv": [("e", lambda: pyg_conv.CGConv(C, dim=3), lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "EdgeConv": [("max", lambda: pyg_conv.EdgeConv(_mlp(2 * C, C_OUT)), lambda m, d: m(d["x"], d["edge_index"]))],
    "PPFConv": [("pos", lambda: pyg_conv.PPFConv(_mlp(C + 4, C_OUT)),
                 lambda m, d: m(d["x"], d["pos"], torch.nn.functional.normalize(d["pos"], dim=1), d["edge_index"]))],
    "FeaStConv": [("h2", lambda: pyg_conv.FeaStConv(C, C_OUT, heads=2), lambda m, d: m(d["x"], d["edge_index"]))],
    "PointTransformerConv": [("pos", lambda: pyg_conv.PointTransformerConv(C, C_OUT),
                              lambda m, d: m(d["x"], d["pos"], d["edge_index"]))],
    "HypergraphConv": [("plain", lambda: pyg_conv.HypergraphConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"]))],
    "LEConv": [("w", lambda: pyg_conv.LEConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "PNAConv": [("e", lambda: pyg_conv.PNAConv(C, C_OUT, ["mean", "min", "max", "std"], ["identity", "amplification"],
                                               torch.tensor([0, 3, 5, 2, 1])),
                 lambda m, d: m(d["x"], d["edge_index"]))],
    "ClusterGCNConv": [("plain", lambda: pyg_conv.ClusterGCNConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"]))],
    "GENConv": [("softmax", lambda: pyg_conv.GENConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"])),
                ("powermean", lambda: pyg_conv.GENConv(C, C_OUT, aggr="powermean", edge_dim=3),
                 lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "GCN2Conv": [("w", lambda: pyg_conv.GCN2Conv(C, alpha=0.1, theta=0.5, layer=1),
                  lambda m, d: m(d["x"], d["x"].flip(0), d["edge_index"], d["edge_weight"]))],
    "WLConvContinuous": [("w", lambda: pyg_conv.WLConvContinuous(),
                          lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "FiLMConv": [("r3", lambda: pyg_conv.FiLMConv(C, C_OUT, num_relations=3),
                  lambda m, d: m(d["x"], d["edge_index"], d["edge_type"]))],
    "SuperGATConv": [("h2", lambda: pyg_conv.SuperGATConv(C, C_OUT, heads=2), lambda m, d: m(d["x"], d["edge_index"]))],
    "FAConv": [("w", lambda: pyg_conv.FAConv(C), lambda m, d: m(d["x"], d["x"].flip(0), d["edge_index"]))],
    "EGConv": [("multi", lambda: pyg_conv.EGConv(C, C, aggregators=["sum", "mean", "max"], num_heads=2, num_bases=2),
                lambda m, d: m(d["x"], d["edge_index"]))],
    "PDNConv": [("e", lambda: pyg_conv.PDNConv(C, C_OUT, edge_dim=3, hidden_channels=4),
                 lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "GeneralConv": [("att", lambda: pyg_conv.GeneralConv(C, C_OUT, in_edge_channels=3, attention=True),
                     lambda m, d: m(d["x"], d["edge_index"], d["edge_attr"]))],
    "HEATConv": [("t", lambda: pyg_conv.HEATConv(C, C_OUT, 2, 3, 2, 3, 2),
                  lambda m, d: m(d["x"], d["edge_index"], torch.arange(N) % 2, d["edge_type"], d["edge_attr"]))],
    "LGConv": [("w", lambda: pyg_conv.LGConv(), lambda m, d: m(d["x"], d["edge_index"], d["edge_weight"]))],
    "PointGNNConv": [("pos", lambda: pyg_conv.PointGNNConv(_mlp(C, 3), _mlp(C + 3, C), _mlp(C, C)),
                      lambda m, d: m(d["x"], d["pos"], d["edge_index"]))],
    "GPSConv": [("gin", lambda: pyg_conv.GPSConv(C, pyg_conv.GINConv(_mlp(C, C)), heads=2),
                 lambda m, d: m(d["x"], d["edge_index"]))],
    "AntiSymmetricConv": [("gcn", lambda: pyg_conv.AntiSymmetricConv(C), lambda m, d: m(d["x"], d["edge_index"]))],
    "DirGNNConv": [("sage", lambda: pyg_conv.DirGNNConv(pyg_conv.SAGEConv(C, C_OUT)),
                    lambda m, d: m(d["x"], d["edge_index"]))],
    "MixHopConv": [("w", lambda: pyg_conv.MixHopConv(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"],
                                                                              d["edge_weight"]))],
    "MeshCNNConv": None,
}

NOT_RUNNABLE = {
    "MessagePassing": "the abstract base class",
    "CuGraphSAGEConv": "needs pylibcugraphops and a GPU",
    "CuGraphGATConv": "needs pylibcugraphops and a GPU",
    "CuGraphRGCNConv": "needs pylibcugraphops and a GPU",
    "FusedGATConv": "needs dgNN and a GPU",
    "GravNetConv": "builds its graph with torch_cluster.knn (not installed)",
    "DynamicEdgeConv": "builds its graph with torch_cluster.knn (not installed)",
    "XConv": "needs torch_cluster.knn_graph (not installed)",
    "SplineConv": "needs torch_spline_conv (not installed)",
    "HGTConv": "heterogeneous graphs only (x_dict / edge_index_dict)",
    "HANConv": "heterogeneous graphs only (x_dict / edge_index_dict)",
    "HeteroConv": "heterogeneous graphs only (wraps per-relation layers)",
    "MeshCNNConv": "needs a triangle mesh's edge adjacency (4 neighbours per edge)",
    "PANConv": "builds a torch_sparse.SparseTensor (torch-sparse not installed)",
    "WLConv": "integer colour refinement (a hash per node), no floating computation to accelerate",
}

# Layers whose propagate runs Edgewise's fused gather-reduce with plain edge_index input
# (not ARMAConv: it propagates [K, N, C] stacks; not ClusterGCNConv in float64: its
# weights are float32, which PyG promotes; not multi / module aggregations or sparse input).
FUSED = {"GCNConv", "SAGEConv", "GraphConv", "GINConv", "GatedGraphConv", "TAGConv", "SGConv", "SSGConv", "APPNP",
         "ChebConv", "GCN2Conv", "LGConv", "MFConv", "SimpleConv", "MixHopConv", "WLConvContinuous", "GATConv",
         "GATv2Conv"}
NOT_FUSED_VARIANTS = ("multi", "lstm", "sparse_adj_t")


def _conv_classes():
    names = []
    for name in pyg_conv.__all__:
        cls = getattr(pyg_conv, name)
        if inspect.isclass(cls) and issubclass(cls, torch.nn.Module):
            names.append(name)
    return names


def _cases():
    out = []
    for name in _conv_classes():
        if name in NOT_RUNNABLE:
            continue
        entries = CASES.get(name)
        if entries is None:  # a layer PyG added: the generic form
            cls = getattr(pyg_conv, name)
            entries = [("generic", lambda cls=cls: cls(C, C_OUT), lambda m, d: m(d["x"], d["edge_index"]))]
        for variant, build, call in entries:
            out.append(pytest.param(name, variant, build, call, id=f"{name}-{variant}"))
    return out


def _first_tensor(result):
    while isinstance(result, (tuple, list)):
        result = result[0]
    return result


def _run(build, call, data, seed=3):
    torch.manual_seed(seed)
    model = build().double().eval()
    inputs = {k: (v.clone().requires_grad_(v.is_floating_point())) for k, v in data.items()}
    torch.manual_seed(seed + 1)
    out = _first_tensor(call(model, inputs))
    weights = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(seed + 2))
    wrt = [t for t in list(inputs.values()) + list(model.parameters()) if t.requires_grad]
    grads = torch.autograd.grad((out * weights).sum(), wrt, allow_unused=True)
    return out.detach(), [g for g in grads]


def _assert_close(a, b, what):
    assert a.shape == b.shape, what
    scale = max(1.0, float(b.abs().max())) if b.numel() else 1.0
    err = float((a - b).abs().max()) if a.numel() else 0.0
    assert err <= RTOL * scale, f"{what}: max |diff| {err:.3g} (scale {scale:.3g})"


def test_every_conv_layer_is_covered():
    unknown = [n for n in _conv_classes() if n not in CASES and n not in NOT_RUNNABLE]
    # A new layer runs through the generic form; it must at least build that way.
    for name in unknown:
        cls = getattr(pyg_conv, name)
        try:
            cls(C, C_OUT)
        except Exception as error:  # noqa: BLE001
            pytest.fail(f"PyG's {name} is new and cannot be built as {name}({C}, {C_OUT}) ({error}); "
                        f"add it to CASES or NOT_RUNNABLE in this file")


@pytest.mark.parametrize("name,variant,build,call", _cases())
def test_layer_equal_with_and_without_acceleration(monkeypatch, name, variant, build, call):
    data = _graph()
    ref_out, ref_grads = _run(build, call, data)
    fused_calls = _fused_count(monkeypatch)
    with ew_pyg.accelerated():
        out, grads = _run(build, call, data)
    _assert_close(out, ref_out, f"{name} output")
    assert len(grads) == len(ref_grads)
    for k, (g, r) in enumerate(zip(grads, ref_grads)):
        assert (g is None) == (r is None), f"{name} gradient {k}: present in one run only"
        if g is not None:
            _assert_close(g, r, f"{name} gradient {k}")
    if name in FUSED and variant not in NOT_FUSED_VARIANTS:
        assert any(fused_calls), f"{name} did not take the fused path"


# --- aggregations --------------------------------------------------------------------------------

AGGREGATIONS = {
    "MultiAggregation": lambda: pyg_aggr.MultiAggregation(["mean", "max", "std"]),
    "QuantileAggregation": lambda: pyg_aggr.QuantileAggregation([0.25, 0.5]),
    "LSTMAggregation": lambda: pyg_aggr.LSTMAggregation(C, C),
    "GRUAggregation": lambda: pyg_aggr.GRUAggregation(C, C),
    "Set2Set": lambda: pyg_aggr.Set2Set(C, 2),
    "DegreeScalerAggregation": lambda: pyg_aggr.DegreeScalerAggregation("mean", "amplification",
                                                                         torch.tensor([0, 3, 5, 2])),
    "SortAggregation": lambda: pyg_aggr.SortAggregation(k=3),
    "GraphMultisetTransformer": lambda: pyg_aggr.GraphMultisetTransformer(C, k=2, heads=2),
    "AttentionalAggregation": lambda: pyg_aggr.AttentionalAggregation(torch.nn.Linear(C, 1)),
    "EquilibriumAggregation": None,
    "MLPAggregation": lambda: pyg_aggr.MLPAggregation(C, C, max_num_elements=40, num_layers=1),
    "DeepSetsAggregation": lambda: pyg_aggr.DeepSetsAggregation(torch.nn.Linear(C, C), torch.nn.Linear(C, C)),
    "SetTransformerAggregation": lambda: pyg_aggr.SetTransformerAggregation(C, heads=2),
    "LCMAggregation": lambda: pyg_aggr.LCMAggregation(C, C),
    "PatchTransformerAggregation": lambda: pyg_aggr.PatchTransformerAggregation(C, C, patch_size=2,
                                                                                 hidden_channels=4),
    "SoftmaxAggregation": lambda: pyg_aggr.SoftmaxAggregation(learn=True),
    "PowerMeanAggregation": lambda: pyg_aggr.PowerMeanAggregation(learn=True),
}
AGGREGATIONS_NOT_RUNNABLE = {
    "Aggregation": "the abstract base class",
    "EquilibriumAggregation": "solves an inner optimisation with torch.randn starts (not repeatable run to run)",
}


def _aggregation_cases():
    out = []
    for name in pyg_aggr.__all__:
        cls = getattr(pyg_aggr, name)
        if not (inspect.isclass(cls) and issubclass(cls, pyg_aggr.Aggregation)) or name in AGGREGATIONS_NOT_RUNNABLE:
            continue
        build = AGGREGATIONS.get(name) or (lambda cls=cls: cls())
        for form in ("index", "ptr"):
            out.append(pytest.param(name, build, form, id=f"{name}-{form}"))
    return out


@pytest.mark.parametrize("name,build,form", _aggregation_cases())
def test_aggregation_equal_with_and_without_acceleration(name, build, form):
    g = torch.Generator().manual_seed(5)
    E, S = 120, 25
    index = torch.randint(0, S - 3, (E,), generator=g).sort().values  # the last 3 outputs empty
    x = torch.randn(E, C, dtype=torch.float64, generator=g)
    x[10:14] = x[20]  # ties
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.bincount(index, minlength=S).cumsum(0)])

    def run():
        torch.manual_seed(7)
        aggr = build().double()
        xs = x.clone().requires_grad_()
        kwargs = dict(index=index, dim_size=S) if form == "index" else dict(index=index, ptr=ptr, dim_size=S)
        out = _first_tensor(aggr(xs, **kwargs))
        weights = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(8))
        wrt = [xs] + [p for p in aggr.parameters() if p.requires_grad]
        return out.detach(), torch.autograd.grad((out * weights).sum(), wrt, allow_unused=True)

    ref_out, ref_grads = run()
    with ew_pyg.accelerated():
        out, grads = run()
    _assert_close(out, ref_out, f"{name} output")
    for k, (a, b) in enumerate(zip(grads, ref_grads)):
        if a is not None or b is not None:
            _assert_close(a, b, f"{name} gradient {k}")


# --- the utils functions directly, float32 and 16-bit too ------------------------------------------


@pytest.mark.parametrize("reduce", ["sum", "add", "mean", "min", "max", "amin", "amax", "mul", "any"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_matches_pyg(reduce, dtype, dim):
    g = torch.Generator().manual_seed(11)
    src = (torch.randn(6, 40, 5, generator=g) * 4).to(dtype)
    index = torch.randint(0, 12, (src.size(dim),), generator=g)
    original = pyg_utils.scatter
    ref = original(src, index, dim, 15, reduce)
    with ew_pyg.accelerated():
        assert pyg_utils.scatter is not original
        out = pyg_utils.scatter(src, index, dim, 15, reduce)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    tol = 2e-2 if dtype == torch.bfloat16 else 1e-5
    torch.testing.assert_close(out.double(), ref.double(), rtol=tol, atol=tol)


def _count_kernel_calls(monkeypatch):
    calls = []
    for name in ("scatter_reduce", "segment_reduce"):
        original = getattr(_functional._reduce_ops, name)

        def counting(*args, original=original, **kwargs):
            calls.append(1)
            return original(*args, **kwargs)

        monkeypatch.setattr(_functional._reduce_ops, name, counting)
    return calls


def test_scatter_runs_on_edgewise_from_the_threshold(monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    monkeypatch.setattr(_functional, "MIN_ROUTED_ENTRIES", 1 << 15)
    small, large = torch.randn(100, 4), torch.randn(1 << 15, 4)
    with ew_pyg.accelerated():
        pyg_utils.scatter(small, torch.zeros(100, dtype=torch.int64), 0, 1)
        assert not calls  # below the threshold: PyG's own ops
        out = pyg_utils.scatter(large, torch.arange(1 << 15) % 7, 0, 7, "mean")
        assert calls
    torch.testing.assert_close(out, torch.stack([large[k::7].mean(0) for k in range(7)]))


def test_softmax_and_segment_match_pyg(monkeypatch):
    calls = _count_kernel_calls(monkeypatch)
    g = torch.Generator().manual_seed(12)
    src = torch.randn(50, 3, dtype=torch.float64, generator=g, requires_grad=True)
    index = torch.randint(0, 9, (50,), generator=g).sort().values
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.bincount(index, minlength=10).cumsum(0)])
    ref = [pyg_utils.softmax(src, index, num_nodes=10), pyg_utils.softmax(src, None, ptr),
           pyg_utils.segment(src, ptr, "max"), pyg_utils.segment(src, ptr, "mean")]
    with ew_pyg.accelerated():
        out = [pyg_utils.softmax(src, index, num_nodes=10), pyg_utils.softmax(src, None, ptr),
               pyg_utils.segment(src, ptr, "max"), pyg_utils.segment(src, ptr, "mean")]
    assert len(calls) >= 3
    for a, b in zip(out, ref):
        torch.testing.assert_close(a, b)
        ga = torch.autograd.grad(a.sum() + a.square().sum(), src)[0]
        gb = torch.autograd.grad(b.sum() + b.square().sum(), src)[0]
        torch.testing.assert_close(ga, gb)


def _raised(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001
        return type(error), str(error)
    return None


BAD_CALLS = {
    "scatter index out of range": lambda: pyg_utils.scatter(torch.randn(10, 3), torch.arange(10) * 3, 0, 10, "sum"),
    "scatter 2-D index": lambda: pyg_utils.scatter(torch.randn(10, 3), torch.zeros(2, 5, dtype=torch.int64), 0),
    "scatter bad reduce": lambda: pyg_utils.scatter(torch.randn(10, 3), torch.zeros(10, dtype=torch.int64), 0,
                                                    reduce="median"),
    "GCNConv index past x": lambda: pyg_conv.GCNConv(3, 2)(torch.randn(10, 3), torch.tensor([[0, 1, 12], [1, 2, 3]])),
    "SAGEConv index past x": lambda: pyg_conv.SAGEConv(3, 2)(torch.randn(10, 3), torch.tensor([[0, 1, 12], [1, 2, 3]])),
    "SAGEConv negative index": lambda: pyg_conv.SAGEConv(3, 2)(torch.randn(10, 3), torch.tensor([[0, -1], [1, 2]])),
    "SAGEConv float edge_index": lambda: pyg_conv.SAGEConv(3, 2)(torch.randn(10, 3), torch.zeros(2, 4)),
    "SAGEConv size mismatch": lambda: pyg_conv.SAGEConv(3, 2)((torch.randn(10, 3), torch.randn(5, 3)),
                                                              torch.tensor([[0, 1], [1, 2]]), size=(9, 5)),
}


@pytest.mark.parametrize("what", list(BAD_CALLS))
def test_pyg_errors_unchanged(what):
    torch.manual_seed(0)
    expected = _raised(BAD_CALLS[what])
    assert expected is not None, f"{what}: PyG accepts it"
    with ew_pyg.accelerated():
        torch.manual_seed(0)
        assert _raised(BAD_CALLS[what]) == expected


# --- patching: identity restored, idempotent, thread-safe, cache never stale -----------------------


def _patched_names():
    names = {}
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith("torch_geometric"):
            for attribute in ("scatter", "segment", "softmax", "spmm", "_spmm"):
                if attribute in vars(module):
                    names[(name, attribute)] = vars(module)[attribute]
    from torch_geometric.nn.conv import MessagePassing
    stack = [MessagePassing]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        for attribute in ("propagate", "_set_jittable_templates", "forward"):
            if attribute in cls.__dict__:
                names[(cls, attribute)] = cls.__dict__[attribute]
    return names


def test_deaccelerate_restores_every_name_by_identity():
    pyg_conv.GCNConv(4, 4)  # a generated propagate exists
    before = _patched_names()
    assert ew_pyg.accelerate() is True
    assert ew_pyg.accelerate() is True  # idempotent
    during = _patched_names()
    assert during[("torch_geometric.utils", "scatter")] is not before[("torch_geometric.utils", "scatter")]
    assert during[(pyg_conv.GCNConv, "propagate")] is not before[(pyg_conv.GCNConv, "propagate")]
    pyg_conv.TAGConv(4, 4)  # a class generated while active is wrapped too
    ew_pyg.deaccelerate()
    ew_pyg.deaccelerate()
    after = _patched_names()
    for key, value in before.items():
        assert after[key] is value, f"{key} not restored"
    for key, value in after.items():
        assert not hasattr(value, "__edgewise_original__"), f"{key} still wrapped"


def test_sage_linear_maps_are_fused_unless_hooked(monkeypatch):
    """SAGEConv's lin_l + lin_r run as addmm + addmm_ (no separate sum), except when a
    hook on either map must see the call."""
    data = _graph()
    conv = pyg_conv.SAGEConv(C, C_OUT).double()
    ref = conv(data["x"], data["edge_index"])
    calls = []
    real = torch.Tensor.addmm_
    monkeypatch.setattr(torch.Tensor, "addmm_", lambda *a, **k: calls.append(1) or real(*a, **k))
    with ew_pyg.accelerated():
        out = conv(data["x"], data["edge_index"])
        assert calls, "the root term was not added in place"
        _assert_close(out, ref, "fused SAGEConv")
        seen = []
        conv.lin_r.register_forward_hook(lambda module, args, output: seen.append(output.shape))
        calls.clear()
        hooked = conv(data["x"], data["edge_index"])
        assert seen == [torch.Size([N, C_OUT])] and not calls, "a hooked lin_r must run as a module"
        _assert_close(hooked, ref, "hooked SAGEConv")


def test_sage_fused_edge_cases_match_pyg():
    """No edges, no nodes, and shapes that do not chain (PyG's own error, unchanged)."""
    conv = pyg_conv.SAGEConv(C, C_OUT).double()
    empty_edges = torch.zeros(2, 0, dtype=torch.long)
    for x in (torch.randn(5, C, dtype=torch.float64), torch.randn(0, C, dtype=torch.float64)):
        ref = conv(x, empty_edges)
        with ew_pyg.accelerated():
            _assert_close(conv(x, empty_edges), ref, f"SAGEConv on {x.size(0)} nodes, no edges")
    bipartite = ((torch.randn(6, C, dtype=torch.float64), torch.randn(4, C + 1, dtype=torch.float64)),
                 torch.tensor([[0, 5], [1, 3]]))
    with pytest.raises(RuntimeError) as pyg_error:
        conv(*bipartite)
    with ew_pyg.accelerated(), pytest.raises(RuntimeError) as ours:
        conv(*bipartite)
    assert str(ours.value) == str(pyg_error.value)


@pytest.mark.parametrize("bias", [True, False])
def test_sage_rooted_linear_gradcheck(bias):
    from edgewise.torch.pyg._sage import _RootedLinear

    g = torch.Generator().manual_seed(5)
    args = [torch.randn(6, 3, generator=g, dtype=torch.float64, requires_grad=True),
            torch.randn(6, 4, generator=g, dtype=torch.float64, requires_grad=True),
            torch.randn(2, 3, generator=g, dtype=torch.float64, requires_grad=True),
            torch.randn(2, generator=g, dtype=torch.float64, requires_grad=True) if bias else None,
            torch.randn(2, 4, generator=g, dtype=torch.float64, requires_grad=True)]
    assert torch.autograd.gradcheck(_RootedLinear.apply, args)


def test_untested_version_changes_nothing(monkeypatch):
    monkeypatch.setattr(torch_geometric, "__version__", "1.0.0")
    before = _patched_names()
    with pytest.warns(UserWarning, match="not tested"):
        assert ew_pyg.accelerate() is False
    assert not ew_pyg.is_accelerated()
    assert _patched_names() == before


def test_accelerate_from_several_threads():
    before = _patched_names()
    errors = []

    def toggle(k):
        try:
            for _ in range(20):
                ew_pyg.accelerate()
                if k % 2:
                    ew_pyg.deaccelerate()
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=toggle, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ew_pyg.deaccelerate()
    after = _patched_names()
    assert all(after[k] is v for k, v in before.items())


def test_structure_cache_never_serves_another_graph():
    conv = pyg_conv.SAGEConv(C, C_OUT, aggr="sum").double()
    d = _graph()
    ei = d["edge_index"].clone()
    with ew_pyg.accelerated():
        first = conv(d["x"], ei)
        builds = _structure.cache_builds()
        again = conv(d["x"], ei.clone())  # equal contents, a new tensor: a hit
        assert _structure.cache_builds() == builds
        ei.data[1, 0] = (ei[1, 0] + 1) % (N - 4)  # bypasses the version counter
        changed = conv(d["x"], ei)
        assert _structure.cache_builds() == builds + 1
    torch.testing.assert_close(again, first)
    torch.testing.assert_close(changed, conv(d["x"], ei))


def test_compile_fullgraph_fused_layer():
    conv = pyg_conv.SAGEConv(C, C_OUT)
    d = _graph()
    x = d["x"].float()
    ref = conv(x, d["edge_index"])
    with ew_pyg.accelerated():
        compiled = torch.compile(conv, fullgraph=True, dynamic=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = compiled(x, d["edge_index"])
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)


def _fused_count(monkeypatch):
    taken = []
    original = _propagate._fused

    def counting(*args, **kwargs):
        result = original(*args, **kwargs)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(_propagate, "_fused", counting)
    return taken


@pytest.mark.parametrize("setup", ["message_hook", "propagate_hook", "decomposed_layers", "explain"])
def test_hooks_explain_and_decomposition_keep_pygs_path(monkeypatch, setup):
    d = _graph()
    torch.manual_seed(0)
    # GCNConv for decomposition (PyG's decomposition cannot split SAGEConv's (x, x) pair).
    conv = (pyg_conv.GCNConv if setup == "decomposed_layers" else pyg_conv.SAGEConv)(C, C_OUT).double()
    seen = []
    if setup == "message_hook":
        conv.register_message_forward_hook(lambda module, inputs, out: seen.append(out.shape) or out * 2)
    elif setup == "propagate_hook":
        conv.register_propagate_forward_pre_hook(lambda module, inputs: seen.append(1))
    elif setup == "decomposed_layers":
        conv.decomposed_layers = 2
    elif setup == "explain":
        conv.explain = True
        conv._edge_mask = torch.rand(d["edge_index"].size(1), dtype=torch.float64)
        conv._apply_sigmoid = False
    ref = conv(d["x"], d["edge_index"])
    taken = _fused_count(monkeypatch)
    calls_before = len(seen)
    with ew_pyg.accelerated():
        out = conv(d["x"], d["edge_index"])
    assert not any(taken), f"{setup}: the fused path ran"
    if setup in ("message_hook", "propagate_hook"):
        assert len(seen) > calls_before  # the hook ran under acceleration too
    torch.testing.assert_close(out, ref)


def test_weight_of_another_shape_falls_back(monkeypatch):
    """A weight [E, 1] (PyG's view(-1, 1) takes it) runs PyG's propagate."""
    d = _graph()
    conv = pyg_conv.GraphConv(C, C_OUT)
    taken = _fused_count(monkeypatch)
    x = d["x"].float()
    with ew_pyg.accelerated():
        conv(x, d["edge_index"], d["edge_weight"].float().unsqueeze(1))
    assert not any(taken)


@pytest.mark.parametrize("sparse_size", [None, (N, N)])
@pytest.mark.parametrize("layer", ["GCNConv", "SAGEConv"])
def test_edge_index_input_is_fused(monkeypatch, layer, sparse_size):
    d = _graph()
    torch.manual_seed(0)
    conv = getattr(pyg_conv, layer)(C, C_OUT).double()
    ei = torch_geometric.EdgeIndex(d["edge_index"], sparse_size=sparse_size)
    ref = conv(d["x"], ei)
    taken = _fused_count(monkeypatch)
    with ew_pyg.accelerated():
        out = conv(d["x"], ei)
    assert any(taken)
    torch.testing.assert_close(out, ref)


def test_example_script_runs_and_rejects_bad_flags():
    import os
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "pyg_accelerate.py"
    env = dict(os.environ)
    done = subprocess.run([sys.executable, str(script), "--epochs", "2", "--model", "sage"], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "accelerated: test accuracy" in done.stdout
    bad = subprocess.run([sys.executable, str(script), "--epochs", "0"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert bad.returncode != 0 and "--epochs must be positive" in bad.stderr


@pytest.mark.parametrize("reduce", ["sum", "mean", "min", "max"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_edge_index_matmul_matches_pyg(monkeypatch, reduce, transpose, weighted):
    g = torch.Generator().manual_seed(15)
    # Non-square: PyG's own unweighted transposed path fails on it (a shape error), so
    # transposes are compared on a square matrix.
    rows, cols = (29, 29) if transpose else (23, 31)
    data = torch.stack([torch.randint(0, rows - 2, (120,), generator=g), torch.randint(0, cols, (120,), generator=g)])
    ei = torch_geometric.EdgeIndex(data, sparse_size=(rows, cols))
    ei, perm = ei.sort_by("col" if transpose else "row")
    # float32: PyG's own unweighted path makes float32 ones whatever x's dtype
    x = torch.randn(rows if transpose else cols, 5, generator=g)
    value = torch.rand(120, generator=g)[perm] + 0.1 if weighted else None

    def run():
        xs = x.clone().requires_grad_()
        vs = None if value is None else value.clone().requires_grad_()
        out = ei.matmul(xs, vs, reduce=reduce, transpose=transpose)
        wrt = [xs] + ([vs] if vs is not None else [])
        return out.detach(), torch.autograd.grad(out.square().sum(), wrt)

    ref = run()
    calls = _count_spmm(monkeypatch)
    with ew_pyg.accelerated():
        got = run()
    assert calls
    torch.testing.assert_close(got[0], ref[0])
    for a, b in zip(got[1], ref[1]):
        torch.testing.assert_close(a, b)


def _count_spmm(monkeypatch):
    calls = []
    original = _functional._spmm_ops.spmm

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(_functional._spmm_ops, "spmm", counting)
    return calls


def test_edge_index_matmul_keeps_pygs_errors():
    data = torch.tensor([[2, 0, 1], [0, 1, 2]])
    ei = torch_geometric.EdgeIndex(data, sparse_size=(3, 3))  # not sorted
    x = torch.randn(3, 2)
    expected = _raised(lambda: ei.matmul(x))
    assert expected is not None
    with ew_pyg.accelerated():
        assert _raised(lambda: ei.matmul(x)) == expected
