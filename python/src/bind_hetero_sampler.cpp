// Python binding of HeteroHopSampler: typed hop-wise sampling in PyG's layout (what
// edgewise.torch.loader.NeighborLoader calls on HeteroData).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "array_interop.hpp"
#include "edgewise/gnn/sampling/hetero_hop_sampler.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

using gnn::HeteroHopSampler;
using gnn::HeteroHopSamplerScratch;
using gnn::HeteroRelation;
using gnn::HeteroSampledSubgraph;

constexpr const char* kOp = "HeteroHopSampler";

// The sampler and a pool of scratches (each holds an id table per node type, sized to
// the graph: made once per thread that samples, not once per batch).
struct PyHeteroHopSampler {
  std::unique_ptr<HeteroHopSampler> sampler;
  std::mutex pool_mutex;
  std::vector<std::unique_ptr<HeteroHopSamplerScratch>> pool;

  std::unique_ptr<HeteroHopSamplerScratch> take() {
    std::lock_guard<std::mutex> lock(pool_mutex);
    if (pool.empty()) return std::make_unique<HeteroHopSamplerScratch>();
    auto s = std::move(pool.back());
    pool.pop_back();
    return s;
  }
  void give(std::unique_ptr<HeteroHopSamplerScratch> s) {
    std::lock_guard<std::mutex> lock(pool_mutex);
    pool.push_back(std::move(s));
  }
};

HeteroRelation relation_of(const py::tuple& entry, size_t r, const std::vector<int64_t>& num_nodes) {
  const std::string where = "relations[" + std::to_string(r) + "]";
  EW_REQUIRE(entry.size() == 4, kOp, ": ", where, " must be (name, src_type, dst_type, edge_index)");
  const auto name = entry[0].cast<std::string>();
  const auto src_type = entry[1].cast<int64_t>(), dst_type = entry[2].cast<int64_t>();
  const auto T = static_cast<int64_t>(num_nodes.size());
  EW_REQUIRE(src_type >= 0 && src_type < T && dst_type >= 0 && dst_type < T, kOp, ": ", name, ": node types ",
             src_type, " -> ", dst_type, " outside the ", T, " node types");
  const std::string index_name = name + ": edge_index";
  auto edge_index = as_int64(as_numpy(entry[3], kOp, index_name.c_str()), kOp, index_name.c_str());
  EW_REQUIRE(edge_index.ndim() == 2 && edge_index.shape(0) == 2, kOp, ": ", index_name, " must be [2, E]");
  const int64_t E = edge_index.shape(1);
  const int64_t* data = edge_index.data();
  py::gil_scoped_release release;
  return HeteroRelation::from_coo(name, src_type, dst_type, {data, static_cast<size_t>(E)},
                                  {data + E, static_cast<size_t>(E)}, num_nodes[src_type], num_nodes[dst_type]);
}

py::list capsules(std::vector<std::vector<int64_t>>& lists) {
  py::list out;
  for (auto& v : lists) out.append(int64_capsule(std::move(v)));
  return out;
}

}  // namespace

void register_hetero_sampler(py::module_& m) {
  py::class_<PyHeteroHopSampler>(m, "HeteroHopSampler",
                                 R"doc(Hop-wise sampling of a typed graph (pyg-lib's hetero_neighbor_sample).

HeteroHopSampler(num_nodes, relations, num_neighbors, replace=False): num_nodes per
node type; relations a list of (name, src_type, dst_type, edge_index [2, E]) with
node types as indices into num_nodes; num_neighbors one list per relation, the same
number of hops for each (-1: all). sample(seeds, seed=0, stream=0) -> dict: node (one
DLPack capsule per node type: global ids, seeds first), row / col / edge (per relation:
local source, local destination, input edge position), num_sampled_nodes (per node
type, hops + 1 counts), num_sampled_edges (per relation, hops counts). seeds: one
array (or None) per node type. A pure function of its arguments.)doc")
      .def(py::init([](std::vector<int64_t> num_nodes, const py::list& relations,
                       std::vector<std::vector<int64_t>> num_neighbors, bool replace) {
             std::vector<HeteroRelation> built;
             for (size_t r = 0; r < relations.size(); ++r) {
               built.push_back(relation_of(relations[r].cast<py::tuple>(), r, num_nodes));
             }
             auto s = std::make_unique<PyHeteroHopSampler>();
             py::gil_scoped_release release;
             s->sampler = std::make_unique<HeteroHopSampler>(std::move(num_nodes), std::move(built),
                                                             std::move(num_neighbors), replace);
             return s;
           }),
           py::arg("num_nodes"), py::arg("relations"), py::arg("num_neighbors"), py::arg("replace") = false)
      .def_property_readonly("num_hops", [](const PyHeteroHopSampler& s) { return s.sampler->num_hops(); })
      .def(
          "sample",
          [](PyHeteroHopSampler& s, const py::list& seeds_in, uint64_t seed, uint64_t stream) {
            std::vector<py::array_t<int64_t, py::array::c_style>> arrays;
            std::vector<std::span<const int64_t>> seeds;
            for (size_t t = 0; t < seeds_in.size(); ++t) {
              if (seeds_in[t].is_none()) {
                seeds.emplace_back();
                continue;
              }
              const std::string name = "seeds[" + std::to_string(t) + "]";
              arrays.push_back(as_int64_vector(as_numpy(seeds_in[t], kOp, name.c_str()), kOp, name.c_str()));
              seeds.emplace_back(arrays.back().data(), static_cast<size_t>(arrays.back().size()));
            }
            HeteroSampledSubgraph out;
            {
              py::gil_scoped_release release;
              auto scratch = s.take();
              out = s.sampler->sample(seeds, seed, stream, *scratch);  // throws before touching the scratch
              s.give(std::move(scratch));
            }
            py::dict d;
            d["num_sampled_nodes"] = out.num_sampled_nodes;
            d["num_sampled_edges"] = out.num_sampled_edges;
            d["node"] = capsules(out.node);
            d["row"] = capsules(out.row);
            d["col"] = capsules(out.col);
            d["edge"] = capsules(out.edge);
            return d;
          },
          py::arg("seeds"), py::arg("seed") = 0, py::arg("stream") = 0);
}

}  // namespace edgewise::python
