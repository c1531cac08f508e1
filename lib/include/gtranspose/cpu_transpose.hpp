// The in-memory CPU transposer: multithreaded and cache-blocked. The
// reference for every other engine and the fallback where there is no GPU.
#pragma once
#include <cstddef>
#include <cstdint>

namespace gt {

// out (cols x rows, leading dimension ld_out >= rows) = transpose of
// in (rows x cols, leading dimension ld_in >= cols); elements of elem_size
// bytes (1, 2, 4, 8, 16); threads <= 0 means hardware concurrency. in and out
// must not overlap.
void cpu_transpose(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                   std::uint64_t ld_out, std::size_t elem_size, int threads = 0);

// Square n x n matrix (leading dimension ld >= n) transposed in place.
void cpu_transpose_inplace(void* a, std::uint64_t n, std::uint64_t ld, std::size_t elem_size, int threads = 0);

// A pair of tiles of one matrix (leading dimension ld) swapped and
// transposed in place: a (h x w) becomes the transpose of b (w x h) and b
// the transpose of a. They must not overlap (an off-diagonal tile and its
// mirror); a diagonal tile is cpu_transpose_inplace's.
void cpu_transpose_pair(void* a, void* b, std::uint64_t h, std::uint64_t w, std::uint64_t ld, std::size_t elem_size,
                        int threads = 0);

// The plain two-loop reference, single-threaded: the gold model in tests.
void naive_transpose(const void* in, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld_in, void* out,
                     std::uint64_t ld_out, std::size_t elem_size);

// Multithreaded memcpy with the same threading as cpu_transpose: the
// reference the CPU bench compares against.
void parallel_memcpy(void* dst, const void* src, std::uint64_t bytes, int threads = 0);

}  // namespace gt
