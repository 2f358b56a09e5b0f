// Python binding of hop-wise sampling and the batch pipeline: CscGraph, HopSampler
// (one sample in PyG's layout) and BatchPipeline (threads that sample and gather
// ahead; batches reach torch through DLPack without copies).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array_interop.hpp"
#include "edgewise/gnn/sampling/batch_pipeline.hpp"
#include "edgewise/gnn/sampling/csc_graph.hpp"
#include "edgewise/gnn/sampling/hop_sampler.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

using gnn::BatchPipeline;
using gnn::CscGraph;
using gnn::HopSampler;
using gnn::HopSamplerOptions;
using gnn::SampledSubgraph;

constexpr DLDataType kInt64{static_cast<uint8_t>(kDLInt), 64, 1};

std::vector<int64_t> int64_list(const py::object& object, const char* op, const char* name) {
  if (object.is_none()) return {};
  auto a = as_int64_vector(as_numpy(object, op, name), op, name);
  return std::vector<int64_t>(a.data(), a.data() + a.size());
}

std::vector<double> double_list(const py::object& object, const char* op, const char* name) {
  if (object.is_none()) return {};
  py::array_t<double, py::array::c_style | py::array::forcecast> a(as_numpy(object, op, name));
  EW_REQUIRE(a.ndim() == 1, op, ": ", name, " must be 1-D (got ", a.ndim(), "-D)");
  return std::vector<double>(a.data(), a.data() + a.size());
}

py::dict subgraph_dict(SampledSubgraph&& s, bool disjoint) {
  py::dict d;
  d["num_sampled_nodes"] = s.num_sampled_nodes;
  d["num_sampled_edges"] = s.num_sampled_edges;
  d["node"] = int64_capsule(std::move(s.node));
  d["row"] = int64_capsule(std::move(s.row));
  d["col"] = int64_capsule(std::move(s.col));
  d["edge"] = int64_capsule(std::move(s.edge));
  d["batch"] = disjoint ? py::object(int64_capsule(std::move(s.batch))) : py::object(py::none());
  return d;
}

HopSamplerOptions sampler_options(std::vector<int64_t> num_neighbors, bool replace, bool directed, bool disjoint,
                                  const std::string& temporal_strategy) {
  HopSamplerOptions o;
  o.num_neighbors = std::move(num_neighbors);
  o.replace = replace;
  o.directed = directed;
  o.disjoint = disjoint;
  o.temporal_strategy = gnn::parse_temporal_strategy(temporal_strategy);
  return o;
}

struct PyCscGraph {
  std::shared_ptr<const CscGraph> graph;
};

struct PyHopSampler {
  std::shared_ptr<const CscGraph> graph;
  HopSampler sampler;
};

// A table the pipeline gathers from: its rows' dtype and trailing shape, and the
// array that keeps the memory alive.
struct TableInfo {
  py::object owner;
  DLDataType dtype;
  std::vector<int64_t> trailing;
};

struct PyBatchPipeline {
  std::unique_ptr<BatchPipeline> pipeline;
  std::vector<TableInfo> node_tables, edge_tables;
  bool disjoint = false;

