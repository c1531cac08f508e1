// Process concerns that belong to programs, never to the library: what
// SIGINT, SIGTERM and SIGHUP do to a run in progress.
#pragma once
#include <string>

namespace gt::tool {

// SIGINT, SIGTERM and SIGHUP unlink every temporary output the library has
// registered (gt::remove_temp_files_signal_safe), write the interrupt message
// (if set) to stderr, and end the process by the same signal. A signal its
// parent set to be ignored (nohup, `trap '' HUP`) stays ignored. SIGXFSZ is
// ignored, so a write past a file-size limit fails with EFBIG and takes the
// ordinary error path (temporary removed, one line, exit 1) instead of
// killing the process. Throws gt::Error(internal) when a handler cannot be set.
void install_cleanup_handlers();
// The line the handler writes; copied into static storage (at most 511 bytes
// are kept). Empty: write nothing.
void set_interrupt_message(const std::string& message);

}  // namespace gt::tool
