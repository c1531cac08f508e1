// `padded`, the flagship: a padded shared-memory tiled transpose, tuned per
// element size. Tiles of TSR x TSC 16-byte super-elements (see
// detail/super.cuh): every global load and store is 16 bytes wide and
// coalesced, 1- and 2-byte elements are transposed 4x4 / 2x2 in registers
// with PRMT so shared memory moves whole 16-byte words, and the +1 super of
// padding per shared row keeps those accesses free of bank conflicts.
// Tiles that are partial, skinny (fewer rows or columns than a tile) or not
// 16-byte aligned take the element-wise path of the same kernel.
// With a block shape given (the block-shape sweep), `padded` runs the seeds'
// element-wise tile instead: block_x x block_x elements, padded by one.
#include <string>
#include <tuple>

#include "detail/common.cuh"
#include "detail/element_tile.cuh"
#include "detail/families.hpp"
#include "detail/super.cuh"
#include "gtranspose/kernel_tuning.hpp"

namespace gt::kernels::detail {
namespace {

// Rows 16-byte aligned (the launcher checks): full TR x TC tiles take the
// 16-byte path, partial ones at the edges the element path.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    padded_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, std::uint64_t ntr,
                  std::uint64_t ntc) {
  constexpr std::size_t S = Cfg::S;
  using T = carrier_t<S>;
  // Dynamic: a 256x256-byte tile needs more than the 48 KiB static limit.
  extern __shared__ uint4 smem_dyn[];
  auto sm = reinterpret_cast<uint4(*)[Cfg::PITCH]>(smem_dyn);
  const std::uint64_t ntiles = ntr * ntc;
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t r0 = t.r * Cfg::TR, c0 = t.c * Cfg::TC;
    if (r0 + Cfg::TR <= d.rows && c0 + Cfg::TC <= d.cols) {
      TileRegs<Cfg> regs;
      load_tile<Cfg>(regs, in + (r0 * d.ld_in + c0) * S, d.ld_in * S);
      stash_tile<Cfg>(regs, sm);
      __syncthreads();
      store_tile<Cfg>(sm, out + (c0 * d.ld_out + r0) * S, d.ld_out * S);
    } else {
      const unsigned vr = unsigned(d.rows - r0 < Cfg::TR ? d.rows - r0 : Cfg::TR);
      const unsigned vc = unsigned(d.cols - c0 < Cfg::TC ? d.cols - c0 : Cfg::TC);
      T* e = reinterpret_cast<T*>(&sm[0][0]);
      edge_load<T, Cfg::THREADS>(e, reinterpret_cast<const T*>(in), d.ld_in, r0, c0, vr, vc);
      __syncthreads();
      edge_store<T, Cfg::THREADS>(e, reinterpret_cast<T*>(out), d.ld_out, r0, c0, vr, vc);
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

// A skinny matrix's tiles: all its rows (columns) and as many columns (rows)
// as the buffer holds, ~32 KiB per block. Sizes leave room for the element
// path's odd pitch (vc | 1), which the partial last tile takes. The 16-byte
// modes need alignment only where rows start: the packed side is one run,
// whose tiles start at multiples of 16 bytes. A matrix that is not skinny
// (unaligned rows) gets square element tiles of the same ~32 KiB.
template <std::size_t S>
void launch_skinny(const void* in, void* out, const Dims& d, bool skinny, cudaStream_t stream) {
  constexpr std::uint64_t cap = kSkinnySmem / S, V = 16 / S;
  const bool ptrs =
      (reinterpret_cast<std::uintptr_t>(in) % 16) == 0 && (reinterpret_cast<std::uintptr_t>(out) % 16) == 0;
  Skinny mode = Skinny::elements;
  std::uint64_t tr, tc;
  if (!skinny) {
    std::uint64_t side = 1;
    while ((side + 1) * (side + 2) <= cap) ++side;  // side * (side + 1) <= cap
    tr = side < d.rows ? side : d.rows;
    tc = side < d.cols ? side : d.cols;
  } else if (d.rows <= d.cols) {  // few rows
    tr = d.rows;
    const std::uint64_t w = cap / tr - 1;
    if (ptrs && (d.ld_in * S) % 16 == 0 && d.ld_out == d.rows && w >= V) {
      mode = Skinny::rows;
      tc = w / V * V;
    } else {
      tc = w < d.cols ? w : d.cols;
    }
  } else {  // few columns
    tc = d.cols;
    const std::uint64_t h = cap / (tc + 1);
    if (ptrs && (d.ld_out * S) % 16 == 0 && d.ld_in == d.cols && h >= V) {
      mode = Skinny::cols;
      tr = h / V * V;
    } else {
      tr = h < d.rows ? h : d.rows;
    }
  }
  const std::uint64_t ntr = ceil_div(d.rows, tr), ntc = ceil_div(d.cols, tc);
  padded_skinny_kernel<S><<<grid_1d(ntr * ntc), kSkinnyThreads, 0, stream>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), d, unsigned(tr), unsigned(tc), ntr,
      ntc, mode);
}

template <class Cfg>
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
  const bool skinny = d.rows < std::uint64_t(Cfg::TR) || d.cols < std::uint64_t(Cfg::TC);
  const bool vec = vec16_ok(in, out, d, Cfg::S);
  if (skinny || !vec) {
    launch_skinny<Cfg::S>(in, out, d, skinny, stream);
  } else {
    const std::uint64_t ntr = ceil_div(d.rows, Cfg::TR), ntc = ceil_div(d.cols, Cfg::TC);
    auto kernel = padded_kernel<Cfg>;
    if (Cfg::SMEM > kDefaultSmem)
      GT_KCHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::SMEM)));
    kernel<<<grid_1d(ntr * ntc), Cfg::THREADS, Cfg::SMEM, stream>>>(static_cast<const unsigned char*>(in),
                                                                   static_cast<unsigned char*>(out), d, ntr, ntc);
  }
  GT_KLAUNCHED("padded");
}

