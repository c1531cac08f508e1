// How the ranks agree: every step ends with each rank's outcome gathered on
// all of them; a failure anywhere becomes the same gt::Error on every rank,
// with the message of the rank that failed first in rank order (a genuine
// error before a cancel, a cancel before a rank that only stopped because
// another failed), naming that rank.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"
#include "mpi/comm.hpp"

namespace gt::mpi {

struct Outcome {
  enum Code { ok = 0, stopped = 1, cancelled = 2, failed = 3 };  // stopped: because another rank failed
  int code = ok;
  ErrorKind kind = ErrorKind::internal;
  std::string message;
};

// Runs f, turning what it throws into an Outcome.
Outcome attempt(const std::function<void()>& f);

// Collective. `notified`: this rank told every other that it failed
// (kTagFail, requests in `sent`); `fails_received` of those notices from the
// others arrived already: the rest are received here, so none is left
// unmatched. Returns when every rank succeeded; throws the agreed error otherwise.
void settle(Comm& c, const Outcome& mine, bool notified = false, int fails_received = 0,
            std::vector<MPI_Request>* sent = nullptr);

// Runs f on every rank and settles (for the steps before and after the run).
inline void agreed(Comm& c, const std::function<void()>& f) { settle(c, attempt(f)); }

}  // namespace gt::mpi
