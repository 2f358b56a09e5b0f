"""An independent reference of torch_scatter 2.1.2 for the tests: its CPU kernels
(csrc/cpu/scatter_cpu.cpp, segment_csr_cpu.cpp, segment_coo_cpu.cpp) transcribed as
element-by-element Python loops in float64 / int64, and its composite functions
(torch_scatter/composite/*.py) transcribed on top of them. Slow on purpose; small
shapes only. It shares no code with edgewise.torch.

Where edgewise documents a difference from torch_scatter the reference follows
edgewise (and says so): rows gather_csr does not cover are 0 (torch_scatter leaves
them uninitialised). Inputs with NaN or groups of only +-inf are tested separately,
since torch_scatter's min/max skip NaN and turn such groups into 0.
"""

import itertools

import numpy as np
import torch


def broadcast(src, other, dim):
    """torch_scatter.utils.broadcast."""
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    return src.expand(other.size())


def _as_numpy(t):
    return t.detach().to(torch.float64 if t.is_floating_point() else torch.int64).numpy().copy()


def _back(a, like):
    return torch.from_numpy(np.ascontiguousarray(a)).to(like.dtype)


def _mean_divide(total, count, floating, rounding):
    count = np.maximum(count, 1)
    if floating:
        return total / count
    return np.floor_divide(total, count) if rounding == "floor" else np.trunc(total / count).astype(np.int64)


def scatter(src, index, dim=-1, out=None, dim_size=None, reduce="sum"):
    """(out, arg) of torch_scatter's scatter_<reduce> (arg for min / max, else None)."""
    dim = dim % src.dim()
    idx = broadcast(index, src, dim).long().numpy()
    s = _as_numpy(src)
    floating = src.is_floating_point()
    shape = list(src.shape)
    if out is not None:
        shape[dim] = out.size(dim)
    elif dim_size is not None:
        shape[dim] = dim_size
    else:
        shape[dim] = int(index.max()) + 1 if index.numel() else 0
    init = {"sum": 0, "mean": 0, "mul": 1, "min": np.inf, "max": -np.inf}[reduce]
    if not floating and reduce in ("min", "max"):
        init = np.iinfo(np.int64).max if reduce == "min" else np.iinfo(np.int64).min
    o = _as_numpy(out) if out is not None else np.full(shape, init, dtype=s.dtype)
    arg = np.full(shape, src.size(dim), dtype=np.int64)
    count = np.zeros(shape, dtype=s.dtype)
    for i in itertools.product(*(range(n) for n in src.shape)):
        j = list(i)
        j[dim] = idx[i]
        j = tuple(j)
        v = s[i]
        if reduce in ("sum", "mean"):
            o[j] += v
            count[j] += 1
        elif reduce == "mul":
            o[j] *= v
        elif (reduce == "min" and v < o[j]) or (reduce == "max" and v > o[j]):
            o[j] = v
            arg[j] = i[dim]
    if reduce == "mean":  # torch_scatter's scatter_mean: (out + sum) / count, integers floor
        o = _mean_divide(o, count, floating, "floor")
    if out is None and reduce in ("min", "max"):
        o[arg == src.size(dim)] = 0
    return _back(o, src), (torch.from_numpy(arg) if reduce in ("min", "max") else None)


def segment_csr(src, indptr, out=None, reduce="sum"):
    """(out, arg) of torch_scatter's segment_<reduce>_csr."""
    dim = indptr.dim() - 1
    indptr = indptr.expand(tuple(src.shape[:dim]) + (indptr.size(-1),)).long().numpy()
    s = _as_numpy(src)
    floating = src.is_floating_point()
    S = indptr.shape[-1] - 1
    shape = list(src.shape)
    shape[dim] = S
    o = np.zeros(shape, dtype=s.dtype)
    arg = np.full(shape, src.size(dim), dtype=np.int64)
    for lead in itertools.product(*(range(n) for n in src.shape[:dim])):
        for seg in range(S):
            lo, hi = indptr[lead + (seg,)], indptr[lead + (seg + 1,)]
            for trail in itertools.product(*(range(n) for n in src.shape[dim + 1:])):
                vals = [s[lead + (e,) + trail] for e in range(lo, hi)]
                at = lead + (seg,) + trail
                if not vals:
                    continue
                if reduce == "sum":
                    o[at] = sum(vals)
                elif reduce == "mean":  # C++ division: integers truncate
                    o[at] = _mean_divide(np.array(sum(vals)), np.array(len(vals)), floating, "trunc")
                else:
                    best = 0
                    for k, v in enumerate(vals):
                        if (reduce == "min" and v < vals[best]) or (reduce == "max" and v > vals[best]):
                            best = k
                    o[at], arg[at] = vals[best], lo + best
    res = _back(o, src)
    if out is not None:
        out.copy_(res)
        res = out
    return res, (torch.from_numpy(arg) if reduce in ("min", "max") else None)


