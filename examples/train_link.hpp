// edgewise-train --task link: link prediction runs (GCN encoder, dot-product decoder)
// on a loaded dataset's edges, with progress, a summary and the JSON metrics.
#pragma once

#include <cstdint>
#include <string>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::examples {

// PyG link_pred.py's recipe as defaults; train.cpp overrides what the flags give.
struct LinkTaskSettings {
  int64_t layers = 2, hidden = 128, out = 64;
  float dropout = 0.0f, lr = 0.01f, weight_decay = 0.0f;
  int64_t epochs = 100;
  double num_val = 0.05, num_test = 0.1;
  int64_t hits_k = 50;
  uint64_t seed = 0;
  int64_t runs = 1;
  int64_t log_every = 10;
  std::string device = "cpu";
  gnn::PrepareOptions prepare;
  std::string json;  // final metrics, when set
};

// Runs settings.runs seeded runs (run i: seed + i, its own split), prints each run and
// the mean ± std of test AUC and Hits@K; returns the exit status (0).
int run_link_task(const gnn::Dataset& dataset, const std::string& source, const LinkTaskSettings& settings);

}  // namespace edgewise::examples
