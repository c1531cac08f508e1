// `padded`, the flagship: a padded shared-memory tiled transpose, tuned per
// element size. Tiles of TSR x TSC 16-byte super-elements (see
// detail/super.cuh): every global load and store is 16 bytes wide and
// coalesced, 1- and 2-byte elements are transposed 4x4 / 2x2 in registers
// with PRMT so shared memory moves whole 16-byte words, and the +1 super of
// padding per shared row keeps those accesses free of bank conflicts.
// Tiles that are partial, skinny (fewer rows or columns than a tile) or not
// 16-byte aligned take the element-wise path of the same kernel. Narrow
// matrices (at most 8 columns, packed input, any element size) have a kernel
// of their own that stages the input through shared memory and
// de-interleaves in registers (padded_narrow_kernel); wide ones (at most 8
// rows, packed output) its mirror, which interleaves in registers and stages
// the output (padded_wide_kernel).
// With a block shape given (the block-shape sweep), `padded` runs the seeds'
// element-wise tile instead: block_x x block_x elements, padded by one.
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "detail/common.cuh"
#include "detail/element_full.cuh"
#include "detail/element_tile.cuh"
#include "detail/families.hpp"
#include "detail/skew_tile.cuh"
#include "detail/super.cuh"
#include "detail/tma_tile.cuh"
#include "gtranspose/kernel_tuning.hpp"

namespace gt::kernels::detail {
namespace {

// Full TR x TC tiles take the 16-byte path, partial ones at the edges the
// element path. Rows 16-byte aligned (the launcher checks), or, with
// MISALIGNED, at any element-aligned offset (super.cuh: MisalignedRead,
// store16_any), in overlapping tile rows with OVERLAP (super.cuh:
// overlap_stride).
template <class Cfg, bool MISALIGNED, bool GROUPED = MISALIGNED, bool OVERLAP = false>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    padded_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, std::uint64_t ntr,
                  std::uint64_t ntc, std::uint32_t group, LastTile last) {
  static_assert(!OVERLAP || MISALIGNED, "overlapping tile rows are the misaligned path's");
  constexpr std::size_t S = Cfg::S;
  // Dynamic: a 256x256-byte tile needs more than the 48 KiB static limit.
  extern __shared__ uint4 smem_dyn[];
  auto sm = reinterpret_cast<uint4(*)[Cfg::PITCH]>(smem_dyn);
  // A two-dimensional grid (launch_tiles: by_grid) names each block's tile
  // (tile row, tile column) outright, one tile a block.
  const bool by_grid = MISALIGNED && gridDim.y > 1;
  const std::uint64_t ntiles = by_grid ? 1 : ntr * ntc;
  const unsigned char* limit = in + ((d.rows - 1) * d.ld_in + d.cols) * S;  // one past the input's last byte
  for (std::uint64_t b = by_grid ? 0 : blockIdx.x; b < ntiles; b += gridDim.x) {
    // Misaligned rows in groups of tile rows (kMisalignedGroup); aligned
    // rows with tile columns fastest, their code as before run 95.
    const TileIdx t = by_grid   ? TileIdx{blockIdx.x, blockIdx.y}
                      : GROUPED ? grouped_tile(b, ntr, ntc, group)
                                : linear_tile(b, ntc);
    std::uint64_t r0, c0;
    tile_origin<Cfg>(t, ntr, ntc, last, r0, c0);
    Ends ends;
    if constexpr (OVERLAP) {
      if (t.r + 1 < ntr) r0 = t.r * overlap_stride<Cfg>();
      ends = {t.r == 0, t.r + 1 == ntr};
    }
    if (r0 + Cfg::TR <= d.rows && c0 + Cfg::TC <= d.cols) {
      TileRegs<Cfg> regs;
      load_tile<Cfg, MISALIGNED>(regs, in + (r0 * d.ld_in + c0) * S, d.ld_in * S, limit);
      stash_tile<Cfg, MISALIGNED>(regs, sm);
      __syncthreads();
      store_tile<Cfg, MISALIGNED>(sm, out + (c0 * d.ld_out + r0) * S, d.ld_out * S, ends);
    } else {
      edge_tile<Cfg>(&sm[0][0], in, out, d, r0, c0);
    }
    // The next tile reuses the shared buffer.
    if (b + gridDim.x < ntiles) __syncthreads();
  }
}

// Matrices with fewer rows or columns than a tile, and matrices whose rows
// are not 16-byte aligned, go to their own kernel, so that its code does not
// raise the register count (and lower the occupancy) of the tile kernel:
// that cost 10-20 points in run 2.
enum class Skinny : int {
  rows,      // R x tc tiles, output packed: 16-byte accesses on both sides
  cols,      // tr x C tiles, input packed: 16-byte accesses on both sides
  elements,  // unaligned or unpacked: the element path, tiles as large as the buffer
};

constexpr int kSkinnyThreads = 256;
constexpr std::size_t kSkinnySmem = 32 * 1024;

template <std::size_t S>
__global__ void __launch_bounds__(kSkinnyThreads)
    padded_skinny_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, unsigned tr,
                         unsigned tc, std::uint64_t ntr, std::uint64_t ntc, Skinny mode) {
  using T = carrier_t<S>;
  __shared__ uint4 sm[kSkinnySmem / 16];
  unsigned char* smem = reinterpret_cast<unsigned char*>(sm);
  const std::uint64_t ntiles = ntr * ntc;
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t r0 = t.r * tr, c0 = t.c * tc;
    const unsigned vr = unsigned(d.rows - r0 < tr ? d.rows - r0 : tr);
    const unsigned vc = unsigned(d.cols - c0 < tc ? d.cols - c0 : tc);
    if (mode == Skinny::rows && vc == tc) {
      skinny_rows_tile<S, kSkinnyThreads, false>(smem, in, out, d.ld_in, c0, vr, tc);
    } else if (mode == Skinny::cols && vr == tr) {
      skinny_cols_tile<S, kSkinnyThreads, false>(smem, in, out, d.ld_out, r0, vc, tr);
    } else {
      T* e = reinterpret_cast<T*>(smem);
      edge_load<T, kSkinnyThreads, kEdgeBatch>(e, reinterpret_cast<const T*>(in), d.ld_in, r0, c0, vr, vc);
      __syncthreads();
      edge_store<T, kSkinnyThreads>(e, reinterpret_cast<T*>(out), d.ld_out, r0, c0, vr, vc);
    }
    if (b + gridDim.x < ntiles) __syncthreads();
  }
}

// Narrow matrices: C <= kNarrowMax columns, input packed (ld_in == C) and
// 16-byte aligned. A thread takes V = 16/S consecutive input rows,
// which are 16*C contiguous bytes (C 16-byte words), de-interleaves them in
// registers (PRMT for 1- and 2-byte elements, word picks for wider ones) and
// stores one 16-byte vector to each of the C output rows, at column V*g: the
// stores are fully coalesced across a warp. The rows % V rows left at the end
// take a scalar path. This replaces, for these shapes, the tile of
// skinny_cols_tile, whose 1-byte version builds each output vector from 16
// one-byte shared loads (88.6% of a D2D copy on 50,000,000 x 3, run 7).
// Two ways to read the input:
// - direct: each thread reads its own C words. A warp's C loads cover one
//   contiguous span of 512*C bytes, but each load instruction touches 32
//   words 16*C bytes apart, one per line from C = 8 on, and the span is
//   whole only after all C of them: run 22 measured the 1-byte path at
//   102.7% of a copy at one column and 92.7% at eight.
// - staged: the block reads its span into shared memory with consecutive
//   lanes on consecutive words (every load instruction 512 contiguous bytes),
//   and each thread then takes its C words from there. For even C a word of
//   padding after every eight keeps the reads of a quarter-warp (eight lanes,
//   16*C bytes apart) on distinct banks; odd C are conflict-free unpadded.
// Run 152 (H100, % of a copy, same process, 150e6 elements, 1-8 columns,
// every size): staged 97.4-102.6%, direct 81.3-102.4% (eight columns 81.3-
// 93.3%), the skinny tile path 76.9-100.6%; staged at least direct within
// 0.3 points everywhere but 8-byte x 4 columns (97.4 against 99.2, the
// staged kernel then spilling 12 bytes). With launch bounds of two blocks an
// SM (no spills) and whole spans unchecked, run 153: staged 98.3-102.6%,
// direct 92.0-102.3%, skinny 77.0-100.5%; 8-byte x 4 columns 99.5 against
// 99.7. The default reads staged. Output rows that are not 16-byte aligned
// (rows * S not a multiple of 16, or an output not 16-byte aligned) take
// the staged read only, with the output staged as well (MIS_OUT below); the
// direct read leaves them to the skinny tile path, which ran them at 30-32%
// (1 and 2 bytes) and 67-71% (4 bytes) of a copy in run 154. Run 155, same
// process, 1-8 columns: 96.0-103.3% at every size against 30.0-100.3% on
// the skinny path (1 byte 50000001 x 3: 100.9 against 30.4).
enum class Narrow : int { off, direct, staged };

constexpr int kNarrowThreads = 256;
constexpr int kNarrowMax = 8;

template <int... I, class F>
__device__ __forceinline__ void static_for_impl(std::integer_sequence<int, I...>, F&& f) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ __forceinline__ void static_for(F&& f) {
  static_for_impl(std::make_integer_sequence<int, N>{}, f);
}

// PRMT selector from four nibbles, byte 0 first.
constexpr unsigned sel4(int b0, int b1, int b2, int b3) {
  return unsigned(b0) | unsigned(b1) << 4 | unsigned(b2) << 8 | unsigned(b3) << 12;
}

