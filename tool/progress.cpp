#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "gtranspose/sizes.hpp"

namespace gt::tool {

namespace {

// The terminal's width in columns (80 when it cannot be asked).
unsigned terminal_width() {
  struct winsize ws {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

std::string duration_text(double s) {
  if (!(s >= 0) || s > 360000) return "?";
  const long t = long(std::lround(s));
  char b[32];
  if (t >= 3600) std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  else if (t >= 60) std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(b, sizeof b, "%lds", t);
  return b;
}

}  // namespace

std::string Progress::line(std::uint64_t done, std::uint64_t total, double seconds, unsigned width,
                           const std::string& stage) {
  const double f = total ? double(done) / double(total) : 0;
  const double rate = seconds > 0 ? double(done) / seconds : 0;  // bytes per second
  char pct[16], gbps[32];
  std::snprintf(pct, sizeof pct, "%5.1f%%", f * 100);
  std::snprintf(gbps, sizeof gbps, "%.2f GB/s", rate / 1e9);
  const std::string eta = "ETA " + (rate > 0 ? duration_text(double(total - done) / rate) : std::string("?"));
  const std::string bytes = format_bytes(done) + " / " + format_bytes(total);
  const std::string lead = stage.empty() ? std::string() : stage + ": ";
  // The widest form that fits, then narrower ones; the stage's name goes
  // last of all but the percentage and the ETA.
  const std::string tail_full = std::string(pct) + " " + bytes + ", " + gbps + ", " + eta;
  const std::string tail_mid = std::string(pct) + ", " + gbps + ", " + eta;
  const std::string tail_min = std::string(pct) + " " + eta;
  for (const std::string* tail : {&tail_full, &tail_mid}) {
    // A bar of at least 10 cells is worth showing.
    if (lead.size() + tail->size() + 13 <= width) {
      const unsigned cells = std::min<unsigned>(30, unsigned(width - lead.size() - tail->size() - 3));
      const unsigned fill = unsigned(f * cells);
      return lead + "[" + std::string(fill, '#') + std::string(cells - fill, '.') + "] " + *tail;
    }
  }
  for (const std::string* tail : {&tail_full, &tail_mid, &tail_min})
    if (lead.size() + tail->size() <= width) return lead + *tail;
  for (const std::string* tail : {&tail_mid, &tail_min})
    if (tail->size() <= width) return *tail;
  return std::string(pct).substr(0, width);
}

Progress::Progress(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO)) {
  if (const char* d = std::getenv("GT_TEST_PROGRESS_DELAY_MS")) test_delay_ms_ = std::atoi(d);
}

void Progress::update(std::uint64_t done, std::uint64_t total) {
  if (test_delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(test_delay_ms_));
  if (!enabled_ || total == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double s = std::chrono::duration<double>(now - stage_start_).count();
  const unsigned w = terminal_width();
  // One column short of the width: a line that fills the last column makes
  // some terminals wrap before the next \r.
  draw(line(done, total, s, w > 1 ? w - 1 : 1, stage_));
}

void Progress::stage(const std::string& name) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  stage_ = name;
  const auto now = std::chrono::steady_clock::now();
  stage_start_ = now;
  // Drawn at once only once the job has shown a line (a short job stays
  // silent); the next update() redraws it with the stage's bytes.
  if (!shown_ && now - start_ < std::chrono::seconds(1)) return;
  const unsigned w = terminal_width();
  const std::string text = name + " ...";
  draw(text.substr(0, w > 1 ? w - 1 : 1));
}

void Progress::draw(const std::string& text) {
  std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shown_) {
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }
  shown_ = false;
}

}  // namespace gt::tool
