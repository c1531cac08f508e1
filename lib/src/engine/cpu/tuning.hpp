// The CPU transposer's tuning, a plain struct per element size, and the entry
// points that take one explicitly (the tuning tests and experiments use them;
// cpu_transpose uses default_tuning()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace gt::cpu {

struct CpuTuning {
  std::string isa = "base";       // "base" (SSE2 on x86-64) or "avx2" (used only where the CPU has it)
  std::uint32_t block_rows = 64;  // input rows per block (output row segment = block_rows * es bytes)
  std::uint32_t block_cols = 64;  // input cols per block (input row segment = block_cols * es bytes)
  // Software prefetch of the strided input rows this many blocks ahead
  // (0: none), into L1 or, with prefetch_l2, into L2 only.
  std::uint32_t prefetch_ahead = 1;
  bool prefetch_l2 = false;
  // In place: the side of the square blocks swapped pairwise.
  std::uint32_t inplace_block = 64;
  // Output of at least this many bytes is written with non-temporal stores
  // through an L1 staging block; smaller output stays in cache.
  std::uint64_t stream_min_bytes = std::uint64_t(64) << 20;
  // Matrices smaller than this run on one thread: waking workers costs more.
  std::uint64_t parallel_min_bytes = std::uint64_t(1) << 20;
  std::string describe() const;
};

CpuTuning default_tuning(std::size_t elem_size);

// True where the CPU running us has AVX2.
bool have_avx2();

void cpu_transpose_tuned(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                         std::uint64_t ld_out, std::size_t elem_size, int threads, const CpuTuning& tuning);
void cpu_transpose_inplace_tuned(void* a, std::uint64_t n, std::uint64_t ld, std::size_t elem_size, int threads,
                                 const CpuTuning& tuning);
void cpu_transpose_pair_tuned(void* a, void* b, std::uint64_t h, std::uint64_t w, std::uint64_t ld,
                              std::size_t elem_size, int threads, const CpuTuning& tuning);

}  // namespace gt::cpu
