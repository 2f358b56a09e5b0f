// The edge-pair dot-product decoder of link prediction, on the tape.
#pragma once

#include "edgewise/gnn/autograd/autograd.hpp"

namespace edgewise::gnn {

// Edge-pair decoder: out[i] = <z[src[i]], z[dst[i]]> as [P, 1], differentiable in z.
// src and dst are [P] or [P, 1] ids in [0, z.rows()) on z's device (std::invalid_argument
// naming the argument otherwise). Runs on the host; device tensors go through host copies.
Variable pair_dot(const Variable& z, const IndexTensor& src, const IndexTensor& dst);

}  // namespace edgewise::gnn
