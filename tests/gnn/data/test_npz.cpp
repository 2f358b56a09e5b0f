// Tests of the .npz / .npy reader: archives written here (stored and deflated
// members, NPY v1/v2/v3, zip64 variants) read back exactly; conversions; every
// documented error; truncation and single-byte corruption never crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "edgewise/gnn/data/npz.hpp"
#include "npz_writer.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::DataFileError;
using gnn::NpyArray;
using gnn::NpzArchive;

// Expects `fn` to throw DataFileError whose message contains every one of `parts`.
template <class Fn>
void expect_data_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no DataFileError thrown";
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

std::vector<uint8_t> payload_of(const NpyArray& a) {
  std::vector<uint8_t> out(a.data.size());
  if (!out.empty()) std::memcpy(out.data(), a.data.data(), out.size());
  return out;
}

// A mix of dtypes and shapes: scalar, empty, 1-D, 2-D, 3-D; every supported kind.
struct Sample {
  std::string key, descr;
  std::vector<int64_t> shape;
  Bytes payload;
};

std::vector<Sample> samples(std::mt19937_64& rng) {
  std::vector<Sample> s;
  auto f32 = random_values<float>(rng, 12);
  f32[3] = std::numeric_limits<float>::quiet_NaN();
  f32[4] = -0.0f;
  f32[5] = std::numeric_limits<float>::infinity();
  s.push_back({"f32", "<f4", {3, 4}, bytes_of(f32)});
  s.push_back({"f64", "<f8", {2, 3, 1}, bytes_of(random_values<double>(rng, 6, -1e300, 1e300))});
  s.push_back({"i64", "<i8", {5}, bytes_of(std::vector<int64_t>{0, -1, std::numeric_limits<int64_t>::min(),
                                                                   std::numeric_limits<int64_t>::max(), 42})});
  s.push_back({"i32", "<i4", {2, 2}, bytes_of(std::vector<int32_t>{-7, 7, 1 << 30, -(1 << 30)})});
  s.push_back({"i16", "<i2", {3}, bytes_of(std::vector<int16_t>{-32768, 32767, 0})});
  s.push_back({"i8", "|i1", {4}, bytes_of(std::vector<int8_t>{-128, 127, 0, -1})});
  s.push_back({"u8", "|u1", {0}, Bytes{}});
  s.push_back({"u16", "<u2", {2}, bytes_of(std::vector<uint16_t>{65535, 1})});
  s.push_back({"u32", "<u4", {1}, bytes_of(std::vector<uint32_t>{4000000000u})});
  s.push_back({"u64", "<u8", {2}, bytes_of(std::vector<uint64_t>{~0ull, 3})});
  s.push_back({"flag", "|b1", {2, 2}, Bytes{1, 0, 0, 1}});
  s.push_back({"scalar", "<i8", {}, bytes_of(std::vector<int64_t>{2708})});
  s.push_back({"empty2d", "<f4", {0, 3}, Bytes{}});
  return s;
}

std::string variant_name(bool deflate, int version, const ZipOptions& z) {
  return std::string(deflate ? "deflate" : "stored") + "/npy v" + std::to_string(version) +
         (z.zip64_local ? "/zip64 local" : "") + (z.zip64_central ? "/zip64 central" : "") +
         (z.zip64_end ? "/zip64 end" : "") + (z.comment.empty() ? "" : "/comment");
}

std::vector<ZipOptions> zip_variants() {
  std::vector<ZipOptions> v(6);
  v[1].zip64_local = true;
  v[2].zip64_central = true;
  v[3].zip64_end = true;
  v[4].zip64_local = v[4].zip64_central = v[4].zip64_end = true;
  v[5].comment = "a comment that holds PK\x05\x06 lookalike bytes? no: plain text";
  return v;
}

