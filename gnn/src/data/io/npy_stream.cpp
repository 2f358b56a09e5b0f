// NpyStream: sequential payload reads, and the two-thread pipeline (inflate here,
// CRC-32 + the caller's consumer on a second thread) for large arrays.
#include <zlib.h>

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "data/io/npy_stream_impl.hpp"

namespace edgewise::gnn {

NpyStream::NpyStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NpyStream::NpyStream(NpyStream&&) noexcept = default;
NpyStream& NpyStream::operator=(NpyStream&&) noexcept = default;
NpyStream::~NpyStream() = default;

const NpyHeader& NpyStream::header() const { return impl_->header; }
uint64_t NpyStream::remaining() const { return impl_->reader.remaining(); }

void NpyStream::read(void* dst, std::size_t bytes) {
  ZipEntryReader& r = impl_->reader;
  r.read(static_cast<std::byte*>(dst), bytes);
  if (bytes > 0 && r.remaining() == 0) r.check_crc(r.crc());
}

void NpyStream::finish() const {
  if (remaining() != 0)
    throw DataFileError(impl_->reader.where() + ": " + std::to_string(remaining()) + " payload bytes were not read");
}

void NpyStream::read_pipelined(void* dst, std::size_t piece_bytes,
                               const std::function<void(const std::byte*, std::size_t)>& consume) {
  EW_REQUIRE(piece_bytes > 0, "NpyStream::read_pipelined: piece_bytes must be > 0");
  ZipEntryReader& r = impl_->reader;
  const uint64_t total = r.remaining();
  if (total == 0) return;
  const uint64_t pieces = (total + piece_bytes - 1) / piece_bytes;
  auto* out = static_cast<std::byte*>(dst);

  if (pieces == 1) {  // too small to be worth a thread
    std::vector<std::byte> local;
    if (!out) {
      local.resize(static_cast<std::size_t>(total));
      out = local.data();
    }
    r.read(out, static_cast<std::size_t>(total));
    r.check_crc(r.crc());
    if (consume) consume(out, static_cast<std::size_t>(total));
    return;
  }

  // Without dst, pieces cycle through kRing buffers: inflating one while the
  // consumer works on another, with a spare so neither waits on a hand-off.
  // (Uninitialised: every byte is inflated before it is read.)
  constexpr uint64_t kRing = 3;
  std::unique_ptr<std::byte[]> ring;
  if (!out) ring = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(kRing * piece_bytes));
  const auto piece = [&](uint64_t i) -> std::byte* {
    return out ? out + i * piece_bytes : ring.get() + (i % kRing) * piece_bytes;
  };
  const auto piece_size = [&](uint64_t i) -> std::size_t {
    return static_cast<std::size_t>(std::min<uint64_t>(piece_bytes, total - i * piece_bytes));
  };

  std::mutex mutex;
  std::condition_variable changed;
  uint64_t produced = 0, consumed = 0;
  bool abort = false;
  std::exception_ptr consumer_error;
  unsigned long crc = r.crc();  // the header's bytes so far; written only by the consumer

  std::thread consumer([&] {
    for (uint64_t i = 0; i < pieces; ++i) {
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return produced > i || abort; });
        if (produced <= i) return;  // aborted by the producer
      }
      try {
        crc = crc32_z(crc, reinterpret_cast<const Bytef*>(piece(i)), piece_size(i));
        if (consume) consume(piece(i), piece_size(i));
      } catch (...) {
        std::lock_guard lock(mutex);
        consumer_error = std::current_exception();
        abort = true;
        changed.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      consumed = i + 1;
      changed.notify_all();
    }
  });

  try {
    for (uint64_t i = 0; i < pieces; ++i) {
      if (!out) {  // wait for piece i - kRing's buffer to be released
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return consumed + kRing > i || abort; });
        if (abort) break;
      }
      r.read(piece(i), piece_size(i), /*track_crc=*/false);
      std::lock_guard lock(mutex);
      produced = i + 1;
      changed.notify_all();
      if (abort) break;
    }
  } catch (...) {
    {
      std::lock_guard lock(mutex);
      abort = true;
      changed.notify_all();
    }
    consumer.join();
    throw;
  }
  consumer.join();
  if (consumer_error) std::rethrow_exception(consumer_error);
  r.check_crc(crc);
}

}  // namespace edgewise::gnn
