// A progress line on stderr: only on a terminal, only once a job has run
// for a second, at most ten updates a second. Each update rewrites the one
// line in place ("\r", the text, erase to the end of the line), fitted to
// the terminal's width at that moment so it never wraps: the bar, the bytes,
// the rate and the stage's name drop out in that order as the width
// shrinks. The rate and ETA are the current stage's (a stage's bytes count
// from zero). Cleared when done.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace gt::tool {

class Progress {
 public:
  explicit Progress(bool enabled);
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(std::uint64_t done, std::uint64_t total);
  // The job entered a stage (RunOptions::stage): its name leads the line,
  // the rate restarts, and a stage without bytes (the final sync) shows its
  // name alone at once, so a long fsync is not a frozen 100% bar.
  void stage(const std::string& name);
  void clear();

  // The line for `done` of `total` after `seconds` in stage `stage`, at most
  // `width` columns (the terminal's width less one): what update() prints,
  // for tests.
  static std::string line(std::uint64_t done, std::uint64_t total, double seconds, unsigned width,
                          const std::string& stage = "");

 private:
  bool enabled_;
  // Tests only (tests/tools/progress_tmux.sh): GT_TEST_PROGRESS_DELAY_MS
  // makes every update wait that long, so that a small run lasts long
  // enough for the bar to be drawn and redrawn under a pseudo-terminal.
  int test_delay_ms_ = 0;
  bool shown_ = false;
  std::mutex mu_;
  std::string stage_;
  // start_: the job's (nothing is drawn in its first second); stage_start_:
  // the current stage's, for its rate and ETA.
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), stage_start_ = start_, last_{};
  void draw(const std::string& text);
};

}  // namespace gt::tool
