// Philox4x32-10 (common/philox.hpp): Random123's known-answer vectors, the keyed
// stream layout, and the exact ranges of the uniform conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "edgewise/kernels/common/philox.hpp"

namespace edgewise::test {
namespace {

::testing::AssertionResult same_block(PhiloxBlock got, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  if (got.v[0] == w0 && got.v[1] == w1 && got.v[2] == w2 && got.v[3] == w3) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hex << "got " << got.v[0] << " " << got.v[1] << " " << got.v[2] << " "
                                       << got.v[3] << ", expected " << w0 << " " << w1 << " " << w2 << " " << w3;
}

// Random123 tests/kat_vectors, the three "philox4x32 10" lines (counter, key -> output).
TEST(Philox, MatchesRandom123KnownAnswerVectors) {
  EXPECT_TRUE(same_block(philox4x32_10({{0, 0, 0, 0}}, {{0, 0}}), 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8));
  EXPECT_TRUE(same_block(philox4x32_10({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, {{0xffffffff, 0xffffffff}}),
                         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd));
  EXPECT_TRUE(same_block(philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, {{0xa4093822, 0x299f31d0}}),
                         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1));
}

TEST(Philox, KeyedStreamLayoutIsSeedKeyAndIndexStreamCounter) {
  const uint64_t seed = 0x0123456789abcdefull, stream = 0xfedcba9876543210ull, index = 0x1122334455667788ull;
  const PhiloxBlock direct = philox4x32_10({{0x55667788, 0x11223344, 0x76543210, 0xfedcba98}}, {{0x89abcdef, 0x01234567}});
  const PhiloxBlock keyed = philox_block(seed, stream, index);
  EXPECT_TRUE(same_block(keyed, direct.v[0], direct.v[1], direct.v[2], direct.v[3]));
  // Changing any field changes the block.
  const PhiloxBlock other_index = philox_block(seed, stream, index + 1);
  const PhiloxBlock other_stream = philox_block(seed, stream + 1, index);
  const PhiloxBlock other_seed = philox_block(seed ^ (1ull << 63), stream, index);
  EXPECT_NE(other_index.v[0], keyed.v[0]);
  EXPECT_NE(other_stream.v[0], keyed.v[0]);
  EXPECT_NE(other_seed.v[0], keyed.v[0]);
}

TEST(Philox, UniformConversionsCoverTheHalfOpenUnitIntervalExactly) {
  EXPECT_EQ(uniform_float(0), 0.0f);
  EXPECT_EQ(uniform_float(0xffffffffu), 1.0f - 0x1.0p-24f);
  EXPECT_EQ(uniform_float(0x80000000u), 0.5f);
  EXPECT_EQ(uniform_double(0, 0), 0.0);
  EXPECT_EQ(uniform_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1.0p-53);
  EXPECT_EQ(uniform_double(0x80000000u, 0), 0.5);
  EXPECT_EQ(uniform_double(0, 0x40u), 0x1.0p-53) << "the lowest used bit of the low word";
}

// A coarse statistical sanity check of the stream (fixed seed, so it cannot flake):
// the mean of 2^16 uniforms and the frequency of every output bit.
TEST(Philox, StreamLooksUniform) {
  const int64_t n = int64_t{1} << 16;
  double sum = 0;
  int64_t ones[128] = {};
  for (int64_t i = 0; i < n; ++i) {
    const PhiloxBlock b = philox_block(7, 3, static_cast<uint64_t>(i));
    sum += uniform_double(b.v[0], b.v[1]);
    for (int w = 0; w < 4; ++w)
      for (int bit = 0; bit < 32; ++bit) ones[w * 32 + bit] += (b.v[w] >> bit) & 1u;
  }
  const double sd_mean = std::sqrt(1.0 / 12.0 / static_cast<double>(n));
  EXPECT_NEAR(sum / static_cast<double>(n), 0.5, 6 * sd_mean);
  const double sd_bit = std::sqrt(static_cast<double>(n) / 4.0);
  for (int bit = 0; bit < 128; ++bit) EXPECT_NEAR(static_cast<double>(ones[bit]), n / 2.0, 6 * sd_bit) << "bit " << bit;
}

}  // namespace
}  // namespace edgewise::test
