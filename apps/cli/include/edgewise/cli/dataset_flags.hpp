// Flags every program that reads a dataset file shares: the edge conventions
// (--undirected, --self-loops), mapped onto gnn::LoadOptions.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "edgewise/gnn/data/dataset.hpp"

namespace edgewise::cli {

class EdgeConventionFlags {
 public:
  // --undirected [0|1]: symmetrise (A + A^T, duplicates merged) or keep the edges as
  // stored; --self-loops keep|remove. Unset, each format keeps its own convention
  // (gnn-benchmark files undirected without self loops, everything else as stored).
  void add_to(CLI::App& app);
  bool given() const;  // either flag on the command line
  // The flags given, into `options` (the others stay unset: the format decides).
  void apply(gnn::LoadOptions& options) const;
  // The effective values for a record of the run ("format", or "0" / "1", "keep" / "remove").
  std::string undirected_text() const;
  std::string self_loops_text() const;

 private:
  bool undirected_ = false;
  std::string self_loops_ = "keep";
  CLI::Option* undirected_option_ = nullptr;
  CLI::Option* self_loops_option_ = nullptr;
};

}  // namespace edgewise::cli
