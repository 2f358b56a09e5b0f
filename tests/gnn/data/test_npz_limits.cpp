// The .npz reader's resource limits: entries whose declared sizes are over the cap
// (NpzReadOptions, EDGEWISE_NPZ_MAX_BYTES, 64 GiB by default), impossible for their
// compression, or at odds with their NPY header are refused before any allocation,
// with a DataFileError naming the file and the entry (never std::bad_alloc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "npz_writer.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::DataFileError;
using gnn::NpzArchive;
using gnn::NpzReadOptions;

constexpr uint64_t kTwoTo40 = uint64_t{1} << 40;

// Runs `fn` expecting DataFileError containing every one of `parts`. Any other
// exception (std::bad_alloc from a huge allocation, above all) fails the test.
template <class Fn>
void expect_refused(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no DataFileError thrown";
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected DataFileError, got: " << e.what();
  }
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A one-entry archive "x.npy" with a zip64 central record, whose declared sizes the
// tests overwrite in place (the bytes on disk stay small).
struct Crafted {
  Bytes zip;
  size_t usize_at = 0, csize_at = 0;  // the 64-bit size fields of the zip64 extra
};

Crafted crafted(const Bytes& npy, bool deflate) {
  Crafted c;
  ZipLayout lay;
  c.zip = make_zip({{"x.npy", npy, deflate}}, {.zip64_central = true}, &lay);
  const size_t extra = lay.central[0] + 46 + std::string("x.npy").size();
  c.usize_at = extra + 4;
  c.csize_at = extra + 12;
  return c;
}

std::string write(const TempDir& dir, const std::string& name, const Bytes& bytes) {
  write_file(dir.file(name), bytes);
  return dir.file(name).string();
}

TEST(NpzLimits, AHeaderDeclaringTwoTo40ElementsIsRefusedNotAllocated) {
  TempDir dir;
  // The NPY header claims 2^40 float64s; the entry's true payload is 8 bytes.
  const Bytes npy = make_npy("<f8", {static_cast<int64_t>(kTwoTo40)}, Bytes(8, 0));
  for (bool deflate : {false, true}) {
    SCOPED_TRACE(deflate ? "deflate" : "stored");
    const std::string path = write(dir, "shape.npz", make_zip({{"x.npy", npy, deflate}}));
    NpzArchive a = NpzArchive::open(path);
    expect_refused([&] { (void)a.read("x"); }, {"shape.npz", "'x.npy'", "1099511627776", "8 payload bytes"});
  }
}

TEST(NpzLimits, ADeclaredSizeOverTheDefaultCapIsRefusedFirst) {
  TempDir dir;
  ScopedEnv env("EDGEWISE_NPZ_MAX_BYTES", std::nullopt);
  const Bytes npy = make_npy("<f8", {static_cast<int64_t>(kTwoTo40)}, Bytes(8, 0));
  Crafted c = crafted(npy, /*deflate=*/false);
  const uint64_t declared = 128 + 8 * kTwoTo40;  // header + 2^40 float64s: 8 TiB
  put_le(c.zip, c.usize_at, declared, 8);
  put_le(c.zip, c.csize_at, declared, 8);
  const std::string path = write(dir, "huge.npz", c.zip);
  NpzArchive a = NpzArchive::open(path);
  expect_refused([&] { (void)a.read("x"); }, {"huge.npz", "'x.npy'", std::to_string(declared), "68719476736",
                                               "EDGEWISE_NPZ_MAX_BYTES"});
  expect_refused([&] { (void)a.header("x"); }, {"huge.npz", "over the limit"});
}

TEST(NpzLimits, DeflateCannotDeclareMoreThanItCanInflate) {
  TempDir dir;
  const Bytes npy = make_npy("<f8", {4}, Bytes(32, 0));
  Crafted c = crafted(npy, /*deflate=*/true);
  put_le(c.zip, c.usize_at, uint64_t{1} << 34, 8);  // 16 GiB from a few dozen bytes: under the cap, impossible
  const std::string path = write(dir, "bomb.npz", c.zip);
  expect_refused([&] { (void)NpzArchive::open(path).read("x"); }, {"bomb.npz", "'x.npy'", "impossible"});
}

