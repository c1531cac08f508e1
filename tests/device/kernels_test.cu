// Every kernel of the registry x every element size x shapes with edges,
// leading dimensions, skinny matrices, and one matrix of more than 2^31
// elements, checked on the device against the position pattern. Outputs are
// poisoned before each run and their padding must stay poisoned; inputs
// must come back untouched. A case a kernel refuses is a failure unless
// kRefused lists it, by design and with the reason; the registry checks and
// Refusals.ExactlyTheListedOnes run without a GPU too, every other test
// skips there with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "device/device_util.cuh"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"

namespace {

using gt::kernels::Kind;
using gt::kernels::KernelInfo;
using gt::kernels::Problem;

constexpr std::size_t kSizes[] = {1, 2, 4, 8, 16};

struct Shape {
  std::uint64_t rows, cols;
  std::uint64_t ld_in_extra, ld_out_extra;  // leading dimension = packed + extra (0: pass ld 0)
  const char* label;
};

// Out of place (and copies): the brief's shapes, odd leading dimensions, and
// shapes that reach the 16-byte paths of the tuned kernels with partial
// tiles at both edges (1040 = 8*128 + 16 rows; 2000 = 15*128 + 80 columns),
// and skinny matrices (fewer rows or columns than any tile: 3x70000 and
// 70000x5 take padded's 16-byte skinny paths with a partial last tile,
// 3x70001 and 70001x3 its element path).
const Shape kOutOfPlace[] = {
    {1, 1, 0, 0, "1x1"},
    {1, 37, 0, 0, "1x37"},
    {37, 1, 0, 0, "37x1"},
    {31, 33, 0, 0, "31x33"},
    {1000, 999, 0, 0, "1000x999"},
    {4097, 2049, 0, 0, "4097x2049"},
    {4096, 4096, 0, 0, "4096x4096"},
    {1000, 999, 3, 5, "1000x999_ld3_5"},
    {1040, 2000, 0, 0, "1040x2000"},
    {1040, 2000, 16, 32, "1040x2000_ld16_32"},
    {3, 70001, 0, 0, "3x70001"},
    {70001, 3, 0, 0, "70001x3"},
    {3, 70000, 0, 0, "3x70000"},
    {70000, 5, 0, 0, "70000x5"},
    {7, 70000, 16, 0, "7x70000_ld16_0"},
};

// Skinny and narrow matrices for `padded` alone, every element size: few
// rows; few columns with the input packed, which `padded` sends to its
// narrow path (1- and 2-byte elements, at most 8 columns) when every output
// row is 16-byte aligned ("_lo" shapes pad ld_out to a multiple of 16; rows
// not a multiple of 16 leave a scalar tail), else to its skinny paths; and
// leading dimensions ld_in > cols, which keep the skinny paths.
const Shape kSkinny[] = {
    {1, 100003, 0, 0, "1x100003"},
    {100003, 1, 0, 0, "100003x1"},
    {100003, 1, 0, 13, "100003x1_lo13"},
    {5, 3, 0, 11, "5x3_lo11"},
    {16, 3, 0, 0, "16x3"},
    {1000000, 3, 0, 0, "1000000x3"},
    {1000003, 3, 0, 0, "1000003x3"},
    {1000003, 3, 0, 13, "1000003x3_lo13"},
    {1000003, 5, 0, 0, "1000003x5"},
    {1000003, 5, 0, 13, "1000003x5_lo13"},
    {999999, 2, 0, 0, "999999x2"},
    {999999, 2, 0, 1, "999999x2_lo1"},
    {123457, 7, 0, 0, "123457x7"},
    {123457, 7, 0, 15, "123457x7_lo15"},
    {123456, 8, 0, 0, "123456x8"},
    {50000, 4, 0, 0, "50000x4"},
    {70000, 6, 0, 0, "70000x6"},
    {70000, 9, 0, 0, "70000x9"},
    {1000003, 3, 5, 13, "1000003x3_li5_lo13"},
    {100000, 3, 1, 0, "100000x3_li1"},
    {123456, 8, 8, 0, "123456x8_li8"},
};

// In place: squares of odd and even sides, aligned sides with a partial
// last tile, and leading dimensions.
const Shape kInPlace[] = {
    {1, 1, 0, 0, "1x1"},
    {31, 31, 0, 0, "31x31"},
    {32, 32, 0, 0, "32x32"},
    {1000, 1000, 0, 0, "1000x1000"},
    {1001, 1001, 0, 0, "1001x1001"},
    {1040, 1040, 0, 0, "1040x1040"},
    {4096, 4096, 0, 0, "4096x4096"},
    {1001, 1001, 5, 0, "1001x1001_ld5"},
    {1040, 1040, 16, 0, "1040x1040_ld16"},
};

// The small shapes of Sanitize.AllKernelsSmall, and the huge ones.
// 260x259 and 259x259: full tiles of every element size whose rows are not
// 16-byte aligned (the misaligned tile path's shuffles, partial words and its
// last word read near the end of the matrix).
const Shape kSanitizeOut[] = {{67, 45, 3, 5, "67x45_ld3_5"}, {144, 160, 0, 0, "144x160"}, {3, 4000, 0, 0, "3x4000"},
                              {4000, 5, 0, 0, "4000x5"}, {1003, 3, 0, 5, "1003x3_ld0_5"}, {260, 259, 1, 3, "260x259_ld1_3"}};
const Shape kSanitizeIn[] = {{45, 45, 2, 0, "45x45_ld2"}, {144, 144, 0, 0, "144x144"}, {259, 259, 0, 0, "259x259"}};
// inplace-rect's paths at small sizes: c = 1 and c > 1 on chip, a long row
// (a cluster's from 4-byte elements; 5x40000's rows of 160 KB one block's,
// one block an SM), a tall band (a cluster's for f32 and
// wider), the blocked route (c = 256, its cycles cut into runs); and, as on
// a GPU without clusters (kSanitizeRectNoClusters), a row and a column past
// one block (the device-memory batches), which stay small under the
// sanitizers where the batches past a cluster would not.
// One element size each: racecheck did not finish these shapes at every
// size in 330 s (run 78; clusters of 8 and 16 blocks among them), while
// these pairs (clusters of up to 4) ran clean under both tools in runs 74-75.
struct SizedShape {
  std::size_t elem;
  Shape shape;
};
const SizedShape kSanitizeRect[] = {{4, {67, 45, 0, 0, "67x45"}},   {1, {40, 24, 0, 0, "40x24"}},
                                    {4, {3, 60000, 0, 0, "3x60000"}}, {4, {5000, 7, 0, 0, "5000x7"}},
                                    {4, {768, 512, 0, 0, "768x512"}}, {16, {512, 768, 0, 0, "512x768"}},
                                    {4, {5, 40000, 0, 0, "5x40000"}}, {1, {1000, 999, 0, 0, "1000x999"}},
                                    {2, {999, 1000, 0, 0, "999x1000"}}, {1, {4097, 1000, 0, 0, "4097x1000"}}};
const Shape kSanitizeRectNoClusters[] = {{2, 120000, 0, 0, "2x120000"}, {120000, 2, 0, 0, "120000x2"}};
const Shape kHugeSquare{50000, 50000, 0, 0, "50000x50000"};
const Shape kHugeNarrow{715827889, 3, 0, 15, "715827889x3_lo15"};

struct Case {
  std::string kernel;
  std::size_t elem;
  Shape shape;
  unsigned bx = 0, by = 0;
};

// The cases a kernel refuses by design, each with the reason; supports()
// refusing any other case is a failure (a kernel that stopped taking a shape
// it should), not a skip, and so is supports() taking one listed here: the
// list is kept exactly true (Refusals.ExactlyTheListedOnes checks it, with
// or without a GPU). elem 0: every element size.
struct Refusal {
  const char* kernel;
  std::size_t elem;
  const char* shape;
  unsigned bx, by;
  const char* why;
};
constexpr const char* kOneThread = "one GPU thread moves every element: capped at 2^20 elements";
constexpr const char* kOneDim = "row-per-thread's blocks are one-dimensional";
constexpr const char* kSmem = "the block's tile does not fit 48 KiB of shared memory at this element size";
const Refusal kRefused[] = {
    {"single-thread", 0, "4097x2049", 0, 0, kOneThread},
    {"single-thread", 0, "4096x4096", 0, 0, kOneThread},
    {"single-thread", 0, "1040x2000", 0, 0, kOneThread},
    {"single-thread", 0, "1040x2000_ld16_32", 0, 0, kOneThread},
    {"row-per-thread", 0, "1000x999_ld3_5", 16, 16, kOneDim},
    {"row-per-thread", 0, "1000x999_ld3_5", 64, 4, kOneDim},
    {"row-per-thread", 0, "1000x999_ld3_5", 32, 32, kOneDim},
    {"row-per-thread", 0, "1000x999_ld3_5", 8, 8, kOneDim},
    {"smem", 1, "1000x999_ld3_5", 256, 1, kSmem},      {"smem", 8, "1000x999_ld3_5", 256, 1, kSmem},
    {"smem", 16, "1000x999_ld3_5", 256, 1, kSmem},     {"smem", 16, "1000x999_ld3_5", 64, 4, kSmem},
    {"padded", 1, "1000x999_ld3_5", 256, 1, kSmem},    {"padded", 8, "1000x999_ld3_5", 256, 1, kSmem},
    {"padded", 16, "1000x999_ld3_5", 256, 1, kSmem},   {"padded", 16, "1000x999_ld3_5", 64, 4, kSmem},
    {"diagonal", 1, "1000x999_ld3_5", 256, 1, kSmem},  {"diagonal", 8, "1000x999_ld3_5", 256, 1, kSmem},
    {"diagonal", 16, "1000x999_ld3_5", 256, 1, kSmem}, {"diagonal", 16, "1000x999_ld3_5", 64, 4, kSmem},
};

const Refusal* refusal_of(const Case& c) {
  for (const Refusal& r : kRefused)
    if (c.kernel == r.kernel && (r.elem == 0 || r.elem == c.elem) && std::string(c.shape.label) == r.shape &&
        c.bx == r.bx && c.by == r.by)
      return &r;
  return nullptr;
}

std::string case_name(const Case& c) {
  std::string s = c.kernel + "_e" + std::to_string(c.elem) + "_" + c.shape.label;
  if (c.bx) s += "_b" + std::to_string(c.bx) + "x" + std::to_string(c.by);
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// gtest prints a parameter it cannot name as a dump of its bytes (in every
// ctest listing); the case's own name says what it is.
void PrintTo(const Case& c, std::ostream* os) { *os << case_name(c); }

std::vector<Case> catalogue_cases() {
  std::vector<Case> out;
  for (const auto& k : gt::kernels::registry())
    for (std::size_t s : kSizes) {
      if (k.kind == Kind::inplace)
        for (const auto& sh : kInPlace) out.push_back({k.name, s, sh});
      else
        for (const auto& sh : kOutOfPlace) out.push_back({k.name, s, sh});
    }
  return out;
}

std::vector<Case> skinny_cases() {
  std::vector<Case> out;
  for (std::size_t s : kSizes)
    for (const auto& sh : kSkinny) out.push_back({"padded", s, sh});
  return out;
}

// Block shapes for the kernels that honour them, on one shape with edges.
std::vector<Case> block_cases() {
  const unsigned shapes[][2] = {{16, 16}, {64, 4}, {32, 32}, {8, 8}, {256, 1}};
  std::vector<Case> out;
  for (const auto& k : gt::kernels::registry()) {
    if (!k.block_shape) continue;
    const Shape sh = k.kind == Kind::inplace ? Shape{1001, 1001, 0, 0, "1001x1001"} : Shape{1000, 999, 3, 5, "1000x999_ld3_5"};
    for (std::size_t s : {std::size_t(1), std::size_t(8), std::size_t(16)})
      for (const auto& b : shapes) out.push_back({k.name, s, sh, b[0], b[1]});
  }
  return out;
}

std::string shape_text(const Problem& p) {
  return std::to_string(p.rows) + "x" + std::to_string(p.cols);
}

// The problem a case poses to its kernel.
Problem problem_of(const Case& c, const KernelInfo& k) {
  Problem p;
  p.rows = c.shape.rows;
  p.cols = c.shape.cols;
  p.elem_size = c.elem;
  p.block_x = c.bx;
  p.block_y = c.by;
  const bool inplace = k.kind == Kind::inplace, copy = k.kind == Kind::copy;
  p.ld_in = c.shape.ld_in_extra ? p.cols + c.shape.ld_in_extra : 0;
  p.ld_out = inplace || !c.shape.ld_out_extra ? 0 : (copy ? p.cols : p.rows) + c.shape.ld_out_extra;
  return p;
}

// Whether supports() answers the case as kRefused says; the failure's
// message otherwise, "" when it does.
std::string refusal_mismatch(const Case& c, const KernelInfo& k) {
  std::string why;
  const bool takes = k.supports(problem_of(c, k), &why);
  const Refusal* r = refusal_of(c);
  if (!takes && !r)
    return c.kernel + " refuses " + case_name(c) + " (" + why + "), a case it should take: fix the kernel, or add "
           "it to kRefused with the reason";
  if (takes && r) return c.kernel + " takes " + case_name(c) + ", listed in kRefused (" + r->why + "): drop the entry";
  if (!takes && why.empty()) return c.kernel + ": supports() said no without a reason";
  return "";
}

// Runs one case and records failures with a one-line reproducer. A case
// refused by design (kRefused) sets *skip with the reason; any other
// refusal fails.
void run_case(const Case& c, const std::string& test_name, std::string* skip) {
  const KernelInfo* k = gt::kernels::find(c.kernel);
  ASSERT_NE(k, nullptr) << "no kernel named " << c.kernel;
  const std::uint64_t rows = c.shape.rows, cols = c.shape.cols;
  const Problem p = problem_of(c, *k);
  const bool inplace = k->kind == Kind::inplace, copy = k->kind == Kind::copy;
  const std::uint64_t ld_in = cols + c.shape.ld_in_extra;
  const std::uint64_t out_rows = copy ? rows : cols, out_cols = copy ? cols : rows;
  const std::uint64_t ld_out = out_cols + c.shape.ld_out_extra;
  const std::string mismatch = refusal_mismatch(c, *k);
  ASSERT_EQ(mismatch, "");
  if (const Refusal* r = refusal_of(c)) {
    *skip = c.kernel + " does not run " + shape_text(p) + " by design: " + r->why;
    return;
  }
  const std::uint64_t seed = gtt::test_seed(test_name);
  char repro[512];
  std::snprintf(repro, sizeof repro,
                "reproduce: GT_TEST_SEED=0x%" PRIx64 " gt_device_tests --gtest_filter='*%s*'  [kernel=%s shape=%s elem=%zu "
                "ld_in=%" PRIu64 " ld_out=%" PRIu64 " block=%ux%u seed=0x%" PRIx64 "]",
                seed, test_name.c_str(), c.kernel.c_str(), shape_text(p).c_str(), c.elem, ld_in,
                inplace ? ld_in : ld_out, c.bx, c.by, seed);

  cudaStream_t stream;
  GTT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gtt::DeviceBuffer in(rows * ld_in * c.elem);
  gtt::DeviceBuffer out(inplace ? 0 : out_rows * ld_out * c.elem);
  ASSERT_TRUE(in.ok() && out.ok()) << "cudaMalloc failed; " << repro;
  ASSERT_EQ(gtt::fill(in.get(), c.elem, rows, cols, ld_in, seed, gtt::kPadIn), "") << repro;
  if (!inplace) GTT_CUDA(cudaMemset(out.get(), gtt::kPoison, out.bytes()));
  // fill and memset ran on the legacy stream, which a non-blocking stream does not wait for.
  GTT_CUDA(cudaDeviceSynchronize());
  try {
    k->launch(in.get(), inplace ? nullptr : out.get(), p, stream);
  } catch (const gt::Error& e) {
    cudaStreamDestroy(stream);
    FAIL() << "launch threw: " << e.what() << "; " << repro;
  }
  GTT_CUDA(cudaStreamSynchronize(stream));
  GTT_CUDA(cudaStreamDestroy(stream));

  // A rectangle in place (packed) leaves cols x rows in the same memory.
  const gtt::Check res = inplace && rows != cols ? gtt::verify(in.get(), c.elem, cols, rows, rows, seed, true, gtt::kPadIn)
                         : inplace ? gtt::verify(in.get(), c.elem, rows, cols, ld_in, seed, true, gtt::kPadIn)
                                 : gtt::verify(out.get(), c.elem, out_rows, out_cols, ld_out, seed, !copy, gtt::kPoison);
  ASSERT_EQ(res.error, "") << repro;
  EXPECT_EQ(res.count, 0u) << res.count << " wrong elements; first at " << (inplace ? "matrix" : "output")
                             << " (row " << res.row << ", col " << res.col << "): got 0x" << res.got << ", want 0x"
                             << res.want << "\n" << repro;
  if (!inplace) {
    const gtt::Check src = gtt::verify(in.get(), c.elem, rows, cols, ld_in, seed, false, gtt::kPadIn);
    ASSERT_EQ(src.error, "");
    EXPECT_EQ(src.count, 0u) << "the kernel changed its input: first at (row " << src.row << ", col " << src.col
                               << ")\n" << repro;
  }
}

class Catalogue : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { GT_SKIP_WITHOUT_GPU(); }
};

TEST_P(Catalogue, MatchesPattern) {
  std::string skip;
  run_case(GetParam(), case_name(GetParam()), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Kernels, Catalogue, ::testing::ValuesIn(catalogue_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

class Skinny : public Catalogue {};

TEST_P(Skinny, MatchesPattern) {
  std::string skip;
  run_case(GetParam(), case_name(GetParam()), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Padded, Skinny, ::testing::ValuesIn(skinny_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

class BlockShapes : public Catalogue {};

TEST_P(BlockShapes, MatchesPattern) {
  std::string skip;
  run_case(GetParam(), case_name(GetParam()), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(Kernels, BlockShapes, ::testing::ValuesIn(block_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// inplace-rect, every element size, at shapes that take each of its paths:
// c = gcd(rows, cols) of 1 and more (the rotation step), one side dividing
// the other, rows on chip in groups and spread over clusters of 2 to 16
// blocks, column bands in one block and over clusters, and rows and columns
// longer than a cluster holds (the device-memory batches); rows of one
// element and columns of one, which are their own transpose in memory.
// 13001x517: the permutation's bands in clusters whose parts are not powers
// of two (13001 rows: 8 x 1626 at 64-byte bands of 4 bytes).
const Shape kRect[] = {
    {2, 3, 0, 0, "2x3"},           {3, 2, 0, 0, "3x2"},             {1, 1000, 0, 0, "1x1000"},
    {1000, 1, 0, 0, "1000x1"},     {31, 33, 0, 0, "31x33"},         {1000, 999, 0, 0, "1000x999"},
    {999, 1000, 0, 0, "999x1000"}, {1024, 512, 0, 0, "1024x512"},   {512, 1024, 0, 0, "512x1024"},
    {96, 256, 0, 0, "96x256"},     {4097, 1000, 0, 0, "4097x1000"}, {12345, 678, 0, 0, "12345x678"},
    {64, 40000, 0, 0, "64x40000"}, {40000, 64, 0, 0, "40000x64"},   {6, 300000, 0, 0, "6x300000"},
    {300000, 6, 0, 0, "300000x6"}, {3, 2000000, 0, 0, "3x2000000"}, {2000000, 3, 0, 0, "2000000x3"},
    {6, 2000000, 0, 0, "6x2000000"}, {2000000, 6, 0, 0, "2000000x6"}, {5000, 7, 0, 0, "5000x7"},
    {70001, 3, 0, 0, "70001x3"},   {3, 70001, 0, 0, "3x70001"},     {2048, 6144, 0, 0, "2048x6144"},
    {33, 31, 0, 0, "33x31"},       {16384, 8192, 0, 0, "16384x8192"}, {8192, 16384, 0, 0, "8192x16384"},
    {768, 512, 0, 0, "768x512"},   {512, 768, 0, 0, "512x768"},     {1000, 300, 0, 0, "1000x300"},
    {13001, 517, 0, 0, "13001x517"}, {517, 13001, 0, 0, "517x13001"},
};
// Random shapes (sides 1 to 700, and a few to 5000), elements of 1, 4 and
// 16 bytes: every case bit-exact.
TEST(InplaceRectRandom, ManyShapes) {
  GT_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(gtt::test_seed("InplaceRectRandom.ManyShapes"));
  std::vector<std::string> labels;
  labels.reserve(400);
  for (int i = 0; i < 240; ++i) {
    const std::uint64_t hi = i % 40 == 0 ? 5000 : 700;
    const std::uint64_t rows = 1 + rng() % hi, cols = 1 + rng() % hi;
    labels.push_back(std::to_string(rows) + "x" + std::to_string(cols));
    const std::size_t es = kSizes[i % 5];
    std::string skip;
    SCOPED_TRACE(labels.back() + " e" + std::to_string(es));
    run_case(Case{"inplace-rect", es, Shape{rows, cols, 0, 0, labels.back().c_str()}}, "InplaceRectRandom.ManyShapes",
             &skip);
    if (HasFailure()) break;
  }
}

// Shapes whose steps take clusters on a GPU that has them, run again as on
// one without (GT_TEST_RECT_NO_CLUSTERS=1): one block per band, or the
// device-memory batches.
const Shape kRectNoClusters[] = {
    {64, 40000, 0, 0, "64x40000"}, {40000, 64, 0, 0, "40000x64"}, {5000, 7, 0, 0, "5000x7"},
    {6, 300000, 0, 0, "6x300000"}, {1000, 999, 0, 0, "1000x999"},
};

std::vector<Case> rect_cases(const Shape* shapes, std::size_t count) {
  std::vector<Case> out;
  for (std::size_t s : kSizes)
    for (std::size_t i = 0; i < count; ++i) out.push_back({"inplace-rect", s, shapes[i]});
  return out;
}

class Rect : public Catalogue {};

TEST_P(Rect, MatchesPattern) {
  std::string skip;
  run_case(GetParam(), case_name(GetParam()), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

INSTANTIATE_TEST_SUITE_P(InplaceRect, Rect, ::testing::ValuesIn(rect_cases(kRect, std::size(kRect))),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// Runs case c with one of inplace-rect's test switches set to 1, named with
// `suffix`.
void run_with_switch(const Case& c, const char* var, const std::string& suffix) {
  setenv(var, "1", 1);
  std::string skip;
  run_case(c, case_name(c) + suffix, &skip);
  unsetenv(var);
  if (!skip.empty()) GTEST_SKIP() << skip;
}

class RectNoClusters : public Catalogue {};

TEST_P(RectNoClusters, MatchesPattern) { run_with_switch(GetParam(), "GT_TEST_RECT_NO_CLUSTERS", "_noclusters"); }

INSTANTIATE_TEST_SUITE_P(InplaceRect, RectNoClusters,
                         ::testing::ValuesIn(rect_cases(kRectNoClusters, std::size(kRectNoClusters))),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// The steps' clusters with fixed shares of their bands and rows
// (GT_TEST_RECT_FIXED_SHARES=1, the timing test's comparison) instead of
// items from a counter: the rotation, rows and the permutation in clusters,
// both ways bit-exact.
const Shape kRectFixedShares[] = {{13001, 517, 0, 0, "13001x517"}, {12345, 678, 0, 0, "12345x678"},
                                  {6, 300000, 0, 0, "6x300000"},   {5000, 7, 0, 0, "5000x7"}};

class RectFixedShares : public Catalogue {};

TEST_P(RectFixedShares, MatchesPattern) { run_with_switch(GetParam(), "GT_TEST_RECT_FIXED_SHARES", "_fixed"); }

INSTANTIATE_TEST_SUITE_P(InplaceRect, RectFixedShares,
                         ::testing::ValuesIn(rect_cases(kRectFixedShares, std::size(kRectFixedShares))),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// Step 1 by row segments (GT_TEST_RECT_SEGMENT_ROTATION=1: wherever it can
// run, narrow groups too): several chunks with a longer last one and groups
// of every width (12345x678: c = 3; 6000x4002: c = 6; 4002x6000), one chunk
// whose halo is its own first rows (60x84: c = 12; 7x49: c = 7, every row
// moves; 2x1000: c = 2), groups of one or three elements (1000x2, 128x96:
// c = 32), c = 64 (4096x192: eight chunks of 512 rows, groups of three), and
// c = 65, past its limit (130x195: the band rotation).
const Shape kRectSegments[] = {{12345, 678, 0, 0, "12345x678"}, {6000, 4002, 0, 0, "6000x4002"},
                               {4002, 6000, 0, 0, "4002x6000"}, {60, 84, 0, 0, "60x84"},
                               {7, 49, 0, 0, "7x49"},           {2, 1000, 0, 0, "2x1000"},
                               {1000, 2, 0, 0, "1000x2"},       {128, 96, 0, 0, "128x96"},
                               {4096, 192, 0, 0, "4096x192"},   {130, 195, 0, 0, "130x195"}};

class RectSegments : public Catalogue {};

TEST_P(RectSegments, MatchesPattern) { run_with_switch(GetParam(), "GT_TEST_RECT_SEGMENT_ROTATION", "_segments"); }

INSTANTIATE_TEST_SUITE_P(InplaceRect, RectSegments,
                         ::testing::ValuesIn(rect_cases(kRectSegments, std::size(kRectSegments))),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// The coprime row step's element-at-a-time form and the permutation's
// element loads for 1- and 2-byte bands (GT_TEST_RECT_ELEMENT_ROWS and
// GT_TEST_RECT_ELEMENT_LOADS, the timing test's comparison), both set:
// coprime shapes whose rows pack words by default (1000x999, 999x1000,
// 4097x1000) and whose permutation loads words (13001x517 in clusters).
const Shape kRectElementPaths[] = {{1000, 999, 0, 0, "1000x999"},
                                   {999, 1000, 0, 0, "999x1000"},
                                   {4097, 1000, 0, 0, "4097x1000"},
                                   {13001, 517, 0, 0, "13001x517"}};

class RectElementPaths : public Catalogue {};

TEST_P(RectElementPaths, MatchesPattern) {
  setenv("GT_TEST_RECT_ELEMENT_ROWS", "1", 1);
  run_with_switch(GetParam(), "GT_TEST_RECT_ELEMENT_LOADS", "_elements");
  unsetenv("GT_TEST_RECT_ELEMENT_ROWS");
}

INSTANTIATE_TEST_SUITE_P(InplaceRect, RectElementPaths,
                         ::testing::ValuesIn(rect_cases(kRectElementPaths, std::size(kRectElementPaths))),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// inplace-rect on a matrix that starts inside a 16-byte word (a view into a
// larger allocation, as an offset CuPy array is): every element size at
// offsets of its alignment, on shapes whose row step packs whole words
// (coprime rows, their ragged ends at every offset) and whose permutation
// loads aligned words (1 and 2 bytes; the first word starts before the
// matrix, the last ends past it), lone blocks and clusters. Bit-exact, and
// the bytes on both sides untouched.
TEST(InplaceRectOffsets, MatchesPatternNeighboursUntouched) {
  GT_SKIP_WITHOUT_GPU();
  const KernelInfo* k = gt::kernels::find("inplace-rect");
  ASSERT_NE(k, nullptr);
  const Shape shapes[] = {{1000, 999, 0, 0, "1000x999"}, {999, 1000, 0, 0, "999x1000"},
                          {4097, 1000, 0, 0, "4097x1000"}, {13001, 517, 0, 0, "13001x517"},
                          {40, 24, 0, 0, "40x24"},         {3, 70001, 0, 0, "3x70001"}};
  constexpr unsigned char kGuard = 0xC3;
  constexpr std::size_t kSide = 64;
  for (std::size_t es : kSizes)
    for (const Shape& sh : shapes)
      for (std::size_t off = es; off < 16; off += es < 4 ? 3 * es : es) {
        const std::uint64_t rows = sh.rows, cols = sh.cols, bytes = rows * cols * es;
        SCOPED_TRACE(std::string(sh.label) + " e" + std::to_string(es) + " offset " + std::to_string(off));
        const std::uint64_t seed = gtt::test_seed("InplaceRectOffsets" + std::string(sh.label) + std::to_string(es));
        gtt::DeviceBuffer aligned(bytes), room(bytes + 2 * kSide);
        ASSERT_TRUE(aligned.ok() && room.ok());
        ASSERT_EQ(gtt::fill(aligned.get(), es, rows, cols, cols, seed, gtt::kPadIn), "");
        GTT_CUDA(cudaMemset(room.get(), kGuard, room.bytes()));
        unsigned char* d = room.get() + kSide + off;
        GTT_CUDA(cudaMemcpy(d, aligned.get(), bytes, cudaMemcpyDeviceToDevice));
        GTT_CUDA(cudaDeviceSynchronize());
        const Problem p{rows, cols, es, 0, 0};
        k->launch(d, nullptr, p, nullptr);
        GTT_CUDA(cudaDeviceSynchronize());
        GTT_CUDA(cudaMemcpy(aligned.get(), d, bytes, cudaMemcpyDeviceToDevice));
        const gtt::Check res = gtt::verify(aligned.get(), es, cols, rows, rows, seed, true, gtt::kPadIn);
        ASSERT_EQ(res.error, "");
        EXPECT_EQ(res.count, 0u) << "first wrong element (" << res.row << ", " << res.col << "): got " << res.got
                                 << ", want " << res.want;
        std::vector<unsigned char> front(kSide + off), back(kSide - off);
        GTT_CUDA(cudaMemcpy(front.data(), room.get(), front.size(), cudaMemcpyDeviceToHost));
        GTT_CUDA(cudaMemcpy(back.data(), d + bytes, back.size(), cudaMemcpyDeviceToHost));
        EXPECT_EQ(std::count(front.begin(), front.end(), kGuard), std::ptrdiff_t(front.size())) << "bytes before the matrix changed";
        EXPECT_EQ(std::count(back.begin(), back.end(), kGuard), std::ptrdiff_t(back.size())) << "bytes after the matrix changed";
        if (HasFailure()) return;
      }
}

// One small run of every kernel and element size, at shapes that take every
// path (16-byte tiles, partial tiles, leading dimensions): the target of the
// compute-sanitizer memcheck and racecheck runs in scripts/gpu-check.sh.
std::vector<Case> sanitize_cases() {
  std::vector<Case> out;
  for (const auto& k : gt::kernels::registry())
    for (std::size_t s : kSizes) {
      if (k.kind == Kind::inplace)
        for (const auto& sh : kSanitizeIn) out.push_back({k.name, s, sh});
      else
        for (const auto& sh : kSanitizeOut) out.push_back({k.name, s, sh});
    }
  // Once each (until now inside the loops above: every rectangle ran once
  // per kernel and element size, 75 times).
  for (const auto& r : kSanitizeRect) out.push_back({"inplace-rect", r.elem, r.shape});
  return out;
}

TEST(Sanitize, InplaceRectBatches) {
  GT_SKIP_WITHOUT_GPU();
  setenv("GT_TEST_RECT_NO_CLUSTERS", "1", 1);
  for (std::size_t s : kSizes)
    for (const auto& sh : kSanitizeRectNoClusters) {
      const Case c{"inplace-rect", s, sh};
      std::string skip;
      SCOPED_TRACE(case_name(c));
      run_case(c, "Sanitize.InplaceRectBatches", &skip);
    }
  unsetenv("GT_TEST_RECT_NO_CLUSTERS");
}

// The rotation by row segments under both tools: halos of several chunks
// (300x202: c = 2, b = 101), and of a lone chunk (7x49).
TEST(Sanitize, InplaceRectSegments) {
  GT_SKIP_WITHOUT_GPU();
  setenv("GT_TEST_RECT_SEGMENT_ROTATION", "1", 1);
  for (std::size_t s : {std::size_t(1), std::size_t(4), std::size_t(16)})
    for (const Shape& sh : {Shape{300, 202, 0, 0, "300x202"}, Shape{7, 49, 0, 0, "7x49"}}) {
      const Case c{"inplace-rect", s, sh};
      std::string skip;
      SCOPED_TRACE(case_name(c));
      run_case(c, "Sanitize.InplaceRectSegments", &skip);
    }
  unsetenv("GT_TEST_RECT_SEGMENT_ROTATION");
}

TEST(Sanitize, AllKernelsSmall) {
  GT_SKIP_WITHOUT_GPU();
  for (const Case& c : sanitize_cases()) {
      {
        std::string skip;
        SCOPED_TRACE(case_name(c));
        run_case(c, "Sanitize.AllKernelsSmall", &skip);
      }
  }
}

// More than 2^31 elements (2.5e9 bytes): offsets that overflow 32 bits must
// not. Skipped when the device lacks the memory.
void run_huge(const char* kernel, const Shape& sh) {
  std::size_t free_b = 0, total_b = 0;
  GTT_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const KernelInfo* k = gt::kernels::find(kernel);
  ASSERT_NE(k, nullptr);
  const std::uint64_t in_b = sh.rows * (sh.cols + sh.ld_in_extra), out_b = sh.cols * (sh.rows + sh.ld_out_extra);
  const std::uint64_t need = in_b + (k->kind == Kind::inplace ? 0 : out_b) + (256ull << 20);
  if (free_b < need) GTEST_SKIP() << "needs " << need << " bytes of device memory, " << free_b << " free";
  std::string skip;
  run_case(Case{kernel, 1, sh}, std::string("Huge_") + kernel + "_" + sh.label, &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
}
TEST(Huge, PaddedI8Over2To31Elements) {
  GT_SKIP_WITHOUT_GPU();
  run_huge("padded", kHugeSquare);
}

// 715,827,889 x 3 bytes (2^31 + 19 elements), output rows padded to a
// multiple of 16: padded's narrow path, with a scalar tail, past 2^31.
TEST(Huge, PaddedI8NarrowOver2To31Elements) {
  GT_SKIP_WITHOUT_GPU();
  run_huge("padded", kHugeNarrow);
}

TEST(Huge, InplaceTiledI8Over2To31Elements) {
  GT_SKIP_WITHOUT_GPU();
  run_huge("inplace-tiled", kHugeSquare);
}

// A rectangle of 2^31 + 16352 one-byte elements in place (c = 50: all three
// steps): offsets past 32 bits in every step; its column bands (50000 rows)
// spread over clusters of 16 blocks, its rows (42950 bytes) on chip.
const Shape kHugeRect{50000, 42950, 0, 0, "50000x42950"};
TEST(Huge, InplaceRectI8Over2To31Elements) {
  GT_SKIP_WITHOUT_GPU();
  run_huge("inplace-rect", kHugeRect);
}

// Host-only: every case of every suite above against kRefused, on any
// machine (no GPU needed). A kernel whose supports() starts refusing a case
// it should take fails here first.
TEST(Refusals, ExactlyTheListedOnes) {
  std::vector<Case> all = catalogue_cases();
  for (auto* more : {&skinny_cases, &block_cases, &sanitize_cases})
    for (const Case& c : (*more)()) all.push_back(c);
  for (const Shape& sh : kSanitizeRectNoClusters) all.push_back({"inplace-rect", 16, sh});
  all.push_back({"padded", 1, kHugeSquare});
  all.push_back({"padded", 1, kHugeNarrow});
  all.push_back({"inplace-tiled", 1, kHugeSquare});
  all.push_back({"inplace-rect", 1, kHugeRect});
  for (const Shape& sh : kRect) all.push_back({"inplace-rect", 4, sh});
  for (const Shape& sh : kRectNoClusters) all.push_back({"inplace-rect", 4, sh});
  for (const Shape& sh : kRectSegments) all.push_back({"inplace-rect", 4, sh});
  std::set<const Refusal*> used;
  for (const Case& c : all) {
    const KernelInfo* k = gt::kernels::find(c.kernel);
    ASSERT_NE(k, nullptr) << c.kernel;
    EXPECT_EQ(refusal_mismatch(c, *k), "");
    if (const Refusal* r = refusal_of(c)) used.insert(r);
  }
  for (const Refusal& r : kRefused)
    EXPECT_TRUE(used.count(&r)) << "kRefused lists " << r.kernel << " " << r.shape << ", which no case poses: drop it";
}

// Host-only checks of the registry (run without a GPU too).
TEST(Registry, NamesAreUniqueAndFindable) {
  std::set<std::string> seen;
  for (const auto& k : gt::kernels::registry()) {
    EXPECT_TRUE(seen.insert(k.name).second) << "duplicate " << k.name;
    EXPECT_EQ(gt::kernels::find(k.name), &k);
    EXPECT_NE(std::string(k.description), "");
  }
  const char* catalogue[] = {"copy", "copy-col", "naive-row", "naive-col", "row-per-thread", "single-thread",
                             "tiled", "smem", "padded", "unrolled", "unroll4-row", "unroll4-col", "diagonal",
                             "smem-unroll-pad-dyn", "inplace-swap", "inplace-tiled", "inplace-rect"};
  for (const char* n : catalogue) EXPECT_NE(gt::kernels::find(n), nullptr) << n;
  EXPECT_EQ(gt::kernels::find("no-such-kernel"), nullptr);
  EXPECT_NE(gt::kernels::names(Kind::inplace).find("inplace-tiled"), std::string::npos);
}

TEST(Registry, BestIsATransposeOfTheRightKind) {
  for (std::size_t s : kSizes) {
    const auto c = gt::kernels::best_choice(s);
    ASSERT_NE(c.kernel, nullptr);
    EXPECT_EQ(c.kernel->kind, Kind::transpose);
    EXPECT_NE(std::string(c.chosen_by), "");
    EXPECT_EQ(gt::kernels::best(s, Kind::inplace).kind, Kind::inplace);
  }
  EXPECT_THROW(gt::kernels::best(3), gt::Error);
}

TEST(Registry, SupportsExplainsRefusals) {
  std::string why;
  Problem p;
  p.rows = 10;
  p.cols = 12;
  p.elem_size = 3;
  EXPECT_FALSE(gt::kernels::find("padded")->supports(p, &why));
  EXPECT_NE(why.find("element size"), std::string::npos) << why;
  p.elem_size = 4;
  EXPECT_FALSE(gt::kernels::find("inplace-tiled")->supports(p, &why));
  EXPECT_NE(why.find("square"), std::string::npos) << why;
  EXPECT_NE(why.find("inplace-rect takes rectangles"), std::string::npos) << why;
  EXPECT_TRUE(gt::kernels::find("inplace-rect")->supports(p, &why)) << why;
  p.ld_in = 14;
  EXPECT_FALSE(gt::kernels::find("inplace-rect")->supports(p, &why));
  EXPECT_NE(why.find("10x12 rectangle in place must be packed"), std::string::npos) << why;
  p.rows = 12;
  EXPECT_TRUE(gt::kernels::find("inplace-rect")->supports(p, &why)) << why;  // a square with a leading dimension
  p.rows = 10;
  p.ld_in = 0;
  p.block_x = 16;
  p.block_y = 16;
  EXPECT_FALSE(gt::kernels::find("unrolled")->supports(p, &why));
  EXPECT_NE(why.find("fixed block shape"), std::string::npos) << why;
  p.block_x = p.block_y = 0;
  p.rows = p.cols = 2048;
  EXPECT_FALSE(gt::kernels::find("single-thread")->supports(p, &why));
  EXPECT_NE(why.find("limited"), std::string::npos) << why;
  p.ld_in = 100;
  EXPECT_FALSE(gt::kernels::find("padded")->supports(p, &why));
  EXPECT_NE(why.find("ld_in"), std::string::npos) << why;
}

TEST(Registry, LaunchRefusesUnsupportedProblems) {
  Problem p;
  p.rows = 10;
  p.cols = 12;
  p.elem_size = 4;
  try {
    gt::kernels::find("inplace-swap")->launch(nullptr, nullptr, p, nullptr);
    FAIL() << "expected gt::Error";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
  }
}

}  // namespace
