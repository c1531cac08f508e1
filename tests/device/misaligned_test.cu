// Rows that are not 16-byte aligned, on the tuned kernels' misaligned tile
// path (kernels/detail/super.cuh: MisalignedRead, store16_any): odd row lengths,
// odd leading dimensions, and base pointers one element past a 16-byte
// boundary, on input and output, every element size, out of place
// (`padded`) and in place (`inplace-tiled`). Each case also checks the
// bytes around the matrix: a guard before the first element and after the
// last, and the padding of every row, must keep their poison (the path
// writes partial 16-byte words at both ends of every row segment, and must
// touch only the matrix's own bytes). Each case runs the registry's kernel
// and the variants that take the other paths for misaligned rows (the tile
// path, the compile-time element tile of detail/element_full.cuh, the
// general element path), so every path stays bit-exact whichever the tuning
// picks. The TMA path (detail/tma_tile.cuh) runs through its variants
// (padded-misaligned-tma-*), and aligned rows in either tile order through
// -aligned-linear and -aligned-grouped. `Rows/Narrow` runs padded's narrow
// kernel (at most 8 columns, input packed) through both of its reads and
// the skinny path it replaces, with the same guards; `Rows/Wide` its mirror
// (at most 8 rows, output packed), the wide kernel.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "device/device_util.cuh"
#include "gtranspose/kernel_tuning.hpp"
#include "gtranspose/kernels.hpp"

