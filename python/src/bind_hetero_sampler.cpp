// Python binding of HeteroHopSampler: typed hop-wise sampling in PyG's layout (what
// edgewise.torch.loader.NeighborLoader calls on HeteroData).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "array_interop.hpp"
#include "edgewise/gnn/sampling/hetero_hop_sampler.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

using gnn::HeteroHopSampler;
using gnn::HeteroHopSamplerOptions;
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

// An optional 1-D array as a vector (None: empty).
template <class T>
std::vector<T> optional_vector(const py::object& value, const std::string& name) {
  if (value.is_none()) return {};
  const py::array array = as_numpy(value, kOp, name.c_str());
  EW_REQUIRE(array.ndim() == 1, kOp, ": ", name, " must be 1-D (got ", array.ndim(), "-D)");
  if constexpr (std::is_same_v<T, double>) {
    EW_REQUIRE(array.dtype().kind() == 'f' || array.size() == 0, kOp, ": ", name,
               " must be a floating-point array (got dtype ", dtype_name(array), ")");
    auto a = as_contiguous<double>(array);
    return {a.data(), a.data() + a.size()};
  } else {
    auto a = as_int64(array, kOp, name.c_str());
    return {a.data(), a.data() + a.size()};
  }
}

// (name, src_type, dst_type, edge_index [2, E][, edge_weight [E] | None[, edge_time [E] | None]])
HeteroRelation relation_of(const py::tuple& entry, size_t r, const std::vector<int64_t>& num_nodes) {
  const std::string where = "relations[" + std::to_string(r) + "]";
  EW_REQUIRE(entry.size() >= 4 && entry.size() <= 6, kOp, ": ", where,
             " must be (name, src_type, dst_type, edge_index[, edge_weight[, edge_time]])");
  const auto name = entry[0].cast<std::string>();
  const auto src_type = entry[1].cast<int64_t>(), dst_type = entry[2].cast<int64_t>();
  const auto T = static_cast<int64_t>(num_nodes.size());
  EW_REQUIRE(src_type >= 0 && src_type < T && dst_type >= 0 && dst_type < T, kOp, ": ", name, ": node types ",
             src_type, " -> ", dst_type, " outside the ", T, " node types");
  const std::string index_name = name + ": edge_index";
  auto edge_index = as_int64(as_numpy(entry[3], kOp, index_name.c_str()), kOp, index_name.c_str());
  EW_REQUIRE(edge_index.ndim() == 2 && edge_index.shape(0) == 2, kOp, ": ", index_name, " must be [2, E]");
  const std::vector<double> weight =
      entry.size() > 4 ? optional_vector<double>(entry[4], name + ": edge_weight") : std::vector<double>{};
  const std::vector<int64_t> time =
      entry.size() > 5 ? optional_vector<int64_t>(entry[5], name + ": edge_time") : std::vector<int64_t>{};
  const int64_t E = edge_index.shape(1);
  const int64_t* data = edge_index.data();
  py::gil_scoped_release release;
  return HeteroRelation::from_coo(name, src_type, dst_type, {data, static_cast<size_t>(E)},
                                  {data + E, static_cast<size_t>(E)}, num_nodes[src_type], num_nodes[dst_type], weight,
                                  time);
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

HeteroHopSampler(num_nodes, relations, num_neighbors, replace=False, disjoint=False,
temporal_strategy="uniform", node_time=None, directed=True): num_nodes per node type; relations a
list of (name, src_type, dst_type, edge_index [2, E][, edge_weight [E] | None[,
edge_time [E] | None]]) with node types as indices into num_nodes; num_neighbors one
list per relation, the same number of hops for each (-1: all); node_time None or one
array (or None) per node type. Temporal sampling (any time) needs disjoint; "last"
sorts each destination's in-edges by time first. directed=False: the nodes drawn as
usual, and every edge among them (PyG's "induced"; not with disjoint).
sample(seeds, seed=0, stream=0, seed_time=None) -> dict: node (one DLPack capsule per
node type: global ids, seeds first), batch (disjoint: per node type, the seed each
node grew from; else None), row / col / edge (per relation: local source, local
destination, input edge position), num_sampled_nodes (per node type, hops + 1
counts), num_sampled_edges (per relation, hops counts). seeds: one array (or None)
per node type; seed_time None or one array (or None) per node type. A pure function
of its arguments.)doc")
      .def(py::init([](std::vector<int64_t> num_nodes, const py::list& relations,
                       std::vector<std::vector<int64_t>> num_neighbors, bool replace, bool disjoint,
                       const std::string& temporal_strategy, const py::object& node_time, bool directed) {
             HeteroHopSamplerOptions options;
             options.replace = replace;
             options.disjoint = disjoint;
             options.directed = directed;
             options.temporal_strategy = gnn::parse_temporal_strategy(temporal_strategy);
             if (!node_time.is_none()) {
               const auto times = node_time.cast<py::list>();
               EW_REQUIRE(times.size() == num_nodes.size(), kOp, ": node_time must hold one entry per node type (",
                          num_nodes.size(), "; got ", times.size(), ")");
               for (size_t t = 0; t < times.size(); ++t) {
                 options.node_time.push_back(optional_vector<int64_t>(times[t], "node_time[" + std::to_string(t) + "]"));
               }
             }
             std::vector<HeteroRelation> built;
             for (size_t r = 0; r < relations.size(); ++r) {
               built.push_back(relation_of(relations[r].cast<py::tuple>(), r, num_nodes));
               HeteroRelation& rel = built.back();
               EW_REQUIRE(options.node_time.empty() || options.node_time[rel.src_type].empty() ||
                              static_cast<int64_t>(options.node_time[rel.src_type].size()) == num_nodes[rel.src_type],
                          kOp, ": node_time[", rel.src_type, "] must hold ", num_nodes[rel.src_type], " entries (got ",
                          options.node_time[rel.src_type].size(), ")");
               if (options.temporal_strategy == gnn::TemporalStrategy::Last) {
                 rel.sort_rows_by_time(options.node_time.empty() ? std::span<const int64_t>{}
                                                                 : std::span<const int64_t>(options.node_time[rel.src_type]));
               }
             }
             auto s = std::make_unique<PyHeteroHopSampler>();
             py::gil_scoped_release release;
             s->sampler = std::make_unique<HeteroHopSampler>(std::move(num_nodes), std::move(built),
                                                             std::move(num_neighbors), std::move(options));
             return s;
           }),
           py::arg("num_nodes"), py::arg("relations"), py::arg("num_neighbors"), py::arg("replace") = false,
           py::arg("disjoint") = false, py::arg("temporal_strategy") = "uniform", py::arg("node_time") = py::none(),
           py::arg("directed") = true)
      .def_property_readonly("num_hops", [](const PyHeteroHopSampler& s) { return s.sampler->num_hops(); })
      .def(
          "sample",
          [](PyHeteroHopSampler& s, const py::list& seeds_in, uint64_t seed, uint64_t stream,
             const py::object& seed_time_in) {
            std::vector<py::array_t<int64_t, py::array::c_style>> arrays;
            arrays.reserve(2 * seeds_in.size());  // the spans below point into these
            const auto spans_of = [&](const py::list& lists, const char* what) {
              std::vector<std::span<const int64_t>> spans;
              for (size_t t = 0; t < lists.size(); ++t) {
                if (lists[t].is_none()) {
                  spans.emplace_back();
                  continue;
                }
                const std::string name = std::string(what) + "[" + std::to_string(t) + "]";
                arrays.push_back(as_int64_vector(as_numpy(lists[t], kOp, name.c_str()), kOp, name.c_str()));
                spans.emplace_back(arrays.back().data(), static_cast<size_t>(arrays.back().size()));
              }
              return spans;
            };
            const std::vector<std::span<const int64_t>> seeds = spans_of(seeds_in, "seeds");
            std::vector<std::span<const int64_t>> seed_time;
            if (!seed_time_in.is_none()) {
              const auto lists = seed_time_in.cast<py::list>();
              EW_REQUIRE(lists.size() <= seeds_in.size(), kOp, ": seed_time must hold one entry per node type (",
                         seeds_in.size(), "; got ", lists.size(), ")");
              seed_time = spans_of(lists, "seed_time");
            }
            HeteroSampledSubgraph out;
            {
              py::gil_scoped_release release;
              auto scratch = s.take();
              out = s.sampler->sample(seeds, seed_time, seed, stream, *scratch);  // throws before touching the scratch
              s.give(std::move(scratch));
            }
            py::dict d;
            d["num_sampled_nodes"] = out.num_sampled_nodes;
            d["num_sampled_edges"] = out.num_sampled_edges;
            d["node"] = capsules(out.node);
            d["batch"] = out.batch.empty() ? py::object(py::none()) : py::object(capsules(out.batch));
            d["row"] = capsules(out.row);
            d["col"] = capsules(out.col);
            d["edge"] = capsules(out.edge);
            return d;
          },
          py::arg("seeds"), py::arg("seed") = 0, py::arg("stream") = 0, py::arg("seed_time") = py::none());
}

}  // namespace edgewise::python