TEST(Npz, EveryDtypeShapeAndArchiveVariantReadsBackExactly) {
  auto rng = rng_for(1);
  const std::vector<Sample> arrays = samples(rng);
  TempDir dir;
  for (bool deflate : {false, true}) {
    for (int version : {1, 2, 3}) {
      for (const ZipOptions& z : zip_variants()) {
        SCOPED_TRACE(variant_name(deflate, version, z));
        std::vector<ZipMember> members;
        for (const Sample& a : arrays)
          members.push_back({a.key + ".npy", make_npy(a.descr, a.shape, a.payload, {.version = version}), deflate});
        const auto path = dir.file("variant.npz");
        write_file(path, make_zip(members, z));
        NpzArchive archive = NpzArchive::open(path.string());
        ASSERT_EQ(archive.entries().size(), arrays.size());
        for (size_t i = 0; i < arrays.size(); ++i) {
          const Sample& a = arrays[i];
          SCOPED_TRACE(a.key);
          EXPECT_EQ(archive.keys()[i], a.key);
          EXPECT_TRUE(archive.contains(a.key));
          EXPECT_TRUE(archive.contains(a.key + ".npy"));
          EXPECT_EQ(archive.entries()[i].method, deflate ? 8 : 0);
          const gnn::NpyHeader h = archive.header(a.key);
          EXPECT_EQ(h.version_major, version);
          EXPECT_EQ(h.shape, a.shape);
          const NpyArray got = archive.read(a.key);
          EXPECT_EQ(got.dtype.str(), a.descr);
          EXPECT_EQ(got.shape, a.shape);
          EXPECT_EQ(payload_of(got), a.payload);
        }
        EXPECT_FALSE(archive.contains("missing"));
      }
    }
  }
}

TEST(Npz, LargeDeflatedEntryStreamsInPiecesAndMatches) {
  // 8 MB, mostly zeros: several input chunks, several pipelined pieces.
  auto rng = rng_for(2);
  const int64_t rows = 2000, cols = 1000;
  std::vector<float> values(static_cast<size_t>(rows * cols), 0.0f);
  std::uniform_int_distribution<int64_t> pick(0, rows * cols - 1);
  for (int i = 0; i < 200000; ++i) values[static_cast<size_t>(pick(rng))] = static_cast<float>(i % 97) - 48.0f;
  TempDir dir;
  const auto path = dir.file("big.npz");
  write_file(path, make_zip({{"x.npy", npy_of("<f4", values, {rows, cols}), true}}, {.zip64_local = true}));
  NpzArchive archive = NpzArchive::open(path.string());
  const NpyArray a = archive.read("x");
  EXPECT_TRUE(equal_exactly(a.as<float>(), values));

  // read_pipelined with a consumer: pieces arrive in order, contiguous, whole rows.
  gnn::NpyStream s = archive.stream("x");
  std::vector<float> seen;
  int64_t pieces = 0;
  const size_t piece = static_cast<size_t>(777 * cols) * sizeof(float);
  s.read_pipelined(nullptr, piece, [&](const std::byte* data, size_t bytes) {
    EXPECT_TRUE(bytes == piece || seen.size() * sizeof(float) + bytes == values.size() * sizeof(float));
    const float* f = reinterpret_cast<const float*>(data);
    seen.insert(seen.end(), f, f + bytes / sizeof(float));
    ++pieces;
  });
  EXPECT_EQ(pieces, (rows + 776) / 777);
  EXPECT_EQ(s.remaining(), 0u);
  s.finish();
  EXPECT_TRUE(equal_exactly(seen, values));

  // Sequential reads in odd sizes give the same bytes.
  gnn::NpyStream t = archive.stream("x");
  std::vector<float> step(values.size());
  size_t at = 0;
  for (size_t n = 1; at < step.size(); n = n * 3 + 1) {
    const size_t take = std::min(n, step.size() - at);
    t.read(step.data() + at, take * sizeof(float));
    at += take;
  }
  t.finish();
  EXPECT_TRUE(equal_exactly(step, values));
}

