// NCCL collectives on device buffers (CUDA builds where nccl.h was found): the
// communicator is created from an ncclUniqueId that rank 0 broadcasts over MPI.
// No NCCL or CUDA types here, so communicator.cpp compiles without them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>

namespace edgewise::gnn::dist::nccl {

struct State;
// One NCCL communicator over `comm` on CUDA device `device_index` (collective).
State* create(MPI_Comm comm, int rank, int size, int device_index);
void destroy(State* state) noexcept;
// In place, device floats; every rank ends with the same values.
void allreduce_sum(State* state, float* values, int64_t count);
// Rows as MPI_Alltoallv would move them (offsets [size + 1], rows of `width`),
// as grouped ncclSend / ncclRecv pairs straight between device buffers.
void alltoallv_rows(State* state, const float* send, std::span<const int64_t> send_offsets, float* recv,
                    std::span<const int64_t> recv_offsets, int64_t width);

}  // namespace edgewise::gnn::dist::nccl
