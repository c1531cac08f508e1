// Finding the dataset to transpose in an HDF5 file: the one named, or the
// file's only 2-D one; otherwise a message that lists the candidates.
#include <algorithm>
#include <string>
#include <vector>

#include "formats/hdf5/hdf5_internal.hpp"

namespace gt::fmt::h5 {
namespace {

struct Candidate {
  std::string path;
  int rank = 0;
};

struct Visit {
  std::vector<Candidate> found;
  std::vector<haddr_t> seen;  // a dataset under several hard links is one dataset
  CallbackError err;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* v = static_cast<Visit*>(data);
  return guarded(v->err, [&]() -> herr_t {
    if (info->type != H5L_TYPE_HARD) return 0;
    Hid obj(H5Oopen(group, name, H5P_DEFAULT));
    if (!obj || H5Iget_type(obj.get()) != H5I_DATASET) return 0;
    H5O_info_t oi{};
    if (H5Oget_info(obj.get(), &oi) >= 0) {
      if (std::find(v->seen.begin(), v->seen.end(), oi.addr) != v->seen.end()) return 0;
      v->seen.push_back(oi.addr);
    }
    Hid space(H5Dget_space(obj.get()));
    v->found.push_back({std::string("/") + name, space ? H5Sget_simple_extent_ndims(space.get()) : -1});
    return 0;
  });
}

std::vector<Candidate> all_datasets(hid_t file) {
  Visit v;
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &v);
  H5Eclear2(H5E_DEFAULT);
  v.err.rethrow();
  return std::move(v.found);
}

std::string list_of(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 8;
  std::string s;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > kShown) s += ", ... (" + std::to_string(names.size() - kShown) + " more)";
  return s;
}

std::vector<std::string> two_d(const std::vector<Candidate>& all) {
  std::vector<std::string> r;
  for (const auto& c : all)
    if (c.rank == 2) r.push_back(c.path);
  return r;
}

}  // namespace

Hid open_dataset(hid_t file, Location& loc) {
  if (loc.dataset.empty()) {
    auto all = all_datasets(file);
    auto names = two_d(all);
    if (names.size() == 1) {
      loc.dataset = names[0];
    } else if (names.empty()) {
      std::string others;
      for (const auto& c : all) others += (others.empty() ? "" : ", ") + c.path + " " + std::to_string(c.rank) + "-D";
      throw Error(ErrorKind::input, loc.path + " holds no 2-D dataset" +
                                        (others.empty() ? std::string(" (it holds no dataset at all)")
                                                        : " (found " + others + ")") +
                                        ": gtranspose needs a 2-D matrix");
    } else {
      throw Error(ErrorKind::input, loc.path + " holds " + std::to_string(names.size()) + " 2-D datasets (" +
                                        list_of(names) + "): name one as " + loc.path + ":" + names[0]);
    }
  }
  Hid o(H5Oopen(file, loc.dataset.c_str(), H5P_DEFAULT));
  if (!o) {
    const std::string reason = h5_reason();
    // A name that is there but does not open is damage, not a wrong name.
    auto names = two_d(all_datasets(file));
    H5L_info_t li{};
    const bool hard = link_exists(file, loc.dataset) &&
                      H5Lget_info(file, loc.dataset.c_str(), &li, H5P_DEFAULT) >= 0 && li.type == H5L_TYPE_HARD;
    H5Eclear2(H5E_DEFAULT);
    if (hard || std::find(names.begin(), names.end(), loc.dataset) != names.end())
      throw Error(ErrorKind::input, loc.path + " is damaged: " + loc.dataset + " is named in it but cannot be opened (" +
                                        reason + "); check the file, or copy it again");
    throw Error(ErrorKind::input, loc.path + " has no dataset " + loc.dataset +
                                      (names.empty() ? std::string("; it holds no 2-D dataset")
                                                     : "; its 2-D datasets: " + list_of(names) + " (name one as " +
                                                           loc.path + ":" + names[0] + ")"));
  }
  if (H5Iget_type(o.get()) != H5I_DATASET) {
    auto names = two_d(all_datasets(file));
    throw Error(ErrorKind::input, loc.dataset + " in " + loc.path + " is a group, not a dataset" +
                                      (names.empty() ? std::string() : "; its 2-D datasets: " + list_of(names)));
  }
  return o;
}

// The 2-D datasets of an open file (storage.cpp lists them for completion).
std::vector<std::string> two_d_datasets(hid_t file) { return two_d(all_datasets(file)); }

}  // namespace gt::fmt::h5
