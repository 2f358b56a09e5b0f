"""Heterogeneous graphs between Edgewise's NumPy form (``edgewise.hetero``: the
ogbn-mag-shaped generator and the ``.npz`` layout) and PyG's ``HeteroData``.

    import edgewise.torch.hetero as H
    data = H.to_hetero_data(edgewise.hetero.mag_like_graph(100_000), add_reverse=True)
    H.save_hetero_data(data, "graph.npz"); data = H.load_hetero_data("graph.npz")
"""

from typing import Dict

import numpy as np
import torch

from ..hetero import load_hetero_npz, mag_like_graph, save_hetero_npz  # noqa: F401


def to_hetero_data(graph: Dict, add_reverse: bool = False):
    """A PyG ``HeteroData`` from the NumPy form: ``x``, ``y``, ``num_nodes`` and
    ``train_mask`` / ``val_mask`` / ``test_mask`` per node type, ``edge_index`` per
    edge type. ``add_reverse``: also (dst, "rev_" + relation, src) for every edge type
    between two different node types (PyG's ToUndirected naming), so every type
    receives messages."""
    from torch_geometric.data import HeteroData

    data = HeteroData()
    for node_type, n in graph["num_nodes"].items():
        data[node_type].num_nodes = int(n)
    for node_type, x in graph.get("x", {}).items():
        data[node_type].x = torch.from_numpy(np.ascontiguousarray(x))
    for node_type, y in graph.get("y", {}).items():
        data[node_type].y = torch.from_numpy(np.ascontiguousarray(y))
    for node_type, parts in graph.get("split", {}).items():
        n = graph["num_nodes"][node_type]
        for name, index in parts.items():
            mask = torch.zeros(n, dtype=torch.bool)
            mask[torch.from_numpy(np.asarray(index, dtype=np.int64))] = True
            data[node_type][f"{name}_mask"] = mask
    for (src, rel, dst), edge_index in graph["edge_index"].items():
        ei = torch.from_numpy(np.ascontiguousarray(edge_index, dtype=np.int64))
        data[src, rel, dst].edge_index = ei
        if add_reverse and src != dst:
            data[dst, f"rev_{rel}", src].edge_index = ei.flip(0).contiguous()
    return data


def from_hetero_data(data) -> Dict:
    """The NumPy form of a PyG ``HeteroData`` (x, y, *_mask and edge_index per type)."""
    graph = {"num_nodes": {}, "x": {}, "y": {}, "split": {}, "edge_index": {}}
    for node_type in data.node_types:
        store = data[node_type]
        graph["num_nodes"][node_type] = int(store.num_nodes)
        for kind in ("x", "y"):
            if kind in store:
                graph[kind][node_type] = store[kind].detach().cpu().numpy()
        for name in ("train", "val", "test"):
            if f"{name}_mask" in store:
                index = store[f"{name}_mask"].nonzero().view(-1)
                graph["split"].setdefault(node_type, {})[name] = index.cpu().numpy()
    for edge_type in data.edge_types:
        graph["edge_index"][edge_type] = data[edge_type].edge_index.detach().cpu().numpy()
    return graph


def save_hetero_data(data, path: str) -> None:
    """Write a PyG ``HeteroData`` in Edgewise's ``.npz`` layout (edgewise.hetero)."""
    save_hetero_npz(from_hetero_data(data), path)


def load_hetero_data(path: str, add_reverse: bool = False):
    """Read a ``.npz`` in Edgewise's layout as a PyG ``HeteroData``."""
    return to_hetero_data(load_hetero_npz(path), add_reverse=add_reverse)


__all__ = ["from_hetero_data", "load_hetero_data", "mag_like_graph", "save_hetero_data", "to_hetero_data"]
