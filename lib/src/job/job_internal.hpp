// What the job (job.cpp) and the dry run (preview.cpp) share.
#pragma once
#include "gtranspose/job.hpp"

namespace gt {

// A dry run's time estimate for `plan` (estimate.cpp): sets
// plan.estimate_s and plan.estimate_basis from rates measured here and now
// where they can be (reading `input_path`, the CPU transposer) and the
// project's measured constants where not (the GPU, codecs, writing).
void estimate_time(PlanSummary& plan, const std::string& input_path, std::uint64_t matrix_bytes,
                   std::size_t elem_size, bool filtered_in, bool filtered_out);

}  // namespace gt
