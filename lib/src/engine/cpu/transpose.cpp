#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cpu/kernels_api.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "engine/cpu/tuning.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/types.hpp"

namespace gt {

namespace cpu {

std::string CpuTuning::describe() const {
  std::ostringstream o;
  o << isa << ", block " << block_rows << "x" << block_cols << ", prefetch " << prefetch_ahead << (prefetch_l2 ? " (L2)" : "") << ", stream >= "
    << stream_min_bytes << " B";
  return o.str();
}

bool have_avx2() {
#if GT_CPU_X86 && (defined(__GNUC__) || defined(__clang__))
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
#else
  return false;
#endif
}

CpuTuning default_tuning(std::size_t elem_size) {
  CpuTuning t;
  t.isa = have_avx2() ? "avx2" : "base";
  // Chosen by sweeps of 1 GiB matrices (16384 rows) on the 2-core AMD EPYC
  // build machine, 2 threads, memcpy and candidates interleaved (tune runs of
  // this commit): input row runs of ~512 bytes and output runs of ~256 bytes,
  // one block ahead prefetched. Smaller elements need more output rows per
  // block for the same runs, so their staging block grows past L1 (1 byte:
  // 256x512 gave 34-40% of memcpy where 128x128 gave 17-20%).
  switch (elem_size) {
    case 1: t.block_rows = 256; t.block_cols = 512; break;
    case 2: t.block_rows = 128; t.block_cols = 256; break;
    case 4: t.block_rows = 64; t.block_cols = 128; break;
    case 8: t.block_rows = 32; t.block_cols = 64; break;
    default: t.block_rows = 32; t.block_cols = 32; break;
  }
  // In place, 16384^2 f32, 8192^2 f64 (same sweeps): 128 and 64 reached
  // 88-90% and 99-103% of memcpy where 64 and 32 reached 68-70% and 84-88%;
  // 16-byte elements did better with 32 (85-91%) than with 64 (49%).
  switch (elem_size) {
    case 1: t.inplace_block = 256; break;
    case 2: t.inplace_block = 128; break;
    case 4: t.inplace_block = 128; break;
    case 8: t.inplace_block = 64; break;
    default: t.inplace_block = 32; break;
  }
  return t;
}

namespace {

void check_elem_size(std::size_t es) {
  if (!supported_elem_size(es))
    throw Error(ErrorKind::usage, "unsupported element size " + std::to_string(es) + " bytes (1, 2, 4, 8 or 16)");
}

void check_shape(std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, std::uint64_t ld_out) {
  if (ld_in < cols || ld_out < rows)
    throw Error(ErrorKind::internal, "transpose: leading dimension smaller than the row length");
  Shape{rows, cols}.elems();  // throws when rows*cols overflows 64 bits
}

bool use_avx2(const CpuTuning& t) {
#if GT_CPU_X86
  return t.isa == "avx2" && have_avx2();
#else
  (void)t;
  return false;
#endif
}

void run_region(std::size_t es, const RegionJob& job, bool avx2) {
#if GT_CPU_X86
  if (avx2) return region_avx2(es, job);
#endif
  region_base(es, job);
}

void run_inplace(std::size_t es, const InplaceJob& job, bool avx2) {
#if GT_CPU_X86
  if (avx2) return inplace_avx2(es, job);
#endif
  inplace_base(es, job);
}

// A 64-byte-aligned scratch block per thread, reused across calls.
byte* scratch(std::size_t bytes) {
  thread_local std::vector<byte> buf;
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  auto p = reinterpret_cast<std::uintptr_t>(buf.data());
  return buf.data() + ((64 - (p & 63)) & 63);
}

template <std::size_t ES>
void naive_es(const byte* in, std::uint64_t R, std::uint64_t C, std::uint64_t ld_in, byte* out,
              std::uint64_t ld_out) {
  for (std::uint64_t r = 0; r < R; ++r)
    for (std::uint64_t c = 0; c < C; ++c) std::memcpy(out + (c * ld_out + r) * ES, in + (r * ld_in + c) * ES, ES);
}

}  // namespace

void cpu_transpose_tuned(const void* in, std::uint64_t R, std::uint64_t C, std::uint64_t ld_in, void* out,
                         std::uint64_t ld_out, std::size_t es, int threads, const CpuTuning& t) {
  check_elem_size(es);
  if (R == 0 || C == 0) return;
  check_shape(R, C, ld_in, ld_out);
  if (t.block_rows == 0 || t.block_cols == 0) throw Error(ErrorKind::internal, "transpose: tuning with an empty block");
  const bool avx2 = use_avx2(t);
  const std::uint64_t bytes = R * C * es;
  const bool stream = bytes >= t.stream_min_bytes;
  int n = bytes < t.parallel_min_bytes ? 1 : resolve_threads(threads);

  // Split along the side with more blocks; columns (bands of output rows)
  // first, so each thread's writes run front to back.
  const std::uint64_t ncb = (C + t.block_cols - 1) / t.block_cols, nrb = (R + t.block_rows - 1) / t.block_rows;
  const bool by_cols = ncb >= std::uint64_t(4) * n || ncb >= nrb;
  const std::uint64_t nb = by_cols ? ncb : nrb;
  if (std::uint64_t(n) > nb) n = int(nb);
  const std::size_t stage_bytes = std::size_t(t.block_rows) * t.block_cols * es;
  ThreadPool::shared().run(n, [&](int k) {
    const std::uint64_t b0 = nb * k / n, b1 = nb * (k + 1) / n;
    Region g{0, R, 0, C};
    if (by_cols) {
      g.c0 = b0 * t.block_cols;
      g.c1 = std::min(C, b1 * t.block_cols);
    } else {
      g.r0 = b0 * t.block_rows;
      g.r1 = std::min(R, b1 * t.block_rows);
    }
    if (g.r0 >= g.r1 || g.c0 >= g.c1) return;
    RegionJob job{static_cast<const byte*>(in), std::size_t(ld_in) * es, static_cast<byte*>(out),
                  std::size_t(ld_out) * es, g, &t, stream, scratch(stage_bytes)};
    run_region(es, job, avx2);
  });
}

namespace {

// In place, a square (b null) or a pair of tiles (a h x w, b w x h): blocks
// of the in-place block size, their block rows of `a` handed out to the
// threads as they ask.
void run_inplace_blocks(void* a, void* b, std::uint64_t h, std::uint64_t w, std::uint64_t ld, std::size_t es,
                        int threads, const CpuTuning& t) {
  const bool avx2 = use_avx2(t);
  const std::uint64_t k = avx2 ? micro_k_avx2(es) : micro_k_base(es);
  const std::uint64_t B = std::max<std::uint64_t>(k, t.inplace_block);
  const std::uint64_t rows_of_blocks = (h + B - 1) / B;
  const std::uint64_t moved = (b ? 2 : 1) * h * w * es;
  int nt = moved < t.parallel_min_bytes ? 1 : resolve_threads(threads);
  if (std::uint64_t(nt) > rows_of_blocks) nt = int(rows_of_blocks);
  std::atomic<std::uint64_t> next_row{0};
  ThreadPool::shared().run(nt, [&](int) {
    InplaceJob job{static_cast<byte*>(a), h, std::size_t(ld) * es, B, &next_row, scratch(2 * B * B * es)};
    job.b = static_cast<byte*>(b);
    job.w = w;
    run_inplace(es, job, avx2);
  });
}

}  // namespace

void cpu_transpose_inplace_tuned(void* a, std::uint64_t n, std::uint64_t ld, std::size_t es, int threads,
                                 const CpuTuning& t) {
  check_elem_size(es);
  if (n == 0) return;
  check_shape(n, n, ld, ld);
  run_inplace_blocks(a, nullptr, n, n, ld, es, threads, t);
}

void cpu_transpose_pair_tuned(void* a, void* b, std::uint64_t h, std::uint64_t w, std::uint64_t ld, std::size_t es,
                              int threads, const CpuTuning& t) {
  check_elem_size(es);
  if (h == 0 || w == 0) return;
  check_shape(h, w, ld, ld);
  check_shape(w, h, ld, ld);
  run_inplace_blocks(a, b, h, w, ld, es, threads, t);
}

}  // namespace cpu

void cpu_transpose_pair(void* a, void* b, std::uint64_t h, std::uint64_t w, std::uint64_t ld, std::size_t elem_size,
                        int threads) {
  cpu::check_elem_size(elem_size);
  cpu::cpu_transpose_pair_tuned(a, b, h, w, ld, elem_size, threads, cpu::default_tuning(elem_size));
}

void cpu_transpose(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                   std::uint64_t ld_out, std::size_t elem_size, int threads) {
  cpu::check_elem_size(elem_size);
  cpu::cpu_transpose_tuned(in, rows, cols, ld_in, out, ld_out, elem_size, threads, cpu::default_tuning(elem_size));
}

void cpu_transpose_inplace(void* a, std::uint64_t n, std::uint64_t ld, std::size_t elem_size, int threads) {
  cpu::check_elem_size(elem_size);
  cpu::cpu_transpose_inplace_tuned(a, n, ld, elem_size, threads, cpu::default_tuning(elem_size));
}

void naive_transpose(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                     std::uint64_t ld_out, std::size_t elem_size) {
  cpu::check_elem_size(elem_size);
  if (rows == 0 || cols == 0) return;
  cpu::check_shape(rows, cols, ld_in, ld_out);
  auto* i = static_cast<const cpu::byte*>(in);
  auto* o = static_cast<cpu::byte*>(out);
  switch (elem_size) {
    case 1: cpu::naive_es<1>(i, rows, cols, ld_in, o, ld_out); break;
    case 2: cpu::naive_es<2>(i, rows, cols, ld_in, o, ld_out); break;
    case 4: cpu::naive_es<4>(i, rows, cols, ld_in, o, ld_out); break;
    case 8: cpu::naive_es<8>(i, rows, cols, ld_in, o, ld_out); break;
    default: cpu::naive_es<16>(i, rows, cols, ld_in, o, ld_out); break;
  }
}

void parallel_memcpy(void* dst, const void* src, std::uint64_t bytes, int threads) {
  if (bytes == 0) return;
  int n = bytes < (std::uint64_t(1) << 20) ? 1 : cpu::resolve_threads(threads);
  auto* d = static_cast<cpu::byte*>(dst);
  auto* s = static_cast<const cpu::byte*>(src);
  // Chunk borders on 4 KiB so no two threads share a page or a cache line.
  const std::uint64_t pages = (bytes + 4095) / 4096;
  if (std::uint64_t(n) > pages) n = int(pages);
  cpu::ThreadPool::shared().run(n, [&](int k) {
    const std::uint64_t b0 = std::min(bytes, pages * k / n * 4096), b1 = std::min(bytes, pages * (k + 1) / n * 4096);
    if (b1 > b0) std::memcpy(d + b0, s + b0, std::size_t(b1 - b0));
  });
}

}  // namespace gt