def segment_coo(src, index, out=None, dim_size=None, reduce="sum"):
    """(out, arg) of torch_scatter's segment_<reduce>_coo: scatter along index.dim() - 1
    with out's values as the start, integer means truncating."""
    dim = index.dim() - 1
    index = index.expand(tuple(src.shape[:dim + 1])).long()
    if out is None and dim_size is None:
        dim_size = int(index.select(dim, index.size(dim) - 1).max()) + 1 if index.numel() else 0
    full = index.reshape(tuple(index.shape) + (1,) * (src.dim() - index.dim())).expand(src.shape)
    if reduce != "mean":
        return scatter(src, full, dim, out, dim_size, reduce)
    total, _ = scatter(src, full, dim, out, dim_size, "sum")
    count, _ = scatter(torch.ones_like(src, dtype=torch.float64), full, dim, None, total.size(dim), "sum")
    t, c = _as_numpy(total), count.numpy()
    if src.is_floating_point():
        o = np.where(c > 0, t / np.maximum(c, 1), t)
    else:
        o = np.where(c > 0, np.trunc(t / np.maximum(c, 1)), t).astype(np.int64)
    return _back(o, src), None


def gather_csr(src, indptr, out_rows=None):
    dim = indptr.dim() - 1
    indptr = indptr.expand(tuple(src.shape[:dim]) + (indptr.size(-1),)).long().numpy()
    rows = int(indptr.reshape(-1)[-1]) if out_rows is None else out_rows
    s = _as_numpy(src)
    shape = list(src.shape)
    shape[dim] = rows
    o = np.zeros(shape, dtype=s.dtype)  # edgewise: uncovered rows are 0
    for lead in itertools.product(*(range(n) for n in src.shape[:dim])):
        for seg in range(indptr.shape[-1] - 1):
            for e in range(indptr[lead + (seg,)], indptr[lead + (seg + 1,)]):
                o[lead + (e,)] = s[lead + (seg,)]
    return _back(o, src)


def gather_coo(src, index):
    dim = index.dim() - 1
    index = index.expand(tuple(src.shape[:dim]) + (index.size(-1),)).long().numpy()
    s = _as_numpy(src)
    shape = list(src.shape)
    shape[dim] = index.shape[-1]
    o = np.zeros(shape, dtype=s.dtype)
    for lead in itertools.product(*(range(n) for n in src.shape[:dim])):
        for e in range(index.shape[-1]):
            o[lead + (e,)] = s[lead + (index[lead + (e,)],)]
    return _back(o, src)


# --- composites: torch_scatter/composite/*.py (2.1.2), on the loops above ------------------------


def _sum(src, index, dim, out=None, dim_size=None):
    return scatter(src, index, dim, out, dim_size, "sum")[0]


def scatter_std(src, index, dim=-1, out=None, dim_size=None, unbiased=True):
    if out is not None:
        dim_size = out.size(dim)
    if dim < 0:
        dim = src.dim() + dim
    count_dim = dim
    if index.dim() <= dim:
        count_dim = index.dim() - 1
    ones = torch.ones(index.size(), dtype=src.dtype)
    count = _sum(ones, index, count_dim, dim_size=dim_size)
    index = broadcast(index, src, dim)
    tmp = _sum(src, index, dim, dim_size=dim_size)
    count = broadcast(count, tmp, dim).clamp(1)
    mean = tmp.div(count)
    var = src - mean.gather(dim, index)
    var = var * var
    total = _sum(var, index, dim, out, dim_size)
    if out is not None:
        out.copy_(total)
    if unbiased:
        count = count.sub(1).clamp_(1)
    return total.div(count + 1e-6).sqrt()


def scatter_logsumexp(src, index, dim=-1, out=None, dim_size=None, eps=1e-12):
    index = broadcast(index, src, dim)
    if out is not None:
        dim_size = out.size(dim)
    elif dim_size is None:
        dim_size = int(index.max()) + 1
    size = list(src.size())
    size[dim] = dim_size
    max_value_per_index = torch.full(size, float("-inf"), dtype=src.dtype)
    max_value_per_index = scatter(src, index, dim, max_value_per_index, dim_size, "max")[0]
    max_per_src_element = max_value_per_index.gather(dim, index)
    recentered_score = src - max_per_src_element
    recentered_score.masked_fill_(torch.isnan(recentered_score), float("-inf"))
    start = None if out is None else (out - max_value_per_index).exp()
    sum_per_index = _sum(recentered_score.exp(), index, dim, start, dim_size)
    result = sum_per_index.add(eps).log().add(max_value_per_index)
    return result.nan_to_num(neginf=0.0)


def scatter_softmax(src, index, dim=-1, dim_size=None):
    index = broadcast(index, src, dim)
    max_value_per_index = scatter(src, index, dim, None, dim_size, "max")[0]
    recentered_scores_exp = (src - max_value_per_index.gather(dim, index)).exp()
    sum_per_index = _sum(recentered_scores_exp, index, dim, dim_size=dim_size)
    return recentered_scores_exp.div(sum_per_index.gather(dim, index))


def scatter_log_softmax(src, index, dim=-1, eps=1e-12, dim_size=None):
    index = broadcast(index, src, dim)
    max_value_per_index = scatter(src, index, dim, None, dim_size, "max")[0]
    recentered_scores = src - max_value_per_index.gather(dim, index)
    sum_per_index = _sum(recentered_scores.exp(), index, dim, dim_size=dim_size)
    return recentered_scores - sum_per_index.add(eps).log().gather(dim, index)
