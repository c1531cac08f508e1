#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "support/reference.hpp"
#include "testing.hpp"

namespace {

using gt::test::Bytes;
using gt::test::random_bytes;
using gt::test::reference_transpose;

struct Case {
  std::uint64_t rows, cols;
};

const std::vector<Case> kShapes = {{1, 1},     {1, 37},   {37, 1},   {2, 2},    {31, 33},  {64, 64},
                                   {65, 63},   {127, 129}, {257, 3},  {3, 257},  {17, 1031}, {1000, 999},
                                   {509, 521}, {16, 1},   {1, 4099}, {130, 250}};

// Transposes `in` (rows x cols, ld_in) with `fn` into an output with
// ld_out >= rows whose padding holds a sentinel, and checks it bit for bit
// against the reference transpose, padding included (it must stay untouched).
template <class F>
void check_against_reference(std::uint64_t R, std::uint64_t C, std::size_t es, std::uint64_t pad_in,
                             std::uint64_t pad_out, std::uint64_t seed, F&& fn) {
  const std::uint64_t ld_in = C + pad_in, ld_out = R + pad_out;
  const Bytes in = random_bytes(R * ld_in * es, seed);
  Bytes want(C * ld_out * es, 0x5C), got(C * ld_out * es, 0x5C);
  reference_transpose(in.data(), R, C, ld_in, want.data(), ld_out, es);
  fn(in.data(), R, C, ld_in, got.data(), ld_out);
  if (want != got) {
    std::size_t i = 0;
    while (want[i] == got[i]) ++i;
    const std::uint64_t e = i / es;
    FAIL() << "mismatch at output (" << e / ld_out << ", " << e % ld_out << ") byte " << i % es << "; reproduce: "
           << R << "x" << C << " es=" << es << " ld_in=" << ld_in << " ld_out=" << ld_out << " seed=" << seed;
  }
}

TEST(NaiveTranspose, SmallKnownMatrix) {
  const std::uint16_t in[2][3] = {{1, 2, 3}, {4, 5, 6}};
  std::uint16_t out[3][2] = {};
  gt::naive_transpose(in, 2, 3, 3, out, 2, 2);
  const std::uint16_t want[3][2] = {{1, 4}, {2, 5}, {3, 6}};
  EXPECT_EQ(std::memcmp(out, want, sizeof want), 0);
}

// naive_transpose, the library's own two-loop gold model, against the tests'.
TEST(NaiveTranspose, MatchesTheReferenceForEveryElementSizeAndShape) {
  std::uint64_t seed = 1;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const Case& c : kShapes)
      for (std::uint64_t pad : {0, 5}) {
        SCOPED_TRACE("es=" + std::to_string(es));
        check_against_reference(c.rows, c.cols, es, pad, pad + 3, seed++,
                                [&](const void* in, auto R, auto C, auto li, void* out, auto lo) {
                                  gt::naive_transpose(in, R, C, li, out, lo, es);
                                });
        if (HasFatalFailure()) return;
      }
}

TEST(CpuTranspose, MatchesNaiveForEveryElementSizeShapeAndThreadCount) {
  std::uint64_t seed = 1;
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const Case& c : kShapes)
      for (int threads : {1, 2, 3, 8})
        for (std::uint64_t pad : {0, 5}) {
          SCOPED_TRACE("es=" + std::to_string(es) + " threads=" + std::to_string(threads));
          check_against_reference(c.rows, c.cols, es, pad, pad + 3, seed++,
                                  [&](const void* in, auto R, auto C, auto li, void* out, auto lo) {
                                    gt::cpu_transpose(in, R, C, li, out, lo, es, threads);
                                  });
          if (HasFatalFailure()) return;
        }
}

TEST(CpuTranspose, LargeMatrixEveryElementSize) {
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (int threads : {3}) {
      check_against_reference(4097, 2049, es, 0, 0, 99 + es,
                              [&](const void* in, auto R, auto C, auto li, void* out, auto lo) {
                                gt::cpu_transpose(in, R, C, li, out, lo, es, threads);
                              });
      if (HasFatalFailure()) return;
    }
}

