"""Heterogeneous graphs as plain NumPy: a seeded generator shaped like ogbn-mag and the
``.npz`` layout that stores any heterogeneous graph (PyG's ``HeteroData``) one entry
per type. ``edgewise.torch.hetero`` converts both to and from PyG's ``HeteroData``.

A heterogeneous graph here is a dict::

    {"num_nodes":  {node_type: int},
     "x":          {node_type: float32 [n, F]}           (types with features),
     "y":          {node_type: int64 [n]}                (labelled types),
     "split":      {node_type: {"train"|"val"|"test": int64 node ids}},
     "edge_index": {(src_type, relation, dst_type): int64 [2, E]}}

The ``.npz`` layout (``save_hetero_npz`` / ``load_hetero_npz``): one array per entry,
named by kind and type, types separated by ``__`` (so a type name must not hold
``__`` or ``/``)::

    node/<type>/num_nodes        int64 scalar
    node/<type>/x                features [n, F]           (optional)
    node/<type>/y                labels [n]                (optional)
    node/<type>/<split>_index    node ids of a split      (optional; train, val, test)
    edge/<src>__<rel>__<dst>/edge_index   int64 [2, E]
"""

from typing import Dict, Optional, Tuple

import numpy as np

EdgeType = Tuple[str, str, str]

# ogbn-mag per paper: 1.54 authors, 0.012 institutions, 0.082 fields of study; 7.3
# citations, 9.7 author links (writes), 10.2 field links (has_topic) per paper, 0.94
# affiliations per author; 349 venues (the labels).
_MAG_SHAPE = {"author": 1.54, "institution": 0.012, "field_of_study": 0.082}
_MAG_DEGREE = {"cites": 7.3, "writes": 9.7, "has_topic": 10.2, "affiliated_with": 0.94}


def _skewed_pick(rng, count: int, size: int, skew: float) -> np.ndarray:
    """`size` draws from [0, count): index floor(count * u^skew), so low indices are
    popular (a power law of exponent 1 / skew on the degrees)."""
    if count <= 0:
        return np.zeros(size, dtype=np.int64)
    return np.minimum((count * rng.random(size) ** skew).astype(np.int64), count - 1)


def _members_of(community: np.ndarray, communities: int):
    """(nodes sorted by community, start of each community's run, run lengths)."""
    order = np.argsort(community, kind="stable")
    counts = np.bincount(community, minlength=communities)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return order, starts, counts


def _link(rng, src_community, dst_community, communities, per_src, homophily, skew):
    """Edges from every src node (Poisson(per_src) of them) to dst nodes: with
    probability `homophily` inside the src's community, else anywhere; popular dst
    nodes first (skew)."""
    degree = rng.poisson(per_src, src_community.size)
    src = np.repeat(np.arange(src_community.size, dtype=np.int64), degree)
    order, starts, counts = _members_of(dst_community, communities)
    local = rng.random(src.size) < homophily
    c = src_community[src]
    # Inside the community: a skewed pick among its members (communities without
    # members fall back to anywhere).
    inside = local & (counts[c] > 0)
    dst = np.empty(src.size, dtype=np.int64)
    cc = c[inside]
    u = rng.random(cc.size) ** skew
    dst[inside] = order[starts[cc] + np.minimum((counts[cc] * u).astype(np.int64), counts[cc] - 1)]
    dst[~inside] = _skewed_pick(rng, dst_community.size, int((~inside).sum()), skew)
    return np.stack([src, dst])