TEST(Npz, ConsumerExceptionStopsThePipelineAndPropagates) {
  std::vector<int64_t> v(1 << 18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
  TempDir dir;
  const auto path = dir.file("c.npz");
  write_file(path, make_zip({{"v.npy", npy_of("<i8", v, {static_cast<int64_t>(v.size())}), true}}));
  gnn::NpyStream s = NpzArchive::open(path.string()).stream("v");
  int calls = 0;
  EXPECT_THROW(s.read_pipelined(nullptr, 1 << 16,
                                [&](const std::byte*, size_t) {
                                  if (++calls == 3) throw std::runtime_error("consumer gave up");
                                }),
               std::runtime_error);
  EXPECT_EQ(calls, 3);
}

TEST(Npz, FortranOrderArraysComeBackInCOrder) {
  TempDir dir;
  // 2-D: C-order value at (i, j) = 10 i + j; Fortran payload lists column by column.
  std::vector<int32_t> fortran2, c2;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) fortran2.push_back(10 * i + j);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) c2.push_back(10 * i + j);
  // 3-D (2, 3, 4): value 100 i + 10 j + k.
  std::vector<int32_t> fortran3, c3;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) fortran3.push_back(100 * i + 10 * j + k);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) c3.push_back(100 * i + 10 * j + k);
  const auto path = dir.file("f.npz");
  write_file(path, make_zip({{"a.npy", npy_of("<i4", fortran2, {3, 4}, {.fortran_order = true})},
                             {"b.npy", npy_of("<i4", fortran3, {2, 3, 4}, {.fortran_order = true}), false}}));
  NpzArchive archive = NpzArchive::open(path.string());
  EXPECT_TRUE(archive.header("a").fortran_order);
  EXPECT_TRUE(equal_exactly(archive.read("a").as<int32_t>(), c2));
  EXPECT_TRUE(equal_exactly(archive.read("b").as<int32_t>(), c3));
}

NpyArray array_of(const std::string& descr, const Bytes& payload, std::vector<int64_t> shape) {
  NpyArray a;
  a.dtype = gnn::NpyDtype{descr[1], std::stoi(descr.substr(2))};
  a.shape = std::move(shape);
  a.data.resize(payload.size());
  if (!payload.empty()) std::memcpy(a.data.data(), payload.data(), payload.size());
  a.source = "test: " + descr;
  return a;
}

