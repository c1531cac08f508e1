// Copies with streaming (non-temporal) stores: the bytes go to memory without
// first reading the target's cache lines (a plain store reads each line it
// writes, a third of a large copy's memory traffic), and without evicting what
// the caches hold. For copies the caches cannot hold anyway and whose target
// another thread or a DMA engine reads next: the staging of pageable host
// memory (formats/memory.cpp; plan.hpp: plan_streaming_copy says when).
#pragma once
#include <cstddef>

namespace gt {

// Copies n bytes (the ranges must not overlap). x86-64: 16-byte streaming
// stores (SSE2, in every x86-64 CPU) on the target's whole 64-byte lines,
// memcpy for the unaligned head and the tail; elsewhere memcpy.
void stream_copy(void* dst, const void* src, std::size_t n);

// Orders the streaming stores before every later store: call it before
// telling another thread (or a DMA engine) that the bytes are there. A
// release operation does not order streaming stores on x86.
void stream_fence();

}  // namespace gt
