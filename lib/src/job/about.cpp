// What this build is (about.hpp): the pieces each layer knows, together.
#include "gtranspose/about.hpp"

#include "formats/codecs/codec.hpp"
#include "formats/internal.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/version.hpp"

namespace gt {

std::string cuda_version_text(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

BuildInfo build_info() {
  BuildInfo b;
  b.version = library_version();
  b.cuda_build = built_with_cuda();
  b.hdf5 = fmt::hdf5_version();
  b.cuda_runtime = cuda_runtime_version();
  b.cuda_driver = cuda_driver_version();
  b.codecs = codecs::available_codecs();
  b.gpus = cuda_device_count(&b.no_gpu_reason);
  if (b.gpus > 0) b.gpu = cuda_device_name(0);
  b.machine = machine_text();
  return b;
}

}  // namespace gt