// The streaming, multithreaded and AVX2 paths only switch on for large
// matrices by default; force each of them on small shapes, with block
// sizes that are not multiples of the micro-kernels.
TEST(CpuTranspose, EveryPathAndTuning) {
  std::uint64_t seed = 1000;
  std::vector<std::string> isas = {"base"};
  if (gt::cpu::have_avx2()) isas.push_back("avx2");
  for (const std::string& isa : isas)
    for (std::size_t es : {1, 2, 4, 8, 16})
      for (bool stream : {false, true})
        for (std::uint32_t br : {0u, 24u, 200u}) {
          gt::cpu::CpuTuning t = gt::cpu::default_tuning(es);
          t.isa = isa;
          t.stream_min_bytes = stream ? 0 : ~std::uint64_t(0);
          t.parallel_min_bytes = 0;
          if (br) {
            t.block_rows = br;
            t.block_cols = br + 8;
          }
          SCOPED_TRACE(t.describe() + " es=" + std::to_string(es));
          for (const Case& c : kShapes)
            for (int threads : {1, 3}) {
              check_against_reference(c.rows, c.cols, es, 1, 7, seed++,
                                      [&](const void* in, auto R, auto C, auto li, void* out, auto lo) {
                                        gt::cpu::cpu_transpose_tuned(in, R, C, li, out, lo, es, threads, t);
                                      });
              if (HasFatalFailure()) return;
            }
        }
}

void check_inplace(std::uint64_t n, std::uint64_t ld, std::size_t es, int threads, std::uint64_t seed,
                   const gt::cpu::CpuTuning* t) {
  const Bytes a0 = random_bytes(n * ld * es, seed);
  Bytes want = a0, got = a0;
  reference_transpose(a0.data(), n, n, ld, want.data(), ld, es);
  if (t)
    gt::cpu::cpu_transpose_inplace_tuned(got.data(), n, ld, es, threads, *t);
  else
    gt::cpu_transpose_inplace(got.data(), n, ld, es, threads);
  if (want != got) {
    std::size_t i = 0;
    while (want[i] == got[i]) ++i;
    FAIL() << "mismatch at element " << i / es << "; reproduce: n=" << n << " ld=" << ld << " es=" << es
           << " threads=" << threads << " seed=" << seed;
  }
}

TEST(CpuTransposeInplace, SquaresOddAndEvenWithPadding) {
  std::uint64_t seed = 5000;
  std::vector<std::string> isas = {"base"};
  if (gt::cpu::have_avx2()) isas.push_back("avx2");
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (std::uint64_t n : {1, 2, 3, 7, 16, 31, 64, 65, 127, 129, 300, 1000})
      for (std::uint64_t pad : {0, 3})
        for (int threads : {1, 2, 8}) {
          check_inplace(n, n + pad, es, threads, seed++, nullptr);
          for (const std::string& isa : isas)
            for (std::uint32_t block : {0u, 40u}) {
              gt::cpu::CpuTuning t = gt::cpu::default_tuning(es);
              t.isa = isa;
              t.parallel_min_bytes = 0;
              if (block) t.inplace_block = block;
              check_inplace(n, n + pad, es, threads, seed++, &t);
            }
          if (HasFatalFailure()) return;
        }
}

