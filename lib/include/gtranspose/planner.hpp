// The planner: cuts a rows x cols matrix into tiles that fit a memory budget.
//
// Out of place, tile (r0, c0, h, w) of the input becomes tile (c0, r0, w, h)
// of the output. Tiles are produced lazily (a huge matrix under a small
// budget has millions of them), in row-major tile order so that reads walk
// the input front to back.
#pragma once
#include <cstdint>

#include "gtranspose/types.hpp"

namespace gt {

// The largest tile an engine asks for, whatever its budget. A 256 MiB tile
// already gives row segments of 32 KiB (f32) or more, so a larger one buys no
// longer I/O; it only leaves fewer tiles to overlap reading, transposing and
// writing (one giant tile runs them back to back) and makes the CUDA engine
// pin more host memory up front, which is slow. Measured on the H100 host,
// 2 GiB raw f32, 16 GiB default budget: one 2 GiB tile (cpu) and two 1 GiB
// tiles (cuda) ran in 2.6 s and 6.5 s, of which 1.6 s and ~2.8 s were
// stages or pinning that tiles would have overlapped or avoided.
constexpr std::uint64_t kMaxTileBytes = std::uint64_t(256) << 20;

// What one tile buffer may hold for an engine with `buffers` tile buffers in
// its budget: its share, capped at kMaxTileBytes unless the user set --chunk.
inline std::uint64_t tile_bytes_for(std::uint64_t budget, unsigned buffers, std::uint64_t chunk_elems) {
  const std::uint64_t share = budget / buffers;
  return chunk_elems || share < kMaxTileBytes ? share : kMaxTileBytes;
}

struct Tile {
  std::uint64_t r0 = 0, c0 = 0, h = 0, w = 0;
  std::uint64_t elems() const { return h * w; }
};

struct PlanRequest {
  Shape shape;                   // the input matrix
  std::size_t elem_size = 0;     // 1, 2, 4, 8 or 16
  std::uint64_t tile_bytes = 0;  // the most one tile buffer may hold (the engine divides its budget)
  Shape preferred_block{0, 0};   // the source's natural block (HDF5 chunk), {0,0} if none
  std::uint64_t chunk_elems = 0; // --chunk override (elements per tile), 0 = planner's choice
};

// Out-of-place plan: a grid of tile_h x tile_w tiles (edge tiles smaller).
class Plan {
 public:
  // Throws gt::Error(usage) when even one element does not fit tile_bytes.
  explicit Plan(const PlanRequest& req);
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

// In-place plan for an n x n matrix: square b x b tiles, visited as pairs
// (i, j) with i <= j; a diagonal pair (i, i) is one tile transposed in place,
// any other pair swaps tile (i, j) with the transpose of tile (j, i).
struct TilePair {
  Tile a;  // tile (i, j): rows i*b.., cols j*b..
  Tile b;  // tile (j, i): its mirror; equals a on the diagonal
  bool diagonal() const { return a.r0 == b.r0 && a.c0 == b.c0; }
};

class InplacePlan {
  InplacePlan() = default;

 public:
  // tile_bytes bounds one tile; an engine holds two tiles per pair in flight.
  InplacePlan(std::uint64_t n, std::size_t elem_size, std::uint64_t tile_bytes, std::uint64_t chunk_elems = 0);
  // A plan with a given block (a resumed run keeps its journal's plan).
  static InplacePlan with_block(std::uint64_t n, std::uint64_t block);
  std::uint64_t n() const { return n_; }
  std::uint64_t block() const { return b_; }
  std::uint64_t tiles_per_side() const { return t_; }
  std::uint64_t count() const { return t_ * (t_ + 1) / 2; }  // pairs
  TilePair pair(std::uint64_t index) const;                   // row-major over the upper triangle

 private:
  std::uint64_t n_ = 0, b_ = 0, t_ = 0;
};

}  // namespace gt