namespace {

using gt::kernels::Problem;

struct Case {
  std::size_t elem;
  std::uint64_t rows, cols;
  std::uint64_t ld_in_extra, ld_out_extra;  // leading dimension = packed + extra
  unsigned off_in, off_out;                 // elements past the allocation's 16-byte aligned start
};

std::string name_of(const Case& c) {
  char b[160];
  std::snprintf(b, sizeof b, "e%zu_%" PRIu64 "x%" PRIu64 "_li%" PRIu64 "_lo%" PRIu64 "_oi%u_oo%u", c.elem, c.rows,
                c.cols, c.ld_in_extra, c.ld_out_extra, c.off_in, c.off_out);
  return b;
}

void PrintTo(const Case& c, std::ostream* os) { *os << name_of(c); }

constexpr unsigned char kGuard = 0xC3;
constexpr std::uint64_t kGuardBytes = 64;

// The guard bytes before and after the matrix are all kGuard.
void expect_guards(const unsigned char* base, std::uint64_t before, std::uint64_t matrix_bytes, const std::string& what) {
  std::vector<unsigned char> head(before), tail(kGuardBytes);
  ASSERT_EQ(cudaMemcpy(head.data(), base, before, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(tail.data(), base + before + matrix_bytes, kGuardBytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (std::uint64_t i = 0; i < before; ++i) ASSERT_EQ(head[i], kGuard) << what << ": guard byte " << i << " before";
  for (std::uint64_t i = 0; i < kGuardBytes; ++i) ASSERT_EQ(tail[i], kGuard) << what << ": guard byte " << i << " after";
}

using Launch = void (*)(const void*, void*, const Problem&, cudaStream_t);

void run_one(const Case& c, bool inplace, const std::string& label, Launch launch) {
  const gt::kernels::KernelInfo* k = gt::kernels::find(inplace ? "inplace-tiled" : "padded");
  ASSERT_NE(k, nullptr);
  const std::size_t es = c.elem;
  const std::uint64_t ld_in = c.cols + c.ld_in_extra, ld_out = c.rows + c.ld_out_extra;
  const std::uint64_t in_bytes = (c.rows * ld_in) * es, out_bytes = (c.cols * ld_out) * es;
  const std::uint64_t pre_in = kGuardBytes + c.off_in * es, pre_out = kGuardBytes + c.off_out * es;
  gtt::DeviceBuffer in(pre_in + in_bytes + kGuardBytes), out(inplace ? 0 : pre_out + out_bytes + kGuardBytes);
  ASSERT_TRUE(in.ok() && out.ok());
  const std::string what = label + " " + name_of(c);
  const std::uint64_t seed = gtt::test_seed(what);
  GTT_CUDA(cudaMemset(in.get(), kGuard, in.bytes()));
  if (!inplace) GTT_CUDA(cudaMemset(out.get(), kGuard, out.bytes()));
  unsigned char* a = in.get() + pre_in;
  unsigned char* b = inplace ? nullptr : out.get() + pre_out;
  ASSERT_EQ(gtt::fill(a, es, c.rows, c.cols, ld_in, seed, gtt::kPadIn), "") << what;
  if (!inplace) GTT_CUDA(cudaMemset(b, gtt::kPoison, out_bytes));
  GTT_CUDA(cudaDeviceSynchronize());
  Problem p{c.rows, c.cols, es, ld_in, inplace ? 0 : ld_out};
  std::string why;
  ASSERT_TRUE(k->supports(p, &why)) << what << ": " << why;
  try {
    launch(a, b, p, 0);
  } catch (const gt::Error& e) {
    FAIL() << what << ": launch threw " << e.what();
  }
  GTT_CUDA(cudaDeviceSynchronize());
  const gtt::Check r = inplace ? gtt::verify(a, es, c.rows, c.cols, ld_in, seed, true, gtt::kPadIn)
                               : gtt::verify(b, es, c.cols, c.rows, ld_out, seed, true, gtt::kPoison);
  ASSERT_EQ(r.error, "") << what;
  EXPECT_EQ(r.count, 0u) << what << ": " << r.count << " wrong elements; first at (" << r.row << ", " << r.col
                         << "): got 0x" << r.got << ", want 0x" << r.want << "; reproduce: GT_TEST_SEED=0x" << std::hex
                         << seed;
  expect_guards(in.get(), pre_in, in_bytes, what + " (input)");
  if (!inplace) expect_guards(out.get(), pre_out, out_bytes, what + " (output)");
}

void run(const Case& c, bool inplace) {
  const char* name = inplace ? "inplace-tiled" : "padded";
  run_one(c, inplace, name, gt::kernels::find(name)->launch);
  // The variants that take another path or order for these rows.
  static const char* const kMarks[] = {"misaligned", "-elem", "-old-element",   "-aligned-",
                                       "-pairs-",    "-mis-",  "-edge-tiles", "-overlap-always"};
  for (const auto& v : gt::kernels::tuning_variants(name, c.elem))
    for (const char* mark : kMarks)
      if (v.name.find(mark) != std::string::npos) {
        run_one(c, inplace, v.name, v.launch);
        break;
      }
}

std::vector<Case> out_of_place_cases() {
  std::vector<Case> v;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (auto [r, c] : {std::pair<std::uint64_t, std::uint64_t>{1000, 999}, {1025, 1023}, {2049, 777}, {777, 2049},
                        {1024, 1024}})
      for (auto [oi, oo] : {std::pair<unsigned, unsigned>{0, 0}, {1, 0}, {0, 1}, {1, 3}}) {
        if (es == 16 && (oi || oo)) continue;  // 16-byte elements are 16-byte aligned by contract
        v.push_back({es, r, c, 0, 0, oi, oo});
      }
  for (std::size_t es : {1, 2, 4, 8}) {
    v.push_back({es, 1000, 1000, 1, 3, 0, 0});
    v.push_back({es, 3001, 1031, 7, 5, 1, 1});
    // Enough of the big misaligned tiles (eight per SM and more) that they,
    // not the small matrices' tiling, take it: every size's Tunings::Mis.
    v.push_back({es, 5003, 4099, 0, 0, 1, 0});
    v.push_back({es, 4099, 5003, 3, 1, 0, 1});
  }
  // The TMA path's row groups: one side aligned (a group of one row), rows
  // whose length is 2 mod 4 elements (groups of two 4-byte rows), and
  // matrices just past a whole number of its tiles.
  for (std::size_t es : {1, 2, 4, 8}) {
    v.push_back({es, 1024, 1027, 0, 0, 0, 0});
    v.push_back({es, 1027, 1024, 0, 0, 0, 0});
    v.push_back({es, 1031, 1026, 0, 0, 0, 0});
    v.push_back({es, 1026, 1031, 2, 0, 1, 2});
    v.push_back({es, 257, 129, 0, 0, 0, 0});
  }
  // Aligned rows whose bytes are not a multiple of 64 (either side), with
  // enough tiles to take the grouped order (grouped_aligned in padded.cu).
  v.push_back({4, 4100, 4108, 0, 0, 0, 0});
  v.push_back({8, 2050, 2054, 0, 0, 0, 0});
  v.push_back({2, 8200, 8200, 0, 0, 0, 0});
  v.push_back({1, 16400, 16400, 0, 0, 0, 0});
  // 1- and 2-byte Mis tiles are 256x128 and 128x128 elements: eight per SM
  // and more takes a larger matrix.
  for (std::size_t es : {1, 2}) v.push_back({es, 16385, 8195, 0, 0, 1, 0});
  // Skew tiles (detail/skew_tile.cuh) of 1-byte elements are up to 512x128:
  // padded leading dimensions and an output past a boundary, big enough.
  v.push_back({1, 9001, 8197, 3, 5, 0, 3});
  // Partial last tiles of a quarter of a tile or more on both sides, so the
  // default moves its last tile row and column back to overlap the tiles
  // before them (last_origin): every size's Mis tiles, then aligned rows
  // (the moved origin kept 16-byte aligned).
  for (std::size_t es : {1, 2, 4, 8}) v.push_back({es, 5100, 4090, 1, 2, 1, 3});
  // Narrow rows (6 of Mis's tiles across at 8 bytes): on a 132-SM GPU
  // 6007x333 takes the element tile by kMisFew (564 tiles), 14091x334 (1326
  // tiles, more than kMisFew's 1056 up to 148 SMs) by kMisNarrow, 8-byte
  // rows under 8 skew tiles wide; 4-byte rows as a control.
  v.push_back({8, 6007, 333, 2, 1, 1, 0});
  v.push_back({4, 6007, 333, 0, 0, 1, 1});
  v.push_back({8, 14091, 334, 1, 3, 0, 1});
  // padded's overlapping tile rows (super.cuh, overlap_stride: u8 tiles of
  // 256 rows 240 apart, f16 of 128 rows 120 apart): one tile row, a last
  // tile that ends a whole stride on, one row past it (a last tile moved
  // back by all but one row), and a few strides on; the
  // "-misaligned-any-size" variant takes Mis's tiles at these sizes.
  for (std::uint64_t r : {256, 496, 497, 737}) v.push_back({1, r, 333, 0, 1, 1, 0});
  for (std::uint64_t r : {128, 248, 249, 369}) v.push_back({2, r, 333, 0, 3, 0, 1});
  // And its skew tiles' (f32 128 rows 124 apart, f64 64 rows 62 apart).
  for (std::uint64_t r : {128, 252, 253, 377}) v.push_back({4, r, 333, 0, 1, 0, 0});
  for (std::uint64_t r : {64, 126, 127, 189}) v.push_back({8, r, 333, 1, 1, 0, 1});
  v.push_back({4, 4136, 4152, 0, 0, 0, 0});
  v.push_back({1, 4336, 4208, 0, 0, 0, 0});
  return v;
}

// Narrow matrices (at most 8 columns, input packed, output rows 16-byte
// aligned): padded's narrow kernel, through both of its reads (staged, the
// default; -narrow-direct) and the skinny tile path it replaces (-no-narrow), at
// every element size. Rows not a multiple of 16 / S leave a scalar tail;
// spans shorter than a block's (256 groups of rows) leave a partial last
// span; "_lo" pads each output row to a multiple of 16 bytes, or not.
std::vector<Case> narrow_cases() {
  std::vector<Case> v;
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    const std::uint64_t a = 16 / es;  // rows per 16 bytes of output row
    for (std::uint64_t c = 1; c <= 8; ++c) v.push_back({es, 123456, c, 0, 0, 0, 0});
    v.push_back({es, 100003, 7, 0, (a - 100003 % a) % a, 0, 0});
    v.push_back({es, 1000003, 8, 0, (a - 1000003 % a) % a, 0, 0});
    v.push_back({es, 4096 * 16 + 48, 6, 0, 0, 0, 0});
    v.push_back({es, 5, 3, 0, 11, 0, 0});
    v.push_back({es, 17, 8, 0, (a - 17 % a) % a, 0, 0});
    // Output rows not 16-byte aligned (the staged read's staged output):
    // odd row counts, an odd leading dimension, an output one element past a
    // 16-byte boundary, a span of one group of rows. (16-byte rows are
    // always aligned.)
    if (es == 16) continue;
    v.push_back({es, 100003, 7, 0, 0, 0, 0});
    v.push_back({es, 1000003, 8, 0, 0, 0, 0});
    v.push_back({es, 123457, 3, 0, 1, 0, 0});
    v.push_back({es, 17, 8, 0, 0, 0, 0});
    v.push_back({es, 5, 3, 0, 0, 0, 0});
    v.push_back({es, 4096 * 16 + 47, 5, 0, 3, 0, 0});
    v.push_back({es, 123459, 6, 0, 0, 0, 1});
  }
  return v;
}

// Wide matrices (at most 8 rows, output packed): padded's wide kernel,
// its other realignment of misaligned rows (-wide-lanes) and the skinny
// tile path it replaces (-no-wide), at every element size. Columns not a
// multiple of 16 / S leave a scalar tail; "_li" pads each input row to a
// multiple of 16 bytes, or not.
std::vector<Case> wide_cases() {
  std::vector<Case> v;
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    const std::uint64_t a = 16 / es;  // columns per 16 bytes of input row
    for (std::uint64_t r = 1; r <= 8; ++r) v.push_back({es, r, 123456, 0, 0, 0, 0});
    v.push_back({es, 7, 100003, (a - 100003 % a) % a, 0, 0, 0});
    v.push_back({es, 8, 1000003, (a - 1000003 % a) % a, 0, 0, 0});
    v.push_back({es, 5, 4096 * 16 + 48, 0, 0, 0, 0});
    v.push_back({es, 3, 5, 11, 0, 0, 0});
    v.push_back({es, 8, 17, (a - 17 % a) % a, 0, 0, 0});
    // Input rows not 16-byte aligned (each lane's word shifted by its row's
    // offset): odd column counts, odd leading dimensions, partial spans.
    if (es == 16) continue;
    v.push_back({es, 7, 100003, 0, 0, 0, 0});
    v.push_back({es, 8, 1000003, 0, 0, 0, 0});
    v.push_back({es, 3, 123457, 1, 0, 0, 0});
    v.push_back({es, 8, 17, 0, 0, 0, 0});
    v.push_back({es, 3, 5, 0, 0, 0, 0});
    v.push_back({es, 5, 4096 * 16 + 47, 3, 0, 0, 0});
  }
  return v;
}

std::vector<Case> in_place_cases() {
  std::vector<Case> v;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (std::uint64_t n : {1001, 1025, 2047})
      for (unsigned o : {0u, 1u}) {
        if (es == 16 && o) continue;
        v.push_back({es, n, n, 0, 0, o, 0});
      }
  for (std::size_t es : {1, 2, 4, 8}) {
    v.push_back({es, 1024, 1024, 0, 0, 1, 0});   // aligned side, every row shifted by one element
    v.push_back({es, 1000, 1000, 3, 0, 0, 0});   // odd leading dimension
    // More tiles a side than the largest block of pairs (the "-pairs-g16"
    // variants), with a partial block at the edge: misaligned and aligned rows.
    v.push_back({es, 4099, 4099, 0, 0, 1, 0});
    v.push_back({es, 4100, 4100, 0, 0, 0, 0});
  }
  // Aligned rows whose side is not a multiple of the default's tile (partial
  // pairs on edge_pair beside 256x256-byte, 128x128-half and 32x32 c128 tiles).
  v.push_back({1, 4112, 4112, 0, 0, 0, 0});
  v.push_back({2, 4104, 4104, 0, 0, 0, 0});
  v.push_back({16, 1000, 1000, 0, 0, 0, 0});
  return v;
}

class MisalignedOut : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { GT_SKIP_WITHOUT_GPU(); }
};
class MisalignedIn : public MisalignedOut {};
class Narrow : public MisalignedOut {};
class Wide : public MisalignedOut {};

TEST_P(Wide, PaddedIsBitExactOnBothPathsAndTouchesOnlyItsBytes) {
  const Case& c = GetParam();
  run_one(c, false, "padded", gt::kernels::find("padded")->launch);
  int n = 0;
  for (const auto& v : gt::kernels::tuning_variants("padded", c.elem))
    if (v.name.find("-no-wide") != std::string::npos || v.name.find("-wide-lanes") != std::string::npos) {
      run_one(c, false, v.name, v.launch);
      ++n;
    }
  EXPECT_EQ(n, 2) << "padded's variants -no-wide, -wide-lanes";
}

TEST_P(Narrow, PaddedIsBitExactOnEveryReadAndTouchesOnlyItsBytes) {
  const Case& c = GetParam();
  run_one(c, false, "padded", gt::kernels::find("padded")->launch);
  int n = 0;
  for (const auto& v : gt::kernels::tuning_variants("padded", c.elem))
    if (v.name.find("narrow") != std::string::npos) {
      run_one(c, false, v.name, v.launch);
      ++n;
    }
  EXPECT_EQ(n, 2) << "padded's narrow variants: -no-narrow, -narrow-direct";
}

TEST_P(MisalignedOut, PaddedIsBitExactAndTouchesOnlyItsBytes) { run(GetParam(), false); }
TEST_P(MisalignedIn, InplaceTiledIsBitExactAndTouchesOnlyItsBytes) { run(GetParam(), true); }

INSTANTIATE_TEST_SUITE_P(Rows, MisalignedOut, ::testing::ValuesIn(out_of_place_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });
INSTANTIATE_TEST_SUITE_P(Rows, Wide, ::testing::ValuesIn(wide_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });
INSTANTIATE_TEST_SUITE_P(Rows, Narrow, ::testing::ValuesIn(narrow_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });
INSTANTIATE_TEST_SUITE_P(Rows, MisalignedIn, ::testing::ValuesIn(in_place_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });

}  // namespace