def mag_like_graph(papers: int = 20_000, *, classes: Optional[int] = None, features: int = 128,
                   homophily: float = 0.6, feature_noise: float = 4.0, seed: int = 0) -> Dict:
    """A synthetic heterogeneous graph shaped like ogbn-mag, learnable from structure.

    Node types paper, author, institution, field_of_study in ogbn-mag's proportions
    to ``papers``; edge types (paper, cites, paper), (author, writes, paper), (author,
    affiliated_with, institution), (paper, has_topic, field_of_study) at its mean
    degrees, with power-law in-degrees. Papers carry a label (the venue: ``classes``
    planted communities; default min(349, max(8, papers // 2000))); every node of
    every type belongs to a community, and each edge stays inside its source's
    community with probability ``homophily``. Features (all types, ``features`` wide):
    the community's random centroid plus Gaussian noise of scale ``feature_noise``, so
    features alone classify papers poorly and neighbours help. Split: 70 / 10 / 20
    percent of papers at random. Deterministic in ``seed``.
    """
    if papers < 1:
        raise ValueError(f"mag_like_graph: papers must be >= 1 (got {papers})")
    if features < 1:
        raise ValueError(f"mag_like_graph: features must be >= 1 (got {features})")
    if not 0.0 <= homophily <= 1.0:
        raise ValueError(f"mag_like_graph: homophily must be in [0, 1] (got {homophily})")
    if feature_noise < 0:
        raise ValueError(f"mag_like_graph: feature_noise must be >= 0 (got {feature_noise})")
    classes = min(349, max(8, papers // 2000)) if classes is None else int(classes)
    if classes < 2:
        raise ValueError(f"mag_like_graph: classes must be >= 2 (got {classes})")
    rng = np.random.default_rng(seed)
    num_nodes = {"paper": papers}
    num_nodes.update({t: max(1, int(round(papers * r))) for t, r in _MAG_SHAPE.items()})
    community = {t: rng.integers(0, classes, n) for t, n in num_nodes.items()}
    # Fewer authors per paper than ogbn-mag's 9.7 links would give if every link were a
    # new author: draw writes per author so the total matches.
    per_author = _MAG_DEGREE["writes"] * papers / num_nodes["author"]
    edge_index = {
        ("paper", "cites", "paper"): _link(rng, community["paper"], community["paper"], classes,
                                           _MAG_DEGREE["cites"], homophily, 2.0),
        ("author", "writes", "paper"): _link(rng, community["author"], community["paper"], classes, per_author,
                                             homophily, 1.5),
        ("author", "affiliated_with", "institution"): _link(rng, community["author"], community["institution"],
                                                            classes, _MAG_DEGREE["affiliated_with"], homophily, 2.5),
        ("paper", "has_topic", "field_of_study"): _link(rng, community["paper"], community["field_of_study"],
                                                        classes, _MAG_DEGREE["has_topic"], homophily, 3.0),
    }
    centroids = rng.normal(0.0, 1.0, (classes, features)).astype(np.float32)
    x = {}
    for t, c in community.items():
        noise = rng.standard_normal((c.size, features), dtype=np.float32)
        noise *= np.float32(feature_noise)
        noise += centroids[c]
        x[t] = noise
    perm = rng.permutation(papers)
    train_end, val_end = int(0.7 * papers), int(0.8 * papers)
    split = {"paper": {"train": np.sort(perm[:train_end]), "val": np.sort(perm[train_end:val_end]),
                       "test": np.sort(perm[val_end:])}}
    return {"num_nodes": num_nodes, "x": x, "y": {"paper": community["paper"].astype(np.int64)}, "split": split,
            "edge_index": edge_index, "num_classes": classes}


def _check_type_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not name or "__" in name or "/" in name:
        raise ValueError(f"save_hetero_npz: {what} {name!r} must be a non-empty string without '__' or '/'")


def save_hetero_npz(graph: Dict, path: str, compressed: bool = True) -> None:
    """Write a heterogeneous graph (the dict above) in the documented ``.npz`` layout."""
    arrays = {}
    for node_type, n in graph["num_nodes"].items():
        _check_type_name(node_type, "node type")
        arrays[f"node/{node_type}/num_nodes"] = np.asarray(n, dtype=np.int64)
    for kind in ("x", "y"):
        for node_type, values in graph.get(kind, {}).items():
            if node_type not in graph["num_nodes"]:
                raise ValueError(f"save_hetero_npz: {kind} of {node_type!r}, which is not in num_nodes")
            arrays[f"node/{node_type}/{kind}"] = np.asarray(values)
    for node_type, parts in graph.get("split", {}).items():
        for name, index in parts.items():
            arrays[f"node/{node_type}/{name}_index"] = np.asarray(index, dtype=np.int64)
    for edge_type, edge_index in graph["edge_index"].items():
        if not (isinstance(edge_type, tuple) and len(edge_type) == 3):
            raise ValueError(f"save_hetero_npz: edge type {edge_type!r} must be (src, relation, dst)")
        for name, what in zip(edge_type, ("source type", "relation", "destination type")):
            _check_type_name(name, what)
        arrays[f"edge/{'__'.join(edge_type)}/edge_index"] = np.asarray(edge_index, dtype=np.int64)
    (np.savez_compressed if compressed else np.savez)(path, **arrays)


def load_hetero_npz(path: str) -> Dict:
    """Read a heterogeneous graph written in the documented ``.npz`` layout. Every
    shape and index is checked; an error names the file and the key."""
    graph = {"num_nodes": {}, "x": {}, "y": {}, "split": {}, "edge_index": {}}
    with np.load(path, allow_pickle=False) as f:
        keys = list(f.keys())
        for key in keys:
            parts = key.split("/")
            if len(parts) != 3 or parts[0] not in ("node", "edge"):
                raise ValueError(f"load_hetero_npz: {path}: key {key!r} is not node/<type>/<field> or "
                                 f"edge/<src>__<rel>__<dst>/edge_index")
        for key in keys:
            kind, name, field = key.split("/")
            if kind == "node" and field == "num_nodes":
                value = f[key]
                if value.shape != () or not np.issubdtype(value.dtype, np.integer) or int(value) < 0:
                    raise ValueError(f"load_hetero_npz: {path}: {key} must be a non-negative integer scalar")
                graph["num_nodes"][name] = int(value)
        for key in keys:
            kind, name, field = key.split("/")
            value = f[key]
            if kind == "node":
                if field == "num_nodes":
                    continue
                if name not in graph["num_nodes"]:
                    raise ValueError(f"load_hetero_npz: {path}: {key} has no node/{name}/num_nodes")
                n = graph["num_nodes"][name]
                if field in ("x", "y"):
                    if value.ndim < 1 or value.shape[0] != n:
                        raise ValueError(f"load_hetero_npz: {path}: {key} must have {n} rows (got shape "
                                         f"{value.shape})")
                    graph[field][name] = value
                elif field.endswith("_index"):
                    if value.ndim != 1 or (value.size and (value.min() < 0 or value.max() >= n)):
                        raise ValueError(f"load_hetero_npz: {path}: {key} must be 1-D node ids in [0, {n})")
                    graph["split"].setdefault(name, {})[field[: -len("_index")]] = value.astype(np.int64)
                else:
                    raise ValueError(f"load_hetero_npz: {path}: unknown node field {key!r}")
            else:
                edge_type = tuple(name.split("__"))
                if field != "edge_index" or len(edge_type) != 3:
                    raise ValueError(f"load_hetero_npz: {path}: {key} must be edge/<src>__<rel>__<dst>/edge_index")
                if value.ndim != 2 or value.shape[0] != 2 or not np.issubdtype(value.dtype, np.integer):
                    raise ValueError(f"load_hetero_npz: {path}: {key} must be an integer [2, E] array (got "
                                     f"{value.dtype} {value.shape})")
                for row, node_type in ((0, edge_type[0]), (1, edge_type[2])):
                    if node_type not in graph["num_nodes"]:
                        raise ValueError(f"load_hetero_npz: {path}: {key} names node type {node_type!r}, which "
                                         f"has no node/{node_type}/num_nodes")
                    n = graph["num_nodes"][node_type]
                    if value.shape[1] and (value[row].min() < 0 or value[row].max() >= n):
                        raise ValueError(f"load_hetero_npz: {path}: {key} row {row} must hold {node_type} ids in "
                                         f"[0, {n})")
                graph["edge_index"][edge_type] = value.astype(np.int64)
    return graph


__all__ = ["load_hetero_npz", "mag_like_graph", "save_hetero_npz"]