// Bytes P..P+3 of a 16-byte vector whose byte p is byte Src::at(p) of the
// thread's words x (x[i]: bytes 4i..4i+3), from 1 to 4 words in any order:
// none, then 1, 2 or 3 PRMT for 1 (out of order), 2, 3 or 4 words. The
// narrow kernel's and the wide kernel's (de-)interleaves are such gathers.
template <class Src, int P, int N>
__device__ __forceinline__ unsigned gather_word(const unsigned (&x)[N]) {
  constexpr int w0 = Src::at(P) / 4, w1 = Src::at(P + 1) / 4, w2 = Src::at(P + 2) / 4, w3 = Src::at(P + 3) / 4;
  constexpr int b0 = Src::at(P) % 4, b1 = Src::at(P + 1) % 4, b2 = Src::at(P + 2) % 4, b3 = Src::at(P + 3) % 4;
  // The distinct words in order of first use: u0, u1, u2, u3 (-1: none).
  constexpr int u0 = w0;
  constexpr int u1 = w1 != u0 ? w1 : w2 != u0 ? w2 : w3 != u0 ? w3 : -1;
  constexpr int u2 = (w2 != u0 && w2 != u1) ? w2 : (w3 != u0 && w3 != u1) ? w3 : -1;
  constexpr int u3 = (u2 >= 0 && w3 != u0 && w3 != u1 && w3 != u2) ? w3 : -1;
  // Selector of a byte (word w, byte by) from the pair (a, c): a's bytes
  // 0..3, c's 4..7; 0 (unused) where neither holds it.
  constexpr auto pick = [](int w, int by, int a, int c) { return w == a ? by : w == c ? 4 + by : 0; };
  constexpr auto in = [](int w, int a, int c) { return w == a || w == c; };
  if constexpr (u1 < 0) {
    if constexpr (b0 == 0 && b1 == 1 && b2 == 2 && b3 == 3) return x[u0];
    else return __byte_perm(x[u0], 0u, sel4(b0, b1, b2, b3));
  } else {
    const unsigned t = __byte_perm(x[u0], x[u1], sel4(pick(w0, b0, u0, u1), pick(w1, b1, u0, u1),
                                                      pick(w2, b2, u0, u1), pick(w3, b3, u0, u1)));
    if constexpr (u2 < 0) {
      return t;
    } else if constexpr (u3 < 0) {  // t's bytes, then those of u2
      return __byte_perm(t, x[u2], sel4(in(w0, u0, u1) ? 0 : 4 + b0, in(w1, u0, u1) ? 1 : 4 + b1,
                                        in(w2, u0, u1) ? 2 : 4 + b2, in(w3, u0, u1) ? 3 : 4 + b3));
    } else {
      const unsigned h = __byte_perm(x[u2], x[u3], sel4(pick(w0, b0, u2, u3), pick(w1, b1, u2, u3),
                                                        pick(w2, b2, u2, u3), pick(w3, b3, u2, u3)));
      return __byte_perm(t, h, sel4(in(w0, u0, u1) ? 0 : 4, in(w1, u0, u1) ? 1 : 5, in(w2, u0, u1) ? 2 : 6,
                                    in(w3, u0, u1) ? 3 : 7));
    }
  }
}
template <class Src, int N>
__device__ __forceinline__ uint4 gather16(const unsigned (&x)[N]) {
  return make_uint4(gather_word<Src, 0>(x), gather_word<Src, 4>(x), gather_word<Src, 8>(x), gather_word<Src, 12>(x));
}

// x[4i .. 4i + 3] = the words of v.
template <int N>
__device__ __forceinline__ void put_words(unsigned (&x)[N], int i, const uint4& v) {
  x[4 * i] = v.x;
  x[4 * i + 1] = v.y;
  x[4 * i + 2] = v.z;
  x[4 * i + 3] = v.w;
}

// Output column c's vector of a group of V input rows (x: its 16*C bytes):
// byte p is byte p % S of input row p / S, column c.
template <std::size_t S, int C, int c>
struct NarrowSrc {
  static constexpr int at(int p) { return (p / int(S) * C + c) * int(S) + p % int(S); }
};

// Word slot of a staged narrow block's 16-byte word q (see above).
template <int C>
__device__ __forceinline__ unsigned narrow_slot(unsigned q) {
  return C % 2 == 0 ? q + q / 8 : q;
}
template <int C>
constexpr int kNarrowSlots = kNarrowThreads * C + (C % 2 == 0 ? kNarrowThreads * C / 8 : 0);

// The output vectors of one group of V rows (x: its 16*C bytes) to the C
// output rows at dst, pitch bytes apart.
template <std::size_t S, int C>
__device__ __forceinline__ void narrow_store(const unsigned (&x)[4 * C], unsigned char* dst, std::uint64_t pitch) {
  static_for<C>([&](auto ci) {
    constexpr int c = decltype(ci)::value;
    *reinterpret_cast<uint4*>(dst + c * pitch) = gather16<NarrowSrc<S, C, c>>(x);
  });
}

// Output rows not 16-byte aligned (MIS_OUT): the block's C vectors per
// group wait in shared memory (row c's run of n vectors at os[c * T], the
// input stage's buffer reused), and each output row's run is written as
// whole aligned words, each from two neighbouring vectors shifted by the
// row's offset (window16), with the partial first and last words holding
// only the span's own bytes (store_head, store_tail: the neighbouring spans
// write the rest of those words).
template <std::size_t S, int C>
__device__ __forceinline__ void narrow_store_staged(const uint4* os, unsigned char* out, std::uint64_t pitch,
                                                    std::uint64_t g0, unsigned n, unsigned t) {
#pragma unroll 1
  for (int c = 0; c < C; ++c) {
    const uint4* v = os + c * kNarrowThreads;
    unsigned char* run = out + c * pitch + g0 * 16;  // the span's first byte of row c
    const unsigned oc = unsigned(reinterpret_cast<std::uintptr_t>(run) & 15u);
    if (oc == 0) {
      if (t < n) store16<false>(run + t * 16, v[t]);
    } else {
      const unsigned dl = 16 - oc;                       // bytes before the first boundary
      unsigned char* a0 = run + dl;                      // 16-byte aligned
      if (t + 1 < n) store16<false>(a0 + t * 16, window16<S>(v[t], v[t + 1], dl));
      if (t == 0) store_head<S>(a0 - 16, window16<S>(v[0], v[0], dl), oc);
      if (t + 1 == n) store_tail<S>(a0 + (n - 1) * 16, window16<S>(v[n - 1], v[n - 1], dl), oc);
    }
  }
}

template <std::size_t S, int C, bool STAGED, bool MIS_OUT = false>
__global__ void __launch_bounds__(kNarrowThreads, 2)
    padded_narrow_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, std::uint64_t rows,
                         std::uint64_t ld_out) {
  constexpr int V = 16 / int(S);
  const std::uint64_t groups = rows / V, pitch = ld_out * S;
  const std::uint64_t first = std::uint64_t(blockIdx.x) * kNarrowThreads + threadIdx.x;
  if constexpr (STAGED) {
    __shared__ uint4 sm[kNarrowSlots<C>];
    const unsigned t = threadIdx.x;
    for (std::uint64_t g0 = std::uint64_t(blockIdx.x) * kNarrowThreads; g0 < groups;
         g0 += std::uint64_t(gridDim.x) * kNarrowThreads) {
      const unsigned n = groups - g0 < kNarrowThreads ? unsigned(groups - g0) : kNarrowThreads;
      const unsigned nq = n * C;
      const uint4* src = reinterpret_cast<const uint4*>(in) + g0 * C;
      if (n == kNarrowThreads) {  // a whole span: no bounds to check
        uint4 v[C];
#pragma unroll
        for (int j = 0; j < C; ++j) v[j] = src[t + j * kNarrowThreads];
#pragma unroll
        for (int j = 0; j < C; ++j) sm[narrow_slot<C>(t + j * kNarrowThreads)] = v[j];
      } else {
#pragma unroll 1
        for (unsigned q = t; q < nq; q += kNarrowThreads) sm[narrow_slot<C>(q)] = src[q];
      }
      __syncthreads();
      unsigned x[4 * C];
      if (t < n) {
#pragma unroll
        for (int i = 0; i < C; ++i) {
          put_words(x, i, sm[narrow_slot<C>(t * C + i)]);
        }
        if constexpr (!MIS_OUT) narrow_store<S, C>(x, out + (g0 + t) * 16, pitch);
      }
      if constexpr (MIS_OUT) {
        static_assert(kNarrowThreads * C <= kNarrowSlots<C>, "the output stage fits the input stage's buffer");
        __syncthreads();  // every read of the input stage is done
        if (t < n)
          static_for<C>([&](auto ci) {
            constexpr int c = decltype(ci)::value;
            sm[c * kNarrowThreads + t] = gather16<NarrowSrc<S, C, c>>(x);
          });
        __syncthreads();
        narrow_store_staged<S, C>(sm, out, pitch, g0, n, t);
      }
      __syncthreads();  // the next span reuses the buffer
    }
  } else {
    const std::uint64_t stride = std::uint64_t(gridDim.x) * kNarrowThreads;
    for (std::uint64_t g = first; g < groups; g += stride) {
      const uint4* src = reinterpret_cast<const uint4*>(in) + g * C;
      unsigned x[4 * C];
#pragma unroll
      for (int i = 0; i < C; ++i) {
        put_words(x, i, src[i]);
      }
      narrow_store<S, C>(x, out + g * 16, pitch);
    }
  }
  // The last rows % V rows, one element per thread.
  using T = carrier_t<S>;
  const std::uint64_t r0 = groups * V, tail = (rows - r0) * C;
  if (first < tail) {
    const std::uint64_t r = r0 + first / C, c = first % C;
    reinterpret_cast<T*>(out)[c * ld_out + r] = reinterpret_cast<const T*>(in)[r * C + c];
  }
}

// The narrow kernel reads the input as 16-byte words: packed, 16-byte
// aligned. Its output rows may start anywhere (staged read only).
template <std::size_t S>
bool narrow_ok(const void* in, const Dims& d) {
  return d.cols <= std::uint64_t(kNarrowMax) && d.ld_in == d.cols && (reinterpret_cast<std::uintptr_t>(in) % 16) == 0;
}
template <std::size_t S>
bool narrow_out_aligned(const void* out, const Dims& d) {
  return (d.ld_out * S) % 16 == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0;
}

