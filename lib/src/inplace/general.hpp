// In place in host memory, any R x C: the gcd decomposition of Catanzaro,
// Keller and Garland ("A decomposition for in-place matrix transposition",
// PPoPP 2014). With c = gcd(R, C), a = R/c, b = C/c (gtranspose/rect_maps.hpp):
//   1. (c > 1) rotate column j up by floor(j / b);
//   2. permute each row within itself (the "row shuffle");
//   3. permute each column within itself (the "column shuffle"),
//      new[i][j] = old[(P(i) + j) mod R][j]: run as column j rotated up by j,
//      then whole rows permuted (new[i] = X[P(i)], following P's cycles),
//      where rows are 64 bytes or more; else gathered down bands of columns.
// Step 1 streams down runs of whole rows where c - 1 rows fit a thread's
// scratch; otherwise, and for step 3's skew, the rotations move bands of
// columns through a thread's scratch, reading each row's piece of the band
// whole. The row steps move whole rows or stripes of them. The scratch is
// one row or a band of columns per thread, and two bits a row for P's
// cycles, never the matrix.
//
// Memory only: a file's general shape runs the same steps out of core, in
// bands, each journaled (inplace/bands.hpp, journal_bands.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gtranspose/report.hpp"

namespace gt::inplace {

// The scratch bytes one thread needs for an R x C matrix of es-byte
// elements: a row (step 2) or a band of `band` columns (steps 1 and 3).
std::uint64_t general_scratch_per_thread(std::uint64_t rows, std::uint64_t cols, std::size_t es, std::uint64_t band);

struct GeneralRun {
  int threads = 1;            // as many as the scratch budget holds, at most `threads` asked
  std::uint64_t band = 1;     // columns a thread moves at once in steps 1 and 3
  std::uint64_t scratch = 0;  // bytes of scratch in all
  bool rotated = false;       // step 1 runs (gcd > 1)
  bool skew = false;          // step 3 as a skew of bands of columns written back in the row map's order
  bool stream_rotation = false;  // steps 1 and 2 in one pass down runs of whole rows (else step 1 in bands of columns)
};

// Plans the threads and column band for a scratch budget of `budget` bytes;
// throws gt::Error(usage) naming the least budget when one thread's scratch
// does not fit.
GeneralRun plan_general(std::uint64_t rows, std::uint64_t cols, std::size_t es, int threads, std::uint64_t budget);

// Called as each step begins, with its name (the stages below).
using StageHook = std::function<void(const std::string&)>;

// Transposes the rows x cols row-major matrix at data (no gaps between
// rows) into cols x rows, in place. Not interruptible: the matrix is only
// a transpose when all three steps are done. Returns each step's time, in
// order: "rotate and shuffle rows" (c > 1 and run.stream_rotation) or
// "rotate columns" (c > 1) and "shuffle rows", then "shuffle columns" (by
// run.skew's bands, or gathered); each moved the whole matrix once.
std::vector<StageStat> transpose_general(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t es,
                                         const GeneralRun& run, const StageHook& on_stage = {});

}  // namespace gt::inplace
