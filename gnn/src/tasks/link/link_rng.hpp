// Purposes of the link-prediction random streams (CounterRng salts), distinct from
// the data generators' salts in data/counter_rng.hpp.
#pragma once

#include <cstdint>

#include "data/counter_rng.hpp"

namespace edgewise::gnn::link_detail {

enum LinkRngSalt : uint64_t {
  kSaltNegativePairs = 0x4C494E4B00000001ull,
  kSaltLinkShuffle = 0x4C494E4B00000002ull,
  kSaltSplitNegatives = 0x4C494E4B00000003ull,
  kSaltTrainNegatives = 0x4C494E4B00000004ull,
};

}  // namespace edgewise::gnn::link_detail
