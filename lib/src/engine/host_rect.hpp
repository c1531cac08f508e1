// A rectangle in a program's host memory, of a shape the engines' stages do
// not take (job/host.cpp sends it to the gcd decomposition on the CPU),
// transposed in place through the GPU instead where the device budget holds
// it whole: one copy to device memory, `inplace-rect` there, one copy back
// (a pageable array's copies staged through pinned slots on several threads:
// host_rect.cu).
// The host array is written only by the copy back, after the kernel ran.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/report.hpp"

namespace gt::cuda {

struct HostRectRun {
  std::vector<StageStat> stages;   // "allocate", "h2d", "kernel", "d2h"
  std::uint64_t device_budget = 0;  // the budget it was held to
  std::uint64_t device_bytes = 0;   // the matrix's copy and inplace-rect's most (kernels::inplace_rect_device_bytes)
  int copy_threads = 0;             // threads the copies staged through (0: the driver's copy)
  std::uint64_t pinned_bytes = 0;   // pinned staging the copies held at most
};

// Runs it and returns true; false, with why, where no GPU is usable or
// {device_mem} (0: the default budget of the device's free memory) does not
// hold the matrix and inplace-rect's most beside it. Throws gt::Error(cuda)
// where a copy or the kernel fails after it began; a failure of the copy
// back says the array may hold part of the transpose. `cancel` (may be
// null) is looked at before each stage up to the copy back: raised, it
// throws gt::Error(cancelled) with the array unchanged; the copy back, once
// begun, runs to its end. `host_mem` (the run's host budget, resolved)
// bounds the pinned staging: as many 8 MiB slots as it holds, up to 8; none,
// the driver's copy.
bool host_rect_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                       std::uint64_t device_mem, std::uint64_t host_mem, const std::atomic<bool>* cancel,
                       HostRectRun& run, std::string* why);

}  // namespace gt::cuda