// Tunings: SuperCfg<S, TSR, TSC, THREADS, MINB, A_DOWN, B_ACROSS, STREAM>.
// `Default` is what the registry runs; `Alt` the alternatives the tuning
// runs compare (DISABLED_Tune.Catalogue). Each default names the run that
// chose it (docs/PERF.md, "Kernels (issue 4)").
template <std::size_t S>
struct PaddedTunings;

template <>
struct PaddedTunings<1> {
  // 256x128 bytes per tile: run 1 (H100, 2026-11-22) 88.9% vs 87.3% for
  // 128x128. Run 3: A lanes along the rows (512 B per warp load, 4-way
  // conflicts on the shared stores) and B lanes down the output rows: 92.7%
  // vs 88.7% with both conflict-free. Run 4: 256x256 bytes per tile
  // (64 KiB, dynamic shared memory), 95.3% vs 92.4% for 256x128.
  using C0 = SuperCfg<1, 64, 64, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<1, 64, 64, 512, 1, false, false, false>, SuperCfg<1, 64, 32, 256, 1, false, false, false>,
                         SuperCfg<1, 128, 64, 512, 1, false, false, false>, SuperCfg<1, 64, 32, 256, 1, true, true, false>>;
};
template <>
struct PaddedTunings<2> {
  // 128x128 halves per tile, A lanes along, B lanes down: run 3, 97.2% vs
  // 94.8% (128x64, B across) and 90.6% (128x128, both conflict-free).
  using C0 = SuperCfg<2, 64, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<2, 64, 16, 256, 1, false, true, false>, SuperCfg<2, 64, 32, 256, 1, true, true, false>,
                         SuperCfg<2, 128, 32, 512, 1, false, false, false>, SuperCfg<2, 64, 64, 512, 1, false, false, false>>;
};
template <>
struct PaddedTunings<4> {
  // 64x128 floats per tile, B lanes down: run 3, 97.6% vs 96.7% (B across)
  // and 97.2-97.3% (64x64, 128x64).
  using C0 = SuperCfg<4, 64, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<4, 64, 32, 256, 1, false, true, false>, SuperCfg<4, 64, 16, 256, 1, false, false, false>,
                         SuperCfg<4, 128, 16, 256, 1, false, false, false>, SuperCfg<4, 64, 32, 256, 1, false, false, true>,
                         SuperCfg<4, 64, 32, 512, 1, false, false, false>, SuperCfg<4, 64, 32, 256, 3, false, false, false>>;
};
template <>
struct PaddedTunings<8> {
  // 32x64 doubles per tile, B lanes down the output rows: run 3, 97.8% vs
  // 97.0-97.4% for 64x32, 64x64, 128x32. Run 1: B lanes down beat the
  // conflict-free B lanes across, 97.6% vs 97.0%.
  using C0 = SuperCfg<8, 32, 32, 256, 1, false, false, false>;
  using Default = C0;
  using Alt = std::tuple<SuperCfg<8, 64, 16, 256, 1, false, false, false>, SuperCfg<8, 64, 16, 256, 1, false, true, false>,
                         SuperCfg<8, 64, 32, 256, 1, false, false, false>>;
};
template <>
struct PaddedTunings<16> {
  // 32x32 16-byte elements per tile (the classic 32x33 tile, 16-byte
  // elements): run 3, 98.0% vs 97.6-97.8% for 64x32 and 64x16.
  using C0 = SuperCfg<16, 32, 32, 256, 1, false, false, false>;
  using Default = C0;
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

template <std::size_t S>
std::vector<Variant> padded_variants() {
  using Tn = PaddedTunings<S>;
  std::vector<Variant> v;
  v.push_back({cfg_name<typename Tn::Default>("padded"), cfg_params<typename Tn::Default>(), true,
               launch_cfg<typename Tn::Default>});
  std::apply([&](auto... c) { (v.push_back({cfg_name<decltype(c)>("padded"), cfg_params<decltype(c)>(), false,
                                            launch_cfg<decltype(c)>}), ...); },
             typename Tn::Alt{});
  return v;
}

bool padded_supports(const Problem& p, std::string* why) {
  if (!check_problem("padded", p, Limits{Kind::transpose, true, true, 1024}, why)) return false;
  return !p.block_x || check_tile_smem("padded", p.block_x, 1, p.elem_size, why);
}

void launch_padded(const void* in, void* out, const Problem& p, cudaStream_t stream) {
  with_elem_size(p.elem_size, [&](auto sz) {
    launch_cfg<typename PaddedTunings<decltype(sz)::value>::Default>(in, out, p, stream);
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