  py::object next() {
    gnn::SampledBatch batch;
    for (;;) {
      BatchPipeline::Next got;
      {
        py::gil_scoped_release release;
        got = pipeline->next(batch, std::chrono::milliseconds(100));
      }
      if (got == BatchPipeline::Next::End) return py::none();
      if (got == BatchPipeline::Next::Batch) break;
      // Timeout: let Ctrl-C (and other signals) through while waiting.
      if (PyErr_CheckSignals() != 0) {
        {
          py::gil_scoped_release release;
          pipeline->stop();
        }
        throw py::error_already_set();
      }
    }
    const int64_t m = static_cast<int64_t>(batch.subgraph.row.size());
    py::dict d = subgraph_dict(std::move(batch.subgraph), disjoint);
    d["index"] = batch.index;
    {
      auto keep = std::make_shared<std::vector<int64_t>>(std::move(batch.edge_index));
      void* data = keep->data();
      d["edge_index"] = host_dlpack(keep, data, {2, m}, kInt64);
    }
    d["input_id"] = int64_capsule(std::move(batch.input_id));
    const auto tables = [](std::vector<std::shared_ptr<gnn::HostBuffer>>& rows, const std::vector<TableInfo>& info) {
      py::list out;
      for (size_t t = 0; t < rows.size(); ++t) {
        const int64_t row_bytes = [&] {
          int64_t b = info[t].dtype.bits / 8;
          for (int64_t extent : info[t].trailing) b *= extent;
          return b;
        }();
        std::vector<int64_t> shape{row_bytes == 0 ? 0 : rows[t]->bytes / row_bytes};
        shape.insert(shape.end(), info[t].trailing.begin(), info[t].trailing.end());
        void* data = rows[t]->data;
        out.append(host_dlpack(rows[t], data, std::move(shape), info[t].dtype));
      }
      return out;
    };
    d["node_rows"] = tables(batch.node_rows, node_tables);
    d["edge_rows"] = tables(batch.edge_rows, edge_tables);
    return d;
  }
};

std::vector<gnn::RowTable> row_tables(const py::list& objects, const char* op, const char* what,
                                      std::vector<TableInfo>& info) {
  std::vector<gnn::RowTable> out;
  for (size_t t = 0; t < objects.size(); ++t) {
    const std::string name = std::string(what) + "[" + std::to_string(t) + "]";
    Call call(op);
    Array a = call.array(objects[t], name.c_str());
    EW_REQUIRE(a.device.is_cpu(), op, ": ", name, " must be on the CPU (got ", a.device.str(), ")");
    EW_REQUIRE(a.ndim() >= 1, op, ": ", name, " must have a row dimension (got a scalar)");
    int64_t row_bytes = a.dtype.bits / 8 * a.dtype.lanes;
    for (int d = 1; d < a.ndim(); ++d) row_bytes *= a.shape[d];
    out.push_back({static_cast<const std::byte*>(a.data), a.shape[0], row_bytes});
    info.push_back({a.owner, a.dtype, std::vector<int64_t>(a.shape.begin() + 1, a.shape.end())});
  }
  return out;
}

}  // namespace

