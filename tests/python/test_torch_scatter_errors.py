"""Bad input to edgewise.torch is a clear error naming the function and the argument,
raised before anything is written (a caller's out keeps its contents): the rows of
issue 25's probe of the torch ops and layers, and issue 27's wrong shapes,
out-of-range indices and mismatched devices."""

import pytest

torch = pytest.importorskip("torch")
ts = pytest.importorskip("edgewise.torch")
from edgewise.torch import nn as ewnn  # noqa: E402

SRC = torch.arange(12.0).view(4, 3)
INDEX = torch.tensor([0, 1, 0, 2])
INDPTR = torch.tensor([0, 2, 4])
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 2]])


def raises(kind, *needles):
    """pytest.raises matching every needle (regex-escaped) in the message."""
    import re

    return pytest.raises(kind, match="".join(f"(?=.*{re.escape(n)})" for n in needles))


# --- index dtype: integers only, never truncated ----------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bool])
def test_float_and_bool_indices_are_refused(dtype):
    with raises(ValueError, "scatter", "index", "integer"):
        ts.scatter(SRC, INDEX.to(dtype), 0)
    with raises(ValueError, "segment_csr", "indptr", "integer"):
        ts.segment_csr(SRC, INDPTR.to(dtype))
    with raises(ValueError, "segment_coo", "index", "integer"):
        ts.segment_coo(SRC, INDEX.sort().values.to(dtype))
    with raises(ValueError, "gather_coo", "index", "integer"):
        ts.gather_coo(SRC, INDEX.to(dtype))
    with raises(ValueError, "spmm", "edge_index", "integer"):
        ts.spmm(EDGE_INDEX.to(dtype), SRC)
    with raises(ValueError, "CSR.from_edge_index", "edge_index", "integer"):
        ts.CSR.from_edge_index(EDGE_INDEX.to(dtype), 4)


def test_other_integer_index_dtypes_are_widened_not_refused():
    torch.testing.assert_close(ts.scatter(SRC, INDEX.to(torch.uint8), 0), ts.scatter(SRC, INDEX, 0))


# --- dim out of range: IndexError, as torch -----------------------------------------------------------


@pytest.mark.parametrize("dim", [5, -3, 2])
def test_dim_out_of_range_is_an_index_error_as_torch(dim):
    with raises(IndexError, "scatter", "Dimension out of range", f"got {dim}"):
        ts.scatter(SRC, INDEX, dim=dim)
    with pytest.raises(IndexError):
        SRC.sum(dim)  # torch's own rule
    with raises(ValueError, "scatter_max", "dim must be an int"):
        ts.scatter_max(SRC, INDEX, dim=0.5)


# --- edge_weight length (spmm and layers) -------------------------------------------------------------


@pytest.mark.parametrize("length", [7, 3])
def test_edge_weight_length_must_match_the_edges(length):
    x = torch.randn(4, 3)
    with raises(ValueError, "spmm", "edge_weight", "E = 5"):
        ts.spmm(EDGE_INDEX, x, torch.ones(length))
    for layer in (ewnn.GCNConv(3, 2), ewnn.SAGEConv(3, 2), ewnn.GINConv(torch.nn.Linear(3, 2))):
        with raises(ValueError, type(layer).__name__, "edge_weight", "E = 5"):
            layer(x, EDGE_INDEX, torch.ones(length))


# --- out=: exact shape and dtype, untouched when refused ----------------------------------------------


