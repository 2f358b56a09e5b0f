// Communicator: the collectives distributed training needs, over MPI (Open MPI).
// One process per rank; Environment initialises and finalises MPI once per
// process. Byte counters record what the halo exchange moved (for the report).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "edgewise/kernels/common/device.hpp"

namespace edgewise::gnn::dist {

// MPI_Init_thread on construction (unless MPI is already initialised),
// MPI_Finalize on destruction (if this object initialised it).
class Environment {
 public:
  Environment(int* argc, char*** argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_ = false;
};

class Communicator {
 public:
  // MPI_COMM_WORLD (a duplicate, so our traffic never mixes with the caller's).
  static Communicator world();
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  ~Communicator();

  int rank() const;
  int size() const;

  // In-place sums over all ranks.
  void allreduce_sum(std::span<float> values) const;
  void allreduce_sum(std::span<double> values) const;
  void allreduce_sum(std::span<int64_t> values) const;
  double allreduce_max(double value) const;
  // Sums in rank order (rank 0 + rank 1 + ...), bitwise the same on every rank and in
  // every run (an MPI reduction may associate differently per rank): all-gather, then add.
  void allreduce_sum_in_rank_order(std::span<float> values) const;
  void allreduce_sum_in_rank_order(std::span<double> values) const;
  void barrier() const;

  // MPI_Alltoallv of float rows of `width` values: rows send_offsets[s]..send_offsets[s+1]
  // of `send` go to rank s, rows recv_offsets[s]..recv_offsets[s+1] of `recv` come from
  // rank s (both offset arrays [size + 1], in rows). Adds the bytes sent to bytes_sent().
  void alltoallv_rows(const float* send, std::span<const int64_t> send_offsets, float* recv,
                      std::span<const int64_t> recv_offsets, int64_t width) const;

  // The same for buffers on `device`. On a CUDA device: through NCCL when the build
  // found it, else through MPI on the device pointers when Open MPI is CUDA-aware,
  // else staged through host memory (transport() says which).
  void alltoallv_rows(const float* send, std::span<const int64_t> send_offsets, float* recv,
                      std::span<const int64_t> recv_offsets, int64_t width, Device device) const;
  // In-place sum of `count` floats on `device`, the same on every rank (on the CPU:
  // allreduce_sum_in_rank_order).
  void allreduce_sum(float* values, int64_t count, Device device) const;
  // "mpi" (host buffers), "nccl", "cuda-aware mpi" or "host staging".
  const char* transport(Device device) const;
  // This rank's index among the ranks on its host (which GPU it takes).
  int local_rank() const;

  // Bytes this rank sent through alltoallv_rows since the last reset.
  int64_t bytes_sent() const;
  void reset_bytes_sent() const;

 private:
  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgewise::gnn::dist
