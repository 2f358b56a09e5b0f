// --undirected and --self-loops (see dataset_flags.hpp).
#include "edgewise/cli/dataset_flags.hpp"

#include "edgewise/cli/flags.hpp"

namespace edgewise::cli {

void EdgeConventionFlags::add_to(CLI::App& app) {
  undirected_option_ =
      add_bool(app, "--undirected", undirected_,
               "1: symmetrise the edges read from a file (A + A^T, duplicates merged); 0: keep them as stored "
               "(default: the format's convention: gnn-benchmark .npz undirected, as Shchur et al. and PyG load "
               "them; OGB, scipy and edge-list files as stored)");
  self_loops_option_ = add_choice(app, "--self-loops", self_loops_,
                                  "keep or remove the self loops of a graph read from a file (default: the format's "
                                  "convention: removed in gnn-benchmark files, kept elsewhere)",
                                  {"keep", "remove"});
}

bool EdgeConventionFlags::given() const {
  return (undirected_option_ && undirected_option_->count() > 0) ||
         (self_loops_option_ && self_loops_option_->count() > 0);
}

void EdgeConventionFlags::apply(gnn::LoadOptions& options) const {
  if (undirected_option_ && undirected_option_->count() > 0) options.symmetrize = undirected_;
  if (self_loops_option_ && self_loops_option_->count() > 0) options.remove_self_loops = self_loops_ == "remove";
}

std::string EdgeConventionFlags::undirected_text() const {
  return undirected_option_ && undirected_option_->count() > 0 ? (undirected_ ? "1" : "0") : "format";
}

std::string EdgeConventionFlags::self_loops_text() const {
  return self_loops_option_ && self_loops_option_->count() > 0 ? self_loops_ : "format";
}

}  // namespace edgewise::cli
