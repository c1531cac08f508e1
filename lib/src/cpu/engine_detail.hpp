// The CPU engine with its buffer accounting exposed, so tests can check that
// the buffers it allocates stay within the host budget.
#pragma once
#include <cstdint>

#include "gtranspose/engine.hpp"

namespace gt::cpu {

struct EngineStats {
  std::uint64_t buffer_bytes = 0;  // tile buffers allocated, all together
  int buffers = 0;
  std::uint64_t tile_bytes = 0;    // the per-buffer bound given to the planner
};

// Tile buffers the out-of-place engine holds: 2 slots of (input, output).
constexpr int kOutOfPlaceBuffers = 4;
// In place: 2 slots of (tile, mirror tile), plus one scratch tile for edge
// pairs, whose tiles are not square and cannot be transposed in their buffer.
constexpr int kInplaceBuffers = 5;

RunReport run_cpu_impl(Source& src, Sink& dst, const RunOptions& opts, EngineStats* stats);
RunReport run_cpu_inplace_impl(InplaceMatrix& m, const RunOptions& opts, EngineStats* stats);

}  // namespace gt::cpu
