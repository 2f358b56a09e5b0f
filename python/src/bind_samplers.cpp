// Python binding of the samplers: NeighborSampler and LayerwiseSampler (minibatches
// as dicts of NumPy arrays) and SeedSampler (prioritised seed batches).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "edgewise/gnn/sampling/layerwise_sampler.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

template <class T>
py::array_t<T> numpy_of(const std::vector<T>& v) {
  py::array_t<T> out = new_array<T>({static_cast<py::ssize_t>(v.size())});
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

py::dict minibatch_dict(const gnn::MiniBatch& mb) {
  py::list blocks;
  for (const gnn::Block& b : mb.blocks) {
    py::dict d;
    d["num_src"] = b.num_src;
    d["num_dst"] = b.num_dst;
    d["src_nodes"] = numpy_of(b.src_nodes.to_host_vector());
    d["offsets"] = numpy_of(b.graph.offsets().to_host_vector());
    d["sources"] = numpy_of(b.graph.sources().to_host_vector());
    d["edge_ids"] = numpy_of(b.edge_ids.to_host_vector());
    d["weights"] = b.graph.has_edge_weight() ? py::object(numpy_of(b.graph.edge_weight().to_host_vector()))
                                             : py::object(py::none());
    d["graph"] = b.graph;
    blocks.append(d);
  }
  py::dict out;
  out["blocks"] = blocks;
  out["input_nodes"] = numpy_of(mb.input_nodes.to_host_vector());
  out["seed_nodes"] = numpy_of(mb.seed_nodes.to_host_vector());
  return out;
}

// A sampler with the Generator it advances on every call (a Python object owns both).
template <class Sampler>
struct WithGenerator {
  Sampler sampler;
  gnn::Generator generator;
  py::dict sample(const py::object& seeds_in) {
    auto seeds = as_int64_vector(as_numpy(seeds_in, "sample", "seed_nodes"), "sample", "seed_nodes");
    std::span<const int64_t> view(seeds.data(), static_cast<size_t>(seeds.size()));
    gnn::MiniBatch mb;
    {
      py::gil_scoped_release release;
      mb = sampler.sample(view, generator);
    }
    return minibatch_dict(mb);
  }
};

using PyNeighborSampler = WithGenerator<gnn::NeighborSampler>;
using PyLayerwiseSampler = WithGenerator<gnn::LayerwiseSampler>;

constexpr const char* kMiniBatchDoc = R"doc(A minibatch as a dict: 'blocks' (outermost first), 'input_nodes'
(global ids whose features layer 0 reads) and 'seed_nodes'. Each block is a dict:
num_src, num_dst, src_nodes [num_src] global ids (the first num_dst are the
destinations), offsets [num_src + 1] and sources [E] (local ids) — the CSR by local
destination —, edge_ids [E] (CSR positions in the sampled-from graph), weights [E]
or None, and graph (an edgewise.Graph over the local ids).)doc";

}  // namespace

