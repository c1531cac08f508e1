// Temporary outputs: written under a temporary name beside the final one,
// renamed only when complete, removed on failure and on SIGINT/SIGTERM.
#pragma once
#include <string>

namespace gt {

// Owns a temporary path "<dir>/.<name>.gt-tmp-<pid>-<n>" beside `final_path`.
// The path is registered so that remove_temp_files_signal_safe() can unlink
// it from a signal handler. The destructor unlinks the file unless commit()
// renamed it.
class TempPath {
 public:
  explicit TempPath(const std::string& final_path);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::string& path() const { return tmp_; }
  const std::string& final_path() const { return final_; }
  // rename(tmp, final) and fsync of the folder; throws gt::Error(output).
  void commit();
  bool committed() const { return committed_; }

 private:
  std::string final_;
  std::string tmp_;
  int slot_ = -1;
  bool committed_ = false;
};

// Unlinks every registered temporary file. Async-signal-safe: only unlink(2)
// on preallocated storage.
void remove_temp_files_signal_safe() noexcept;

// For programs (the CLI, gt-gen): SIGINT, SIGTERM and SIGHUP unlink every
// registered temporary file, write the interrupt message (if set) to stderr,
// and end the process by the same signal. A signal its parent set to be
// ignored (nohup, `trap '' HUP`) stays ignored. SIGXFSZ is ignored, so a
// write past a file-size limit fails with EFBIG and takes the ordinary error
// path (temporary removed, one line, exit 1) instead of killing the process.
void install_cleanup_handlers();
// The line the handler writes; copied into static storage (at most 511 bytes
// are kept). Empty: write nothing.
void set_interrupt_message(const std::string& message);

}  // namespace gt
