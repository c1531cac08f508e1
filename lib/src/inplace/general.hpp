// In place in host memory, any R x C: the gcd decomposition of Catanzaro,
// Keller and Garland ("A decomposition for in-place matrix transposition",
// PPoPP 2014). With c = gcd(R, C), a = R/c, b = C/c:
//   1. (c > 1) rotate column j down by floor(j / b);
//   2. permute each row within itself (the "row shuffle");
//   3. permute each column within itself (the "column shuffle").
// Each step moves elements inside one row or one column only, so the
// scratch is one row or a band of columns per thread, never the matrix.
//
// Memory only: a file's general shape runs the same steps out of core, in
// bands, each journaled (inplace/bands.hpp, journal_bands.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gt::inplace {

// The scratch bytes one thread needs for an R x C matrix of es-byte
// elements: a row (step 2) or a band of `band` columns (steps 1 and 3).
std::uint64_t general_scratch_per_thread(std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uint64_t band);

struct GeneralRun {
  int threads = 1;           // as many as the scratch budget holds, at most `threads` asked
  std::uint64_t band = 1;    // columns a thread moves at once in steps 1 and 3
  std::uint64_t scratch = 0; // bytes of scratch in all
  bool rotated = false;      // step 1 runs (gcd > 1)
};

// Plans the threads and column band for a scratch budget of `budget` bytes;
// throws gt::Error(usage) naming the least budget when one thread's scratch
// does not fit.
GeneralRun plan_general(std::uint64_t rows, std::uint64_t cols, std::size_t es, int threads, std::uint64_t budget);

// Transposes the rows x cols row-major matrix at data (no gaps between
// rows) into cols x rows, in place. Not interruptible: the matrix is only
// a transpose when all three steps are done.
void transpose_general(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t es, const GeneralRun& run);

}  // namespace gt::inplace
