// What this build of gtranspose is and what it found at run time: the
// CLI's --version, and a program's way to ask the same.
#pragma once
#include <string>

namespace gt {

struct BuildInfo {
  std::string version;       // the library's (GT_VERSION_STRING)
  bool cuda_build = false;   // built with nvcc: the CUDA engine exists
  std::string hdf5;          // the HDF5 library running: "1.10.8"
  int cuda_runtime = 0;      // 1000*major + 10*minor; 0: none
  int cuda_driver = 0;       // the newest CUDA the driver supports; 0: no driver
  std::string codecs;        // the HDF5 filters with codecs of our own: "deflate (libdeflate), shuffle, ..."
  int gpus = 0;              // usable CUDA devices
  std::string gpu;           // the first one's name
  std::string no_gpu_reason; // why none is usable (gpus == 0)
  std::string machine;       // the cores and RAM a run may use, and what narrowed them (machine.hpp)
};
// Asks the CUDA runtime (where built with it) for the devices: the first call
// starts it, which takes a moment.
[[nodiscard]] BuildInfo build_info();

// "12.4" from 12040; "none" from 0.
std::string cuda_version_text(int v);

}  // namespace gt
