// Ranking metrics of link prediction: exact ROC AUC (ties count one half) and OGB's Hits@K.
#include <algorithm>
#include <cmath>
#include <functional>

#include "edgewise/gnn/train/link_prediction.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

void require_scores(std::span<const float> scores, const char* op, const char* argument) {
  for (size_t i = 0; i < scores.size(); ++i) {
    EW_REQUIRE(!std::isnan(scores[i]), op, ": ", argument, "[", i, "] is NaN");
  }
}

}  // namespace

double roc_auc(std::span<const float> positive, std::span<const float> negative) {
  EW_REQUIRE(!positive.empty(), "roc_auc: positive is empty");
  EW_REQUIRE(!negative.empty(), "roc_auc: negative is empty");
  require_scores(positive, "roc_auc", "positive");
  require_scores(negative, "roc_auc", "negative");
  // Mann-Whitney U: sort both lists, walk the negatives once per block of equal
  // positive scores; each positive beats the negatives below it and ties half.
  std::vector<float> pos(positive.begin(), positive.end()), neg(negative.begin(), negative.end());
  std::sort(pos.begin(), pos.end());
  std::sort(neg.begin(), neg.end());
  double wins = 0;
  size_t below = 0;  // negatives < the current positive score
  for (size_t i = 0; i < pos.size();) {
    size_t j = i;
    while (j < pos.size() && pos[j] == pos[i]) ++j;
    while (below < neg.size() && neg[below] < pos[i]) ++below;
    size_t equal = below;
    while (equal < neg.size() && neg[equal] == pos[i]) ++equal;
    wins += static_cast<double>(j - i) * (static_cast<double>(below) + 0.5 * static_cast<double>(equal - below));
    i = j;
  }
  return wins / (static_cast<double>(pos.size()) * static_cast<double>(neg.size()));
}

double hits_at_k(std::span<const float> positive, std::span<const float> negative, int64_t k) {
  EW_REQUIRE(k >= 1, "hits_at_k: k (", k, ") must be >= 1");
  EW_REQUIRE(!positive.empty(), "hits_at_k: positive is empty");
  require_scores(positive, "hits_at_k", "positive");
  require_scores(negative, "hits_at_k", "negative");
  if (static_cast<int64_t>(negative.size()) < k) return 1.0;  // OGB's convention
  std::vector<float> neg(negative.begin(), negative.end());
  std::nth_element(neg.begin(), neg.begin() + (k - 1), neg.end(), std::greater<float>());
  const float kth = neg[static_cast<size_t>(k - 1)];
  const auto hits = std::count_if(positive.begin(), positive.end(), [&](float s) { return s > kth; });
  return static_cast<double>(hits) / static_cast<double>(positive.size());
}

}  // namespace edgewise::gnn
