// Errors the library throws. The library never prints or exits: it throws
// gt::Error with a one-line message a user can act on, and the program that
// called it maps the kind to an exit code (the CLI: 2 for usage errors, 1 for
// everything else).
//
// A message names the parameters a caller can change as {name}: {host_mem},
// {device_mem}, {tile}, {threads}, {streams}, {kernel}, {engine}, {shape},
// {dtype}, {force}, {in_place}, {resume}, {format}, and the benches' {seed},
// {reps}, {warmup}, {host_modes}, {sweep}; a program's own {json}. what() spells them the library's way
// (host_mem, the field of RunOptions); a program spells them its own way with
// render(): the CLI as its flags (--host-mem), a binding as its keywords. So
// the library's messages never name a command-line flag.
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gt {

enum class ErrorKind {
  usage,      // the request asks for something impossible (CLI exit 2)
  input,      // the input is missing, unreadable or malformed (exit 1)
  output,     // the output cannot be created or written (exit 1)
  io,         // a read or write failed midway (exit 1)
  no_device,  // the CUDA engine was asked for with no usable GPU (exit 1)
  cuda,       // a CUDA call failed (exit 1)
  cancelled,  // the caller's cancel flag was raised (exit 1)
  internal,   // a bug: an invariant broke (exit 1)
};

// Spells a parameter name ("host_mem") for a reader.
using ParamSpeller = std::function<std::string(std::string_view name)>;

// The parameters a message may name.
inline bool is_param_name(std::string_view n) {
  for (std::string_view p : {"host_mem", "device_mem", "tile", "threads", "streams", "kernel", "engine", "shape",
                             "dtype", "force", "in_place", "resume", "seed", "reps", "warmup", "host_modes", "format",
                             "sweep", "json"})
    if (n == p) return true;
  return false;
}

// Replaces every {name} of a known parameter in `message` with spell(name);
// anything else in braces (a path, say) is left as it is. Header-only, like
// Error itself, so the kernel library needs nothing else of lib/.
[[nodiscard]] inline std::string render_params(const std::string& message, const ParamSpeller& spell) {
  std::string out;
  out.reserve(message.size());
  std::size_t i = 0;
  while (i < message.size()) {
    const std::size_t open = message.find('{', i);
    if (open == std::string::npos) break;
    const std::size_t close = message.find('}', open + 1);
    if (close == std::string::npos) break;
    const std::string_view name(message.data() + open + 1, close - open - 1);
    out.append(message, i, open - i);
    if (is_param_name(name)) {
      out += spell ? spell(name) : std::string(name);
    } else {
      out.append(message, open, close - open + 1);
    }
    i = close + 1;
  }
  out.append(message, i, std::string::npos);
  return out;
}

class Error : public std::runtime_error {
 public:
  // sys_errno: the errno of the system call that failed (throw_errno sets
  // it), so a binding can raise its language's own error for it (Python's
  // FileNotFoundError for ENOENT); 0 when no system call is to blame.
  Error(ErrorKind kind, const std::string& message, int sys_errno = 0)
      : std::runtime_error(render_params(message, nullptr)), kind_(kind), message_(message), errno_(sys_errno) {}
  ErrorKind kind() const noexcept { return kind_; }
  int sys_errno() const noexcept { return errno_; }
  int exit_code() const noexcept { return kind_ == ErrorKind::usage ? 2 : 1; }
  // The message with its {name} placeholders, to build a longer one from.
  const std::string& message() const noexcept { return message_; }
  // The message with every parameter spelled by `spell`.
  std::string render(const ParamSpeller& spell) const { return render_params(message_, spell); }

 private:
  ErrorKind kind_;
  std::string message_;
  int errno_ = 0;
};

[[noreturn]] void throw_errno(ErrorKind kind, const std::string& what);  // appends strerror(errno), keeps errno

}  // namespace gt