TEST(Npy, ConversionsAreExactOrRefusedWithThePosition) {
  const NpyArray i64 = array_of("<i8", bytes_of(std::vector<int64_t>{1, -2, 3000000000ll}), {3});
  EXPECT_EQ(i64.as<int64_t>(), (std::vector<int64_t>{1, -2, 3000000000ll}));
  EXPECT_EQ(i64.as<double>(), (std::vector<double>{1, -2, 3e9}));
  expect_data_error([&] { (void)i64.as<int32_t>(); }, {"test: <i8", "element 2", "3000000000", "int32"});
  expect_data_error([&] { (void)i64.as<uint8_t>(); }, {"element 1", "(-2)", "uint8"});

  const NpyArray u64 = array_of("<u8", bytes_of(std::vector<uint64_t>{5, ~0ull}), {2});
  expect_data_error([&] { (void)u64.as<int64_t>(); }, {"element 1", "18446744073709551615", "int64"});

  const NpyArray f64 = array_of("<f8", bytes_of(std::vector<double>{0.1, 1e300, -1e300, 3.0}), {4});
  const std::vector<float> f = f64.as<float>();
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(f[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[2], -std::numeric_limits<float>::infinity());
  expect_data_error([&] { (void)f64.as<int64_t>(); }, {"element 0", "int64"});

  const NpyArray integral = array_of("<f4", bytes_of(std::vector<float>{2.0f, -7.0f, 0.0f}), {3});
  EXPECT_EQ(integral.as<int32_t>(), (std::vector<int32_t>{2, -7, 0}));
  const NpyArray nan = array_of("<f4", bytes_of(std::vector<float>{1.0f, std::nanf("")}), {2});
  expect_data_error([&] { (void)nan.as<int64_t>(); }, {"element 1", "int64"});
  const NpyArray big = array_of("<f8", bytes_of(std::vector<double>{9223372036854775808.0}), {1});
  expect_data_error([&] { (void)big.as<int64_t>(); }, {"element 0"});
  const NpyArray min64 = array_of("<f8", bytes_of(std::vector<double>{-9223372036854775808.0}), {1});
  EXPECT_EQ(min64.as<int64_t>()[0], std::numeric_limits<int64_t>::min());

  const NpyArray flags = array_of("|b1", Bytes{0, 1, 2}, {3});
  EXPECT_EQ(flags.as<int64_t>(), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(flags.as<float>(), (std::vector<float>{0, 1, 1}));
  const NpyArray i8 = array_of("|i1", Bytes{0xFF, 0x7F}, {2});
  EXPECT_EQ(i8.as<int32_t>(), (std::vector<int32_t>{-1, 127}));
  expect_data_error([&] { (void)i8.as<uint8_t>(); }, {"element 0", "(-1)"});

  EXPECT_EQ(array_of("<i8", bytes_of(std::vector<int64_t>{9}), {}).scalar<int64_t>(), 9);
  EXPECT_EQ(array_of("<i8", bytes_of(std::vector<int64_t>{9}), {1, 1}).scalar<int32_t>(), 9);
  expect_data_error([] { (void)array_of("<i8", bytes_of(std::vector<int64_t>{1, 2}), {2}).scalar<int64_t>(); },
                    {"single value", "2 elements"});
}

// ---- errors -------------------------------------------------------------------

std::string write_archive(const TempDir& dir, const std::string& name, const std::vector<ZipMember>& members,
                          const ZipOptions& z = {}, ZipLayout* layout = nullptr) {
  const auto path = dir.file(name);
  write_file(path, make_zip(members, z, layout));
  return path.string();
}

TEST(NpzErrors, MissingFileDirectoryAndNonZipFiles) {
  TempDir dir;
  const std::string missing = dir.file("nope.npz").string();
  expect_data_error([&] { NpzArchive::open(missing); }, {missing, "cannot open"});
  expect_data_error([&] { NpzArchive::open(dir.path().string()); }, {"is a directory"});
  write_file(dir.file("text.npz"), Bytes(300, 'x'));
  expect_data_error([&] { NpzArchive::open(dir.file("text.npz").string()); }, {"text.npz", "not a ZIP archive"});
  write_file(dir.file("tiny.npz"), Bytes{'P', 'K'});
  expect_data_error([&] { NpzArchive::open(dir.file("tiny.npz").string()); }, {"not a ZIP archive"});
  write_file(dir.file("empty.npz"), Bytes{});
  expect_data_error([&] { NpzArchive::open(dir.file("empty.npz").string()); }, {"not a ZIP archive"});
  write_file(dir.file("array.npy"), npy_of("<f4", std::vector<float>{1, 2}, {2}));
  expect_data_error([&] { NpzArchive::open(dir.file("array.npy").string()); }, {"single .npy array"});
}

TEST(NpzErrors, EmptyArchiveHasNoKeysAndMissingKeyIsNamed) {
  TempDir dir;
  NpzArchive empty = NpzArchive::open(write_archive(dir, "e.npz", {}));
  EXPECT_TRUE(empty.keys().empty());
  expect_data_error([&] { (void)empty.read("x"); }, {"no array named 'x'", "nothing"});
  NpzArchive two = NpzArchive::open(
      write_archive(dir, "t.npz", {{"a.npy", npy_of("<i8", std::vector<int64_t>{1}, {1})},
                                   {"b.npy", npy_of("<i8", std::vector<int64_t>{2}, {1})}}));
  expect_data_error([&] { (void)two.read("node_feat"); }, {"t.npz", "no array named 'node_feat'", "a, b"});
}

TEST(NpzErrors, TruncationAnywhereIsACleanError) {
  TempDir dir;
  auto rng = rng_for(3);
  for (bool deflate : {false, true}) {
    const std::vector<ZipMember> members = {
        {"a.npy", npy_of("<f4", random_values<float>(rng, 300), {300}), deflate},
        {"b.npy", npy_of("<i8", random_values<int64_t>(rng, 50), {5, 10}), deflate}};
    const Bytes full = make_zip(members, {.zip64_local = true});
    for (size_t cut : {size_t{0}, size_t{1}, size_t{4}, size_t{21}, size_t{22}, size_t{30}, full.size() / 4,
                       full.size() / 2, full.size() - 60, full.size() - 22, full.size() - 1}) {
      SCOPED_TRACE("cut at " + std::to_string(cut) + (deflate ? " (deflate)" : " (stored)"));
      const auto path = dir.file("cut.npz");
      write_file(path, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)));
      try {
        NpzArchive a = NpzArchive::open(path.string());
        for (const std::string& k : a.keys()) (void)a.read(k);
        ADD_FAILURE() << "a truncated archive was accepted";
      } catch (const DataFileError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("cut.npz"), std::string::npos) << msg;
      }
    }
  }
}

