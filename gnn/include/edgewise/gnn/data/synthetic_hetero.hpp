// Synthetic heterogeneous graphs: a seeded graph shaped like ogbn-mag, the C++
// counterpart of python/edgewise/hetero.py's mag_like_graph (same parameters,
// defaults and semantics; not the same random numbers).
#pragma once

#include <cstdint>
#include <optional>

#include "edgewise/gnn/data/hetero_dataset.hpp"

namespace edgewise::gnn {

struct MagLikeParams {
  int64_t papers = 20'000;
  std::optional<int64_t> classes = std::nullopt;  // unset: mag_like_default_classes(papers)
  int64_t features = 128;
  double homophily = 0.6;
  double feature_noise = 4.0;
};

// min(349, max(8, papers / 2000)): ogbn-mag's 349 venues, fewer for small graphs.
int64_t mag_like_default_classes(int64_t papers);

// A synthetic heterogeneous graph shaped like ogbn-mag, learnable from structure.
//
// Node types, in this order: paper (`papers` nodes), author, institution,
// field_of_study, the last three max(1, round(papers * r)) with r = 1.54, 0.012,
// 0.082 (ogbn-mag's proportions; round half to even, as Python's round).
// Edge types, in this order, each listed by source id (ascending), a source's
// edges in draw order:
//   (paper, cites, paper)                    Poisson(7.3) per paper, skew 2.0
//   (author, writes, paper)                  Poisson(9.7 * papers / authors) per
//                                            author, so 9.7 per paper in all, skew 1.5
//   (author, affiliated_with, institution)   Poisson(0.94) per author, skew 2.5
//   (paper, has_topic, field_of_study)       Poisson(10.2) per paper, skew 3.0
// Communities: every node of every type belongs to one of K = classes communities,
// uniformly at random. Each edge's destination lies, with probability homophily,
// in its source's community (if that community has members of the destination
// type), else anywhere; either way a skewed pick, member floor(n * u^skew) of the
// n candidates in ascending id order (u uniform), so low ids are popular and
// in-degrees follow a power law. Duplicate edges and self loops may occur.
// Features: every type, [count, features]: the community's centroid (standard
// normal, one per community, shared by all types) plus Gaussian noise of standard
// deviation feature_noise, so features alone classify papers poorly and neighbours
// help.
// Labels: the papers' communities (the venue); num_classes = K; target_type
// "paper". Split: in a seeded random order of the papers, the first
// floor(0.7 * papers) train, up to floor(0.8 * papers) valid, the rest test, each
// sorted.
//
// Deterministic for a seed: counter-based randomness keyed by (seed, purpose,
// node), so the result is the same for any OpenMP thread count. Throws
// std::invalid_argument naming the parameter for papers outside [1, 2^32],
// classes outside [2, 2^31), features outside [1, 2^31), homophily outside [0, 1],
// feature_noise negative or not finite, or a feature matrix of 2^62 or more values.
HeteroDataset mag_like_graph(const MagLikeParams& params = {}, uint64_t seed = 0);

}  // namespace edgewise::gnn
