// Alternative tunings of the tuned kernels (`padded`, `inplace-tiled`), for
// re-tuning runs on a new GPU (tests/device's DISABLED_Tune tests). The
// registry's entries launch the tuned default of each element size; a
// variant launches one fixed tiling, with the same problem rules and results.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gtranspose/kernels.hpp"

namespace gt::kernels {

struct Variant {
  std::string name;    // "padded/64x16s-256t" (tile in supers, threads)
  std::string params;  // the tiling spelled out: tile in elements, threads, lane walks, cache policy
  bool is_default;     // the tiling the registry entry uses for this element size
  void (*launch)(const void* in, void* out, const Problem& p, cudaStream_t stream);
};

// Empty for kernels without variants or element sizes they do not have.
std::vector<Variant> tuning_variants(std::string_view kernel, std::size_t elem_size);

}  // namespace gt::kernels