TEST(NpzErrors, EntryDataRunningPastTheDirectoryIsTruncation) {
  // The central directory survives, but an entry's recorded size is larger than
  // the bytes before the directory (what a lost block in the middle looks like).
  TempDir dir;
  ZipLayout lay;
  Bytes zip = make_zip({{"a.npy", npy_of("<f4", std::vector<float>(100, 1.0f), {100}), false}}, {}, &lay);
  put_le(zip, lay.central[0] + 20, 5000, 4);  // compressed size
  put_le(zip, lay.central[0] + 24, 5000, 4);  // uncompressed size
  write_file(dir.file("p.npz"), zip);
  NpzArchive a = NpzArchive::open(dir.file("p.npz").string());
  expect_data_error([&] { (void)a.read("a"); }, {"entry 'a.npy'", "runs past", "truncated or corrupt"});
}

TEST(NpzErrors, BadCrcIsReportedWithBothValues) {
  TempDir dir;
  for (bool deflate : {false, true}) {
    ZipLayout lay;
    Bytes zip = make_zip({{"a.npy", npy_of("<f4", std::vector<float>{1, 2, 3}, {3}), deflate}}, {}, &lay);
    zip[lay.central[0] + 16] ^= 0x01;  // the CRC the directory records
    write_file(dir.file("crc.npz"), zip);
    NpzArchive a = NpzArchive::open(dir.file("crc.npz").string());
    expect_data_error([&] { (void)a.read("a"); }, {"crc.npz", "entry 'a.npy'", "CRC-32 mismatch", "corrupt"});
  }
  // A flipped payload byte in a stored member: the CRC catches it.
  ZipLayout lay;
  const Bytes npy = npy_of("<f4", std::vector<float>{1, 2, 3}, {3});
  Bytes zip = make_zip({{"a.npy", npy, false}}, {}, &lay);
  zip[lay.data[0] + npy.size() - 1] ^= 0x40;
  write_file(dir.file("flip.npz"), zip);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("flip.npz").string()).read("a"); }, {"CRC-32 mismatch"});
}

TEST(NpzErrors, CorruptDeflateDataIsAnError) {
  TempDir dir;
  auto rng = rng_for(4);
  ZipLayout lay;
  Bytes zip = make_zip({{"a.npy", npy_of("<f8", random_values<double>(rng, 2000), {2000}), true}}, {}, &lay);
  for (size_t i = 0; i < 64; ++i) zip[lay.data[0] + 40 + i] = static_cast<uint8_t>(0xA5 ^ i);
  write_file(dir.file("z.npz"), zip);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("z.npz").string()).read("a"); }, {"entry 'a.npy'"});
}