def test_out_of_the_wrong_shape_or_dtype_is_refused_and_left_untouched():
    cases = [
        (lambda o: ts.scatter(SRC, INDEX, 0, out=o), torch.full((3, 1), 7.0)),  # broadcastable: still wrong
        (lambda o: ts.scatter(SRC, INDEX, 0, out=o), torch.full((3, 3), 7.0, dtype=torch.float64)),
        (lambda o: ts.scatter_max(SRC, INDEX, 0, out=o), torch.full((3, 1), 7.0)),
        (lambda o: ts.segment_csr(SRC, INDPTR, out=o), torch.full((2, 3), 7, dtype=torch.int64)),
        (lambda o: ts.segment_coo(SRC, INDEX.sort().values, out=o), torch.full((3, 4), 7.0)),
        (lambda o: ts.gather_coo(SRC, INDEX, out=o), torch.full((4, 3), 7.0, dtype=torch.float16)),
        (lambda o: ts.scatter_logsumexp(SRC, INDEX, 0, out=o), torch.full((3,), 7.0)),
        (lambda o: ts.scatter(SRC, INDEX, 0, out=o, dim_size=5), torch.full((3, 3), 7.0)),  # dim_size != out's
    ]
    for call, out in cases:
        before = out.clone()
        with pytest.raises(ValueError, match="out|dim_size"):
            call(out)
        assert torch.equal(out, before), "a refused call must not write out"


def test_out_of_range_index_leaves_out_untouched():
    out = torch.full((3, 3), 7.0)
    for index in (torch.tensor([0, 1, 5, 2]), torch.tensor([0, -1, 0, 2])):
        with raises(ValueError, "scatter", "index", "[0, 3)"):
            ts.scatter(SRC, index, 0, out=out)
        assert bool((out == 7).all())
    with raises(ValueError, "segment_coo", "sorted"):
        ts.segment_coo(SRC, torch.tensor([0, 2, 1, 2]), out=out)
    assert bool((out == 7).all())
    # 16-bit values take the scatter kernel, which checks the order itself; dim=-1 too
    half_out = out.to(torch.bfloat16)
    for src in (SRC.to(torch.bfloat16), SRC.to(torch.float16)):
        with raises(ValueError, "segment_coo", "sorted"):
            ts.segment_coo(src, torch.tensor([0, 2, 1, 2]), out=half_out.to(src.dtype))
        with raises(ValueError, "segment_coo", "sorted"):
            ts.segment_coo(src.t().contiguous(), torch.tensor([[0, 2, 1, 2]]), dim_size=3)


# --- zero columns: the index is still checked ---------------------------------------------------------


def test_zero_columns_still_check_the_index():
    with raises(ValueError, "scatter", "index", "-7"):
        ts.scatter(torch.empty(4, 0), torch.tensor([0, -7, 99, 1]), 0, dim_size=4)
    with raises(ValueError, "scatter", "index", "99"):
        ts.scatter(torch.empty(4, 0), torch.tensor([0, 7, 99, 1]), 0, dim_size=4)
    with raises(ValueError, "segment_csr", "indptr"):
        ts.segment_csr(torch.empty(4, 0), torch.tensor([0, 9]))


# --- dtypes and devices an op does not take ------------------------------------------------------------


def test_unsupported_dtype_or_device_names_op_and_argument():
    with raises(ValueError, "scatter", "src", "float16, bfloat16", "complex64"):
        ts.scatter(torch.ones(4, 2, dtype=torch.complex64), INDEX, 0)
    with raises(ValueError, "scatter", "src", "int8"):
        ts.scatter(torch.ones(4, 2, dtype=torch.int8), INDEX, 0)
    with raises(ValueError, "scatter", "src", "meta"):
        ts.scatter(torch.ones(4, 2, device="meta"), INDEX, 0)
    with raises(ValueError, "scatter", "index", "meta"):
        ts.scatter(SRC, INDEX.to("meta"), 0)
    with raises(ValueError, "spmm", "x", "float32 or float64", "bfloat16"):
        ts.spmm(EDGE_INDEX, torch.ones(4, 3, dtype=torch.bfloat16))
    with raises(ValueError, "scatter_softmax", "floating point"):
        ts.scatter_softmax(torch.ones(4, dtype=torch.int64), INDEX)
    x = torch.ones(4, 3)
    for layer in (ewnn.GCNConv(3, 2), ewnn.SAGEConv(3, 2, aggr="max"), ewnn.GATConv(3, 2)):
        name = type(layer).__name__
        with raises(ValueError, name, "x", "bfloat16"):
            layer(x.to(torch.bfloat16), EDGE_INDEX)
        with raises(ValueError, name, "x", "meta"):
            layer(x.to("meta"), EDGE_INDEX)
    assert ts.scatter(SRC.to(torch.bfloat16), INDEX, 0).dtype == torch.bfloat16, "bfloat16 reduces (issue 27)"


