#include "mpi/comm.hpp"

#include <climits>

namespace gt::mpi {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorKind::io, std::string("MPI: ") + what + " failed: " + std::string(text, std::size_t(len)));
}

int count_of(std::size_t n) {
  if (n > std::size_t(INT_MAX)) throw Error(ErrorKind::internal, "an MPI message of more than 2 GiB");
  return int(n);
}

}  // namespace

Comm::Comm(MPI_Comm parent) {
  int init = 0, level = 0;
  MPI_Initialized(&init);
  if (!init) throw Error(ErrorKind::usage, "MPI is not initialised: call MPI_Init_thread before gt::mpi::run_job");
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_SERIALIZED)
    throw Error(ErrorKind::usage, "MPI was initialised without MPI_THREAD_SERIALIZED, which the MPI job needs "
                                  "(MPI_Init_thread with gt::mpi::kThreadLevel)");
  check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  int leader = local_rank_ == 0 ? 1 : 0;
  check(MPI_Allreduce(&leader, &nodes_, 1, MPI_INT, MPI_SUM, comm_), "MPI_Allreduce");
}

Comm::~Comm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::vector<int> Comm::allgather(int v) {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<int> all(std::size_t(size_), 0);
  check(MPI_Allgather(&v, 1, MPI_INT, all.data(), 1, MPI_INT, comm_), "MPI_Allgather");
  return all;
}

void Comm::bcast(std::string& s, int root) {
  std::lock_guard<std::mutex> lk(mu_);
  unsigned long long n = s.size();
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm_), "MPI_Bcast");
  s.resize(std::size_t(n));
  if (n) check(MPI_Bcast(s.data(), count_of(std::size_t(n)), MPI_CHAR, root, comm_), "MPI_Bcast");
}

std::vector<std::string> Comm::gather(const std::string& s, int root) {
  std::lock_guard<std::mutex> lk(mu_);
  int n = count_of(s.size());
  std::vector<int> sizes(std::size_t(size_), 0), offs(std::size_t(size_), 0);
  check(MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
  std::string all;
  if (rank_ == root) {
    std::size_t total = 0;
    for (int k = 0; k < size_; ++k) offs[std::size_t(k)] = count_of(total), total += std::size_t(sizes[std::size_t(k)]);
    all.resize(total);
  }
  check(MPI_Gatherv(s.data(), n, MPI_CHAR, all.data(), sizes.data(), offs.data(), MPI_CHAR, root, comm_), "MPI_Gatherv");
  std::vector<std::string> out;
  if (rank_ == root)
    for (int k = 0; k < size_; ++k) out.push_back(all.substr(std::size_t(offs[std::size_t(k)]), std::size_t(sizes[std::size_t(k)])));
  return out;
}

double Comm::max(double v) {
  std::lock_guard<std::mutex> lk(mu_);
  double out = v;
  check(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm_), "MPI_Allreduce");
  return out;
}

void Comm::send(int dest, int tag, const void* data, std::size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  check(MPI_Send(data, count_of(n), MPI_BYTE, dest, tag, comm_), "MPI_Send");
}

MPI_Request Comm::isend(int dest, int tag, const void* data, std::size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Isend(data, count_of(n), MPI_BYTE, dest, tag, comm_, &r), "MPI_Isend");
  return r;
}

bool Comm::probe(int source, int tag, int* from, std::size_t* n) {
  std::lock_guard<std::mutex> lk(mu_);
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(source, tag, comm_, &flag, &st), "MPI_Iprobe");
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  *from = st.MPI_SOURCE;
  *n = std::size_t(count);
  return true;
}

void Comm::recv(int source, int tag, void* data, std::size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  check(MPI_Recv(data, count_of(n), MPI_BYTE, source, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
}

void Comm::wait_all(std::vector<MPI_Request>& reqs) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!reqs.empty()) check(MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  reqs.clear();
}

}  // namespace gt::mpi
