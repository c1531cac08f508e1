// What the CPU transposer's per-ISA kernel copies (kernels_impl.hpp) share
// with the dispatcher (transpose.cpp): job descriptions, the non-temporal
// copy, and one entry point per instruction set.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/cpu/tuning.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define GT_CPU_X86 1
#else
#define GT_CPU_X86 0
#endif

#define GT_CPU_PASTE2(a, b) a##_##b
#define GT_CPU_PASTE(a, b) GT_CPU_PASTE2(a, b)
#define GT_CPU_ISA_FN(name) GT_CPU_PASTE(name, GT_CPU_ISA)

namespace gt::cpu {

using byte = unsigned char;

struct Region {
  std::uint64_t r0, r1, c0, c1;  // input rows [r0, r1) x cols [c0, c1)
};

// One thread's part of an out-of-place transpose. Strides are in bytes.
struct RegionJob {
  const byte* in;
  std::size_t ldi;
  byte* out;
  std::size_t ldo;
  Region region;
  const CpuTuning* tuning;
  bool stream;  // non-temporal stores for the output
  byte* stage;  // 64-byte aligned, block_rows * block_cols * elem_size bytes
};

// One thread's part of an in-place square transpose.
struct InplaceJob {
  byte* a;
  std::uint64_t n;
  std::size_t lda;  // bytes
  std::uint64_t block;
  std::atomic<std::uint64_t>* next_row;  // shared by the threads
  byte* stage;                           // 2 * block * block * elem_size bytes
  // A pair of tiles instead of a square (b non-null): a (n x w) and b
  // (w x n), rows lda bytes apart and not overlapping, each becoming the
  // other's transpose.
  byte* b = nullptr;
  std::uint64_t w = 0;
};

// Copies n bytes to dst, the 16-byte-aligned middle with non-temporal
// stores: output far larger than the caches then goes straight to memory
// without first being read into cache (no read-for-ownership).
inline void stream_copy(byte* dst, const byte* src, std::size_t n) {
#if GT_CPU_X86
  std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
  if (head > n) head = n;
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  const std::size_t body = n & ~std::size_t(15);
  for (std::size_t k = 0; k < body; k += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
  std::memcpy(dst + body, src + body, n - body);
#else
  std::memcpy(dst, src, n);
#endif
}

// Orders this thread's non-temporal stores before whatever it does next
// (telling the pool its part is done).
inline void stream_fence() {
#if GT_CPU_X86
  _mm_sfence();
#endif
}

void region_base(std::size_t es, const RegionJob& job);
void inplace_base(std::size_t es, const InplaceJob& job);
std::size_t micro_k_base(std::size_t es);
#if GT_CPU_X86
void region_avx2(std::size_t es, const RegionJob& job);
void inplace_avx2(std::size_t es, const InplaceJob& job);
std::size_t micro_k_avx2(std::size_t es);
#endif

}  // namespace gt::cpu
