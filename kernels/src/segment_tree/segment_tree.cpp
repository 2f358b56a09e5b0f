// SegmentTree: construction, argument checks, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/segment_tree.hpp"

#include <bit>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "segment_tree/segment_tree_backends.hpp"
#include "segment_tree/segment_tree_core.hpp"

namespace edgewise {

namespace {
constexpr const char* kTree = "SegmentTree";
constexpr const char* kUpdate = "SegmentTree::update";
constexpr const char* kSample = "SegmentTree::sample";
constexpr const char* kTotal = "SegmentTree::total";
constexpr const char* kPriorities = "SegmentTree::priorities";
constexpr int64_t kMaxCapacity = int64_t{1} << 40;

void require_tree_device(const char* op, Device tree, const Context& ctx) {
  EW_REQUIRE(ctx.device() == tree, op, ": the context is on ", ctx.device().str(), " but the tree is on ",
             tree.str(), " (views are never copied between devices implicitly)");
}

// One element of a view on its device, read to the host.
template <class T>
T read_element(const T* data, int64_t k, Device device, const Context& ctx) {
  T value{};
  copy_bytes(&value, Device::cpu(), data + k, device, sizeof(T), ctx.stream());
  return value;
}
}  // namespace

SegmentTree::SegmentTree(int64_t capacity, Device device) {
  EW_REQUIRE(capacity >= 1 && capacity <= kMaxCapacity, kTree, ": capacity (", capacity, ") must lie in [1, ",
             kMaxCapacity, "]");
  require_available(device, kTree);
  capacity_ = capacity;
  leaves_ = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(capacity)));
  levels_ = std::countr_zero(static_cast<uint64_t>(leaves_));
  tree_ = Buffer<float>(2 * leaves_, device);
  tree_.fill_bytes(0);  // +0.0f everywhere: the padding leaves stay 0 for good
}

void SegmentTree::update(VectorView<const int64_t> indices, VectorView<const float> priorities, Context& ctx) {
  require_tree_device(kUpdate, device(), ctx);
  detail::require_device(kUpdate, "indices", indices.device, ctx);
  detail::require_device(kUpdate, "priorities", priorities.device, ctx);
  EW_REQUIRE(indices.size == priorities.size, kUpdate, ": indices.size() (", indices.size,
             ") must equal priorities.size() (", priorities.size, ")");
  EW_REQUIRE(indices.size >= 0, kUpdate, ": indices.size() (", indices.size, ") must be >= 0");
  EW_REQUIRE(indices.data != nullptr || indices.size == 0, kUpdate, ": indices is null but has ", indices.size,
             " elements");
  EW_REQUIRE(priorities.data != nullptr || priorities.size == 0, kUpdate, ": priorities is null but has ",
             priorities.size, " elements");
  const int64_t count = indices.size;
  if (count == 0) return;
  const bool cuda = device().is_cuda();
  if (ctx.validate) {
    int64_t bad = -1;
    if (!cuda) {
      bad = segment_tree_detail::first_bad_update_cpu(indices.data, priorities.data, count, capacity_);
    } else {
#if EDGEWISE_WITH_CUDA
      bad = segment_tree_detail::first_bad_update_cuda(indices.data, priorities.data, count, capacity_, ctx);
#else
      detail::throw_built_without_cuda(kUpdate);
#endif
    }
    if (bad >= 0) {
      const int64_t index = read_element(indices.data, bad, device(), ctx);
      EW_REQUIRE(segment_tree_detail::valid_index(index, capacity_), kUpdate, ": indices[", bad, "] (", index,
                 ") must lie in [0, ", capacity_, ")");
      const float priority = read_element(priorities.data, bad, device(), ctx);
      detail::throw_invalid_argument(kUpdate, ": priorities[", bad, "] (", priority,
                                     ") must be finite and >= 0");
    }
  }
  if (!cuda) {
    segment_tree_detail::update_cpu(tree_.data(), leaves_, levels_, indices.data, priorities.data, count, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    segment_tree_detail::update_cuda(tree_.data(), leaves_, levels_, indices.data, priorities.data, count, ctx);
#else
    detail::throw_built_without_cuda(kUpdate);
#endif
  }
}

void SegmentTree::update(VectorView<const int64_t> indices, VectorView<const float> priorities) {
  update(indices, priorities, default_context(device()));
}

void SegmentTree::sample(VectorView<int64_t> out, uint64_t seed, bool stratified, Context& ctx) const {
  require_tree_device(kSample, device(), ctx);
  detail::require_device(kSample, "out", out.device, ctx);
  EW_REQUIRE(out.size >= 0, kSample, ": out.size() (", out.size, ") must be >= 0");
  EW_REQUIRE(out.data != nullptr || out.size == 0, kSample, ": out is null but has ", out.size, " elements");
  if (out.size == 0) return;
  if (ctx.validate) {
    const float root = total(ctx);
    EW_REQUIRE(segment_tree_detail::samplable_total(root), kSample, ": total() (", root,
               ") must be finite and > 0 to draw (", out.size, " draws requested)");
  }
  if (device().is_cpu()) {
    segment_tree_detail::sample_cpu(tree_.data(), leaves_, seed, stratified, out.data, out.size);
  } else {
#if EDGEWISE_WITH_CUDA
    segment_tree_detail::sample_cuda(tree_.data(), leaves_, seed, stratified, out.data, out.size, ctx);
#else
    detail::throw_built_without_cuda(kSample);
#endif
  }
}

void SegmentTree::sample(VectorView<int64_t> out, uint64_t seed, bool stratified) const {
  sample(out, seed, stratified, default_context(device()));
}

float SegmentTree::total(Context& ctx) const {
  require_tree_device(kTotal, device(), ctx);
  return read_element(tree_.data(), 1, device(), ctx);
}

float SegmentTree::total() const {
  if (device().is_cpu()) return tree_.data()[1];
  return read_element(tree_.data(), 1, device(), default_context(device()));
}

void SegmentTree::priorities(VectorView<float> out, Context& ctx) const {
  require_tree_device(kPriorities, device(), ctx);
  detail::require_device(kPriorities, "out", out.device, ctx);
  EW_REQUIRE(out.size == capacity_, kPriorities, ": out.size() (", out.size, ") must equal capacity() (",
             capacity_, ")");
  EW_REQUIRE(out.data != nullptr, kPriorities, ": out is null but has ", out.size, " elements");
  copy_bytes(out.data, device(), tree_.data() + leaves_, device(), static_cast<std::size_t>(capacity_) * sizeof(float),
             ctx.stream());
}

void SegmentTree::priorities(VectorView<float> out) const { priorities(out, default_context(device())); }

}  // namespace edgewise