TEST(NpzLimits, AStoredEntryMustNotDeclareMoreThanItStores) {
  TempDir dir;
  const Bytes npy = make_npy("<f8", {4}, Bytes(32, 0));
  Crafted c = crafted(npy, /*deflate=*/false);
  put_le(c.zip, c.usize_at, uint64_t{1} << 34, 8);
  const std::string path = write(dir, "stored.npz", c.zip);
  expect_refused([&] { (void)NpzArchive::open(path).read("x"); }, {"stored.npz", "'x.npy'", "stored entry"});
}

TEST(NpzLimits, TheCapIsSetByOptionsOrTheEnvironment) {
  TempDir dir;
  // 80 000 bytes of zeros: deflates to a few hundred bytes, a plausible ratio.
  const Bytes npy = make_npy("<f8", {10000}, Bytes(80000, 0));
  const std::string path = write(dir, "zeros.npz", make_zip({{"x.npy", npy, true}}));
  {
    ScopedEnv env("EDGEWISE_NPZ_MAX_BYTES", std::nullopt);
    EXPECT_EQ(NpzArchive::open(path).read("x").size(), 10000);
    expect_refused([&] { (void)NpzArchive::open(path, NpzReadOptions{.max_entry_bytes = 50000}).read("x"); },
                   {"zeros.npz", "'x.npy'", "limit of 50000"});
    EXPECT_EQ(NpzArchive::open(path, {.max_entry_bytes = npy.size()}).read("x").size(), 10000);  // the cap is inclusive
  }
  {
    ScopedEnv env("EDGEWISE_NPZ_MAX_BYTES", "64K");
    EXPECT_EQ(gnn::npz_max_entry_bytes(), uint64_t{65536});
    expect_refused([&] { (void)NpzArchive::open(path).read("x"); }, {"zeros.npz", "limit of 65536"});
    // Options win over the environment.
    EXPECT_EQ(NpzArchive::open(path, {.max_entry_bytes = 1 << 20}).read("x").size(), 10000);
  }
  for (const char* bad : {"abc", "-5", "0", "12Q", "99999999999999999999", "20000000T"}) {
    ScopedEnv env("EDGEWISE_NPZ_MAX_BYTES", bad);
    try {
      (void)NpzArchive::open(path);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("EDGEWISE_NPZ_MAX_BYTES"), std::string::npos) << e.what();
    }
  }
}

TEST(NpzLimits, AnOversizedNpyHeaderLengthIsRefused) {
  TempDir dir;
  // A v2 header whose 32-bit length claims 4 GiB - 1.
  Bytes npy = make_npy("<f8", {1}, Bytes(8, 0), {.version = 2});
  put_le(npy, 8, 0xFFFFFFFFu, 4);
  const std::string path = write(dir, "header.npz", make_zip({{"x.npy", npy, false}}));
  expect_refused([&] { (void)NpzArchive::open(path).read("x"); }, {"header.npz", "'x.npy'", "header length"});
}

TEST(NpzLimits, ADatasetDeclaringTwoTo40NodesIsRefusedNotAllocated) {
  TempDir dir;
  // A few bytes: num_nodes = 2^40, one edge, no features (the loader would size
  // labels and feature offsets by num_nodes).
  const std::string path = write(
      dir, "nodes.npz",
      make_zip({{"num_nodes.npy", npy_of("<i8", std::vector<int64_t>{static_cast<int64_t>(kTwoTo40)}, {})},
                {"edge_index.npy", npy_of("<i8", std::vector<int64_t>{0, 1}, {2, 1})}}));
  expect_refused([&] { (void)gnn::load_dataset(path); }, {"nodes.npz", "num_nodes", "1099511627776", "2^31"});
}

}  // namespace
}  // namespace edgewise::test
