// Reorder cases: spmm sum and a GCN training epoch on the same graph relabelled by
// each ordering (none, degree, rcm) — R-MAT 1M/10M with 64 features, and
// Coauthor-CS when EDGEWISE_DATA_DIR holds it. spmm's GB/s counts the gathered rows
// (E * C * 4) plus indices, offsets and output, so the ratio to the copy floor shows
// how much of the gather the ordering turned into cache hits. The time to compute
// the ordering is printed with each row (it is paid once per graph).
#include <chrono>
#include <exception>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "bench.hpp"
#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/graph/reorder.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::bench {
namespace {

constexpr int64_t kWidth = 64;  // spmm feature width and GCN hidden width

struct Reordered {
  gnn::Dataset dataset;
  double reorder_seconds = 0;
  int64_t bandwidth = 0;
};

gnn::Dataset load_graph(const std::string& name, const Options& o) {
  if (name == "rmat") {
    const int64_t n = o.quick ? 200000 : 1000000, e = o.quick ? 2000000 : 10000000;
    return gnn::rmat_graph(n, e, 0.57, 0.19, 0.19, 1, {.num_features = kWidth, .num_classes = 16});
  }
  gnn::Dataset d = gnn::load_dataset(gnn::resolve_dataset_path(name).string(), {.features = gnn::FeatureFormat::Dense});
  return d;
}

// The dataset relabelled by `ordering` (cached: the three orderings of one graph share
// the load; the last graph loaded is kept).
std::shared_ptr<Reordered> reordered(const std::string& name, gnn::Ordering ordering, const Options& o) {
  static std::string cached_name;
  static std::shared_ptr<gnn::Dataset> cached;
  if (cached_name != name || !cached) {
    cached = std::make_shared<gnn::Dataset>(load_graph(name, o));
    cached_name = name;
  }
  auto r = std::make_shared<Reordered>();
  const auto start = std::chrono::steady_clock::now();
  const gnn::NodePermutation p = gnn::node_ordering(cached->num_nodes, cached->src(), cached->dst(), ordering);
  r->dataset = gnn::reorder_dataset(*cached, p);
  r->reorder_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r->bandwidth = gnn::bandwidth(r->dataset.src(), r->dataset.dst());
  return r;
}

std::string detail_of(const Reordered& r, const gnn::Graph& g) {
  char text[128];
  std::snprintf(text, sizeof text, "reorder %.2f s, bandwidth %lld, E=%lld", r.reorder_seconds,
                static_cast<long long>(r.bandwidth), static_cast<long long>(g.num_edges()));
  return text;
}

Prepared prepare_spmm(const std::string& name, gnn::Ordering ordering, const Options& o) {
  const auto r = reordered(name, ordering, o);
  struct State {
    gnn::Graph graph;
    Buffer<float> x, out;
    Context ctx{Device::cpu()};
  };
  auto st = std::make_shared<State>();
  st->graph = gnn::Graph::from_coo(std::vector<int64_t>(r->dataset.src().begin(), r->dataset.src().end()),
                                   std::vector<int64_t>(r->dataset.dst().begin(), r->dataset.dst().end()),
                                   r->dataset.num_nodes);
  const int64_t N = st->graph.num_nodes(), E = st->graph.num_edges();
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<size_t>(N * kWidth));
  for (float& v : x) v = dist(rng);
  st->x = Buffer<float>::from_host(x);
  st->out = Buffer<float>(N * kWidth);
  st->ctx.validate = false;
  Prepared p;
  p.run = [st, N] {
    spmm<float, int32_t>(st->graph.offsets().view(), st->graph.sources().view(), {}, st->x.matrix(N, kWidth),
                         ReduceOp::Sum, st->out.matrix(N, kWidth), {}, st->ctx);
  };
  p.bytes = static_cast<double>(E * kWidth * 4 + E * 4 + (N + 1) * 8 + N * kWidth * 4);
  p.detail = detail_of(*r, st->graph);
  return p;
}

Prepared prepare_gcn_epoch(const std::string& name, gnn::Ordering ordering, const Options& o) {
  const auto r = reordered(name, ordering, o);
  struct State {
    gnn::TrainData data;
    std::unique_ptr<gnn::NodeClassifier> model;
    std::unique_ptr<gnn::Adam> optimizer;
    gnn::Generator generator{0};
  };
  auto st = std::make_shared<State>();
  st->data = gnn::prepare(r->dataset, Device::cpu());
  gnn::ModelConfig c;
  c.in_features = st->data.features.cols();
  c.hidden_features = kWidth;
  c.out_features = st->data.num_classes;
  st->model = gnn::make_model(c, st->generator, Device::cpu());
  gnn::AdamOptions adam;
  st->optimizer = std::make_unique<gnn::Adam>(st->model->param_groups(0.0f), adam);
  Prepared p;
  p.run = [st] {  // one training step, as Trainer::fit times it
    st->model->train();
    st->optimizer->zero_grad();
    gnn::Variable logits = st->model->forward(st->data.graph, st->data.features, st->generator);
    gnn::Variable loss = gnn::cross_entropy(logits, st->data.labels, st->data.train_idx);
    loss.backward();
    st->optimizer->step();
  };
  p.bytes = 0;  // several ops: the time is the figure
  p.detail = detail_of(*r, st->data.graph);
  p.max_repeats = 3;  // seconds per epoch at 1M nodes on a shared host
  return p;
}

EW_BENCH_CASES {
  const Device cpu = Device::cpu();
  const char* orderings[] = {"none", "degree", "rcm"};
  for (const char* graph : {"rmat", "coauthor_cs"}) {
    if (std::string(graph) != "rmat") {
      try {
        gnn::resolve_dataset_path(graph);
      } catch (const std::exception&) {
        continue;  // no data here: the R-MAT cases still run
      }
    }
    const std::string shape = std::string(graph) == "rmat" ? "rmat/N=1M,E=10M,F=64" : "coauthor_cs";
    for (const char* ord : orderings) {
      const gnn::Ordering ordering = gnn::parse_ordering(ord);
      const std::string base = std::string("reorder/spmm-sum-C64/none/") + shape;
      register_case({std::string("reorder/spmm-sum-C64/") + ord + "/" + shape, cpu, [=](const Options& o) {
                       Prepared p = prepare_spmm(graph, ordering, o);
                       if (ordering != gnn::Ordering::None) p.baseline = base;
                       return p;
                     }});
    }
    for (const char* ord : orderings) {
      const gnn::Ordering ordering = gnn::parse_ordering(ord);
      const std::string base = std::string("reorder/gcn-epoch-H64/none/") + shape;
      register_case({std::string("reorder/gcn-epoch-H64/") + ord + "/" + shape, cpu, [=](const Options& o) {
                       Prepared p = prepare_gcn_epoch(graph, ordering, o);
                       if (ordering != gnn::Ordering::None) p.baseline = base;
                       return p;
                     }});
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