// f(std::integral_constant<int, n>) for n = 1..kNarrowMax: the narrow and
// wide kernels are compiled per column (row) count.
template <class F, int... I>
void with_lines_of(std::uint64_t n, F& f, std::integer_sequence<int, I...>) {
  ((n == std::uint64_t(I + 1) ? (f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
}
template <class F>
void with_lines(std::uint64_t n, const char* what, F&& f) {
  if (n < 1 || n > std::uint64_t(kNarrowMax))
    throw Error(ErrorKind::internal, "padded: " + std::string(what) + " path called with " + std::to_string(n) +
                                         (what[0] == 'n' ? " columns" : " rows"));
  with_lines_of(n, f, std::make_integer_sequence<int, kNarrowMax>{});
}

// Blocks of a narrow (wide) launch: a thread per group of 16/S elements
// along the long side, and enough threads for the scalar tail (the last
// along % (16/S) elements of each of the `across` rows or columns).
template <std::size_t S>
unsigned narrow_grid(std::uint64_t along, std::uint64_t across) {
  constexpr std::uint64_t V = 16 / S;
  const std::uint64_t groups = along / V, tail = (along % V) * across;
  return grid_1d(ceil_div(groups > tail ? groups : tail, kNarrowThreads));
}

template <std::size_t S>
void launch_narrow(const void* in, void* out, const Dims& d, bool staged, cudaStream_t stream) {
  const bool aligned = narrow_out_aligned<S>(out, d);  // else the staged read, with its output staged too
  const unsigned grid = narrow_grid<S>(d.rows, d.cols);
  const auto* i = static_cast<const unsigned char*>(in);
  auto* o = static_cast<unsigned char*>(out);
  with_lines(d.cols, "narrow", [&](auto cc) {
    constexpr int C = decltype(cc)::value;
    if (!aligned) padded_narrow_kernel<S, C, true, true><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.rows, d.ld_out);
    else if (staged) padded_narrow_kernel<S, C, true><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.rows, d.ld_out);
    else padded_narrow_kernel<S, C, false><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.rows, d.ld_out);
  });
}

// Wide matrices, the narrow kernel's mirror: R <= kNarrowMax rows, output
// packed (ld_out == R), input and output 16-byte aligned. A thread takes V =
// 16/S consecutive columns: one 16-byte word from each of the R rows (each
// load instruction 512 contiguous bytes of one row across a warp), which
// interleaved in registers are 16*R contiguous bytes of output, V output
// rows. Those go through shared memory (padded as the narrow kernel's) so
// that the block writes its span of output with consecutive lanes on
// consecutive words. The cols % V columns left at the end take a scalar
// path. Before it, these shapes took skinny_rows_tile, which writes shared
// memory one element at a time (the variant -no-wide). Run 153 (H100, % of
// a copy, same process, 150e6 elements, 1-8 rows, every size): 98.2-103.0%
// against 79.9-98.6% for the skinny path (1 byte x 8 rows 100.9 against
// 80.2).

// Output word k of a group (its bytes 16k .. 16k + 15 of the group's 16*R):
// byte p of it is byte q % S of element q / S (q = 16k + p), which is input
// row (q / S) % R, column (q / S) / R of the group, x[4 * row + ...].
template <std::size_t S, int R, int k>
struct WideSrc {
  static constexpr int at(int p) {
    return 16 * (((16 * k + p) / int(S)) % R) + (16 * k + p) / int(S) / R * int(S) + (16 * k + p) % int(S);
  }
};

// Input rows not 16-byte aligned (MIS_IN): each lane reads the aligned word
// that holds its 16 bytes' start, takes the next from the next lane (a
// shuffle; the warp's last lane, and the span's, read their own) and shifts
// by the row's offset (window16). Every word read holds bytes of the row:
// row 0 starts aligned, and the bytes before a later row's start are the
// row above's. How the shifted word is made: lane by lane (window16: all
// four of the next lane's words shuffled in, picked by selects), or by a
// branch on the row's offset, which is the same in every lane of the grid
// (window_uniform: only the words that offset reads are shuffled, no
// selects). Run 155, lane by lane (H100, % of a copy, same process, 150e6
// elements): 3 rows 98.9-101.2% at every size (the skinny path 31.0-98.9),
// but 5-8 rows 79.4-89.2% for 1 and 2 bytes, 85.8-96.4% for 4. Run 161,
// the branch against lane by lane: 96.7-102.8% at every size and 1-8 rows
// against 79.7-103.1% (1 byte x 8 rows 99.5 against 79.7, 4 bytes 98.4
// against 85.9). The default branches; -wide-lanes goes lane by lane.
enum class Wide : int { off, lanes, uniform };

template <std::size_t S, int R, Wide MIS_IN = Wide::off>
__global__ void __launch_bounds__(kNarrowThreads, 2)
    padded_wide_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, std::uint64_t cols,
                       std::uint64_t ld_in) {
  constexpr int V = 16 / int(S);
  const std::uint64_t groups = cols / V, pitch = ld_in * S;
  __shared__ uint4 sm[kNarrowSlots<R>];
  const unsigned t = threadIdx.x;
  for (std::uint64_t g0 = std::uint64_t(blockIdx.x) * kNarrowThreads; g0 < groups;
       g0 += std::uint64_t(gridDim.x) * kNarrowThreads) {
    const unsigned n = groups - g0 < kNarrowThreads ? unsigned(groups - g0) : kNarrowThreads;
    unsigned x[4 * R];
    if constexpr (MIS_IN != Wide::off) {
      const unsigned lane = t & 31u;
      uint4 lo[R];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const unsigned char* src = in + r * pitch + (g0 + t) * 16;
        const unsigned char* a = src - (reinterpret_cast<std::uintptr_t>(src) & 15u);
        lo[r] = t < n ? load16<false>(a) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const unsigned char* src = in + r * pitch + (g0 + t) * 16;
        const unsigned o = unsigned(reinterpret_cast<std::uintptr_t>(src) & 15u);  // the same for every lane
        const bool own = o != 0 && t < n && (lane == 31u || t + 1 == n);  // reads its next word itself
        if constexpr (MIS_IN == Wide::uniform) {
          const uint4 next = own ? load16<false>(src - o + 16) : make_uint4(0, 0, 0, 0);
          put_words(x, r, window_uniform<S>(o, [&](int j) {
                      if (j < 4) return word(lo[r], j);
                      const unsigned nx = __shfl_down_sync(0xffffffffu, word(lo[r], j - 4), 1, 32);
                      return own ? word(next, j - 4) : nx;
                    }));
        } else {
          uint4 hi = shfl_down16(lo[r], 32);
          if (own) hi = load16<false>(src - o + 16);
          put_words(x, r, o ? window16<S>(lo[r], hi, o) : lo[r]);
        }
      }
    } else if (t < n) {
      const unsigned char* src = in + (g0 + t) * 16;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        put_words(x, r, *reinterpret_cast<const uint4*>(src + r * pitch));
      }
    }
    if (t < n) {
      static_for<R>([&](auto ki) {
        constexpr int k = decltype(ki)::value;
        sm[narrow_slot<R>(t * R + k)] = gather16<WideSrc<S, R, k>>(x);
      });
    }
    __syncthreads();
    uint4* dst = reinterpret_cast<uint4*>(out) + g0 * R;
    const unsigned nq = n * R;
    if (n == kNarrowThreads) {
#pragma unroll
      for (int j = 0; j < R; ++j) dst[t + j * kNarrowThreads] = sm[narrow_slot<R>(t + j * kNarrowThreads)];
    } else {
#pragma unroll 1
      for (unsigned q = t; q < nq; q += kNarrowThreads) dst[q] = sm[narrow_slot<R>(q)];
    }
    __syncthreads();  // the next span reuses the buffer
  }
  // The last cols % V columns, one element per thread.
  using T = carrier_t<S>;
  const std::uint64_t c0 = groups * V, tail = (cols - c0) * R;
  const std::uint64_t first = std::uint64_t(blockIdx.x) * kNarrowThreads + t;
  if (first < tail) {
    const std::uint64_t c = c0 + first / R, r = first % R;
    reinterpret_cast<T*>(out)[c * R + r] = reinterpret_cast<const T*>(in)[r * ld_in + c];
  }
}

template <std::size_t S>
bool wide_ok(const void* in, const void* out, const Dims& d) {
  return d.rows <= std::uint64_t(kNarrowMax) && d.ld_out == d.rows &&
         (reinterpret_cast<std::uintptr_t>(in) % 16) == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0;
}

template <std::size_t S>
void launch_wide(const void* in, void* out, const Dims& d, Wide realign, cudaStream_t stream) {
  const bool mis = (d.ld_in * S) % 16 != 0;  // input rows not all 16-byte aligned
  const unsigned grid = narrow_grid<S>(d.cols, d.rows);
  const auto* i = static_cast<const unsigned char*>(in);
  auto* o = static_cast<unsigned char*>(out);
  with_lines(d.rows, "wide", [&](auto rr) {
    constexpr int R = decltype(rr)::value;
    if (mis && realign == Wide::uniform)
      padded_wide_kernel<S, R, Wide::uniform><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.cols, d.ld_in);
    else if (mis)
      padded_wide_kernel<S, R, Wide::lanes><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.cols, d.ld_in);
    else padded_wide_kernel<S, R><<<grid, kNarrowThreads, 0, stream>>>(i, o, d.cols, d.ld_in);
  });
}

// Blocks that keep every SM of the current device busy: two per SM. Small
// matrices get smaller tiles rather than a grid that leaves SMs idle (run
// 58: 1692x13 f32 in 3 blocks of 585 rows ran 59.8% of a copy where
// cublasSgeam ran 110%; 228x2861 bytes in 21 blocks 11.8%).
inline std::uint64_t busy_blocks() { return 2 * std::uint64_t(sm_count()); }

// The largest multiple of `unit` (at least `unit`) that is at most `cap` and
// at most what splits `extent` into `blocks` pieces.
inline std::uint64_t split_for(std::uint64_t cap, std::uint64_t extent, std::uint64_t blocks, std::uint64_t unit) {
  const std::uint64_t piece = (ceil_div(extent, blocks) + unit - 1) / unit * unit;
  const std::uint64_t v = piece < cap ? piece : cap;
  return v > unit ? v : unit;
}