# --- sizes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dim_size, needle", [(2**40, "more than"), (2**64, "2^63"), (3.7, "must be an int"),
                                              (-1, "[0, 2^63)"), (True, "must be an int")])
def test_sizes_that_cannot_be_are_clear_errors(dim_size, needle):
    with raises(ValueError, "scatter", "dim_size", needle):
        ts.scatter(SRC, INDEX, 0, dim_size=dim_size)
    with raises(ValueError, "segment_coo", "dim_size", needle):
        ts.segment_coo(SRC, INDEX.sort().values, dim_size=dim_size)


def test_num_nodes_must_be_an_int():
    with raises(ValueError, "CSR.from_edge_index", "num_nodes", "must be an int", "4.9"):
        ts.CSR.from_edge_index(EDGE_INDEX, 4.9)
    with raises(ValueError, "CSR.from_edge_index", "num_nodes", "more than"):
        ts.CSR.from_edge_index(EDGE_INDEX, 2**62)
    with raises(ValueError, "spmm", "num_nodes"):
        ts.spmm(EDGE_INDEX, torch.ones(4, 2), num_nodes=4.9)


def test_a_huge_index_value_names_where_the_size_came_from():
    with raises(ValueError, "scatter", "index.max() + 1"):
        ts.scatter(SRC, torch.tensor([0, 1, 2**42, 2]), 0)


# --- 0-d and non-tensor inputs -------------------------------------------------------------------------


def test_zero_dimensional_and_non_tensor_inputs():
    with raises(ValueError, "scatter", "index", "at least 1 dimension", "0-D"):
        ts.scatter(SRC, torch.tensor(0))
    with raises(ValueError, "scatter", "src", "at least 1 dimension"):
        ts.scatter(torch.tensor(1.0), torch.tensor([0]))
    with raises(ValueError, "scatter", "src", "torch.Tensor", "list"):
        ts.scatter([1.0, 2.0], torch.tensor([0, 1]))
    with raises(ValueError, "segment_csr", "indptr", "torch.Tensor"):
        ts.segment_csr(SRC, [0, 4])
    with raises(ValueError, "scatter_std", "src", "torch.Tensor"):
        ts.scatter_std((1.0, 2.0), INDEX)


# --- shapes (issue 27) -----------------------------------------------------------------------------------


def test_shapes_that_do_not_broadcast_name_the_argument():
    with raises(ValueError, "scatter", "index", "does not broadcast"):
        ts.scatter(SRC, torch.tensor([0, 1, 0]), 0)  # 3 entries along a dim of 4
    with raises(ValueError, "scatter", "index", "does not broadcast"):
        ts.scatter(SRC, torch.zeros(4, 2, dtype=torch.int64), 0)
    with raises(ValueError, "scatter", "index", "3 dimensions"):
        ts.scatter(SRC, torch.zeros(4, 3, 1, dtype=torch.int64), 0)
    with raises(ValueError, "segment_csr", "indptr", "does not broadcast"):
        ts.segment_csr(torch.ones(3, 4, 2), torch.tensor([[0, 4], [0, 4]]))
    with raises(ValueError, "segment_csr", "indptr", "nondecreasing"):
        ts.segment_csr(SRC, torch.tensor([0, 3, 1, 4]))
    with raises(ValueError, "segment_csr", "indptr", "outside [0, 4]"):
        ts.segment_csr(SRC, torch.tensor([0, 5]))
    with raises(ValueError, "segment_csr", "indptr", "at least one entry"):
        ts.segment_csr(SRC, torch.zeros(0, dtype=torch.int64))
    with raises(ValueError, "gather_csr", "src", "segments"):
        ts.gather_csr(SRC, torch.tensor([0, 1, 2]))
    with raises(ValueError, "gather_coo", "index", "outside [0, 4)"):
        ts.gather_coo(SRC, torch.tensor([0, 4]))
    with raises(ValueError, "reduce"):
        ts.scatter(SRC, INDEX, 0, reduce="median")
