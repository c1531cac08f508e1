// A progress line on stderr, only on a terminal, only once a job has run for
// a second, at most ten updates a second, cleared when done.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

namespace gt::tool {

class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(std::uint64_t done, std::uint64_t total);
  void clear();

 private:
  bool enabled_;
  bool shown_ = false;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

}  // namespace gt::tool