void register_loader(py::module_& m) {
  py::class_<PyCscGraph>(m, "CscGraph", R"doc(A graph grouped by destination, what HopSampler reads.

CscGraph(edge_index, num_nodes, edge_weight=None, edge_time=None, node_time=None,
sort_by_time=False): edge_index [2, E] (sources, destinations) of any integer dtype;
edge_weight [E] (float, finite, >= 0) and edge_time [E] per input edge, node_time [N]
per node. sort_by_time orders each node's in-edges by time (the 'last' temporal
strategy needs it). Edge ids reported by samplers are input positions.)doc")
      .def(py::init([](const py::object& edge_index, int64_t num_nodes, const py::object& edge_weight,
                       const py::object& edge_time, const py::object& node_time, bool sort_by_time) {
             constexpr const char* kOp = "CscGraph";
             py::array_t<int64_t, py::array::c_style | py::array::forcecast> ei(as_numpy(edge_index, kOp, "edge_index"));
             EW_REQUIRE(ei.ndim() == 2 && ei.shape(0) == 2, kOp, ": edge_index must be [2, E]");
             const int64_t E = ei.shape(1);
             const auto weight = double_list(edge_weight, kOp, "edge_weight");
             const auto etime = int64_list(edge_time, kOp, "edge_time");
             const auto ntime = int64_list(node_time, kOp, "node_time");
             auto graph = std::make_shared<CscGraph>();
             {
               py::gil_scoped_release release;
               *graph = CscGraph::from_coo({ei.data(), static_cast<size_t>(E)}, {ei.data() + E, static_cast<size_t>(E)},
                                           num_nodes, weight, etime, ntime, sort_by_time);
             }
             return PyCscGraph{graph};
           }),
           py::arg("edge_index"), py::arg("num_nodes"), py::arg("edge_weight") = py::none(),
           py::arg("edge_time") = py::none(), py::arg("node_time") = py::none(), py::arg("sort_by_time") = false)
      .def_static(
          "from_csc",
          [](const py::object& colptr, const py::object& row, const py::object& edge_weight,
             const py::object& edge_time, const py::object& node_time) {
            constexpr const char* kOp = "CscGraph.from_csc";
            auto graph = std::make_shared<CscGraph>();
            graph->colptr = int64_list(colptr, kOp, "colptr");
            graph->row = int64_list(row, kOp, "row");
            graph->edge_weight = double_list(edge_weight, kOp, "edge_weight");
            graph->edge_time = int64_list(edge_time, kOp, "edge_time");
            graph->node_time = int64_list(node_time, kOp, "node_time");
            graph->narrow_ids();
            return PyCscGraph{graph};
          },
          py::arg("colptr"), py::arg("row"), py::arg("edge_weight") = py::none(), py::arg("edge_time") = py::none(),
          py::arg("node_time") = py::none(),
          "A CscGraph of given arrays (copied): colptr [N + 1], row [E], optional per-position edge_weight / "
          "edge_time and per-node node_time. Samplers check them and report CSC positions as edge ids.")
      .def_property_readonly("num_nodes", [](const PyCscGraph& g) { return g.graph->view().num_nodes(); })
      .def_property_readonly("num_edges", [](const PyCscGraph& g) { return g.graph->view().num_edges(); })
      .def_property_readonly("temporal", [](const PyCscGraph& g) { return g.graph->view().temporal(); })
      .def_property_readonly("weighted", [](const PyCscGraph& g) { return !g.graph->edge_weight.empty(); });

  py::class_<PyHopSampler>(m, "HopSampler", R"doc(Hop-wise neighbour sampling in PyG's layout (pyg-lib's neighbor_sample).

HopSampler(graph, num_neighbors, replace=False, directed=True, disjoint=False,
temporal_strategy='uniform'): num_neighbors per hop from the seeds (-1: all).
sample(seeds, seed_time=None, seed=0, stream=0) -> dict: node, row, col, edge,
batch (disjoint, else None) as DLPack capsules (torch.from_dlpack), and the lists
num_sampled_nodes / num_sampled_edges. A pure function of its arguments.)doc")
      .def(py::init([](const PyCscGraph& graph, std::vector<int64_t> num_neighbors, bool replace, bool directed,
                       bool disjoint, const std::string& temporal_strategy) {
             return PyHopSampler{graph.graph, HopSampler(graph.graph->view(),
                                                         sampler_options(std::move(num_neighbors), replace, directed,
                                                                         disjoint, temporal_strategy))};
           }),
           py::arg("graph"), py::arg("num_neighbors"), py::arg("replace") = false, py::arg("directed") = true,
           py::arg("disjoint") = false, py::arg("temporal_strategy") = "uniform")
      .def("sample",
           [](const PyHopSampler& s, const py::object& seeds_in, const py::object& seed_time_in, uint64_t seed,
              uint64_t stream) {
             const auto seeds = int64_list(seeds_in, "HopSampler.sample", "seeds");
             const auto seed_time = int64_list(seed_time_in, "HopSampler.sample", "seed_time");
             SampledSubgraph out;
             {
               py::gil_scoped_release release;
               gnn::HopSamplerScratch scratch;
               out = s.sampler.sample(seeds, seed_time, seed, stream, scratch);
             }
             return subgraph_dict(std::move(out), s.sampler.options().disjoint);
           },
           py::arg("seeds"), py::arg("seed_time") = py::none(), py::arg("seed") = 0, py::arg("stream") = 0);

  py::class_<PyBatchPipeline>(m, "BatchPipeline", R"doc(Sampling threads that prepare minibatches ahead of the consumer.

BatchPipeline(graph, num_neighbors, input_nodes, input_time=None, node_tables=[],
edge_tables=[], replace=False, directed=True, disjoint=False,
temporal_strategy='uniform', batch_size=1, shuffle=False, drop_last=False, seed=0,
num_threads=1, queue_depth=4, overlap=True, pin_memory=False). overlap=False: threads sample
only while next() waits (a consumer whose threads take every core). pin_memory: rows are
gathered into page-locked memory when a CUDA device is present (pageable otherwise). start_epoch(epoch) cuts the
(shuffled) input_nodes into batches; start_epoch(epoch, seeds, offsets, seed_time=None)
takes the epoch's batches instead: batch b samples from seeds[offsets[b]:offsets[b + 1]]
(num_batches is then len(offsets) - 1, input_id positions in seeds). next() -> dict (the sample as in
HopSampler.sample, plus index, input_id, edge_index [2, m] (row over col), node_rows /
edge_rows: each table's rows of node / edge, as DLPack capsules) or None at the
epoch's end; stop().)doc")
      .def(py::init([](const PyCscGraph& graph, std::vector<int64_t> num_neighbors, const py::object& input_nodes,
                       const py::object& input_time, const py::list& node_tables, const py::list& edge_tables,
                       bool replace, bool directed, bool disjoint, const std::string& temporal_strategy,
                       int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed, int num_threads,
                       int queue_depth, bool overlap, bool pin_memory) {
             constexpr const char* kOp = "BatchPipeline";
             auto out = std::make_unique<PyBatchPipeline>();
             auto nodes = row_tables(node_tables, kOp, "node_tables", out->node_tables);
             auto edges = row_tables(edge_tables, kOp, "edge_tables", out->edge_tables);
             gnn::BatchPipelineOptions o;
             o.batch_size = batch_size;
             o.shuffle = shuffle;
             o.drop_last = drop_last;
             o.seed = seed;
             o.num_threads = num_threads;
             o.queue_depth = queue_depth;
             o.overlap = overlap;
             o.pin_memory = pin_memory;
             o.edge_index = true;
             out->disjoint = disjoint;
             out->pipeline = std::make_unique<BatchPipeline>(
                 graph.graph, sampler_options(std::move(num_neighbors), replace, directed, disjoint, temporal_strategy),
                 int64_list(input_nodes, kOp, "input_nodes"), int64_list(input_time, kOp, "input_time"),
                 std::move(nodes), std::move(edges), o);
             return out;
           }),
           py::arg("graph"), py::arg("num_neighbors"), py::arg("input_nodes"), py::arg("input_time") = py::none(),
           py::arg("node_tables") = py::list(), py::arg("edge_tables") = py::list(), py::arg("replace") = false,
           py::arg("directed") = true, py::arg("disjoint") = false, py::arg("temporal_strategy") = "uniform",
           py::arg("batch_size") = 1, py::arg("shuffle") = false, py::arg("drop_last") = false, py::arg("seed") = 0,
           py::arg("num_threads") = 1, py::arg("queue_depth") = 4, py::arg("overlap") = true,
           py::arg("pin_memory") = false)
      .def_property_readonly("num_batches", [](const PyBatchPipeline& p) { return p.pipeline->num_batches(); })
      .def("start_epoch",
           [](PyBatchPipeline& p, uint64_t epoch, const py::object& seeds, const py::object& offsets,
              const py::object& seed_time) {
             constexpr const char* kOp = "BatchPipeline.start_epoch";
             if (offsets.is_none()) {
               EW_REQUIRE(seeds.is_none() && seed_time.is_none(), kOp, ": seeds and seed_time need offsets");
               py::gil_scoped_release release;
               p.pipeline->start_epoch(epoch);
               return;
             }
             gnn::SeedBatches batches{int64_list(seeds, kOp, "seeds"), int64_list(offsets, kOp, "offsets"),
                                      int64_list(seed_time, kOp, "seed_time")};
             py::gil_scoped_release release;
             p.pipeline->start_epoch(epoch, std::move(batches));
           },
           py::arg("epoch"), py::arg("seeds") = py::none(), py::arg("offsets") = py::none(),
           py::arg("seed_time") = py::none())
      .def("next", &PyBatchPipeline::next)
      .def("stop", [](PyBatchPipeline& p) {
        py::gil_scoped_release release;
        p.pipeline->stop();
      });
}

}  // namespace edgewise::python
