// What every kernel family shares: element carriers, resolved extents,
// tile-index maths, grid sizing, problem checks and CUDA error checks.
// Internal to kernels/; the public contract is gtranspose/kernels.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "gtranspose/cuda_check.hpp"
#include "gtranspose/elem_size.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"

namespace gt::kernels::detail {

// A transpose only moves bytes: each element size travels in one unsigned
// carrier of that size. 16-byte elements use uint4 (16-byte aligned).
template <std::size_t S>
struct Carrier;
template <>
struct Carrier<1> { using type = std::uint8_t; };
template <>
struct Carrier<2> { using type = std::uint16_t; };
template <>
struct Carrier<4> { using type = std::uint32_t; };
template <>
struct Carrier<8> { using type = std::uint64_t; };
template <>
struct Carrier<16> { using type = uint4; };
template <std::size_t S>
using carrier_t = typename Carrier<S>::type;

// Extents with the leading dimensions resolved (never 0). All 64-bit: a
// matrix of more than 2^31 elements is an ordinary case.
struct Dims {
  std::uint64_t rows, cols, ld_in, ld_out;
};

// Out of place the output is cols x rows (packed ld = rows); a copy's output
// is rows x cols (packed ld = cols); in place ld_out is unused.
inline Dims resolve(const Problem& p, Kind kind) {
  Dims d{p.rows, p.cols, p.ld_in ? p.ld_in : p.cols, p.ld_out};
  if (!d.ld_out) d.ld_out = kind == Kind::copy ? p.cols : p.rows;
  if (kind == Kind::inplace) d.ld_out = d.ld_in;
  return d;
}

__host__ __device__ __forceinline__ std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

struct TileIdx {
  std::uint64_t r, c;  // tile row and tile column
};

// Linear block index -> (tile row, tile col), tile columns fastest, so that
// consecutive blocks read neighbouring tiles of one band of input rows. The
// 32-bit path is what every realistic grid takes: a 64-bit division costs
// several times more and runs once per tile.
__device__ __forceinline__ TileIdx linear_tile(std::uint64_t b, std::uint64_t ntc) {
  if (((b | ntc) >> 32) == 0) {
    const std::uint32_t q = std::uint32_t(b) / std::uint32_t(ntc);
    return {q, std::uint32_t(b) - q * std::uint32_t(ntc)};
  }
  const std::uint64_t q = b / ntc;
  return {q, b - q * ntc};
}

// Block index -> tile, tile rows fastest (down each tile column, as cuBLAS's
// geam grids run): grouped_tile's order with one group of every tile row,
// at linear_tile's cost. The element tile's order (ElemTileCfg::DOWN).
__device__ __forceinline__ TileIdx down_tile(std::uint64_t b, std::uint64_t ntr) {
  const TileIdx u = linear_tile(b, ntr);
  return {u.c, u.r};
}

// Block index -> tile in groups of g tile rows: within a group, the g tiles
// of one tile column come one after another, then the next column. Blocks
// that run at the same time then cover g tile rows and fewer columns, so
// the output rows they write get g adjacent segments (longer runs, and the
// partial 32-byte sectors where segments meet are completed while still in
// L2) at the cost of shorter runs per input row. g = 1 is linear_tile. The
// last group holds ntr mod g tile rows.
//
// A group of every tile row (g >= ntr: the misaligned paths' 4096 at any
// matrix of fewer tile rows) is down_tile's order, at its one 32-bit
// division: the general path divided by g as well, about 37 of the 218
// instructions a warp issued per 16-byte word on u8's misaligned tiles
// (Nsight, run 238).
__device__ __forceinline__ TileIdx grouped_tile(std::uint64_t b, std::uint64_t ntr, std::uint64_t ntc,
                                                std::uint32_t g) {
  if (g <= 1) return linear_tile(b, ntc);
  if (g >= ntr) return down_tile(b, ntr);
  const std::uint64_t full = ntr / g * g;  // tile rows in whole groups
  if (b < full * ntc) {
    const std::uint64_t span = std::uint64_t(g) * ntc, grp = b / span, w = b - grp * span;
    return {grp * g + w % g, w / g};
  }
  const std::uint64_t rest = ntr - full, w = b - full * ntc;
  return {full + w % rest, w / rest};
}

// Where the last tile row (column) of an out-of-place tile kernel starts.
// Where the side is not a multiple of the tile, the tile there is partial
// and runs the element path (edge_load / edge_store: one element an
// access, one load in flight a thread), several times a full tile's time:
// a 255 x 128-byte tile of a 1-byte matrix reads a byte at a time, 64 loads
// a thread one after another. So where the partial tile holds at least a
// quarter of a tile (kOverlapShare), the last tile is a full one moved back
// to end at the matrix's edge, overlapping the tile before it: the overlap
// is read twice and written twice with the same values, never a byte
// outside either tile (the tiles store only their own bytes). `align`: the
// origin's alignment in elements (16/S where rows are 16-byte aligned, so
// that the moved tile's words stay whole). Out of place only: in place, a
// tile read after its neighbour was written would read transposed data.
// ORIGIN: 0 this rule, 1 never moved (the edge path), 2 moved whenever the
// side is at least a tile (the tuning variants). Run 176 (H100, % of a copy,
// same process, edge path -> this rule): u8 16383x65537 73.1 -> 75.7,
// 16383x16385 79.7 -> 85.1; f16 16383x32769 81.6 -> 82.8, 16383x16385 81.8
// -> 83.5; 4 to 16 bytes +0.1 to +0.3 (their edge tiles read whole elements
// and are shorter). Moving a last tile that holds under a quarter lost: u8
// 12345x6789 (57 of 256 rows) 79.5 -> 78.7, 16385x16385 (1 row) 77.0 -> 75.8.
// In place, the same pairs in a launch of their own (element kernel, 1024
// threads a pair) measured -0.6 to +0.7 (run 176) and were not kept.
// Nor is it moved where the overlap would be more than an eighth of the
// side (kOverlapMaxShare): on a side of a few tiles the overlap's second
// read and write is a large part of the matrix's traffic. Run 220 (H100,
// % of a copy, same process, the element tile of small matrices, edge path
// -> moved): f32 281x8997 (39 of 281 rows again) 102.4 -> 98.5, f64 101.6
// -> 95.5, while f32 10058x296 (24 of 296 columns) gained 92.3 -> 95.7.
constexpr unsigned kOverlapShare = 4;
constexpr unsigned kOverlapMaxShare = 8;

inline std::uint64_t last_origin(std::uint64_t extent, unsigned tile, unsigned align, int origin) {
  const std::uint64_t n = ceil_div(extent, tile), rem = extent % tile;
  const std::uint64_t at = (n ? n - 1 : 0) * tile;  // where it falls
  if (rem == 0 || extent < tile || origin == 1) return at;
  if (origin == 0 && (rem * kOverlapShare < tile || (tile - rem) * kOverlapMaxShare > extent)) return at;
  return (extent - tile) / align * align;
}

// The origins of the last tile row and column of TR x TC tiles (last_origin).
struct LastTile {
  std::uint64_t r, c;
};

inline LastTile last_tile(const Dims& d, unsigned TR, unsigned TC, unsigned align, int origin) {
  return {last_origin(d.rows, TR, align, origin), last_origin(d.cols, TC, align, origin)};
}

// Whether rows of `ld` elements of S bytes are whole 64-byte sectors: the
// tile kernels' rule for their tile order (padded's grouped_aligned,
// inplace-tiled's kPartialSectorGroup), since segments of rows that are not
// meet inside sectors that blocks running at once should complete in L2.
inline bool whole_sectors(std::uint64_t ld, std::size_t S) { return ld * S % 64 == 0; }

// SMs of the current device (132, an H100's, where the query fails: it only
// sizes grids, never decides correctness).
inline int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0) {
    (void)cudaGetLastError();
    sms = 132;
  }
  return sms;
}

