// Tile geometry: cuts a rows x cols matrix into tiles of at most a given
// size (TileGrid, out of place), or a square one into tile pairs (PairGrid,
// in place). How large a tile may be is the run plan's decision (plan.hpp);
// these classes only cut.
//
// Out of place, tile (r0, c0, h, w) of the input becomes tile (c0, r0, w, h)
// of the output. Tiles are produced lazily (a huge matrix under a small
// budget has millions of them).
#pragma once
#include <cstdint>

#include "gtranspose/types.hpp"

namespace gt {

struct Tile {
  std::uint64_t r0 = 0, c0 = 0, h = 0, w = 0;
  std::uint64_t elems() const { return h * w; }
};

struct GridRequest {
  Shape shape;                   // the input matrix
  std::size_t elem_size = 0;     // 1, 2, 4, 8 or 16
  std::uint64_t tile_bytes = 0;  // the most one tile may hold (the run plan divides the budgets)
  Shape preferred_block{0, 0};   // the source's natural block (HDF5 chunk), {0,0} if none
  std::uint64_t tile_elems = 0;  // a cap on elements per tile (the user's {tile}), 0 = none
};

// Out of place: a grid of tile_h x tile_w tiles (edge tiles smaller).
class TileGrid {
 public:
  // Throws gt::Error(usage) when even one element does not fit tile_bytes.
  explicit TileGrid(const GridRequest& req);
  const Shape& shape() const { return shape_; }
  std::uint64_t tile_h() const { return th_; }
  std::uint64_t tile_w() const { return tw_; }
  std::uint64_t tile_rows() const { return nr_; }  // tiles down
  std::uint64_t tile_cols() const { return nc_; }  // tiles across
  std::uint64_t count() const { return nr_ * nc_; }
  Tile tile(std::uint64_t index) const;            // row-major over the tile grid
  // Column-major over the tile grid: the tiles of one output row band come
  // one after another, so each band of the output is finished (and can be
  // written back to disk) long before the end of the run.
  Tile tile_output_order(std::uint64_t k) const { return tile((k % nr_) * nc_ + k / nr_); }

 private:
  Shape shape_;
  std::uint64_t th_ = 0, tw_ = 0, nr_ = 0, nc_ = 0;
};

// In place, an n x n matrix: square b x b tiles, visited as pairs
// (i, j) with i <= j; a diagonal pair (i, i) is one tile transposed in place,
// any other pair swaps tile (i, j) with the transpose of tile (j, i).
struct TilePair {
  Tile a;  // tile (i, j): rows i*b.., cols j*b..
  Tile b;  // tile (j, i): its mirror; equals a on the diagonal
  bool diagonal() const { return a.r0 == b.r0 && a.c0 == b.c0; }
};

class PairGrid {
  PairGrid() = default;

 public:
  // tile_bytes bounds one tile; an engine holds two tiles per pair in flight.
  PairGrid(std::uint64_t n, std::size_t elem_size, std::uint64_t tile_bytes, std::uint64_t tile_elems = 0);
  // A grid with a given block (a resumed run keeps its journal's).
  static PairGrid with_block(std::uint64_t n, std::uint64_t block);
  std::uint64_t n() const { return n_; }
  std::uint64_t block() const { return b_; }
  std::uint64_t tiles_per_side() const { return t_; }
  std::uint64_t count() const { return t_ * (t_ + 1) / 2; }  // pairs
  TilePair pair(std::uint64_t index) const;                   // row-major over the upper triangle

 private:
  std::uint64_t n_ = 0, b_ = 0, t_ = 0;
};

}  // namespace gt
