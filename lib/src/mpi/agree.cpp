#include "mpi/agree.hpp"

#include <new>

namespace gt::mpi {

Outcome attempt(const std::function<void()>& f) {
  try {
    f();
    return {};
  } catch (const Error& e) {
    return {e.kind() == ErrorKind::cancelled ? Outcome::cancelled : Outcome::failed, e.kind(), e.message()};
  } catch (const std::bad_alloc&) {
    return {Outcome::failed, ErrorKind::io, "out of host memory: lower {host_mem} or run fewer ranks per node"};
  } catch (const std::exception& e) {
    return {Outcome::failed, ErrorKind::internal, e.what()};
  }
}

void settle(Comm& c, const Outcome& mine, bool notified, int fails_received, std::vector<MPI_Request>* sent) {
  const std::vector<int> all = c.allgather(mine.code * 2 + (notified ? 1 : 0));
  // The failure notices addressed to this rank that are still in flight.
  int expected = 0;
  for (int k = 0; k < c.size(); ++k)
    if (k != c.rank() && (all[std::size_t(k)] & 1)) ++expected;
  for (char b = 0; fails_received < expected; ++fails_received) c.recv(MPI_ANY_SOURCE, kTagFail, &b, 1);
  if (sent) c.wait_all(*sent);

  int who = -1;
  for (int code : {Outcome::failed, Outcome::cancelled, Outcome::stopped}) {
    for (int k = 0; k < c.size() && who < 0; ++k)
      if (all[std::size_t(k)] / 2 == code) who = k;
    if (who >= 0) break;
  }
  if (who < 0) return;
  std::string text = who == c.rank() ? std::to_string(int(mine.kind)) + "\n" + mine.message : std::string();
  c.bcast(text, who);
  const std::size_t nl = text.find('\n');
  const ErrorKind kind = ErrorKind(std::stoi(text.substr(0, nl)));
  std::string message = text.substr(nl + 1);
  if (all[std::size_t(who)] / 2 == Outcome::stopped) message = "stopped: another rank failed";
  if (c.size() > 1) message = "rank " + std::to_string(who) + " of " + std::to_string(c.size()) + ": " + message;
  throw Error(kind, message);
}

}  // namespace gt::mpi
