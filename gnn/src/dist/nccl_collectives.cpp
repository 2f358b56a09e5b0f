// NCCL collectives: all-reduce and grouped point-to-point rows between device buffers.
#include "nccl_collectives.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace edgewise::gnn::dist::nccl {

namespace {
void check_nccl(ncclResult_t code, const char* what) {
  if (code != ncclSuccess) throw std::runtime_error(std::string(what) + " failed: " + ncclGetErrorString(code));
}
void check_cuda(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(code));
}
}  // namespace

struct State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int size = 1;
};

State* create(MPI_Comm comm, int rank, int size, int device_index) {
  ncclUniqueId id{};
  if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Bcast of the NCCL id failed");
  check_cuda(cudaSetDevice(device_index), "cudaSetDevice");
  auto* state = new State;
  state->size = size;
  try {
    check_cuda(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_nccl(ncclCommInitRank(&state->comm, size, id, rank), "ncclCommInitRank");
  } catch (...) {
    destroy(state);
    throw;
  }
  return state;
}

void destroy(State* state) noexcept {
  if (!state) return;
  if (state->comm) ncclCommDestroy(state->comm);
  if (state->stream) cudaStreamDestroy(state->stream);
  delete state;
}

// The engine's kernels run on other streams: wait for them before reading the
// buffers, and for NCCL before handing the buffers back.
void allreduce_sum(State* state, float* values, int64_t count) {
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check_nccl(ncclAllReduce(values, values, static_cast<size_t>(count), ncclFloat, ncclSum, state->comm, state->stream),
             "ncclAllReduce");
  check_cuda(cudaStreamSynchronize(state->stream), "cudaStreamSynchronize");
}

void alltoallv_rows(State* state, const float* send, std::span<const int64_t> send_offsets, float* recv,
                    std::span<const int64_t> recv_offsets, int64_t width) {
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int peer = 0; peer < state->size; ++peer) {
    const auto p = static_cast<size_t>(peer);
    const int64_t send_rows = send_offsets[p + 1] - send_offsets[p];
    const int64_t recv_rows = recv_offsets[p + 1] - recv_offsets[p];
    if (send_rows > 0)
      check_nccl(ncclSend(send + send_offsets[p] * width, static_cast<size_t>(send_rows * width), ncclFloat, peer,
                          state->comm, state->stream),
                 "ncclSend");
    if (recv_rows > 0)
      check_nccl(ncclRecv(recv + recv_offsets[p] * width, static_cast<size_t>(recv_rows * width), ncclFloat, peer,
                          state->comm, state->stream),
                 "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  check_cuda(cudaStreamSynchronize(state->stream), "cudaStreamSynchronize");
}

}  // namespace edgewise::gnn::dist::nccl