TEST(NpzErrors, UnsupportedMethodAndEncryptionAreNamed) {
  TempDir dir;
  ZipLayout lay;
  Bytes zip = make_zip({{"a.npy", npy_of("<f4", std::vector<float>{1}, {1}), false}}, {}, &lay);
  Bytes bzip = zip;
  put_le(bzip, lay.central[0] + 10, 12, 2);
  put_le(bzip, lay.local_header[0] + 8, 12, 2);
  write_file(dir.file("m.npz"), bzip);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("m.npz").string()).read("a"); },
                    {"unsupported compression method 12", "0 stored and 8 deflate"});
  Bytes enc = zip;
  put_le(enc, lay.central[0] + 8, 1, 2);
  write_file(dir.file("enc.npz"), enc);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("enc.npz").string()).read("a"); }, {"encrypted"});
}

TEST(NpzErrors, LocalHeaderMustMatchTheDirectory) {
  TempDir dir;
  ZipLayout lay;
  Bytes zip = make_zip({{"a.npy", npy_of("<f4", std::vector<float>{1}, {1}), false}}, {}, &lay);
  Bytes renamed = zip;
  renamed[lay.local_header[0] + 30] = 'z';
  write_file(dir.file("n.npz"), renamed);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("n.npz").string()).read("a"); },
                    {"local header names 'z.npy'"});
  Bytes bad_sig = zip;
  bad_sig[lay.local_header[0]] = 'Q';
  write_file(dir.file("s.npz"), bad_sig);
  expect_data_error([&] { (void)NpzArchive::open(dir.file("s.npz").string()).read("a"); }, {"no local header"});
}

NpzArchive archive_with(const TempDir& dir, const Bytes& npy, bool deflate = true) {
  return NpzArchive::open(write_archive(dir, "h.npz", {{"x.npy", npy, deflate}}));
}

TEST(NpyErrors, BadHeadersAreNamed) {
  TempDir dir;
  const Bytes good = npy_of("<f4", std::vector<float>{1, 2, 3, 4}, {2, 2});
  Bytes magic = good;
  magic[1] = 'X';
  expect_data_error([&] { (void)archive_with(dir, magic).read("x"); }, {"entry 'x.npy'", "bad magic"});
  Bytes version = good;
  version[6] = 4;
  expect_data_error([&] { (void)archive_with(dir, version).read("x"); }, {"unsupported NPY version 4"});
  expect_data_error([&] { (void)archive_with(dir, Bytes(good.begin(), good.begin() + 6)).read("x"); },
                    {"too short for an NPY header"});
  Bytes long_header = good;
  put_le(long_header, 8, 60000, 2);
  expect_data_error([&] { (void)archive_with(dir, long_header).read("x"); }, {"header length 60000 exceeds"});

  const Bytes payload = bytes_of(std::vector<float>{1, 2, 3, 4});
  const auto with_dict = [&](const std::string& dict) { return make_npy("", {}, payload, {.dict = dict}); };
  expect_data_error([&] { (void)archive_with(dir, with_dict("{'descr': '<f4', 'shape': (4,), }")).read("x"); },
                    {"missing key 'fortran_order'"});
  expect_data_error(
      [&] { (void)archive_with(dir, with_dict("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,), }")).read("x"); },
      {"fortran_order must be True or False"});
  expect_data_error(
      [&] { (void)archive_with(dir, with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }")).read("x"); },
      {"negative dimension"});
  expect_data_error([&] { (void)archive_with(dir, with_dict("not a dict")).read("x"); }, {"bad NPY header"});
  expect_data_error(
      [&] {
        (void)archive_with(dir, with_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }"))
            .read("x");
      },
      {"structured dtypes are not supported"});
  expect_data_error(
      [&] {
        (void)archive_with(dir, with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, "
                                          "99999999999, 99999999999), }"))
            .read("x");
      },
      {"overflows"});
  // A valid dict with spaces and Python 2 long literals.
  const NpyArray ok =
      archive_with(dir, with_dict("{ 'shape' : (2L, 2L) , 'fortran_order' : False , 'descr' : \"<f4\" }")).read("x");
  EXPECT_EQ(ok.shape, (std::vector<int64_t>{2, 2}));
}

