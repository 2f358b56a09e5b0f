// edgewise-partition: k-way METIS partition of a dataset, one .npz per part (the
// dataset layout plus the part's global ids, halo and send / receive maps; see
// edgewise/gnn/dist/partition.hpp), and the quality of the cut.
//   edgewise-partition --dataset cora --parts 4 --out parts/
//   edgewise-partition --dataset rmat:1000000:16000000:0 --parts 8 --stats-only
// Exit status: 0 done, 2 bad flags, 1 any other failure (the message names the file or flag).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgewise/cli/dataset_flags.hpp"
#include "edgewise/cli/flags.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/dist/partition.hpp"

namespace {

using namespace edgewise;
using namespace edgewise::gnn;

struct Flags {
  std::string dataset = "auto", data_dir, out, json, balance = "nodes";
  int64_t parts = 2, hidden = 16, layers = 2, synthetic_nodes = 2708;
  uint64_t seed = 0;
  double imbalance = 1.03;
  bool stats_only = false;
  cli::EdgeConventionFlags edges;  // --undirected, --self-loops: as edgewise-train reads the dataset
};

void add_flags(CLI::App& app, Flags& f) {
  using namespace edgewise::cli;
  add_text(app, "--dataset", f.dataset, "dataset, as edgewise-train reads it (name, .npz path, synthetic, rmat:N:E:F[:K])");
  add_text(app, "--data-dir", f.data_dir, "where dataset names are looked up (default: $EDGEWISE_DATA_DIR)");
  add_int(app, "--parts", f.parts, "number of parts k (one per MPI rank)", 1);
  add_uint64(app, "--seed", f.seed, "METIS seed (the same seed and graph give the same parts)");
  add_real(app, "--imbalance", f.imbalance, "allowed max / mean part weight per balance constraint",
           {.min = 1, .min_inclusive = false});
  add_choice(app, "--balance", f.balance,
             "what the parts balance besides nodes: nodes (only nodes), edges (in-edges), train (training nodes), "
             "all (edges and training nodes)",
             {"nodes", "edges", "train", "all"});
  add_output_dir(app, "--out", f.out,
                 "directory for part<r>.npz, r = 0..k-1 (created when missing; checked before the dataset is loaded)");
  add_bool(app, "--stats-only", f.stats_only, "1: print the cut and halo sizes, write no parts");
  add_int(app, "--hidden", f.hidden, "hidden features, for the halo bytes per epoch in the report", 1);
  add_int(app, "--layers", f.layers, "layers, for the halo bytes per epoch in the report", 1);
  add_output_path(app, "--json", f.json, "write the statistics as JSON");
  add_int(app, "--synthetic-nodes", f.synthetic_nodes, "synthetic graph: nodes", 1);
  f.edges.add_to(app);
}

int run(const Flags& f) {
  if (!f.data_dir.empty()) setenv("EDGEWISE_DATA_DIR", f.data_dir.c_str(), 1);
  LoadOptions load_options;
  f.edges.apply(load_options);
  ResolvedDataset resolved = load_dataset_spec(f.dataset, f.synthetic_nodes, load_options);
  const Dataset& d = resolved.dataset;
  if (f.parts > d.num_nodes)
    throw std::invalid_argument("--parts (" + std::to_string(f.parts) + ") exceeds the number of nodes (" +
                                std::to_string(d.num_nodes) + ") of '" + d.name + "'");
  dist::PartitionOptions options;
  options.seed = f.seed;
  options.imbalance = f.imbalance;
  options.balance_edges = f.balance == "edges" || f.balance == "all";
  if (f.balance == "train" || f.balance == "all") options.balance_nodes = d.train_idx;
  std::printf("edgewise-partition: %s — %lld nodes, %lld edges, k = %lld\n", resolved.description.c_str(),
              static_cast<long long>(d.num_nodes), static_cast<long long>(d.num_edges()),
              static_cast<long long>(f.parts));
  const dist::Partition p = dist::partition(d, f.parts, options);
  const double cut_fraction = d.num_edges() ? static_cast<double>(p.edge_cut) / static_cast<double>(d.num_edges()) : 0;
  std::printf("edge cut %lld of %lld edges (%.2f %%), node balance %.3f, edge balance %.3f\n",
              static_cast<long long>(p.edge_cut), static_cast<long long>(d.num_edges()), 100 * cut_fraction,
              p.node_balance(), p.edge_balance());
  if (!f.stats_only && !f.out.empty()) std::filesystem::create_directories(f.out);
  // A layer after the first exchanges every halo row forward (features) and
  // backward (gradients); the first layer reads its halo's input features from the part.
  const int64_t row_bytes = f.hidden * static_cast<int64_t>(sizeof(float));
  int64_t total_halo = 0;
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  std::printf("%6s %10s %10s %10s %10s %10s\n", "part", "owned", "halo", "in-edges", "send rows", "recv rows");
  for (int64_t r = 0; r < f.parts; ++r) {
    const dist::Part part = dist::build_part(d, p, r);
    const int64_t sent = part.send_offsets.back(), received = part.num_halo();
    total_halo += received;
    std::printf("%6lld %10lld %10lld %10lld %10lld %10lld\n", static_cast<long long>(r),
                static_cast<long long>(part.num_owned), static_cast<long long>(received),
                static_cast<long long>(part.local.num_edges()), static_cast<long long>(sent),
                static_cast<long long>(received));
    parts.push_back({{"owned", part.num_owned}, {"halo", received}, {"in_edges", part.local.num_edges()},
                     {"send_rows", sent}});
    if (!f.stats_only && !f.out.empty())
      dist::write_part((std::filesystem::path(f.out) / ("part" + std::to_string(r) + ".npz")).string(), part);
  }
  const int64_t epoch_bytes = 2 * (f.layers - 1) * total_halo * row_bytes;
  std::printf("halo: %lld rows in all (%.3f per node); per epoch at %lld hidden features, %lld layers: %.3f MB "
              "(forward + backward, all ranks)\n",
              static_cast<long long>(total_halo), static_cast<double>(total_halo) / static_cast<double>(d.num_nodes),
              static_cast<long long>(f.hidden), static_cast<long long>(f.layers), static_cast<double>(epoch_bytes) / 1e6);
  if (!f.stats_only && !f.out.empty()) std::printf("parts: %s/part{0..%lld}.npz\n", f.out.c_str(), static_cast<long long>(f.parts - 1));
  if (!f.json.empty()) {
    cli::write_json_file(f.json, {{"dataset", d.name},
                                  {"nodes", d.num_nodes},
                                  {"edges", d.num_edges()},
                                  {"parts", f.parts},
                                  {"edge_cut", p.edge_cut},
                                  {"edge_cut_fraction", cut_fraction},
                                  {"node_balance", p.node_balance()},
                                  {"edge_balance", p.edge_balance()},
                                  {"halo_rows", total_halo},
                                  {"halo_bytes_per_epoch", epoch_bytes},
                                  {"per_part", parts}});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("k-way METIS partition of a graph into one .npz per part (for mpirun ... edgewise-train --distributed).",
               "edgewise-partition");
  Flags flags;
  add_flags(app, flags);
  if (const std::optional<int> exit_code = edgewise::cli::parse(app, argc, argv)) return *exit_code;
  if (!flags.stats_only && flags.out.empty()) {
    std::fprintf(stderr, "edgewise-partition: error: --out DIR is required (or --stats-only 1)\n");
    return 2;
  }
  try {
    return run(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-partition: %s\n", e.what());
    return 1;
  }
}
