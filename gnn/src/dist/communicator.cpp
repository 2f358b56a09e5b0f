// Communicator over MPI: a duplicate of MPI_COMM_WORLD, collectives on host buffers.
#include "edgewise/gnn/dist/communicator.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_Query_cuda_support
#endif

#include <limits>
#include <stdexcept>
#include <string>

#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/check.hpp"
#if EDGEWISE_WITH_NCCL
#include "nccl_collectives.hpp"
#endif

namespace edgewise::gnn::dist {

namespace {
void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

int as_count(int64_t n, const char* what) {
  EW_REQUIRE(n >= 0 && n <= std::numeric_limits<int>::max(), "Communicator: ", what, " (", n,
             ") exceeds MPI's int counts");
  return static_cast<int>(n);
}
}  // namespace

Environment::Environment(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return;
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  owns_ = true;
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owns_ && !finalized) MPI_Finalize();
}

namespace {
bool cuda_aware_mpi() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}
}  // namespace

struct Communicator::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1, local_rank = 0;
  mutable int64_t bytes_sent = 0;
#if EDGEWISE_WITH_NCCL
  mutable nccl::State* nccl = nullptr;  // created on first use on a CUDA device
  nccl::State* nccl_for(Device device) const {
    if (!nccl) nccl = nccl::create(comm, rank, size, device.index);
    return nccl;
  }
#endif
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
#if EDGEWISE_WITH_NCCL
    if (!finalized) nccl::destroy(nccl);
#endif
    if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

Communicator Communicator::world() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw std::logic_error("Communicator::world: MPI is not initialised (create a dist::Environment)");
  auto impl = std::make_unique<Impl>();
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &impl->comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->size);
  MPI_Comm node_comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(impl->comm, MPI_COMM_TYPE_SHARED, impl->rank, MPI_INFO_NULL, &node_comm),
            "MPI_Comm_split_type");
  MPI_Comm_rank(node_comm, &impl->local_rank);
  MPI_Comm_free(&node_comm);
  return Communicator(std::move(impl));
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }

void Communicator::allreduce_sum(std::span<float> v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), as_count(static_cast<int64_t>(v.size()), "allreduce size"), MPI_FLOAT,
                          MPI_SUM, impl_->comm),
            "MPI_Allreduce");
}
void Communicator::allreduce_sum(std::span<double> v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), as_count(static_cast<int64_t>(v.size()), "allreduce size"),
                          MPI_DOUBLE, MPI_SUM, impl_->comm),
            "MPI_Allreduce");
}
void Communicator::allreduce_sum(std::span<int64_t> v) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), as_count(static_cast<int64_t>(v.size()), "allreduce size"),
                          MPI_INT64_T, MPI_SUM, impl_->comm),
            "MPI_Allreduce");
}
double Communicator::allreduce_max(double value) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, impl_->comm), "MPI_Allreduce");
  return value;
}
namespace {
template <class T>
void sum_in_rank_order(MPI_Comm comm, int size, MPI_Datatype type, std::span<T> v) {
  const int n = as_count(static_cast<int64_t>(v.size()), "allreduce size");
  std::vector<T> all(v.size() * static_cast<size_t>(size));
  check_mpi(MPI_Allgather(v.data(), n, type, all.data(), n, type, comm), "MPI_Allgather");
  for (size_t i = 0; i < v.size(); ++i) {
    T sum = all[i];
    for (int r = 1; r < size; ++r) sum += all[static_cast<size_t>(r) * v.size() + i];
    v[i] = sum;
  }
}
}  // namespace

void Communicator::allreduce_sum_in_rank_order(std::span<float> v) const {
  sum_in_rank_order(impl_->comm, impl_->size, MPI_FLOAT, v);
}
void Communicator::allreduce_sum_in_rank_order(std::span<double> v) const {
  sum_in_rank_order(impl_->comm, impl_->size, MPI_DOUBLE, v);
}

void Communicator::barrier() const { check_mpi(MPI_Barrier(impl_->comm), "MPI_Barrier"); }

