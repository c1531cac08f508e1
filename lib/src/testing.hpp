// The internals tests may reach, and nothing else. Tests include the public
// headers (gtranspose/...) and, for what only a test needs to see inside the
// library, this header; tests/CMakeLists.txt keeps lib/src on their include
// path for it alone and refuses any other lib/src include. A test that needs
// another internal adds it here, where the list stays short and reviewed.
#pragma once

// formats: plain file I/O (descriptors, element offsets, the preallocation
// switch) and the .npy header writer, tested below the Source/Sink interfaces.
#include "formats/npy.hpp"
#include "formats/plain_io.hpp"

// formats/codecs: the HDF5 filters' codecs and pipeline, tested against
// HDF5's own filters below the Source/Sink interfaces.
#include "formats/codecs/codec.hpp"
#include "formats/codecs/pipeline.hpp"
#include "formats/codecs/pool.hpp"

// inplace: the journal's protocol points, crash hook, checksum and test
// switches, which the crash and power-loss tests use; a rectangle's
// permutation groups, which a test checks against a model; the general
// rectangle's decomposition, run directly on R = kC shapes too.
#include "inplace/general.hpp"
#include "inplace/journal_detail.hpp"
#include "inplace/permute.hpp"

// engine/cpu: the CPU transposer's tuning knobs, which the tests sweep.
#include "engine/cpu/tuning.hpp"

// core: the copy teams and the CUDA engine's staged copies (team_read,
// team_write), which run only under CUDA and are tested here on the host.
#include "core/team.hpp"
// core: the streaming-store copy that stages pageable host memory.
#include "core/stream_copy.hpp"

// bench: the median every bench reports.
#include "bench/stats.hpp"

#if defined(__CUDACC__)
// bench (device): the position-pattern fill and verification kernels the
// bench and the device tests share (linked from gt_bench_device).
#include "bench/pattern_device.cuh"
#endif