// A skinny matrix's tiles: all its rows (columns) and as many columns (rows)
// as the buffer holds, ~32 KiB per block. Sizes leave room for the element
// path's odd pitch (vc | 1), which the partial last tile takes. The 16-byte
// modes need alignment only where rows start: the packed side is one run,
// whose tiles start at multiples of 16 bytes. A matrix that is not skinny
// (unaligned rows) gets square element tiles of the same ~32 KiB.
template <std::size_t S>
void launch_skinny(const void* in, void* out, const Dims& d, bool skinny, std::uint64_t want, cudaStream_t stream) {
  constexpr std::uint64_t cap = kSkinnySmem / S, V = 16 / S;
  const bool ptrs =
      (reinterpret_cast<std::uintptr_t>(in) % 16) == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0;
  Skinny mode = Skinny::elements;
  std::uint64_t tr, tc;
  if (!skinny) {
    std::uint64_t side = 1;
    while ((side + 1) * (side + 2) <= cap) ++side;  // side * (side + 1) <= cap
    // Smaller squares where the matrix has too few of these for the GPU.
    while (side > 16 && ceil_div(d.rows, side) * ceil_div(d.cols, side) < want) side = side * 3 / 4;
    tr = side < d.rows ? side : d.rows;
    tc = side < d.cols ? side : d.cols;
  } else if (d.rows <= d.cols) {  // few rows
    tr = d.rows;
    const std::uint64_t w = cap / tr - 1;
    if (ptrs && (d.ld_in * S) % 16 == 0 && d.ld_out == d.rows && w >= V) {
      mode = Skinny::rows;
      tc = split_for(w / V * V, d.cols, want, V);
    } else {
      tc = split_for(w < d.cols ? w : d.cols, d.cols, want, 1);
    }
  } else {  // few columns
    tc = d.cols;
    const std::uint64_t h = cap / (tc + 1);
    if (ptrs && (d.ld_out * S) % 16 == 0 && d.ld_in == d.cols && h >= V) {
      mode = Skinny::cols;
      tr = split_for(h / V * V, d.rows, want, V);
    } else {
      tr = split_for(h < d.rows ? h : d.rows, d.rows, want, 1);
    }
  }
  const std::uint64_t ntr = ceil_div(d.rows, tr), ntc = ceil_div(d.cols, tc);
  padded_skinny_kernel<S><<<grid_1d(ntr * ntc), kSkinnyThreads, 0, stream>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), d, unsigned(tr), unsigned(tc), ntr,
      ntc, mode);
}

template <std::size_t S>
struct PaddedTunings;

// The TMA path's tiling for rows not 16-byte aligned (detail/tma_tile.cuh),
// the same at every element size: a tuning variant only
// (padded-misaligned-tma-*), slower than each size's Mis at every odd shape
// measured (runs 88-97, docs/PERF.md).
template <std::size_t S>
using TmaTiling = TmaCfg<S, 128, 256, 4>;

// ORIGIN: last_origin's rule for the last tile row and column.
// OVERLAP: overlapping tile rows (overlap_tile_rows).
template <class C, bool MISALIGNED, bool GROUPED = MISALIGNED, bool OVERLAP = false>
void launch_tiles(const void* in, void* out, const Dims& d, cudaStream_t stream, std::uint32_t group = 1,
                  int origin = 0) {
  // Aligned rows keep the moved tile's words whole.
  LastTile last = last_tile(d, C::TR, C::TC, MISALIGNED ? 1 : unsigned(16 / C::S), origin);
  const std::uint64_t ntr = OVERLAP ? overlap_tile_rows<C>(d, last) : ceil_div(d.rows, C::TR);
  const std::uint64_t ntc = ceil_div(d.cols, C::TC);
  auto kernel = padded_kernel<C, MISALIGNED, GROUPED, OVERLAP>;
  if (C::SMEM > kDefaultSmem)
    GT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::SMEM)));
  // The misaligned path where a group holds every tile row (tiles down each
  // tile column, down_tile's order): a grid of tile rows x tile columns, so
  // that no block divides to find its tile. Blocks start in the order of
  // their linear index, x fastest: the same order. Nsight (run 239, u8
  // 16383x16385): the tile index and origin were 34 of the 167 instructions
  // a 16-byte word; run 246: 87.8 M -> 79.4 M warp instructions, `--bench`
  // i8 16383x65537 85.6 -> 86.3 and f16 16383x32769 87.3 -> 87.7 (across
  // processes).
  const bool by_grid = MISALIGNED && GROUPED && group >= ntr && ntc > 1 && ntc <= 65535 && ntr <= 0x7fffffffu;
  const dim3 grid = by_grid ? dim3(unsigned(ntr), unsigned(ntc)) : dim3(grid_1d(ntr * ntc));
  kernel<<<grid, C::THREADS, C::SMEM, stream>>>(static_cast<const unsigned char*>(in),
                                                static_cast<unsigned char*>(out), d, ntr, ntc, group, last);
}

// Rows not 16-byte aligned on the TMA path (detail/tma_tile.cuh): its tiles,
// then the strips it leaves to the skinny kernel (the first tile row, the
// last rows, the columns right of the last full tile). False, with nothing
// launched, where the path does not apply (see launch_tma_tiles).
template <class P>
bool launch_tma(const void* in, void* out, const Dims& d, std::uint64_t want, cudaStream_t stream) {
  TmaPlan plan;
  if (!launch_tma_tiles<P>(in, out, d, plan, stream)) return false;
  constexpr std::size_t S = P::S;
  const auto* i = static_cast<const unsigned char*>(in);
  auto* o = static_cast<unsigned char*>(out);
  launch_skinny<S>(i, o, Dims{std::uint64_t(P::TR), plan.c_full, d.ld_in, d.ld_out}, true, want, stream);
  launch_skinny<S>(i + plan.r_tail * d.ld_in * S, o + plan.r_tail * S,
                   Dims{d.rows - plan.r_tail, plan.c_full, d.ld_in, d.ld_out}, true, want, stream);
  if (plan.c_full < d.cols)
    launch_skinny<S>(i + plan.c_full * S, o + plan.c_full * d.ld_out * S,
                     Dims{d.rows, d.cols - plan.c_full, d.ld_in, d.ld_out}, true, want, stream);
  return true;
}

// Mis's tiles, skew or super, with or without overlapping tile rows.
template <class C, bool OVERLAP>
void launch_mis_tiles(const void* in, void* out, const Dims& d, cudaStream_t stream, std::uint32_t group, int origin) {
  if constexpr (is_skew_v<C>) launch_skew_tiles<C, OVERLAP>(in, out, d, stream, group, origin);
  else launch_tiles<C, true, true, OVERLAP>(in, out, d, stream, group, origin);
}

// Overlapping tile rows (super.cuh, overlap_stride) save the partial words
// of misaligned output rows; where every output row is 16-byte aligned
// (misaligned input rows only) there are none, and the overlap would only be
// read twice. Run 242 (random shapes, seed 1, against run 236): such shapes
// lost 1.2-3.7 points (u8 3808x11940 -2.7, 11680x13227 -2.5; f16 2928x11425
// -3.7, 12784x17593 -2.4), where the others gained (u8 median +8.7, f16
// +3.4).
inline bool overlap_pays(const void* out, const Dims& d, std::size_t s) {
  return reinterpret_cast<std::uintptr_t>(out) % 16 != 0 || d.ld_out * s % 16 != 0;
}

template <class C>
bool skinny_for(const Dims& d) {
  return d.rows < std::uint64_t(C::TR) || d.cols < std::uint64_t(C::TC);
}

// The order of the misaligned tile path's tiles (grouped_tile): tile rows
// fastest, in groups of 4096 (all of one tile column first, for any matrix
// of fewer tile rows). Run 96 (H100, % of a copy, same process, against
// tile columns fastest): 4 bytes 84.0-102.2% against 66.6-95.0% over five
// odd shapes (16383x32769 84.0 against 66.6); 8 bytes 91.0-107.0 against
// 71.9-101.5; 2 bytes 73.7-89.0 against 60.4-81.6; 1 byte 57.3-74.8 against
// 54.4-69.6 (two shapes 0.6-0.7 points lower). The blocks that run at once
// then write whole runs of the same output rows, whose segments meet in
// partial 32-byte sectors. Aligned rows keep tile columns fastest (run 95:
// groups of 4-16 tile rows cost them 0.4-2 points).
constexpr std::uint32_t kMisalignedGroup = 4096;

// Aligned rows take the same groups where a row's bytes (either side) are
// not a multiple of 64: then output segments meet inside 32-byte sectors or
// 64-byte DRAM bursts, as misaligned ones do. Run 102 (H100, % of a copy,
// same process, linear -> grouped): f32 17844x13636 82.8 -> 91.6 (cublasSgeam
// 89.9 in run 101), 13764x14416 83.8 -> 92.4, 11292x9712 85.9 -> 92.8; f64
// 4490x16078 82.5 -> 94.0, 17122x17420 81.9 -> 91.6; f16 12344x6792 98.4 ->
// 105.8. Rows that are multiples of 64 bytes keep tile columns fastest,
// the order their tilings were chosen in; there the groups measured mixed
// (f32 17856x13696 96.3 -> 95.6, f64 17152x17408 97.0 -> 95.8, 16384x16384
// 97.3 both; but f32 8192x32768 96.5 -> 97.4, f16 16384x32768 96.3 -> 96.9,
// u8 16384x65536 95.4 -> 96.8). 16-byte elements take the rule too since
// run 215 (same process, linear -> grouped, c128; cublasZgeam in the bench
// of runs 147-148 and 214 in brackets): 4097x16383 88.5 -> 94.9 (93.3),
// 12345x6789 90.8 -> 93.2 (92.6), 9999x7777 91.3 -> 93.2 (92.8), 8193x8191
// 91.6 -> 94.2, 16383x4097 92.9 both (92.8); rows of whole sectors keep
// linear (16384x4096 97.8 against 97.3 grouped; groups of 32 and 128 tile
// rows lost 1-3 points to 4096). ORDER: 0 this rule, 1 always linear, 2
// always grouped (the tuning variants).
template <std::size_t S, int ORDER>
bool grouped_aligned(const Dims& d) {
  if constexpr (ORDER == 1) return false;
  else if constexpr (ORDER == 2) return true;
  else return !whole_sectors(d.ld_in, S) || !whole_sectors(d.ld_out, S);
}

// Rows 16-byte aligned take Cfg's tiles. Rows that are not take MisCfg's
// tiles on the misaligned tile path (its best tiling differs from the
// aligned one: run 57), or with MISALIGNED_PATH = false an element path:
// the compile-time element tile (detail/element_full.cuh), or with
// ELEM_TILE = false the general one of the skinny kernel. NARROW: off keeps
// narrow matrices on the skinny tile path, else it picks the narrow kernel's
// read (staged, the default, or direct). The tuning variants set
// these to compare the paths in one run. TmaP (a TmaCfg; only the tuning
// variants pass one): rows not 16-byte aligned take the TMA path first
// wherever it applies (the device and the binary have it, two tile rows and
// a tile column). MIS_FEW: misaligned matrices with fewer than MIS_FEW of
// MisCfg's tiles per SM take the element tile (0: never; each size's
// kMisFew). ORIGIN: where the tile paths put their last tile row and column
// (last_origin: 0 its rule, 1 where it falls, 2 always moved back to end at
// the edge).
template <class Cfg, Narrow NARROW = Narrow::staged, bool MISALIGNED_PATH = true, bool ELEM_TILE = true, class MisCfg = Cfg,
          class TmaP = void, std::uint32_t GROUP = kMisalignedGroup, int ALIGNED_ORDER = 0, Wide WIDE = Wide::uniform,
          unsigned MIS_FEW = 8, int ORIGIN = 0, class ElemT = void, bool OVERLAP = true>
