// One dispatch from a run-time element size to code written once as a
// template on it: the CUDA kernels (kernels/detail/common.cuh) and the host's
// in-place steps (lib/src/inplace/steps.hpp) both call this. Header-only, so
// the kernels, which depend on nothing else of lib/, can include it.
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>

#include "gtranspose/error.hpp"

namespace gt {

// Calls f(std::integral_constant<std::size_t, S>{}) for an element size S of
// 1, 2, 4, 8 or 16; any other throws gt::Error(usage).
template <class F>
decltype(auto) with_elem_size(std::size_t s, F&& f) {
  switch (s) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 8: return f(std::integral_constant<std::size_t, 8>{});
    case 16: return f(std::integral_constant<std::size_t, 16>{});
    default:
      throw Error(ErrorKind::usage, "element size " + std::to_string(s) + " is not one of 1, 2, 4, 8, 16");
  }
}

}  // namespace gt
