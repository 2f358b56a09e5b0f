// edgewise-train: node classification (GCN, GraphSAGE, GIN or GAT; node_task.cpp), link
// prediction (--task link; link_task.cpp), k-fold graph classification (--task graph;
// graph_task.cpp) and distributed node classification (--distributed; distributed.cpp),
// with progress, metrics and a plot. Every task trains on the one epoch loop.
//   edgewise-train [--dataset cora|PATH|synthetic] [--model gcn|sage|gin|gat] [--runs N] ...
//   edgewise-train --task graph [--dataset reddit_threads|TU_DIR|synthetic] [--folds 0,1,2|all] ...
//   edgewise-train --help   for every flag.
// Exit status: 0 done, 2 bad flags (before anything is loaded), 1 any other failure
// (the message names the file, key, flag or epoch).
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "app.hpp"

int main(int argc, char** argv) {
  using namespace edgewise::apps::train;
  CLI::App app("Full-batch node classification (GCN, GraphSAGE, GIN or GAT), link prediction (--task link) or graph "
               "classification (--task graph) with progress, metrics and a plot.",
               "edgewise-train");
  Flags flags;
  add_flags(app, flags);
  if (const std::optional<int> exit_code = edgewise::cli::parse(app, argc, argv)) return *exit_code;
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0) flags.given.insert(option->get_name());
  if (const std::optional<std::string> error = check_flag_combinations(flags)) {
    std::fprintf(stderr, "edgewise-train: error: %s\n", error->c_str());
    return edgewise::cli::kUsageError;
  }
  try {
    if (flags.task == "graph") return run_graph_task(flags);
    if (flags.task == "link") return run_link_task(flags);
#if EDGEWISE_TRAIN_DISTRIBUTED
    if (flags.distributed) return run_distributed(flags);
#endif
    return run_node_task(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-train: %s\n", e.what());
    return 1;
  }
}
