// The MPI calls the job makes, behind one lock (MPI_THREAD_SERIALIZED: the
// engine's threads send chunks while the main thread polls), on a duplicate
// of the caller's communicator so no message of ours meets one of theirs.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"

namespace gt::mpi {

// Tags: a rank that failed tells every other (kTagFail); chunks and a
// rank's end go to rank 0 under one tag (kTagData), so they arrive in the
// order they were sent.
constexpr int kTagFail = 71;
constexpr int kTagData = 72;

class Comm {
 public:
  explicit Comm(MPI_Comm parent);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int nodes() const { return nodes_; }

  // Collectives (from the main thread, between the engine's runs).
  std::vector<int> allgather(int v);
  void bcast(std::string& s, int root);
  std::vector<std::string> gather(const std::string& s, int root);  // at root: every rank's, in rank order
  double max(double v);

  // Point to point, from any thread.
  void send(int dest, int tag, const void* data, std::size_t n);
  MPI_Request isend(int dest, int tag, const void* data, std::size_t n);
  // A message waiting from `source` (MPI_ANY_SOURCE) with `tag`: true and
  // its source and size; false when none is.
  bool probe(int source, int tag, int* from, std::size_t* n);
  void recv(int source, int tag, void* data, std::size_t n);
  void wait_all(std::vector<MPI_Request>& reqs);

 private:
  std::mutex mu_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;
};

}  // namespace gt::mpi
