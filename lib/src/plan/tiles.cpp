#include "gtranspose/tiles.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "gtranspose/error.hpp"

namespace gt {

namespace {

// Tile extents are multiples of this where the matrix side is larger: it
// keeps row segments a whole number of cache lines (and of CUDA tiles) for
// every element size.
constexpr std::uint64_t kAlign = 64;

std::uint64_t isqrt(std::uint64_t v) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(v)));
  while (r > 0 && (r > v / r)) --r;  // r*r <= v without overflow
  while ((r + 1) <= v / (r + 1)) ++r;
  return r;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

// Elements one tile may hold: the byte budget, further capped by tile_elems.
std::uint64_t tile_capacity(std::uint64_t tile_bytes, std::size_t elem_size, std::uint64_t tile_elems) {
  if (!supported_elem_size(elem_size))
    throw Error(ErrorKind::usage, "unsupported element size " + std::to_string(elem_size) + " bytes");
  std::uint64_t cap = tile_bytes / elem_size;
  if (tile_elems) cap = std::min(cap, tile_elems);
  if (cap == 0)
    throw Error(ErrorKind::usage, "memory budget too small: a tile of " + std::to_string(tile_bytes) +
                                      " bytes cannot hold one " + std::to_string(elem_size) + "-byte element");
  return cap;
}

// Rounds `extent` down to a multiple of `unit` when that keeps it non-zero.
std::uint64_t round_down(std::uint64_t extent, std::uint64_t unit) {
  if (unit <= 1 || extent < unit) return extent;
  return extent / unit * unit;
}

// The alignment unit for one side: the source's block (HDF5 chunk) where a
// tile can hold at least one, else 64 where the side is longer than that.
std::uint64_t align_unit(std::uint64_t side, std::uint64_t block, std::uint64_t room) {
  if (block > 1 && block <= room && block < side) return block;
  if (side > kAlign && room >= kAlign) return kAlign;
  return 1;
}

}  // namespace

TileGrid::TileGrid(const GridRequest& req) : shape_(req.shape) {
  const std::uint64_t R = req.shape.rows, C = req.shape.cols;
  if (R == 0 || C == 0) throw Error(ErrorKind::usage, "cannot plan an empty matrix (" + to_string(req.shape) + ")");
  const std::uint64_t cap = tile_capacity(req.tile_bytes, req.elem_size, req.tile_elems);

  // A tile h x w of a row-major file is read as h runs of w elements and
  // written as w runs of h elements, so the shorter side bounds the I/O
  // length: maximise min(h, w) under h*w <= cap. When one side of the
  // matrix is shorter than sqrt(cap) the tile spans it whole (a full-width
  // stripe reads as one run), and the other side takes the rest.
  std::uint64_t h, w;
  const std::uint64_t s = isqrt(cap);
  if (C <= s) {
    w = C;
    h = std::min(R, cap / C);
  } else if (R <= s) {
    h = R;
    w = std::min(C, cap / R);
  } else {
    h = s;
    w = s;
  }

  if (h < R) {
    const std::uint64_t u = align_unit(R, req.preferred_block.rows, h);
    h = round_down(h, u);
  }
  // With h settled, w can grow to use the whole budget.
  if (w < C) {
    w = std::min(C, std::max(w, cap / h));
    if (w < C) w = round_down(w, align_unit(C, req.preferred_block.cols, w));
  }

  // A source block (HDF5 chunk) that fits the budget but not the shape
  // chosen above (a long thin chunk, say 1 x 100000, against a square tile
  // narrower than it): shape the tile in whole blocks instead. Otherwise
  // every tile reads (and decompresses) its blocks in part, and a chunked
  // output, whose chunks are the transposed blocks, is written in part
  // chunks that have to be read back.
  const std::uint64_t br = std::min(req.preferred_block.rows, R), bc = std::min(req.preferred_block.cols, C);
  auto aligned = [](std::uint64_t x, std::uint64_t side, std::uint64_t b) { return x == side || x % b == 0; };
  if (br > 0 && bc > 0 && br <= cap / bc && !(aligned(h, R, br) && aligned(w, C, bc))) {
    const std::uint64_t n = cap / (br * bc);  // whole blocks one tile may hold, at least 1
    const std::uint64_t down = ceil_div(R, br), across = ceil_div(C, bc);
    // As square as the blocks allow: kh blocks down, kw across, kh*kw <= n.
    std::uint64_t kh = std::clamp<std::uint64_t>(isqrt(cap) / br, 1, down);
    const std::uint64_t kw = std::clamp<std::uint64_t>(n / kh, 1, across);
    kh = std::clamp<std::uint64_t>(n / kw, 1, down);
    h = std::min(R, kh * br);
    w = std::min(C, kw * bc);
  }

  th_ = h;
  tw_ = w;
  nr_ = ceil_div(R, th_);
  nc_ = ceil_div(C, tw_);
}

Tile TileGrid::tile(std::uint64_t index) const {
  if (index >= count()) throw Error(ErrorKind::internal, "tile index out of range");
  const std::uint64_t i = index / nc_, j = index % nc_;
  Tile t;
  t.r0 = i * th_;
  t.c0 = j * tw_;
  t.h = std::min(th_, shape_.rows - t.r0);
  t.w = std::min(tw_, shape_.cols - t.c0);
  return t;
}

PairGrid::PairGrid(std::uint64_t n, std::size_t elem_size, std::uint64_t tile_bytes, std::uint64_t tile_elems)
    : n_(n) {
  if (n == 0) throw Error(ErrorKind::usage, "cannot plan an empty matrix");
  const std::uint64_t cap = tile_capacity(tile_bytes, elem_size, tile_elems);
  std::uint64_t b = std::min(n, isqrt(cap));
  if (b < n) b = round_down(b, align_unit(n, 0, b));
  b_ = b;
  t_ = ceil_div(n, b_);
}

PairGrid PairGrid::with_block(std::uint64_t n, std::uint64_t block) {
  if (n == 0 || block == 0 || block > n)
    throw Error(ErrorKind::internal, "in-place block " + std::to_string(block) + " does not fit n = " + std::to_string(n));
  PairGrid p;
  p.n_ = n;
  p.b_ = block;
  p.t_ = ceil_div(n, block);
  return p;
}

TilePair PairGrid::pair(std::uint64_t index) const {
  if (index >= count()) throw Error(ErrorKind::internal, "tile pair index out of range");
  // Row i of the upper triangle holds pairs (i, i..t-1) and starts at
  // start(i) = i*t - i*(i-1)/2; find the last row starting at or before index.
  auto start = [this](std::uint64_t i) { return i * t_ - (i * (i - (i > 0))) / 2; };
  std::uint64_t lo = 0, hi = t_ - 1;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (start(mid) <= index)
      lo = mid;
    else
      hi = mid - 1;
  }
  const std::uint64_t i = lo, j = i + (index - start(i));
  TilePair p;
  p.a.r0 = i * b_;
  p.a.c0 = j * b_;
  p.a.h = std::min(b_, n_ - p.a.r0);
  p.a.w = std::min(b_, n_ - p.a.c0);
  p.b.r0 = p.a.c0;
  p.b.c0 = p.a.r0;
  p.b.h = p.a.w;
  p.b.w = p.a.h;
  return p;
}

}  // namespace gt