void launch_cfg(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  require(padded_info(), in, out, p);
  const Dims d = resolve(p, Kind::transpose);
  if (!d.rows || !d.cols) return;
  if (p.block_x) {
    launch_element_tile<Order::linear, 0, 0>("padded", in, out, d, p.elem_size, block_or(p, 32, 8), 1, stream);
    return;
  }
  if (p.elem_size != Cfg::S)
    throw Error(ErrorKind::usage, "padded variant for " + std::to_string(Cfg::S) + "-byte elements called with " +
                                      std::to_string(p.elem_size) + "-byte elements");
  // A matrix with few big tiles takes smaller ones (fewer than two per SM
  // aligned, fewer than kMisFew per SM misaligned):
  // aligned rows the 64-thread Tunings::Small, misaligned rows the element
  // tile (run 59: 3839x246 2-byte 111.3% vs 97.8% on Small) or, skinny for
  // it, the skinny kernel, which splits small matrices over the SMs (228x2861
  // bytes 71.4% vs 56.7%).
  using Small = typename PaddedTunings<Cfg::S>::Small;
  const std::uint64_t want = busy_blocks();
  const auto tiles = [&](auto c) {
    using C = decltype(c);
    return ceil_div(d.rows, C::TR) * ceil_div(d.cols, C::TC);
  };
  if (NARROW != Narrow::off && narrow_ok<Cfg::S>(in, d) &&
      (NARROW == Narrow::staged || narrow_out_aligned<Cfg::S>(out, d))) {
    launch_narrow<Cfg::S>(in, out, d, NARROW == Narrow::staged, stream);
  } else if (WIDE != Wide::off && wide_ok<Cfg::S>(in, out, d)) {
    launch_wide<Cfg::S>(in, out, d, WIDE, stream);
  } else if (vec16_ok(in, out, d, Cfg::S)) {
    if (skinny_for<Cfg>(d)) launch_skinny<Cfg::S>(in, out, d, true, want, stream);
    else if (tiles(Cfg{}) < want && !skinny_for<Small>(d)) launch_tiles<Small, false>(in, out, d, stream, 1, ORIGIN);
    else if (grouped_aligned<Cfg::S, ALIGNED_ORDER>(d))
      launch_tiles<Cfg, false, true>(in, out, d, stream, kMisalignedGroup, ORIGIN);
    else launch_tiles<Cfg, false>(in, out, d, stream, 1, ORIGIN);
  } else if constexpr (MISALIGNED_PATH && mis_tiles_v<MisCfg>()) {
    if constexpr (!std::is_void_v<TmaP>) {
      if (launch_tma<TmaP>(in, out, d, want, stream)) {
        GT_CUDA_LAUNCHED("padded");
        return;
      }
    }
    if constexpr (Cfg::S <= 8) {
      using E = std::conditional_t<std::is_void_v<ElemT>, typename PaddedTunings<Cfg::S>::ElemTile, ElemT>;
      // Fewer than kMisFew per SM: medium matrices too (run 60:
      // 2022x4644 2-byte 74.5% on the element tile vs 52.8% on 296 big tiles;
      // run 234 for today's units).
      // Narrow rows (fewer than kMisNarrow of Mis's tiles across) take it at
      // any size where that size's tuning says so; variants with tiles of
      // their own keep them.
      constexpr unsigned narrow_tiles =
          std::is_same_v<MisCfg, typename PaddedTunings<Cfg::S>::Mis> && MIS_FEW ? PaddedTunings<Cfg::S>::kMisNarrow : 0;
      bool narrow = false;
      if constexpr (narrow_tiles > 0) narrow = ceil_div(d.cols, MisCfg::TC) < narrow_tiles;
      if (tiles(MisCfg{}) < std::uint64_t(MIS_FEW) * sm_count() || narrow) {
        if (skinny_for<E>(d)) launch_skinny<Cfg::S>(in, out, d, true, want, stream);
        else launch_element_tiles<E>(in, out, d, stream, ORIGIN);
        GT_CUDA_LAUNCHED("padded");
        return;
      }
    }
    if (skinny_for<MisCfg>(d)) launch_skinny<Cfg::S>(in, out, d, true, want, stream);
    else if (!overlap_pays(out, d, Cfg::S)) launch_mis_tiles<MisCfg, false>(in, out, d, stream, GROUP, ORIGIN);
    else launch_mis_tiles<MisCfg, OVERLAP && ORIGIN != 1>(in, out, d, stream, GROUP, ORIGIN);
  } else if constexpr (ELEM_TILE && Cfg::S <= 8) {
    if (skinny_for<Cfg>(d)) launch_skinny<Cfg::S>(in, out, d, true, want, stream);
    else launch_element_tiles<typename PaddedTunings<Cfg::S>::ElemTile>(in, out, d, stream, ORIGIN);
  } else {
    launch_skinny<Cfg::S>(in, out, d, skinny_for<Cfg>(d), want, stream);
  }
  GT_CUDA_LAUNCHED("padded");
}

// Tunings: SuperCfg<S, TSR, TSC, THREADS, MINB, A_DOWN, B_ACROSS, STREAM>.
// `Default` is what the registry runs; `Alt` the alternatives the tuning
// runs compare (DISABLED_Tune.Catalogue). Each default names the run that
// chose it (docs/PERF.md, "Kernels (issue 4)"). `Mis`: the tiles for rows
// not 16-byte aligned (kMisalignedTile: on the misaligned tile path, else
// on `ElemTile`, an ElemTileCfg<S, TR, TC, THREADS>). `Small`: 64-thread
// tiles for matrices with fewer big tiles than two per SM.
// `kMisFew`: misaligned matrices with fewer than kMisFew of Mis's tiles per
// SM (132 tiles a unit on the H100; before run 240 the unit was two a SM)
// take the element tile instead, and so do those whose rows are
// fewer than `kMisNarrow` of Mis's tiles wide (0: none); `ElemAlt`: other
// element tiles, run as the "-elem-" variants.