void register_samplers(py::module_& m) {
  py::class_<PyNeighborSampler>(m, "NeighborSampler", R"doc(GraphSAGE neighbour sampling (DGL blocks).

NeighborSampler(graph, fanouts, seed=0): fanouts[l] in-neighbours per destination of
block l (outermost first; the last entry samples the seeds' neighbours; -1 = all),
uniformly without replacement. Every sample() call advances a Generator(seed), so a
sequence of calls is reproducible.)doc")
      .def(py::init([](const gnn::Graph& graph, std::vector<int64_t> fanouts, uint64_t seed) {
             return PyNeighborSampler{gnn::NeighborSampler(graph, std::move(fanouts)), gnn::Generator(seed)};
           }),
           py::arg("graph"), py::arg("fanouts"), py::arg("seed") = 0)
      .def_property_readonly("fanouts", [](const PyNeighborSampler& s) { return s.sampler.fanouts(); },
                             "The fanouts per block, outermost first (-1: all in-neighbours).")
      .def("sample", &PyNeighborSampler::sample, py::arg("seed_nodes"),
           (std::string("sample(seed_nodes): distinct node ids -> minibatch.\n\n") + kMiniBatchDoc).c_str());

  py::class_<PyLayerwiseSampler>(m, "LayerwiseSampler", R"doc(Layer-wise importance sampling (FastGCN / LADIES).

LayerwiseSampler(graph, layer_sizes, scheme='ladies', row_normalize=True,
add_self_loops=True, seed=0): layer_sizes[l] nodes drawn per block (outermost first;
a size above the node count is clamped to it)
with probability from the squared column norms of D^-1/2 (A + I) D^-1/2; block edges
carry importance weights (row-normalised unless row_normalize=False, then unbiased).)doc")
      .def(py::init([](const gnn::Graph& graph, std::vector<int64_t> sizes, const std::string& scheme,
                       bool row_normalize, bool add_self_loops, uint64_t seed) {
             gnn::LayerwiseSamplerOptions o;
             EW_REQUIRE(scheme == "ladies" || scheme == "fastgcn", "LayerwiseSampler: scheme '", scheme,
                        "' must be 'ladies' or 'fastgcn'");
             o.scheme = scheme == "ladies" ? gnn::LayerwiseScheme::LADIES : gnn::LayerwiseScheme::FastGCN;
             o.row_normalize = row_normalize;
             o.add_self_loops = add_self_loops;
             return PyLayerwiseSampler{gnn::LayerwiseSampler(graph, std::move(sizes), o), gnn::Generator(seed)};
           }),
           py::arg("graph"), py::arg("layer_sizes"), py::arg("scheme") = "ladies", py::arg("row_normalize") = true,
           py::arg("add_self_loops") = true, py::arg("seed") = 0)
      .def("sample", &PyLayerwiseSampler::sample, py::arg("seed_nodes"),
           (std::string("sample(seed_nodes): distinct node ids -> minibatch.\n\n") + kMiniBatchDoc).c_str());

  py::class_<gnn::SeedSampler>(m, "SeedSampler", R"doc(Seed nodes drawn in proportion to updatable priorities.

SeedSampler(priorities, stratified=True): priorities [N] (1-D), finite, >= 0 (0 =
never drawn), held as float32 (a positive float64 that float32 would round to 0 is
refused). sample(batch_size, seed) -> dict(nodes, counts, weights, draws): nodes
distinct ascending, weights counts / (B * P * p) so that sum(weights * f[nodes]) is an
unbiased estimate of the population mean of f. update_priorities(nodes, values).)doc")
      .def(py::init([](const py::object& priorities, bool stratified) {
             auto p = as_nonnegative_float32_vector(as_numpy(priorities, "SeedSampler", "priorities"), "SeedSampler",
                                                    "priorities");
             gnn::SeedSamplerOptions o;
             o.stratified = stratified;
             return gnn::SeedSampler(std::span<const float>(p.data(), static_cast<size_t>(p.size())), o);
           }),
           py::arg("priorities"), py::arg("stratified") = true)
      .def("sample",
           [](const gnn::SeedSampler& s, int64_t batch_size, uint64_t seed) {
             const gnn::SeedBatch b = s.sample(batch_size, seed);
             py::dict d;
             d["nodes"] = numpy_of(b.nodes);
             d["counts"] = numpy_of(b.counts);
             d["weights"] = numpy_of(b.weights);
             d["draws"] = numpy_of(b.draws);
             return d;
           },
           py::arg("batch_size"), py::arg("seed") = 0,
           R"doc(Draw batch_size seeds with replacement, node i with probability priority_i / total.

batch_size lies in [0, population]. A pure function of (priorities, batch_size, seed).
Returns a dict: nodes [U] (distinct, ascending), counts [U] (draws per node),
weights [U] (counts / (B * P * p_i), float32) and draws [B] (in draw order).)doc")
      .def("update_priorities",
           [](gnn::SeedSampler& s, const py::object& nodes_in, const py::object& values_in) {
             constexpr const char* kUpdate = "SeedSampler.update_priorities";
             auto nodes = as_int64_vector(as_numpy(nodes_in, kUpdate, "nodes"), kUpdate, "nodes");
             auto values = as_nonnegative_float32_vector(as_numpy(values_in, kUpdate, "values"), kUpdate, "values");
             s.update_priorities(std::span<const int64_t>(nodes.data(), static_cast<size_t>(nodes.size())),
                                 std::span<const float>(values.data(), static_cast<size_t>(values.size())));
           },
           py::arg("nodes"), py::arg("values"),
           "Set priority[nodes[k]] = values[k] (finite, >= 0; a repeated node takes its last value). "
           "Bad input raises ValueError and leaves the sampler unchanged.")
      .def_property_readonly("population", &gnn::SeedSampler::population, "Number of nodes with priority > 0 (P).")
      .def_property_readonly("priorities", [](const gnn::SeedSampler& s) { return numpy_of(s.priorities()); },
                             "The current priorities [N] (float32, a copy).")
      .def_property_readonly("total", &gnn::SeedSampler::total, "The sum of the priorities (float32).");
}

}  // namespace edgewise::python
