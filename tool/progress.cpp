#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtranspose/sizes.hpp"

namespace gt::tool {

Progress::Progress(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO)) {}

void Progress::update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_ || total == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double f = double(done) / double(total);
  const double s = std::chrono::duration<double>(now - start_).count();
  const int width = 30, fill = int(f * width);
  std::fprintf(stderr, "\r[%s%s] %5.1f%% %s / %s, %.2f GB/s ", std::string(fill, '#').c_str(),
               std::string(width - fill, '.').c_str(), f * 100, format_bytes(done).c_str(),
               format_bytes(total).c_str(), s > 0 ? double(done) / s / 1e9 : 0.0);
  shown_ = true;
}

void Progress::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_) std::fprintf(stderr, "\r%80s\r", "");
  shown_ = false;
}

}  // namespace gt::tool
