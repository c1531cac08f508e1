// What follows the axes from an input dataset to its transpose: its
// attributes (the per-axis ones swapped), its dimension scales (H5DS),
// netCDF-4's dimension bookkeeping, and for a new file the input file's
// global attributes.
//
// netCDF-4 keeps a dimension as a dimension-scale dataset (CLASS, NAME,
// _Netcdf4Dimid) and a variable's dimensions twice: DIMENSION_LIST (object
// references to the scales, per axis) and _Netcdf4Coordinates (the
// dimension ids, per axis). Both are swapped here, as are H5DS's
// DIMENSION_LABELS, so ncdump, netCDF4-python, xarray and h5py read the
// transposed variable with its dimensions swapped.
#include <hdf5_hl.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/hdf5/hdf5_internal.hpp"

namespace gt::fmt::h5 {
namespace {

// Attributes that hold one value per axis of their dataset.
bool per_axis(const char* name) {
  return std::strcmp(name, "DIMENSION_LABELS") == 0 || std::strcmp(name, "_Netcdf4Coordinates") == 0;
}

struct AttrCopy {
  hid_t dst;
  std::string what;
  bool swap_axes;
  CallbackError err;
};

herr_t copy_one_attribute(hid_t src, const char* name, AttrCopy* ctx) {
  Hid a = check(H5Aopen(src, name, H5P_DEFAULT), ErrorKind::output, std::string("cannot open attribute ") + name);
  Hid t = check(H5Aget_type(a.get()), ErrorKind::output, std::string("cannot read the type of attribute ") + name);
  // Object references (DIMENSION_LIST, REFERENCE_LIST) point into the
  // source file; copied as bytes they would point at garbage in the new
  // one. attach_scales makes them anew.
  if (H5Tdetect_class(t.get(), H5T_REFERENCE) > 0) return 0;
  Hid tc(H5Tcopy(t.get()));  // a transient copy: a committed type of the source file cannot cross files
  // Fixed-size values move as the file's bytes. Variable-length ones are
  // read through their native memory type: the file type's copy as the
  // memory type makes HDF5 1.10 decode heap addresses it has no file for
  // (a SIGSEGV on a damaged file; h5py meets the same).
  const bool vlen = H5Tdetect_class(tc.get(), H5T_VLEN) > 0 || H5Tis_variable_str(tc.get()) > 0;
  Hid mem(vlen ? H5Tget_native_type(tc.get(), H5T_DIR_DEFAULT) : H5Tcopy(tc.get()));
  if (!mem) fail(ErrorKind::output, std::string("cannot read the type of attribute ") + name);
  Hid s = check(H5Aget_space(a.get()), ErrorKind::output, std::string("cannot read the shape of attribute ") + name);
  hssize_t n = H5Sget_select_npoints(s.get());
  const std::size_t esize = H5Tget_size(mem.get());
  std::vector<unsigned char> buf(std::max<std::size_t>(1, std::size_t(n < 0 ? 0 : n) * esize));
  if (n > 0 && H5Aread(a.get(), mem.get(), buf.data()) < 0)
    fail(ErrorKind::output, std::string("cannot read attribute ") + name + " of the source");
  // One value per axis, in axis order: the transpose has them the other way.
  if (ctx->swap_axes && n == 2 && H5Sget_simple_extent_ndims(s.get()) == 1 && per_axis(name))
    std::swap_ranges(buf.begin(), buf.begin() + std::ptrdiff_t(esize), buf.begin() + std::ptrdiff_t(esize));
  Hid out = check(H5Acreate2(ctx->dst, name, tc.get(), s.get(), H5P_DEFAULT, H5P_DEFAULT), ErrorKind::output,
                  std::string("cannot create attribute ") + name + " in " + ctx->what);
  herr_t rc = n > 0 ? H5Awrite(out.get(), mem.get(), buf.data()) : 0;
  if (n > 0 && vlen) H5Dvlen_reclaim(mem.get(), s.get(), H5P_DEFAULT, buf.data());
  if (rc < 0) fail(ErrorKind::output, std::string("cannot write attribute ") + name + " in " + ctx->what);
  return 0;
}

herr_t copy_attribute(hid_t src, const char* name, const H5A_info_t*, void* data) {
  auto* ctx = static_cast<AttrCopy*>(data);
  return guarded(ctx->err, [&] { return copy_one_attribute(src, name, ctx); });
}

// HDF5 1.10's dimension-scale library trusts the attributes it reads: a
// damaged CLASS or DIMENSION_LIST makes it overflow a buffer or free one
// twice (H5DSis_scale). So what it would read is checked here first, and
// DIMENSION_LIST is read here, not through it.

// Whether `obj` is a dimension scale: a CLASS attribute that is a scalar,
// fixed-size, null-terminated string reading "DIMENSION_SCALE". `sound`
// turns false for a CLASS attribute of any other form.
bool is_scale(hid_t obj, bool* sound) {
  *sound = true;
  if (H5Aexists(obj, "CLASS") <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  *sound = false;
  Hid a(H5Aopen(obj, "CLASS", H5P_DEFAULT));
  Hid t(a ? H5Aget_type(a.get()) : H5I_INVALID_HID);
  Hid sp(a ? H5Aget_space(a.get()) : H5I_INVALID_HID);
  bool scale = false;
  if (t && sp && H5Tget_class(t.get()) == H5T_STRING && H5Tis_variable_str(t.get()) == 0 &&
      H5Tget_strpad(t.get()) == H5T_STR_NULLTERM && H5Sget_simple_extent_type(sp.get()) == H5S_SCALAR) {
    const std::size_t n = H5Tget_size(t.get());
    if (n > 0 && n <= 256 && H5Aget_storage_size(a.get()) == n) {
      std::vector<char> buf(n + 1, 0);
      if (H5Aread(a.get(), t.get(), buf.data()) >= 0) {
        *sound = true;
        scale = std::string(buf.data()) == "DIMENSION_SCALE";
      }
    }
  }
  H5Eclear2(H5E_DEFAULT);
  return scale;
}

// The paths of the scales attached to each axis of 2-D `dset`, read from
// its DIMENSION_LIST (a 2-element array of variable-length lists of object
// references); empty lists where it has none or it is not of that form.
std::vector<std::vector<std::string>> scales_of(hid_t dset) {
  std::vector<std::vector<std::string>> out(2);
  if (H5Aexists(dset, "DIMENSION_LIST") <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return out;
  }
  Hid a(H5Aopen(dset, "DIMENSION_LIST", H5P_DEFAULT));
  Hid t(a ? H5Aget_type(a.get()) : H5I_INVALID_HID);
  Hid sp(a ? H5Aget_space(a.get()) : H5I_INVALID_HID);
  Hid base(t && H5Tget_class(t.get()) == H5T_VLEN ? H5Tget_super(t.get()) : H5I_INVALID_HID);
  hsize_t n = 0;
  const bool sound = base && H5Tequal(base.get(), H5T_STD_REF_OBJ) > 0 && sp &&
                     H5Sget_simple_extent_ndims(sp.get()) == 1 && H5Sget_simple_extent_dims(sp.get(), &n, nullptr) == 1 &&
                     n == 2;
  Hid mem(sound ? H5Tvlen_create(H5T_STD_REF_OBJ) : H5I_INVALID_HID);
  hvl_t lists[2] = {};
  if (mem && H5Aread(a.get(), mem.get(), lists) >= 0) {
    for (int dim = 0; dim < 2; ++dim) {
      const auto* refs = static_cast<const hobj_ref_t*>(lists[dim].p);
      for (std::size_t k = 0; refs && k < lists[dim].len && k < 64; ++k) {
        Hid scale(H5Rdereference2(dset, H5P_DEFAULT, H5R_OBJECT, &refs[k]));
        char name[4096] = {};
        if (scale && H5Iget_type(scale.get()) == H5I_DATASET && H5Iget_name(scale.get(), name, sizeof name) > 1)
          out[std::size_t(dim)].emplace_back(name);
      }
    }
    H5Dvlen_reclaim(mem.get(), sp.get(), H5P_DEFAULT, lists);
  }
  H5Eclear2(H5E_DEFAULT);
  return out;
}

std::vector<hsize_t> dims_of(hid_t dset) {
  Hid s(H5Dget_space(dset));
  const int rank = s ? H5Sget_simple_extent_ndims(s.get()) : -1;
  std::vector<hsize_t> d(std::size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(s.get(), d.data(), nullptr);
  return d;
}

}  // namespace

bool link_exists(hid_t file, const std::string& path) {
  for (std::size_t pos = path.find('/', 1);; pos = path.find('/', pos + 1)) {
    const std::string prefix = path.substr(0, pos);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (pos == std::string::npos) return true;
  }
}

void inherit_creation_order(hid_t src_dset, hid_t dcpl, hid_t fcpl) {
  unsigned flags = 0;
  Hid in(H5Dget_create_plist(src_dset));
  if (dcpl >= 0 && in && H5Pget_attr_creation_order(in.get(), &flags) >= 0 && flags)
    H5Pset_attr_creation_order(dcpl, flags);
  const Hid file(H5Iget_file_id(src_dset));
  Hid f(file ? H5Fget_create_plist(file.get()) : H5I_INVALID_HID);
  if (fcpl >= 0 && f) {
    if (H5Pget_link_creation_order(f.get(), &flags) >= 0 && flags) H5Pset_link_creation_order(fcpl, flags);
    if (H5Pget_attr_creation_order(f.get(), &flags) >= 0 && flags) H5Pset_attr_creation_order(fcpl, flags);
  }
  H5Eclear2(H5E_DEFAULT);
}

void copy_attributes(hid_t src, hid_t dst, const std::string& what, bool swap_axes) {
  AttrCopy ctx{dst, what, swap_axes, {}};
  hsize_t idx = 0;
  // Creation order where the source tracks it (netCDF-4 does: ncdump lists
  // attributes in that order), else by name.
  herr_t rc = H5Aiterate2(src, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, copy_attribute, &ctx);
  ctx.err.rethrow();
  if (rc < 0 && idx == 0) {
    H5Eclear2(H5E_DEFAULT);
    rc = H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attribute, &ctx);
    ctx.err.rethrow();
  }
  if (rc < 0) fail(ErrorKind::output, "cannot copy the attributes to " + what);
}

AxisScales plan_scales(hid_t src_dset, hid_t dst_file, const std::string& dst_dataset) {
  AxisScales plan;
  const std::vector<hsize_t> axes = dims_of(src_dset);
  if (axes.size() != 2) return plan;
  // The output carries the input's CLASS: a damaged one, or the input
  // being a scale itself, and no scale is attached to it.
  bool sound = false;
  if (is_scale(src_dset, &sound) || !sound) return plan;
  const auto per_dim = scales_of(src_dset);
  for (unsigned dim = 0; dim < 2; ++dim) {
    for (const std::string& path : per_dim[dim]) {
      AxisScales::Scale s{path, int(1 - dim), true};
      {
        // 1-D, as long as its axis: what the scale's copy reads is bounded by the matrix.
        Hid scale(H5Dopen2(src_dset, path.c_str(), H5P_DEFAULT));
        if (!scale || !is_scale(scale.get(), &sound) || dims_of(scale.get()) != std::vector<hsize_t>{axes[dim]}) {
          H5Eclear2(H5E_DEFAULT);
          plan.notes.push_back("dimension scale " + path + " not carried: it is not a 1-D dimension scale of its axis' length");
          continue;
        }
      }
      const bool clash = path == dst_dataset || path.rfind(dst_dataset + "/", 0) == 0 ||
                         dst_dataset.rfind(path + "/", 0) == 0;
      if (clash) {
        plan.notes.push_back("dimension scale " + path + " not carried: the output dataset is named " + dst_dataset);
        continue;
      }
      if (dst_file >= 0 && link_exists(dst_file, path)) {
        // An existing file: its own scale at the same path, of the same
        // length, is taken as the same dimension; anything else is left alone.
        Hid src_scale(H5Dopen2(src_dset, path.c_str(), H5P_DEFAULT));  // an absolute path: from the source's root
        Hid there(H5Dopen2(dst_file, path.c_str(), H5P_DEFAULT));
        const bool same = there && src_scale && is_scale(there.get(), &sound) &&
                          dims_of(there.get()) == dims_of(src_scale.get());
        H5Eclear2(H5E_DEFAULT);
        if (!same) {
          plan.notes.push_back("dimension scale " + path + " not carried: the output file has another object there");
          continue;
        }
        s.copy = false;
      }
      plan.scales.push_back(s);
    }
  }
  return plan;
}

namespace {

// A copy of scale dataset `from` at `path` of `dst_file`: its type, shape
// and creation properties (chunks, filters), its data read and written in
// blocks of about 1 MiB through HDF5 (H5Ocopy would be shorter, but on a
// damaged file it crashes in HDF5 1.10 where H5Dread reports an error).
Hid copy_scale_data(hid_t from, hid_t dst_file, const std::string& path, const std::string& where) {
  Hid ftype = check(H5Dget_type(from), ErrorKind::output, "cannot read the type of " + where);
  Hid type(H5Tcopy(ftype.get()));
  const bool vlen = H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0;
  Hid mem(vlen ? H5Tget_native_type(type.get(), H5T_DIR_DEFAULT) : H5Tcopy(type.get()));
  Hid space = check(H5Dget_space(from), ErrorKind::output, "cannot read the shape of " + where);
  const std::vector<hsize_t> dims = dims_of(from);
  Hid dcpl(H5Dget_create_plist(from));
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  Hid to = check(H5Dcreate2(dst_file, path.c_str(), type.get(), space.get(), lcpl.get(), dcpl ? dcpl.get() : H5P_DEFAULT,
                            H5P_DEFAULT),
                 ErrorKind::output, "cannot create " + where);
  if (!mem || dims.empty()) return to;
  // Rows of the first axis at a time (a scale is 1-D; a larger one moves whole rows).
  hsize_t row = H5Tget_size(mem.get());
  for (std::size_t k = 1; k < dims.size(); ++k) row *= dims[k];
  const hsize_t step = std::max<hsize_t>(1, (hsize_t(1) << 20) / std::max<hsize_t>(1, row));
  std::vector<unsigned char> buf;
  for (hsize_t r0 = 0; r0 < dims[0]; r0 += step) {
    std::vector<hsize_t> start(dims.size(), 0), count = dims;
    start[0] = r0;
    count[0] = std::min(step, dims[0] - r0);
    buf.assign(count[0] * row, 0);
    Hid fs(H5Dget_space(from)), ts(H5Dget_space(to.get()));
    Hid ms(H5Screate_simple(int(count.size()), count.data(), nullptr));
    if (!fs || !ts || !ms || H5Sselect_hyperslab(fs.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Sselect_hyperslab(ts.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
        H5Dread(from, mem.get(), ms.get(), fs.get(), H5P_DEFAULT, buf.data()) < 0)
      fail(ErrorKind::output, "cannot read " + where);
    const herr_t rc = H5Dwrite(to.get(), mem.get(), ms.get(), ts.get(), H5P_DEFAULT, buf.data());
    if (vlen) H5Dvlen_reclaim(mem.get(), ms.get(), H5P_DEFAULT, buf.data());
    if (rc < 0) fail(ErrorKind::output, "cannot write " + where);
  }
  return to;
}

}  // namespace

void attach_scales(const AxisScales& plan, hid_t src_file, hid_t dst_file, hid_t dst_dset, const std::string& what) {
  for (const AxisScales::Scale& s : plan.scales) {
    const std::string where = "dimension scale " + s.path + " for " + what;
    if (s.copy && !link_exists(dst_file, s.path)) {
      Hid from = check(H5Dopen2(src_file, s.path.c_str(), H5P_DEFAULT), ErrorKind::output, "cannot open " + where);
      Hid to = copy_scale_data(from.get(), dst_file, s.path, where);
      copy_attributes(from.get(), to.get(), where, false);
    }
    Hid scale = check(H5Dopen2(dst_file, s.path.c_str(), H5P_DEFAULT), ErrorKind::output, "cannot open " + where);
    if (H5DSattach_scale(dst_dset, scale.get(), unsigned(s.out_dim)) < 0) fail(ErrorKind::output, "cannot attach " + where);
  }
}

}  // namespace gt::fmt::h5
