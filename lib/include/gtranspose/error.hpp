// Errors the library throws. The library never prints or exits: it throws
// gt::Error with a one-line message a user can act on, and the CLI maps the
// kind to an exit code (2 for usage errors, 1 for everything else).
#pragma once
#include <stdexcept>
#include <string>

namespace gt {

enum class ErrorKind {
  usage,      // the command line asks for something impossible (exit 2)
  input,      // the input is missing, unreadable or malformed (exit 1)
  output,     // the output cannot be created or written (exit 1)
  io,         // a read or write failed midway (exit 1)
  no_device,  // --engine cuda with no usable GPU (exit 1)
  cuda,       // a CUDA call failed (exit 1)
  cancelled,  // SIGINT/SIGTERM arrived (exit 1)
  internal,   // a bug: an invariant broke (exit 1)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  int exit_code() const noexcept { return kind_ == ErrorKind::usage ? 2 : 1; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void throw_errno(ErrorKind kind, const std::string& what);  // appends strerror(errno)

}  // namespace gt