template <>
struct PaddedTunings<1> {
  // launch_cfg's MIS_FEW. Run 234 (rotated harness, same process, the
  // element tile -> Mis's tiles at any size) once the element tile ran down
  // its tile columns: 4001x4001 (512 Mis tiles) 72.7 -> 79.6, 5003x4099
  // (660) 70.2 -> 78.6, 6007x5003 (960) 67.4 -> 77.5, 5444x1659 (286) 85.4 ->
  // 87.9, 4001x2001 (256) 86.6 -> 92.1, 2678x2729 (242) 88.8 -> 93.7; but
  // 3001x1999 (192) 92.1 -> 85.5 and 1001x9999 (316) 82.0 -> 79.7. So 264
  // tiles, not four times that. Run 240, once Mis's tiles overlapped
  // (OVERLAP; GB/s, same process, the element tile -> Mis at any size):
  // 3001x1999 (192 tiles) 1115 -> 1142, 2678x2729 (242) 1198 -> 1352,
  // 4001x2001 (256) 1222 -> 1250; but 2000x2000 (128) 1275 -> 1262,
  // 2222x1111 (81) 777 -> 641, 1500x1501 (72) 752 -> 623. One per SM (132
  // tiles) then lost in run 242's random shapes at narrow and short ones
  // that it moved to Mis, whose partial tile column or overlapping last tile
  // row is a large share (% of copy, element tile in run 236 -> Mis):
  // 14091x334 (168 tiles) 94.1 -> 58.2, 281x8997 (142) 103.6 -> 75.9,
  // 769x5666 (180) 99.8 -> 84.1, 9025x421 (144) 96.0 -> 82.2, 3665x1135
  // (135) 97.6 -> 85.1. So two per SM (264 tiles), as before.
  static constexpr unsigned kMisFew = 2;
  static constexpr unsigned kMisNarrow = 0;
  // Rows not 16-byte aligned: the misaligned tile path (run 45, H100,
  // 2026-11-23: 12345x6789 41.2% vs 32.2% on the element path; 16383x16385
  // 42.5% vs 31.4%), on 512-thread tiles (run 57: 55.6% and 55.9% vs 41.4%
  // and 42.4% for the aligned default's 256; the compile-time element tile
  // 42.2% and 36.9%). Run 59: 512x128-byte tiles, 60.9% and 57.6% vs 55.4%
  // and 56.2% for 256x256. Run 104, in groups of tile rows (kMisalignedGroup):
  // 256x128-byte tiles, 512 threads, two blocks per SM (63 registers, no
  // spills): 76.1 / 70.7 / 71.5% at 12345x6789 / 16383x16385 / 16383x32769
  // against 63.8 / 59.3 / 60.4 for 512x128 (115 registers, one block).
  // Realigned one offset a warp (super.cuh: Realign): 1.2-2.7 points over
  // lane by lane in runs 141 and 142.
  static constexpr bool kMisalignedTile = true;
  using MisTile = Realign<SuperCfg<1, 64, 32, 512, 2, false, false, false>, true>;
  using Mis = MisTile;
  // Skew tiles (detail/skew_tile.cuh) gather 16 bytes a word from shared
  // memory one at a time: 256x64 bytes at three blocks an SM 45.9 / 44.6 /
  // 44.3% against Mis's 79.1 / 72.1 / 72.8 (run 164); at two, 38.6-40.7.
  // T2, the store side reading a second shared tile that holds the first's
  // transpose (4 shared loads and 8 byte permutes a 16-byte word instead of
  // 16 loads): run 197, 256x128 bytes on 512 threads 66.8 / 62.3 / 61.5%
  // against Mis's 79.4 / 78.1 / 76.6 (12345x6789 / 16383x16385 /
  // 16383x32769); 128x256, 256x64 and 128x128 bytes at three or four blocks
  // 59.4-64.0.
  using SkewAlt = std::tuple<SkewCfg<1, 256, 64, 256, 3>, SkewCfg<1, 256, 128, 512, 2, true>>;
  using Small = SuperCfg<1, 16, 16, 64, 1, false, false, false>;
  // The element tile (matrices with few misaligned tiles): 64x32 bytes on
  // 256 threads, as for 2 and 4 bytes. Run 221 (tuning harness, same
  // process, 64x64 -> 64x32): 3665x1135 112.8 -> 122.5, 1693x1273 139.2 ->
  // 152.4, 2388x1383 117.5 -> 128.0, 281x8997 142.7 -> 152.1, 10058x296
  // 137.6 -> 142.2. Taken down the tile columns (DOWN) as every size's:
  // run 229 (rotated harness, same process, along -> down) 96.9 -> 99.0,
  // 98.5 -> 98.0, 125.9 -> 125.5, 133.3 -> 131.9, 139.8 -> 138.8, 114.5 ->
  // 118.5 at 3665x1135 / 9025x421 / 1693x1273 / 281x8997 / 10058x296 /
  // 2388x1383: a wash for bytes, kept for one order across the sizes.
  using ElemTile = ElemTileCfg<1, 64, 32, 256, 0, true>;
  using ElemAlt = std::tuple<ElemTileCfg<1, 64, 32, 256>, ElemTileCfg<1, 64, 64, 256, 0, true>,
                             ElemTileCfg<1, 64, 64, 256>>;  // other element tiles, as variants
  // 256x128 bytes per tile: run 1 (H100, 2026-11-22) 88.9% vs 87.3% for
  // 128x128. Run 3: A lanes along the rows (512 B per warp load, 4-way
  // conflicts on the shared stores) and B lanes down the output rows: 92.7%
  // vs 88.7% with both conflict-free. Run 4: 256x256 bytes per tile
  // (64 KiB, dynamic shared memory), 95.3% vs 92.4% for 256x128.
  using C0 = SuperCfg<1, 64, 64, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<1, 64, 64, 512, 1, false, false, false>, SuperCfg<1, 64, 32, 256, 1, false, false, false>,
                         SuperCfg<1, 128, 64, 512, 1, false, false, false>, SuperCfg<1, 64, 32, 256, 1, true, true, false>,
                         SuperCfg<1, 32, 64, 512, 1, false, false, false>, SuperCfg<1, 64, 32, 512, 1, false, false, false>,
                         SuperCfg<1, 128, 32, 512, 1, false, false, false>, SuperCfg<1, 128, 32, 512, 2, false, false, false>,
                         SuperCfg<1, 128, 32, 1024, 1, false, false, false>, SuperCfg<1, 64, 32, 512, 2, false, false, false>>;
};
template <>
struct PaddedTunings<2> {
  // launch_cfg's MIS_FEW. Run 234 (rotated harness, same process, Mis's
  // tiles -> the element tile at any size): 5003x4099 (1320 Mis tiles) 84.7
  // -> 89.6, 6007x5003 (1880) 83.9 -> 84.9, 7001x6007 (2760) 84.1 -> 83.5;
  // below 1056 tiles Mis lost by 7-16 points: 1584 tiles. Run 240, once Mis's
  // tiles overlapped (OVERLAP; GB/s, same process, the element tile -> Mis
  // at any size): 5003x4099 (1320) 2182 -> 2227, 6007x5003 (1880) 2351 ->
  // 2357; but 4001x4001 (1024) 2091 -> 2064, 8191x1023 (512) 1933 -> 1802,
  // 2678x2729 (462) 1886 -> 1790, 3001x1999 (384) 1790 -> 1557. Nine per SM
  // (1188 tiles).
  static constexpr unsigned kMisFew = 9;
  static constexpr unsigned kMisNarrow = 0;
  // Rows not 16-byte aligned: the misaligned tile path (run 45: 12345x6789
  // 51.5% vs 32.6%; 16383x16385 50.2% vs 32.1%), on 128x128-half tiles of
  // 512 threads (run 57: 71.9% and 69.9% vs 51.5% and 50.0% for the aligned
  // default's tiles; the element tile 49.3% and 46.3%). Run 104, in groups
  // of tile rows (kMisalignedGroup): 128x128-half tiles, 512 threads, two
  // blocks per SM (64 registers, no spills): 83.1 / 81.7 / 81.6% at 12345x6789
  // / 16383x16385 / 16383x32769 against 77.0 / 75.5 / 75.6 for 256x128 (127
  // registers, one block).
  // Realigned lane by lane: one offset a warp (super.cuh: Realign) gained 0.6
  // points in run 141 and lost 4.9-5.8 in run 142.
  static constexpr bool kMisalignedTile = true;
  using MisTile = SuperCfg<2, 64, 32, 512, 2, false, false, false>;
  using Mis = MisTile;
  // Skew tiles (detail/skew_tile.cuh): 128x128 bytes at three blocks an SM
  // 77.7 / 77.1 / 75.4% against Mis's 82.9 / 81.9 / 81.7 (run 164); at
  // four the same, 256x128 on 512 threads 69.6-70.3.
  // T2 (see PaddedTunings<1>): run 197, 128x256 bytes on 512 threads 76.7 /
  // 75.3 / 75.0% against Mis's 84.0 / 83.6 / 82.8; 128x128 at three blocks
  // 71.6-71.9, 256x128 64.0-68.2.
  using SkewAlt = std::tuple<SkewCfg<2, 128, 128, 256, 3>, SkewCfg<2, 128, 256, 512, 2, true>>;
  using Small = SuperCfg<2, 16, 16, 64, 1, false, false, false>;
  // The element tile: 64x32 halves on 256 threads. Run 221 (same process,
  // 64x64 -> 64x32): 3665x1135 103.6 -> 112.4, 1693x1273 128.1 -> 143.4,
  // 2388x1383 114.4 -> 127.8, 281x8997 123.6 -> 129.0, 10058x296 117.6 ->
  // 124.5. Down the tile columns (run 229, along -> down, the six shapes
  // as for bytes): 101.3 -> 109.8, 104.0 -> 110.5, 141.2 -> 141.9, 119.6 ->
  // 122.9, 122.4 -> 122.9, 110.9 -> 112.8.
  using ElemTile = ElemTileCfg<2, 64, 32, 256, 0, true>;
  using ElemAlt = std::tuple<ElemTileCfg<2, 64, 32, 256>, ElemTileCfg<2, 64, 64, 256, 0, true>,
                             ElemTileCfg<2, 64, 64, 256>>;  // other element tiles, as variants
  // 128x128 halves per tile, A lanes along, B lanes down: run 3, 97.2% vs
  // 94.8% (128x64, B across) and 90.6% (128x128, both conflict-free).
  using C0 = SuperCfg<2, 64, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<2, 64, 16, 256, 1, false, true, false>, SuperCfg<2, 64, 32, 256, 1, true, true, false>,
                         SuperCfg<2, 128, 32, 512, 1, false, false, false>, SuperCfg<2, 64, 64, 512, 1, false, false, false>,
                         SuperCfg<2, 128, 16, 512, 1, false, false, false>, SuperCfg<2, 64, 32, 512, 1, false, false, false>,
                         SuperCfg<2, 256, 16, 512, 1, false, false, false>, SuperCfg<2, 128, 32, 512, 2, false, false, false>,
                         SuperCfg<2, 128, 32, 1024, 1, false, false, false>, SuperCfg<2, 64, 32, 512, 2, false, false, false>>;
};
template <>
struct PaddedTunings<4> {
  // Mis's skew tiles (32 KiB) take matrices down to two per two SMs, not
  // four, before the element tile (launch_cfg's MIS_FEW). Run 173 (tuning
  // harness, no L2 rotation), four -> two: 4001x2001 88.1 -> 96.2, 2678x2729
  // 90.2 -> 92.4, 3665x1135 95.9 -> 97.2, 2388x1383 94.2 -> 96.3, 1693x1273
  // 97.3 -> 96.6 (both the element tile: fewer than two), 5444x1659 and
  // 1001x9999 within 0.5. One per two SMs lost at the three smallest
  // (83.8-90.6). Back to four once the element tile ran down its tile
  // columns (run 234, rotated harness, same process, Mis's skew tiles -> the
  // element tile at any size): 3001x1999 (768 tiles) 95.2 -> 98.0, 4001x2001
  // (1024) 94.1 -> 96.1, 2678x2729 (903) 98.3 -> 100.8, 5444x1659 (1118)
  // 98.7 -> 99.7; 1001x9999 (1256) 95.7 -> 92.7, 4001x4001 (2016) 93.1 ->
  // 89.5. So eight per SM (1056 tiles; not re-measured since the skew tiles
  // overlapped, run 240).
  static constexpr unsigned kMisFew = 8;
  static constexpr unsigned kMisNarrow = 0;
  // Rows not 16-byte aligned: the misaligned tile path on tall 128x32-float
  // tiles (run 58: 12345x6789 81.3%, 16383x16385 77.2%, 6789x12345 91.2%;
  // 64x64 tiles 74.2%, 71.0%, 83.7%; run 57: the compile-time element tile
  // 71.6% and 67.6%, the general element path 64.6% and 62.1%, the
  // misaligned path on the aligned default's 64x128 tiles 62.6% and 57.3%).
  // Tall tiles make long output rows: fewer partial words per byte stored.
  // Run 96 on, in groups of tile rows: 86.6 / 84.9 / 84.1% at 12345x6789 /
  // 16383x16385 / 16383x32769 (run 165).
  static constexpr bool kMisalignedTile = true;
  using MisTile = SuperCfg<4, 128, 8, 256, 1, false, false, false>;
  // Skew tiles (detail/skew_tile.cuh), 128 rows x 256 bytes, 512 threads,
  // two blocks an SM (56 registers): runs 164-165, same process, % of a copy
  // at those shapes: 90.9 / 90.6 / 90.5 against MisTile's 86.6 / 84.9 / 84.1.
  // Residency decides: 128x128 bytes at two blocks (96 registers) 72.7 /
  // 72.4 / 71.7, at three (72) 86.3 / 85.3 / 84.7 (run 163); every tiling
  // that spilled (128x256 at four blocks, 256x256 at two: 56 bytes) fell to
  // 74-76; 256 rows x 256 bytes on 1024 threads 86.0-86.4, 128x512 bytes 85.
  using Mis = SkewCfg<4, 128, 256, 512, 2>;
  using SkewAlt = std::tuple<SkewCfg<4, 128, 128, 256, 3>>;
  using Small = SuperCfg<4, 32, 8, 64, 1, false, false, false>;
  // The element tile: 64x32 floats on 256 threads. Run 220 (tuning
  // harness, % of a copy, same process, 64x64 -> 64x32, the matrices with
  // few misaligned tiles): 3665x1135 97.4 -> 100.4, 9025x421 89.2 -> 99.6,
  // 1693x1273 111.0 -> 119.7, 281x8997 98.5 -> 105.1, 10058x296 95.7 ->
  // 103.3, 2388x1383 103.7 -> 111.6 (32x32 on 128 or 256 threads 91.3-116.4,
  // 32x64 89.9-108.2, 64x64 on 512 threads 85.8-107.2). cublasSgeam led
  // at five of these in the random sweep (run 200). Down the tile columns,
  // as cublasSgeam's grid runs (run 227 found it by Nsight): run 229, along
  // -> down, 98.4 -> 106.9 (3665x1135), 103.1 -> 105.2, 114.8 -> 117.8,
  // 99.7 -> 107.5 (281x8997: the partial last tile row, on the element
  // path, is spread over the grid instead of ending it), 110.0 -> 113.5,
  // 111.3 -> 110.7; in the bench beside Sgeam, ahead at all seven small
  // shapes (3665x1135 108.5 against 105.5).
  using ElemTile = ElemTileCfg<4, 64, 32, 256, 0, true>;
  using ElemAlt = std::tuple<ElemTileCfg<4, 64, 32, 256>, ElemTileCfg<4, 64, 64, 256, 0, true>, ElemTileCfg<4, 64, 64, 256>,
                             ElemTileCfg<4, 32, 32, 256, 0, true>, ElemTileCfg<4, 32, 32, 128>>;
  // 64x128 floats per tile, B lanes down: run 3, 97.6% vs 96.7% (B across)
  // and 97.2-97.3% (64x64, 128x64).
  using C0 = SuperCfg<4, 64, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<4, 64, 32, 256, 1, false, true, false>, SuperCfg<4, 64, 16, 256, 1, false, false, false>,
                         SuperCfg<4, 128, 16, 256, 1, false, false, false>, SuperCfg<4, 64, 32, 256, 1, false, false, true>,
                         SuperCfg<4, 64, 32, 512, 1, false, false, false>, SuperCfg<4, 64, 32, 256, 3, false, false, false>,
                         SuperCfg<4, 128, 16, 512, 1, false, false, false>, SuperCfg<4, 128, 8, 256, 1, false, false, false>,
                         SuperCfg<4, 64, 16, 128, 1, false, false, false>, SuperCfg<4, 256, 8, 512, 1, false, false, false>,
                         SuperCfg<4, 128, 8, 128, 1, false, false, false>, SuperCfg<4, 128, 4, 128, 1, false, false, false>,
                         SuperCfg<4, 128, 8, 256, 4, false, false, false>>;
};
template <>
struct PaddedTunings<8> {
  // Run 173 (tuning harness, no L2 rotation): Mis's tiles down to two per
  // two SMs against four: 2678x2729 99.6 against 98.8, 1692x1301 103.5
  // against 113.6, 281x8997 97.5 against 100.0, 3001x1999 and 4001x2001
  // within 0.4. Four stays: eight per SM (1056 tiles; not re-measured since
  // the skew tiles overlapped, run 240).
  static constexpr unsigned kMisFew = 8;
  // Rows fewer than 8 skew tiles (448 doubles) wide take the element tile
  // at any size. Run 230 (tuning harness, rotated, same process, two
  // passes; the skew tiles -> the element tile, 32x32 down the tile
  // columns): 14091x334 97.0-97.2 -> 99.0-99.9, 19028x407 96.7-96.9 ->
  // 98.9-99.1, 10410x391 101.3-101.8 -> 102.0-102.4, where cublasDgeam led
  // by 0.4-2.2 (bench, run 230: 99.8, 97.7, 100.3); 14226x452 (8 tiles),
  // 15302x864 and 13288x6160 alike on both paths.
  static constexpr unsigned kMisNarrow = 8;
  // Rows not 16-byte aligned: the misaligned tile path on 64x32-double tiles
  // (run 57: 12345x6789 87.9%, 16383x16385 83.0%; the compile-time element
  // tile 86.4% and 81.3%, the general element path 84.0% and 79.5%, the
  // misaligned path on the aligned default's 32x64 tiles 74.9% and 72.1%).
  static constexpr bool kMisalignedTile = true;
  // Run 165 (groups of tile rows): 91.9 / 91.4 / 91.0% at 12345x6789 /
  // 16383x16385 / 16383x32769.
  using MisTile = SuperCfg<8, 64, 16, 256, 1, false, false, false>;
  // Skew tiles (detail/skew_tile.cuh), 64 rows x 512 bytes, 512 threads, two
  // blocks an SM: run 165, 93.2 / 92.6 / 92.1% against MisTile's 91.9 / 91.4
  // / 91.0 in the same process; 128x256 bytes 92.5 / 91.8 / 91.5; 128x512
  // bytes spilled 56 bytes and fell to 77.5-78.8.
  using Mis = SkewCfg<8, 64, 512, 512, 2>;
  using SkewAlt = std::tuple<SkewCfg<8, 128, 256, 512, 2>>;
  using Small = SuperCfg<8, 32, 8, 64, 1, false, false, false>;
  // The element tile: 64x32 doubles on 256 threads. Run 221 (tuning
  // harness, same process, 64x32 -> 32x32): 3665x1135 100.5 -> 98.2,
  // 1693x1273 111.3 -> 112.6, 2388x1383 102.0 -> 107.4, 281x8997 101.1 ->
  // 107.4, 10058x296 102.1 -> 102.3 (on 128 threads 94.7-115.7). But in the
  // bench (rotated buffers, beside cublasDgeam in the same run) 32x32 (run
  // 222) trailed Dgeam by 13.3 points summed over five small shapes where
  // 64x32 (run 221) trailed by 9.8, so 64x32 stayed. Down the tile columns
  // (runs 229-230) 32x32 leads: run 230 (rotated harness, same process,
  // 64x32 down -> 32x32 down) 99.8 -> 102.6 (3665x1135), 100.5 -> 100.8,
  // 108.8 -> 110.2, 107.4 -> 109.5, 103.8 -> 103.6, 105.8 -> 106.9 (64x32
  // along 97.0-107.4).
  using ElemTile = ElemTileCfg<8, 32, 32, 256, 0, true>;
  using ElemAlt = std::tuple<ElemTileCfg<8, 64, 32, 256, 0, true>, ElemTileCfg<8, 64, 32, 256>,
                             ElemTileCfg<8, 32, 32, 256>, ElemTileCfg<8, 32, 32, 128, 0, true>>;  // as variants
  // 32x64 doubles per tile, B lanes down the output rows: run 3, 97.8% vs
  // 97.0-97.4% for 64x32, 64x64, 128x32. Run 1: B lanes down beat the
  // conflict-free B lanes across, 97.6% vs 97.0%.
  using C0 = SuperCfg<8, 32, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<8, 64, 16, 256, 1, false, false, false>, SuperCfg<8, 64, 16, 256, 1, false, true, false>,
                         SuperCfg<8, 64, 32, 256, 1, false, false, false>, SuperCfg<8, 64, 16, 512, 1, false, false, false>,
                         SuperCfg<8, 32, 16, 256, 1, false, false, false>, SuperCfg<8, 64, 8, 256, 1, false, false, false>,
                         SuperCfg<8, 128, 8, 512, 1, false, false, false>, SuperCfg<8, 128, 8, 256, 1, false, false, false>,
                         SuperCfg<8, 128, 4, 256, 1, false, false, false>, SuperCfg<8, 64, 16, 256, 4, false, false, false>>;
};
template <>
struct PaddedTunings<16> {
  static constexpr unsigned kMisFew = 8;  // launch_cfg's MIS_FEW
  // 16-byte elements keep every row 16-byte aligned: no misaligned path.
  static constexpr bool kMisalignedTile = false;
  // 32x32 16-byte elements per tile (the classic 32x33 tile, 16-byte
  // elements): run 3, 98.0% vs 97.6-97.8% for 64x32 and 64x16. Runs 146-148
  // (odd shapes, rows not whole 64-byte sectors; 16383x4097, 12345x6789,
  // 9999x7777, 4097x16383): this tiling 92.7, 90.7, 91.2, 88.3% beside
  // cublasZgeam's 92.8, 92.6, 92.8, 93.3 (the bench, same machine); of 12
  // other tilings (128x16, 128x32, 64x64, 32x64, 16x32, 32x16, 512 threads,
  // two blocks an SM, evict-first, B lanes across) only 64x32 at two blocks
  // an SM gained, at three shapes (93.6, 91.7, 92.0) and lost at 4097x16383
  // (86.8); groups of 2-16 tile rows lost 6-8 points at every shape (aligned
  // 16384x4096 98.1 -> 91.5). Run 214: the same tile at 4-8 blocks an SM
  // (Zgeam's 32 registers) lost 0.5-3.5 points. Run 215: tile rows fastest
  // (grouped_aligned, groups of 4096 tile rows: cuBLAS's order) where rows are
  // not whole sectors closed the gap: 88.5 -> 94.9 at 4097x16383.
  using C0 = SuperCfg<16, 32, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Mis = C0;
  using Small = SuperCfg<16, 16, 16, 64, 1, false, false, false>;
  using Alt = std::tuple<SuperCfg<16, 64, 32, 256, 2, false, false, false>, SuperCfg<16, 64, 16, 256, 1, false, false, false>>;
};