// One output word of V elements: v[j] holds element j in its low S bytes
// (S <= 4), or the whole element (S = 8, two words).
template <std::size_t S>
__device__ __forceinline__ uint4 pack_word(const unsigned (&v)[16 / S * (S == 8 ? 2 : 1)]) {
  if constexpr (S == 8 || S == 4) {
    return make_uint4(v[0], v[1], v[2], v[3]);
  } else if constexpr (S == 2) {
    return make_uint4(__byte_perm(v[0], v[1], 0x5410), __byte_perm(v[2], v[3], 0x5410),
                      __byte_perm(v[4], v[5], 0x5410), __byte_perm(v[6], v[7], 0x5410));
  } else {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = __byte_perm(__byte_perm(v[4 * i], v[4 * i + 1], 0x0040), __byte_perm(v[4 * i + 2], v[4 * i + 3], 0x0040),
                         0x5410);
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

// One dimension of grid for `blocks` units of work; kernels loop
// (grid-stride) when there are more units than blocks, so any count works.
inline unsigned grid_1d(std::uint64_t blocks) {
  constexpr std::uint64_t kMax = 0x7fffffffull;
  return unsigned(blocks < kMax ? blocks : kMax);
}

// Each kernel is written once as a template on the element size S and
// reached through gt::with_elem_size (gtranspose/elem_size.hpp).

// What a kernel family needs checked beyond the shared rules.
struct Limits {
  Kind kind = Kind::transpose;
  bool block_shape = false;        // honours Problem::block_x/block_y
  bool square_tile_block = false;  // block_x is a tile side, block_y divides it
  unsigned max_threads = 1024;
  bool rectangles = false;         // in place: any shape (packed rows), not only squares
};

// The shared rules: element size, leading dimensions, square for in place,
// block shape. Sets *why (when given) and returns false on the first failure.
bool check_problem(const char* name, const Problem& p, const Limits& lim, std::string* why);

// The block shape to use: the problem's when given, else the default.
inline dim3 block_or(const Problem& p, unsigned dx, unsigned dy) {
  return p.block_x ? dim3(p.block_x, p.block_y ? p.block_y : 1) : dim3(dx, dy);
}

// Throws gt::Error(usage) when supports() says no, and checks alignment.
void require(const KernelInfo& k, const void* in, const void* out, const Problem& p);

// True when 16-byte vector accesses are possible on both sides: both pointers
// and both leading dimensions (in bytes) are multiples of 16.
inline bool vec16_ok(const void* in, const void* out, const Dims& d, std::size_t s) {
  return (reinterpret_cast<std::uintptr_t>(in) % 16) == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0 &&
         (d.ld_in * s) % 16 == 0 && (d.ld_out * s) % 16 == 0;
}

}  // namespace gt::kernels::detail