// A pair of tiles of an n x n matrix (ld = n + 3), tile a at (r0, c0) of
// h x w and its mirror b at (c0, r0): both swapped and transposed where they
// lie, every other element (the padding too) untouched.
void check_pair(std::uint64_t n, std::uint64_t r0, std::uint64_t c0, std::uint64_t h, std::uint64_t w, std::size_t es,
                int threads, std::uint64_t seed, const gt::cpu::CpuTuning* t) {
  const std::uint64_t ld = n + 3;
  const Bytes a0 = random_bytes(n * ld * es, seed);
  Bytes want = a0, got = a0;
  auto at = [&](Bytes& m, std::uint64_t r, std::uint64_t c) { return m.data() + (r * ld + c) * es; };
  for (std::uint64_t i = 0; i < h; ++i)
    for (std::uint64_t j = 0; j < w; ++j) {
      std::memcpy(at(want, r0 + i, c0 + j), a0.data() + ((c0 + j) * ld + r0 + i) * es, es);
      std::memcpy(at(want, c0 + j, r0 + i), a0.data() + ((r0 + i) * ld + c0 + j) * es, es);
    }
  if (t)
    gt::cpu::cpu_transpose_pair_tuned(at(got, r0, c0), at(got, c0, r0), h, w, ld, es, threads, *t);
  else
    gt::cpu_transpose_pair(at(got, r0, c0), at(got, c0, r0), h, w, ld, es, threads);
  if (want != got) {
    std::size_t i = 0;
    while (want[i] == got[i]) ++i;
    FAIL() << "mismatch at element " << i / es << "; reproduce: n=" << n << " a at (" << r0 << ", " << c0 << ") "
           << h << "x" << w << " es=" << es << " threads=" << threads << " seed=" << seed;
  }
}

TEST(CpuTransposePair, OffDiagonalTilesEveryElementSizeAndPath) {
  struct Case {
    std::uint64_t n, r0, c0, h, w;
  };
  const Case cases[] = {{300, 0, 100, 100, 200}, {300, 7, 150, 129, 150}, {97, 0, 1, 1, 96},   {97, 60, 0, 37, 60},
                        {64, 0, 32, 32, 32},     {520, 0, 257, 257, 263}, {40, 3, 21, 17, 19}, {2, 0, 1, 1, 1}};
  std::uint64_t seed = 9000;
  std::vector<std::string> isas = {"base"};
  if (gt::cpu::have_avx2()) isas.push_back("avx2");
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (const Case& c : cases)
      for (int threads : {1, 3}) {
        check_pair(c.n, c.r0, c.c0, c.h, c.w, es, threads, seed++, nullptr);
        for (const std::string& isa : isas) {
          gt::cpu::CpuTuning t = gt::cpu::default_tuning(es);
          t.isa = isa;
          t.parallel_min_bytes = 0;
          t.inplace_block = 40;
          check_pair(c.n, c.r0, c.c0, c.h, c.w, es, threads, seed++, &t);
        }
        if (HasFatalFailure()) return;
      }
}

TEST(ParallelMemcpy, CopiesEveryByte) {
  for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(4095), std::uint64_t(4097), std::uint64_t(3 << 20) + 7})
    for (int threads : {1, 3, 8}) {
      const Bytes src = random_bytes(n, n + threads);
      Bytes dst(n + 1, 0x11);
      gt::parallel_memcpy(dst.data(), src.data(), n, threads);
      ASSERT_EQ(std::memcmp(dst.data(), src.data(), n), 0) << n << " bytes, " << threads << " threads";
      ASSERT_EQ(dst[n], 0x11);
    }
  gt::parallel_memcpy(nullptr, nullptr, 0, 2);
}

TEST(CpuTranspose, RejectsBadArguments) {
  std::vector<unsigned char> buf(64);
  try {
    gt::cpu_transpose(buf.data(), 2, 2, 2, buf.data() + 32, 2, 3);
    FAIL() << "element size 3 accepted";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
  }
  EXPECT_THROW(gt::cpu_transpose(buf.data(), 2, 4, 3, buf.data() + 32, 2, 1), gt::Error);
  EXPECT_THROW(gt::cpu_transpose_inplace(buf.data(), 4, 3, 1), gt::Error);
  gt::cpu_transpose(buf.data(), 0, 5, 5, buf.data(), 0, 4);  // empty: nothing to do
}

}  // namespace