TEST(NpyErrors, UnsupportedDtypesAreNamed) {
  TempDir dir;
  const Bytes p16(16, 0);
  expect_data_error([&] { (void)archive_with(dir, make_npy(">f4", {4}, p16)).read("x"); },
                    {"unsupported dtype '>f4'", "big-endian"});
  expect_data_error([&] { (void)archive_with(dir, make_npy(">i8", {2}, p16)).read("x"); }, {"big-endian"});
  for (const char* descr : {"<c8", "<f2", "<U4", "|O", "|S16", "<M8", "<i3", "f4"}) {
    SCOPED_TRACE(descr);
    expect_data_error([&] { (void)archive_with(dir, make_npy(descr, {1}, p16)).read("x"); },
                      {std::string("unsupported dtype '") + descr + "'"});
  }
  // One-byte big-endian is just a byte: accepted.
  EXPECT_EQ(archive_with(dir, make_npy(">u1", {2}, Bytes{7, 9})).read("x").as<int32_t>(), (std::vector<int32_t>{7, 9}));
}

TEST(NpyErrors, ShapeTimesItemsizeMustEqualThePayload) {
  TempDir dir;
  for (bool deflate : {false, true}) {
    const Bytes short_payload = make_npy("<f4", {3, 4}, Bytes(44, 0));
    expect_data_error([&] { (void)archive_with(dir, short_payload, deflate).read("x"); },
                      {"entry 'x.npy'", "shape (3, 4) x itemsize 4 = 48 bytes", "44 payload bytes"});
    const Bytes long_payload = make_npy("<i8", {2}, Bytes(24, 0));
    expect_data_error([&] { (void)archive_with(dir, long_payload, deflate).header("x"); }, {"(2,) x itemsize 8 = 16"});
  }
}

// Every single-byte corruption of a small archive either reads back the same
// arrays or throws DataFileError — no crash, no other exception, no huge
// allocation (ASan / UBSan builds run this too).
TEST(NpzErrors, EverySingleByteCorruptionIsDetectedOrHarmless) {
  TempDir dir;
  for (bool deflate : {false, true}) {
    {
      const bool zip64 = deflate;  // stored + classic headers, deflate + zip64 headers
      const std::vector<ZipMember> members = {
          {"num.npy", npy_of("<i8", std::vector<int64_t>{12}, {}), deflate},
          {"x.npy", npy_of("<f4", std::vector<float>{0, 1, 0, 0, 2.5f, 0}, {2, 3}), deflate}};
      const Bytes good = make_zip(members, {.zip64_local = zip64, .zip64_central = zip64});
      const auto path = dir.file("fuzz.npz");
      for (size_t i = 0; i < good.size(); ++i) {
        Bytes bad = good;
        bad[i] ^= 0xFF;
        write_file(path, bad);
        try {
          NpzArchive a = NpzArchive::open(path.string());
          const NpyArray num = a.read("num"), x = a.read("x");
          EXPECT_EQ(num.as<int64_t>(), (std::vector<int64_t>{12})) << "byte " << i;
          EXPECT_EQ(x.as<float>(), (std::vector<float>{0, 1, 0, 0, 2.5f, 0})) << "byte " << i;
        } catch (const DataFileError&) {
          // detected
        } catch (const std::exception& e) {
          ADD_FAILURE() << "byte " << i << ": unexpected " << typeid(e).name() << ": " << e.what();
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgewise::test
