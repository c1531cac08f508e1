#include "engine/cuda/ring.hpp"

namespace gt::cuda {

void Ring::add_slot(int s) {
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(s);
  cv_.notify_all();
}

bool Ring::take(int& slot, std::uint64_t& item) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return abort_ || next_read_ >= items_ || !free_.empty(); });
  if (abort_ || next_read_ >= items_) return false;
  slot = free_.front();
  free_.pop_front();
  item = next_read_++;
  return true;
}

void Ring::queued(std::uint64_t item, int slot) {
  std::lock_guard<std::mutex> lk(mu_);
  ready_[item] = slot;
  cv_.notify_all();
}

bool Ring::next(std::uint64_t& item, int& slot) {
  std::unique_lock<std::mutex> lk(mu_);
  if (abort_ || next_write_ >= items_) return false;
  item = next_write_++;
  cv_.wait(lk, [&] { return abort_ || ready_.count(item) != 0; });
  if (abort_) return false;
  slot = ready_[item];
  ready_.erase(item);
  return true;
}

int Ring::peek() {
  std::lock_guard<std::mutex> lk(mu_);
  if (abort_ || next_write_ >= items_) return -1;
  auto it = ready_.find(next_write_);
  return it == ready_.end() ? -1 : it->second;
}

std::uint64_t Ring::take_peeked() {
  std::lock_guard<std::mutex> lk(mu_);
  ready_.erase(next_write_);
  return next_write_++;
}

void Ring::release(int slot) {
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(slot);
  cv_.notify_all();
}

void Ring::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!error_) error_ = e;
  abort_ = true;
  cv_.notify_all();
}

bool Ring::aborted() {
  std::lock_guard<std::mutex> lk(mu_);
  return abort_;
}

std::exception_ptr Ring::error() {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

}  // namespace gt::cuda
