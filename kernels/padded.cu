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

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MINB)
    padded_kernel(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, Dims d, unsigned tr,
                  unsigned tc, std::uint64_t ntr, std::uint64_t ntc, bool vec) {
  constexpr std::size_t S = Cfg::S;
  using T = carrier_t<S>;
  __shared__ uint4 sm[Cfg::TSR][Cfg::PITCH];
  const std::uint64_t ntiles = ntr * ntc;
  for (std::uint64_t b = blockIdx.x; b < ntiles; b += gridDim.x) {
    const TileIdx t = linear_tile(b, ntc);
    const std::uint64_t r0 = t.r * tr, c0 = t.c * tc;
    if (vec && tr == Cfg::TR && tc == Cfg::TC && r0 + Cfg::TR <= d.rows && c0 + Cfg::TC <= d.cols) {
      TileRegs<Cfg> regs;
      load_tile<Cfg>(regs, in + (r0 * d.ld_in + c0) * S, d.ld_in * S);
      stash_tile<Cfg>(regs, sm);
      __syncthreads();
      store_tile<Cfg>(sm, out + (c0 * d.ld_out + r0) * S, d.ld_out * S);
    } else {
      const unsigned vr = unsigned(d.rows - r0 < tr ? d.rows - r0 : tr);
      const unsigned vc = unsigned(d.cols - c0 < tc ? d.cols - c0 : tc);
      T* e = reinterpret_cast<T*>(&sm[0][0]);
      edge_load<T, Cfg::THREADS>(e, reinterpret_cast<const T*>(in), d.ld_in, r0, c0, vr, vc);
      __syncthreads();
      edge_store<T, Cfg::THREADS>(e, reinterpret_cast<T*>(out), d.ld_out, r0, c0, vr, vc);
    }
    // The next tile reuses the shared buffer.
    if (b + gridDim.x < ntiles) __syncthreads();
  }
}

// The tile shape of a launch: the tuned TR x TC, or for a matrix with fewer
// rows (columns) than a tile, a tile of all its rows (columns) and as many
// columns (rows) as the shared buffer holds, so skinny matrices still move
// ~16 KiB per block through the element path.
template <class Cfg>
void pick_tile(const Dims& d, unsigned& tr, unsigned& tc) {
  const std::uint64_t cap = Cfg::SMEM / Cfg::S;  // elements the shared buffer holds
  tr = Cfg::TR;
  tc = Cfg::TC;
  if (d.rows < std::uint64_t(Cfg::TR) && d.cols < std::uint64_t(Cfg::TC)) {
    tr = unsigned(d.rows);
    tc = unsigned(d.cols);
  } else if (d.rows < std::uint64_t(Cfg::TR)) {
    tr = unsigned(d.rows);
    const std::uint64_t w = cap / tr - 1;  // edge_pitch(w) <= w + 1
    tc = unsigned(w < d.cols ? w : d.cols);
  } else if (d.cols < std::uint64_t(Cfg::TC)) {
    tc = unsigned(d.cols);
    const std::uint64_t h = cap / edge_pitch(tc);
    tr = unsigned(h < d.rows ? h : d.rows);
  }
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
  unsigned tr, tc;
  pick_tile<Cfg>(d, tr, tc);
  const std::uint64_t ntr = ceil_div(d.rows, tr), ntc = ceil_div(d.cols, tc);
  padded_kernel<Cfg><<<grid_1d(ntr * ntc), Cfg::THREADS, 0, stream>>>(
      static_cast<const unsigned char*>(in), static_cast<unsigned char*>(out), d, tr, tc, ntr, ntc,
      vec16_ok(in, out, d, Cfg::S));
  GT_KLAUNCHED("padded");
}

// Tunings: SuperCfg<S, TSR, TSC, THREADS, MINB, A_DOWN, B_ACROSS, STREAM>.
// The first row of each list is the default; the rest are the alternatives
// the tuning runs compare. Each default names the run that chose it.
template <std::size_t S>
struct PaddedTunings;

template <>
struct PaddedTunings<1> {
  // 128x128 bytes (16 KiB) per block, one A- and one B-block per thread.
  using Default = SuperCfg<1, 32, 32, 256, 1, true, true, false>;
  using Alt = std::tuple<SuperCfg<1, 32, 32, 256, 1, true, true, true>, SuperCfg<1, 64, 32, 256, 1, true, true, false>,
                         SuperCfg<1, 32, 32, 128, 1, true, true, false>, SuperCfg<1, 32, 64, 256, 1, true, true, false>>;
};
template <>
struct PaddedTunings<2> {
  // 64x128 halves (16 KiB) per block.
  using Default = SuperCfg<2, 32, 32, 256, 1, true, true, false>;
  using Alt = std::tuple<SuperCfg<2, 32, 32, 256, 1, true, true, true>, SuperCfg<2, 64, 32, 256, 1, true, true, false>,
                         SuperCfg<2, 32, 32, 128, 1, true, true, false>, SuperCfg<2, 64, 16, 256, 1, true, true, false>>;
};
template <>
struct PaddedTunings<4> {
  // 64x64 floats (16 KiB) per block.
  using Default = SuperCfg<4, 64, 16, 256, 1, false, true, false>;
  using Alt = std::tuple<SuperCfg<4, 64, 16, 256, 1, false, true, true>, SuperCfg<4, 32, 32, 256, 1, false, true, false>,
                         SuperCfg<4, 64, 32, 256, 1, false, true, false>, SuperCfg<4, 64, 16, 128, 1, false, true, false>,
                         SuperCfg<4, 64, 16, 256, 1, true, true, false>>;
};
template <>
struct PaddedTunings<8> {
  // 64x32 doubles (16 KiB) per block.
  using Default = SuperCfg<8, 64, 16, 256, 1, false, true, false>;
  using Alt = std::tuple<SuperCfg<8, 64, 16, 256, 1, false, true, true>, SuperCfg<8, 32, 32, 256, 1, false, true, false>,
                         SuperCfg<8, 64, 16, 256, 1, false, false, false>, SuperCfg<8, 64, 32, 256, 1, false, true, false>,
                         SuperCfg<8, 64, 16, 128, 1, false, true, false>>;
};
template <>
struct PaddedTunings<16> {
  // 32x32 16-byte elements (16 KiB) per block: the classic 32x33 tile.
  using Default = SuperCfg<16, 32, 32, 256, 1, false, false, false>;
  using Alt = std::tuple<SuperCfg<16, 32, 32, 256, 1, false, false, true>, SuperCfg<16, 64, 32, 256, 1, false, false, false>,
                         SuperCfg<16, 32, 32, 128, 1, false, false, false>, SuperCfg<16, 32, 16, 256, 1, false, false, false>>;
};

template <class Cfg>
std::string cfg_name(const char* kernel) {
  return std::string(kernel) + "/" + std::to_string(Cfg::TSR) + "x" + std::to_string(Cfg::TSC) + "s-" +
         std::to_string(Cfg::THREADS) + "t" + (Cfg::A_DOWN ? "-adown" : "") + (Cfg::B_ACROSS ? "-bacross" : "") +
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
