// Stage statistics shared by the engines: when each stage was busy (wall
// clock, however many threads or streams ran it), and the report a run
// starts from its plan and ends with its stages.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"

namespace gt {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Time during which at least one interval was open: a stage's wall-clock
// occupancy, however many threads or streams ran it.
class Intervals {
 public:
  void add(double a, double b) { v_.emplace_back(a, b); }
  double covered();

 private:
  std::vector<std::pair<double, double>> v_;
};

// A run's clock and its stages' intervals, safe to add to from any thread.
class StageClock {
 public:
  double now() const { return seconds_between(t0_, Clock::now()); }
  void add(Intervals& stage, double a, double b) {
    std::lock_guard<std::mutex> lk(mu_);
    stage.add(a, b);
  }
  // Runs fn and records its interval in `stage`.
  template <class F>
  void timed(Intervals& stage, F&& fn) {
    const double a = now();
    fn();
    add(stage, a, now());
  }
  std::mutex& mutex() { return mu_; }

 private:
  Clock::time_point t0_ = Clock::now();
  std::mutex mu_;
};

// A report filled from the plan: engine, kernel, mode, matrix, tiles,
// threads, budgets, the device buffers and the plan's notes.
RunReport start_report(const RunPlan& plan);
// Sets stage `name` to the time `iv` covered and `bytes`.
void set_stage(RunReport& r, const std::string& name, Intervals& iv, std::uint64_t bytes);
// The wall time, the busiest stage and how much of the wall it covered, and
// the process's peak memory.
void end_report(RunReport& r, double wall_s);

}  // namespace gt
