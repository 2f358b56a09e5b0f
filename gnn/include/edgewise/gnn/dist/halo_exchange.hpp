// The differentiable pieces a partitioned full-batch model adds to a single-process
// one: the halo exchange (forward: owned rows out, halo rows in; backward: halo
// gradients back to their owners, summed into the owned rows), the owned-row slice,
// dropout keyed by global element ids (so every rank draws the mask the single
// process draws) and the cross-entropy share of one rank. CPU or CUDA tensors (on
// CUDA the rows move device to device: NCCL, a CUDA-aware MPI, or host staging
// when neither exists; Communicator::transport says which).
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/dist/communicator.hpp"
#include "edgewise/gnn/dist/partition.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn::dist {

// The maps of one part and the communicator they run over (both must outlive it).
class HaloExchange {
 public:
  // `device`: where the exchanged tensors live (CPU, or the rank's CUDA device).
  HaloExchange(const Communicator& comm, const Part& part, Device device = Device::cpu());
  int64_t num_owned() const { return part_.num_owned; }
  int64_t num_local() const { return part_.num_local(); }
  // owned [n_own, C] -> [n_local, C]: the owned rows, then the halo rows from their owners.
  Tensor forward(const Tensor& owned) const;
  // grad [n_local, C] -> [n_own, C]: the owned rows' gradient plus what the other
  // ranks computed for this rank's rows as their halo.
  Tensor backward(const Tensor& grad_local) const;
  const Communicator& communicator() const { return comm_; }
  Device device() const { return device_; }

 private:
  const Communicator& comm_;
  const Part& part_;
  Device device_;
  // On a CUDA device, gathering the send rows and summing the returned halo
  // gradients are spmm over two fixed CSRs (sum, no weights): row i of the send
  // buffer is owned row send_index[i]; owned row u sums the received rows i with
  // send_index[i] == u, in ascending i (deterministic).
  Buffer<int64_t> gather_offsets_, scatter_offsets_;
  Buffer<int32_t> gather_indices_, scatter_indices_;
};

// halo.forward as a recorded op (backward: halo.backward).
Variable halo_exchange(const HaloExchange& halo, const Variable& owned);
// Rows [0, rows) of x (backward: zero rows below).
Variable first_rows(const Variable& x, int64_t rows);

// Inverted dropout where element (r, c) of x [R, C] is kept by the single-process
// mask's draw for element index key_base[r] + c (key_base [R, 1] on x's device):
// with key_base[r] = global_row * C this is dropout() on the full matrix,
// restricted to these rows. The key_base tensor must outlive the backward pass.
Variable keyed_dropout(const Variable& x, float p, bool training, Generator& generator, const IndexTensor& key_base);
// sparse_dropout() of the full CSR, restricted to these rows: stored value j is
// global value value_keys[j] ([nnz, 1] on x's device; sparse_value_keys).
SparseTensor keyed_sparse_dropout(const SparseTensor& x, float p, bool training, Generator& generator,
                                  const IndexTensor& value_keys);
// The global value position of each stored value of x, local row r's values
// starting at value_base[r] (Part::feature_value_base), on `device`.
IndexTensor sparse_value_keys(const SparseTensor& x, const std::vector<int64_t>& value_base, Device device);

// This rank's share of the global mean cross-entropy over the training rows:
// sum over local `rows` of -log softmax(logits)[label] / global_rows (a [1, 1]
// Variable). With no local rows it is 0 and sends zero gradients, so every rank
// runs the same backward (and the same halo exchanges).
Variable cross_entropy_share(const Variable& logits, const IndexTensor& labels, const IndexTensor& rows,
                             int64_t global_rows);

}  // namespace edgewise::gnn::dist