template <class Cfg>
std::string cfg_name(const char* kernel) {
  return std::string(kernel) + "/" + std::to_string(Cfg::TSR) + "x" + std::to_string(Cfg::TSC) + "s-" +
         std::to_string(Cfg::THREADS) + "t" + (Cfg::MINB > 1 ? "-minb" + std::to_string(Cfg::MINB) : "") + (Cfg::A_DOWN ? "-adown" : "") + (Cfg::B_ACROSS ? "-bacross" : "") +
         (Cfg::STREAM ? "-cs" : "");
}

template <class Cfg>
std::string cfg_params() {
  return "tile " + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + " elements (" +
         std::to_string(Cfg::TSR) + "x" + std::to_string(Cfg::TSC) + " supers, " + std::to_string(Cfg::SMEM) +
         " B shared), " + std::to_string(Cfg::THREADS) + " threads, " + std::to_string(Cfg::NA * Cfg::K) +
         " loads + " + std::to_string(Cfg::NB * Cfg::C) + " stores of 16 B per thread, A lanes " +
         (Cfg::A_DOWN ? "down" : "along") + ", B lanes " + (Cfg::B_ACROSS ? "across" : "down") +
         (Cfg::STREAM ? ", evict-first" : "");
}

template <class Cfg>
std::string skew_name(const std::string& base) {
  return base + "-misaligned-skew-" + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TCB) + "B-" +
         std::to_string(Cfg::THREADS) + "t" + (Cfg::MINB > 1 ? "-minb" + std::to_string(Cfg::MINB) : "") +
         (Cfg::T2 ? "-t2" : "");
}