void Communicator::alltoallv_rows(const float* send, std::span<const int64_t> send_offsets, float* recv,
                                  std::span<const int64_t> recv_offsets, int64_t width) const {
  const size_t p = static_cast<size_t>(impl_->size);
  EW_REQUIRE(send_offsets.size() == p + 1 && recv_offsets.size() == p + 1, "Communicator::alltoallv_rows: offsets of ",
             send_offsets.size(), " and ", recv_offsets.size(), " entries for ", p, " ranks (expected ranks + 1)");
  std::vector<int> send_counts(p), send_displs(p), recv_counts(p), recv_displs(p);
  for (size_t s = 0; s < p; ++s) {
    send_counts[s] = as_count((send_offsets[s + 1] - send_offsets[s]) * width, "send count");
    send_displs[s] = as_count(send_offsets[s] * width, "send displacement");
    recv_counts[s] = as_count((recv_offsets[s + 1] - recv_offsets[s]) * width, "receive count");
    recv_displs[s] = as_count(recv_offsets[s] * width, "receive displacement");
  }
  check_mpi(MPI_Alltoallv(send, send_counts.data(), send_displs.data(), MPI_FLOAT, recv, recv_counts.data(),
                          recv_displs.data(), MPI_FLOAT, impl_->comm),
            "MPI_Alltoallv");
  impl_->bytes_sent += (send_offsets[p] - send_offsets[0]) * width * static_cast<int64_t>(sizeof(float));
}

int Communicator::local_rank() const { return impl_->local_rank; }

const char* Communicator::transport(Device device) const {
  if (device.is_cpu()) return "mpi";
#if EDGEWISE_WITH_NCCL
  return "nccl";
#else
  return cuda_aware_mpi() ? "cuda-aware mpi" : "host staging";
#endif
}

void Communicator::alltoallv_rows(const float* send, std::span<const int64_t> send_offsets, float* recv,
                                  std::span<const int64_t> recv_offsets, int64_t width, Device device) const {
  // MPI takes host pointers, and device pointers when it is CUDA-aware (unless NCCL is there).
  if (device.is_cpu() || (!EDGEWISE_WITH_NCCL && cuda_aware_mpi())) {
    alltoallv_rows(send, send_offsets, recv, recv_offsets, width);
    return;
  }
  const size_t p = static_cast<size_t>(impl_->size);
  EW_REQUIRE(send_offsets.size() == p + 1 && recv_offsets.size() == p + 1,
             "Communicator::alltoallv_rows: offsets must have ranks + 1 entries");
#if EDGEWISE_WITH_NCCL
  nccl::alltoallv_rows(impl_->nccl_for(device), send, send_offsets, recv, recv_offsets, width);
  impl_->bytes_sent += (send_offsets[p] - send_offsets[0]) * width * static_cast<int64_t>(sizeof(float));
#else
  // Neither NCCL nor a CUDA-aware MPI: through host memory.
  std::vector<float> h_send(static_cast<size_t>(send_offsets[p] * width)), h_recv(static_cast<size_t>(recv_offsets[p] * width));
  copy_bytes(h_send.data(), Device::cpu(), send, device, h_send.size() * sizeof(float));
  alltoallv_rows(h_send.data(), send_offsets, h_recv.data(), recv_offsets, width);
  copy_bytes(recv, device, h_recv.data(), Device::cpu(), h_recv.size() * sizeof(float));
#endif
}

void Communicator::allreduce_sum(float* values, int64_t count, Device device) const {
  if (device.is_cpu()) {
    allreduce_sum_in_rank_order(std::span<float>(values, static_cast<size_t>(count)));
    return;
  }
#if EDGEWISE_WITH_NCCL
  nccl::allreduce_sum(impl_->nccl_for(device), values, count);
#else
  if (cuda_aware_mpi()) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values, as_count(count, "allreduce size"), MPI_FLOAT, MPI_SUM, impl_->comm),
              "MPI_Allreduce");
    return;
  }
  std::vector<float> host(static_cast<size_t>(count));
  copy_bytes(host.data(), Device::cpu(), values, device, host.size() * sizeof(float));
  allreduce_sum_in_rank_order(host);
  copy_bytes(values, device, host.data(), Device::cpu(), host.size() * sizeof(float));
#endif
}

int64_t Communicator::bytes_sent() const { return impl_->bytes_sent; }
void Communicator::reset_bytes_sent() const { impl_->bytes_sent = 0; }

}  // namespace edgewise::gnn::dist
