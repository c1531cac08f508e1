// A general shape in place, out of core (plan.hpp InplaceShape::general,
// BandPlan): the gcd decomposition of Catanzaro, Keller and Garland
// (gtranspose/rect_maps.hpp) as stages over the file, each a pass of bands.
// An R x C matrix stays R x C row-major through the stages (the last one
// leaves the C x R transpose in its bytes):
//   rotate       (gcd > 1) column j: new[i][j] = old[(i + j / b) mod R][j]
//   row_shuffle  row i:    new[i][j] = old[i][shuffle(i, j)]
//   col_shuffle  column j: new[i][j] = old[(permuted_row(i) + j) mod R][j]
// A row stage's band is whole rows [first, first + count), one sequential
// piece of the file; a column stage's is whole columns, R pieces of count
// elements. Each element of a band's new content comes from the same band,
// so a band is read, permuted in memory (from one buffer into another) and
// written back alone; the journal makes it crash-safe (journal_bands.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gtranspose/journal.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/rect_maps.hpp"

namespace gt::bands {

// A band as a rectangle of the matrix: rows [r0, r0 + h), columns
// [c0, c0 + w), held row-major with leading dimension w.
struct Band {
  std::uint64_t r0 = 0, c0 = 0, h = 0, w = 0;
  std::uint64_t elems() const { return h * w; }
};

// Rows (a row stage) or columns (a column stage) of an R x C matrix a stage
// walks in bands.
std::uint64_t extent(InplaceStage::Kind k, const Shape& s);
// Band [first, first + count) of stage k.
Band band_of(InplaceStage::Kind k, const Shape& s, std::uint64_t first, std::uint64_t count);
// Rows or columns a band of stage k holds under `plan`.
std::uint64_t per_band(InplaceStage::Kind k, const BandPlan& plan);
// The stages of a general shape (no blocks), then the end.
std::vector<InplaceStage> general_stages(const InplaceShape& shape);

// Writes band b's new content for stage k into `out` from its content `in`
// (both b.h x b.w, es-byte elements), on plan.threads threads.
void permute_band(InplaceStage::Kind k, const rect::Maps& maps, const Band& b, const unsigned char* in,
                  unsigned char* out, std::size_t es, const BandPlan& plan);

// Runs stage k over `whole` with no journal, band by band (nothing to make
// crash-safe: host memory, or a test of the stages alone).
void run_plain(InplaceMatrix& whole, InplaceStage::Kind k, const BandPlan& plan);

}  // namespace gt::bands