// An element tiling (ElemTileCfg) as a variant's name suffix and in words.
template <class Cfg>
std::string elem_name(const std::string& base) {
  return base + "-elem-" + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + "-" + std::to_string(Cfg::THREADS) +
         "t" + (Cfg::MINB > 1 ? "-minb" + std::to_string(Cfg::MINB) : "") + (Cfg::DOWN ? "-down" : "");
}

template <class Cfg>
std::string elem_params() {
  return "an element tile of " + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + " elements, " +
         std::to_string(Cfg::THREADS) + " threads" +
         (Cfg::MINB > 1 ? ", " + std::to_string(Cfg::MINB) + " blocks an SM" : "") +
         (Cfg::DOWN ? ", tile rows fastest" : "");
}

template <class Cfg>
std::string skew_params() {
  return "skew tiles of " + std::to_string(Cfg::TR) + "x" + std::to_string(Cfg::TC) + " elements (" +
         std::to_string(Cfg::SMEM) + " B shared), " + std::to_string(Cfg::THREADS) + " threads" +
         (Cfg::T2 ? ", stored from a transposed copy in shared memory" : "");
}

// The misaligned path's tiles, described: skew or super tiles.
template <class Cfg>
std::string mis_params() {
  if constexpr (is_skew_v<Cfg>) return skew_params<Cfg>();
  else return cfg_params<Cfg>();
}

template <std::size_t S>
std::vector<Variant> padded_variants() {
  using Tn = PaddedTunings<S>;
  using D = typename Tn::Default;
  std::vector<Variant> v;
  constexpr bool mis = Tn::kMisalignedTile;
  const std::string base = cfg_name<D>("padded"), params = cfg_params<D>();
  v.push_back({base, params + (mis && !std::is_same_v<D, typename Tn::Mis>
                                   ? "; rows not 16-byte aligned: " + mis_params<typename Tn::Mis>()
                                   : std::string()),
               true, launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 0, Wide::uniform,
                                Tn::kMisFew>});
  // Each alternative takes its own tiles for aligned and misaligned rows.
  std::apply([&](auto... c) { (v.push_back({cfg_name<decltype(c)>("padded"), cfg_params<decltype(c)>(), false,
                                            launch_cfg<decltype(c)>}), ...); },
             typename Tn::Alt{});
  // The last tile row and column where they fall (partial tiles on the
  // element path), and always moved back to end at the edge (last_origin).
  v.push_back({base + "-edge-tiles", params + ", partial last tiles on the element path", false,
               launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 0, Wide::uniform,
                          Tn::kMisFew, 1>});
  v.push_back({base + "-overlap-always", params + ", last tiles always full, overlapping the tiles before them",
               false, launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 0,
                                 Wide::uniform, Tn::kMisFew, 2>});
  v.push_back({base + "-no-narrow", params + ", narrow matrices on the skinny tile path", false,
               launch_cfg<D, Narrow::off, mis, true, typename Tn::Mis>});
  v.push_back({base + "-no-wide", params + ", wide matrices (at most 8 rows) on the skinny tile path", false,
               launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 0, Wide::off>});
  v.push_back({base + "-wide-lanes", params + ", wide matrices' misaligned rows realigned lane by lane (window16)",
               false, launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 0, Wide::lanes>});
  v.push_back({base + "-narrow-direct", params + ", narrow matrices read thread by thread", false,
               launch_cfg<D, Narrow::direct, mis, true, typename Tn::Mis>});
  if constexpr (S < 16) {
    // The paths the default does not take for rows not 16-byte aligned.
    v.push_back({base + "-misaligned-own", params + ", rows not 16-byte aligned on the misaligned tile path with these tiles",
                 false, launch_cfg<D, Narrow::staged, true, true, D>});
    // The default's misaligned tiles with the other realignment (super.cuh: Realign).
    v.push_back({base + "-misaligned-lanes",
                 params + ", rows not 16-byte aligned on the misaligned tile path (" +
                     cfg_params<typename Tn::MisTile>() + ") realigned lane by lane (window16)",
                 false, launch_cfg<D, Narrow::staged, true, true, Realign<typename Tn::MisTile, false>>});
    v.push_back({base + "-misaligned-uniform",
                 params + ", rows not 16-byte aligned on the misaligned tile path (" +
                     cfg_params<typename Tn::MisTile>() + ") realigned one offset a warp (window_uniform)",
                 false, launch_cfg<D, Narrow::staged, true, true, Realign<typename Tn::MisTile, true>>});
    // Rows not 16-byte aligned on skew tiles (detail/skew_tile.cuh).
    std::apply([&](auto... c) {
      (v.push_back({skew_name<decltype(c)>(base), params + ", rows not 16-byte aligned on " + skew_params<decltype(c)>(),
                    false, launch_cfg<D, Narrow::staged, true, true, decltype(c)>}), ...);
    }, typename Tn::SkewAlt{});
    // Mis's tiles at any size (never the element tile): the tests run the
    // misaligned tiles on small matrices and partial tiles through it.
    v.push_back({base + "-misaligned-any-size", params + ", rows not 16-byte aligned on Mis's tiles at any size",
                 false, launch_cfg<D, Narrow::staged, true, true, typename Tn::Mis, void, kMisalignedGroup, 0,
                                   Wide::uniform, 0>});
    // Mis's tiles side by side, each storing its partial words (as before
    // overlapping tile rows: super.cuh, overlap_stride).
    v.push_back({base + "-misaligned-ends",
                 params + ", rows not 16-byte aligned on Mis's tiles side by side, each storing its partial words",
                 false, launch_cfg<D, Narrow::staged, true, true, typename Tn::Mis, void, kMisalignedGroup, 0,
                                   Wide::uniform, Tn::kMisFew, 0, void, false>});
    v.push_back({base + "-elemtile", params + ", rows not 16-byte aligned on the compile-time element tile", false,
                 launch_cfg<D, Narrow::staged, false, true>});
    // Other element tiles where the default takes its element tile (few misaligned tiles).
    std::apply([&](auto... c) {
      (v.push_back({elem_name<decltype(c)>(base), params + ", few misaligned tiles on " + elem_params<decltype(c)>(),
                    false,
                    launch_cfg<D, Narrow::staged, true, true, typename Tn::Mis, void, kMisalignedGroup, 0,
                               Wide::uniform, Tn::kMisFew, 0, decltype(c)>}),
       ...);
    }, typename Tn::ElemAlt{});
    v.push_back({base + "-old-element", params + ", rows not 16-byte aligned on the general element path", false,
                 launch_cfg<D, Narrow::staged, false, false>});
    // The misaligned tile path with the default's Mis tiles in the order it
    // had before run 96 (tile columns fastest), and the TMA path.
    v.push_back({base + "-misaligned-linear", params + ", rows not 16-byte aligned on the misaligned tile path (" +
                                                  cfg_params<typename Tn::MisTile>() + "), tile columns fastest",
                 false, launch_cfg<D, Narrow::staged, true, true, typename Tn::MisTile, void, 1>});
    // Mis's tiles in groups of 16 tile rows, fewer than kMisalignedGroup
    // (which takes every tile row of a column at the bench's shapes). Run
    // 177, u8 16383x65537 / 16385x16385: groups of 16 64.4 / 64.8 (of 4:
    // 52.0 / 59.5, dropped) against 75.7 / 76.7; f16 16383x32769 67.0
    // against 82.6.
    v.push_back({base + "-misaligned-group-16", params + ", rows not 16-byte aligned on Mis's tiles in groups of 16 tile rows",
                 false, launch_cfg<D, Narrow::staged, true, true, typename Tn::Mis, void, 16, 0, Wide::uniform,
                                   Tn::kMisFew>});
    {
      using P = TmaTiling<S>;
      v.push_back({"padded-misaligned-tma-" + std::to_string(P::TR) + "x" + std::to_string(P::TC) + "-" +
                       std::to_string(P::THREADS) + "t-" + std::to_string(P::NS) + "s",
                   params + ", rows not 16-byte aligned on the TMA path: tiles of " + std::to_string(P::TR) + "x" +
                       std::to_string(P::TC) + " elements, " + std::to_string(P::THREADS) + " threads, " +
                       std::to_string(P::NS) + " input stages",
                   false, launch_cfg<D, Narrow::staged, true, true, typename Tn::MisTile, P>});
    }
  }
  v.push_back({base + "-aligned-linear", params + ", aligned rows always with tile columns fastest", false,
               launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 1>});
  v.push_back({base + "-aligned-grouped", params + ", aligned rows always in groups of tile rows", false,
               launch_cfg<D, Narrow::staged, mis, true, typename Tn::Mis, void, kMisalignedGroup, 2>});
  return v;
}

bool padded_supports(const Problem& p, std::string* why) {
  if (!check_problem("padded", p, Limits{Kind::transpose, true, true, 1024}, why)) return false;
  return !p.block_x || check_tile_smem("padded", p.block_x, 1, p.elem_size, why);
}

void launch_padded(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  with_elem_size(p.elem_size, [&](auto sz) {
    using Tn = PaddedTunings<decltype(sz)::value>;
    launch_cfg<typename Tn::Default, Narrow::staged, Tn::kMisalignedTile, true, typename Tn::Mis, void,
               kMisalignedGroup, 0, Wide::uniform, Tn::kMisFew>(in, out, p, stream);
  });
}

}  // namespace

std::vector<Variant> padded_tuning_variants(std::size_t elem_size) {
  return with_elem_size(elem_size, [](auto sz) { return padded_variants<decltype(sz)::value>(); });
}

KernelInfo padded_info() {
  return {"padded",
          "the flagship: padded shared-memory tile of 16-byte super-elements, 16-byte coalesced accesses, "
          "register transposes for 1-/2-byte elements",
          Kind::transpose, padded_supports, launch_padded, true};
}

}  // namespace gt::kernels::detail
