#include "signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "gtranspose/error.hpp"
#include "gtranspose/tempfile.hpp"

namespace gt::tool {

namespace {

char g_message[512];
std::atomic<std::size_t> g_message_len{0};

extern "C" void on_cleanup_signal(int sig) {
  gt::remove_temp_files_signal_safe();
  const std::size_t n = g_message_len.load();
  if (n) {
    const ssize_t ignored = ::write(STDERR_FILENO, g_message, n);
    (void)ignored;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void set_interrupt_message(const std::string& message) {
  g_message_len.store(0);
  // Room is kept for the newline the line must end with.
  std::size_t n = std::min(message.size(), sizeof g_message - 1);
  std::memcpy(g_message, message.data(), n);
  if (n && g_message[n - 1] != '\n') g_message[n++] = '\n';
  g_message_len.store(n);
}

void install_cleanup_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) throw_errno(ErrorKind::internal, "cannot read a signal's disposition");
    if (old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_cleanup_signal;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(sig, &sa, nullptr) != 0) throw_errno(ErrorKind::internal, "cannot install a signal handler");
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  if (::sigaction(SIGXFSZ, &ign, nullptr) != 0) throw_errno(ErrorKind::internal, "cannot ignore SIGXFSZ");
}

}  // namespace gt::tool
