#include "about.hpp"

#include <algorithm>
#include <sstream>

namespace gt::tool {

std::string version_text(const char* program, const BuildInfo& b) {
  std::ostringstream o;
  o << program << " " << b.version << " (" << (b.cuda_build ? "CUDA" : "CPU-only") << " build)\n";
  o << "  HDF5 " << b.hdf5 << "\n";
  if (b.cuda_build)
    o << "  CUDA runtime " << cuda_version_text(b.cuda_runtime) << ", driver supports CUDA "
      << (b.cuda_driver ? cuda_version_text(b.cuda_driver) : "none (no NVIDIA driver found)") << "\n";
  else
    o << "  CUDA: not built in (no nvcc at build time): the CPU engine only\n";
  o << "  codecs: " << b.codecs << "; other HDF5 filters through HDF5's own plugins\n";
  if (b.gpus > 0) o << "  GPU: " << b.gpus << " usable (" << b.gpu << "): --engine auto runs on it\n";
  else o << "  GPU: none usable: " << b.no_gpu_reason << "; --engine auto runs on the CPU\n";
  o << "  machine: " << b.machine << "\n";
  return o.str();
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string nearest_option(const std::string& given, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& k : known) {
    // A shortened name of exactly one option ("--dev" for "--device-mem").
    const std::size_t d = k.rfind(given, 0) == 0 && given.size() > 3 ? 1 : edit_distance(given, k);
    if (d < best_d) best_d = d, best = k;
  }
  const std::size_t letters = given.size() > 2 ? given.size() - 2 : 0;
  return best_d <= std::min<std::size_t>(3, std::max<std::size_t>(1, letters / 3)) ? best : "";
}

std::string did_you_mean(int argc, const char* const* argv, const std::vector<std::string>& known) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string near = nearest_option(name, known);
    return near.empty() ? "" : " (did you mean " + near + "?)";
  }
  return "";
}

}  // namespace gt::tool
