#include "runner.hpp"

#include "errors.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace py = pybind11;

namespace gtpy {
namespace {

// How often the waiting thread looks at signals and progress: Ctrl-C is
// noticed within this, and a progress callable is called at most this often.
constexpr std::chrono::milliseconds kPoll{100};

// What the worker and the waiting thread share.
struct Shared {
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;     // the work returned or threw
  bool moved = false;        // progress since the waiting thread last looked
  std::uint64_t done = 0, total = 0;
};

// Joins the worker however the waiting thread leaves (an exception between
// the polls included), after asking it to stop.
class Worker {
 public:
  Worker(std::atomic<bool>& cancel) : cancel_(cancel) {}
  ~Worker() {
    if (!t_.joinable()) return;
    cancel_ = true;
    py::gil_scoped_release nogil;
    t_.join();
  }
  template <class F>
  void start(F&& f) {
    py::gil_scoped_release nogil;
    t_ = std::thread(std::forward<F>(f));
  }

 private:
  std::atomic<bool>& cancel_;
  std::thread t_;
};

// A run stopped by a Python exception still has the library's word on what
// it left (an in-place file partly transposed, and how to finish it): that
// goes on the exception as a note (Python 3.11+), shown with its traceback.
void add_library_note(py::error_already_set& python_failure, const std::exception_ptr& failure) {
  if (!failure) return;
  std::string note;
  try {
    std::rethrow_exception(failure);
  } catch (const gt::Error& e) {
    note = e.render(python_spelling);
  } catch (...) {
    return;
  }
  if (note == "interrupted" || !py::hasattr(python_failure.value(), "add_note")) return;
  python_failure.value().attr("add_note")(note);
}

}  // namespace

gt::RunReport run_released(const std::function<gt::RunReport(const gt::RunOptions&)>& work, gt::RunOptions opts,
                           const py::object& progress) {
  Shared s;
  std::atomic<bool> cancel{false};
  opts.cancel = &cancel;
  opts.progress = [&s](std::uint64_t done, std::uint64_t total) {
    std::lock_guard<std::mutex> lk(s.m);
    s.done = done;
    s.total = total;
    s.moved = true;
  };
  gt::RunReport report;
  std::exception_ptr failure;
  std::optional<py::error_already_set> python_failure;
  const bool report_progress = !progress.is_none();
  {
    Worker worker(cancel);
    worker.start([&] {
      try {
        report = work(opts);
      } catch (...) {
        failure = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(s.m);
        s.finished = true;
      }
      s.cv.notify_one();
    });
    for (;;) {
      bool finished = false, moved = false;
      std::uint64_t done = 0, total = 0;
      {
        py::gil_scoped_release nogil;
        std::unique_lock<std::mutex> lk(s.m);
        s.cv.wait_for(lk, kPoll, [&] { return s.finished; });
        finished = s.finished;
        moved = s.moved;
        done = s.done;
        total = s.total;
        s.moved = false;
      }
      if (!python_failure) {
        try {
          // Once the work is done a signal is Python's to deliver as usual:
          // cancelling has nothing left to stop.
          if (!finished && PyErr_CheckSignals() != 0) throw py::error_already_set();
          if (moved && report_progress) progress(done, total);
        } catch (py::error_already_set& e) {
          python_failure.emplace(std::move(e));
          cancel = true;
        }
      }
      if (finished) break;
    }
  }  // joined
  if (python_failure) {
    add_library_note(*python_failure, failure);
    throw std::move(*python_failure);
  }
  if (failure) std::rethrow_exception(failure);
  return report;
}

}  // namespace gtpy
