// HDF5 metadata follows the axes, as the tools a user reaches for see it:
// netCDF-4 files (made by netCDF4-python and by ncgen) transposed, then
// read back by ncdump, netCDF4-python and xarray with their dimensions
// swapped and their values bit for bit; h5py's dimension labels and scales
// swapped; the input file's global attributes in a new output file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli/cli_util.hpp"

namespace cli {
namespace {

int shell(const std::string& cmd) { return std::system(cmd.c_str()); }

// scripts/setup.sh installs them: a missing one is a failure, not a skip
// (except where GT_TEST_PYTHON_OPTIONAL=1: cli_util.hpp).
#define REQUIRE_TOOLS()                                                                                        \
  do {                                                                                                         \
    GT_REQUIRE_PYTHON_MODULES("h5py, netCDF4, xarray, numpy", "python3-h5py python3-netcdf4 python3-xarray");  \
    GT_REQUIRE_INSTALLED(shell("command -v ncdump >/dev/null && command -v ncgen >/dev/null") == 0,           \
                         "ncdump/ncgen", "netcdf-bin");                                                        \
  } while (0)

const char* kMakeNetcdf = R"(
import sys, numpy as np, netCDF4
d = sys.argv[1]
with netCDF4.Dataset(f'{d}/in.nc', 'w') as f:
    f.title = 'transpose me'
    f.history = 'made by the test'
    f.createDimension('y', 5); f.createDimension('x', 7); f.createDimension('t', 3)
    y = f.createVariable('y', 'f8', ('y',)); y[:] = np.arange(5) * 1.5; y.units = 'm'
    x = f.createVariable('x', 'i4', ('x',)); x[:] = np.arange(7) * 10 - 3
    v = f.createVariable('v', 'f4', ('y', 'x')); v.units = 'K'
    v[:] = (np.arange(35, dtype='f4').reshape(5, 7) - 11.0) / 3.0
    # t has no coordinate variable: netCDF keeps it as a phony scale.
    w = f.createVariable('w', 'i2', ('t', 'x')); w[:] = np.arange(21, dtype='i2').reshape(3, 7) * 97 - 1000
    g = f.createGroup('sub')
    c = g.createVariable('c', 'u1', ('x', 'y'), zlib=True, chunksizes=(3, 2)); c[:] = np.arange(35).reshape(7, 5)
)";

// netCDF4-python and xarray read every output with the dimensions swapped
// and each value bit for bit; coordinate variables and global attributes too.
const char* kCheckNetcdf = R"(
import sys, numpy as np, netCDF4, xarray as xr
d = sys.argv[1]
bad = []
def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
for out, var, dims in (('vT', 'v', ('x', 'y')), ('wT', 'w', ('x', 't')), ('cT', 'sub/c', ('y', 'x'))):
    with netCDF4.Dataset(f'{d}/in.nc') as i, netCDF4.Dataset(f'{d}/{out}.nc') as o:
        i.set_auto_maskandscale(False); o.set_auto_maskandscale(False)
        vi, vo = i[var], o[var]
        if vo.dimensions != dims: bad.append(f'{out}: netCDF4 dims {vo.dimensions}, expected {dims}')
        if not same_bits(vo[:], np.asarray(vi[:]).T): bad.append(f'{out}: netCDF4 values differ')
        for name in dims:
            if name in i.variables and not same_bits(o[name][:], i[name][:]): bad.append(f'{out}: coordinate {name} differs')
            if o.dimensions[name].size != i.dimensions[name].size: bad.append(f'{out}: dimension {name} length')
        if o.getncattr('title') != 'transpose me': bad.append(f'{out}: global attribute title lost')
        if var == 'v' and vo.units != 'K': bad.append(f'{out}: units lost')
    if '/' in var: continue  # xarray opens one group at a time
    with xr.open_dataset(f'{d}/in.nc') as i, xr.open_dataset(f'{d}/{out}.nc') as o:
        if o[var].dims != dims: bad.append(f'{out}: xarray dims {o[var].dims}')
        if not same_bits(o[var].values, i[var].values.T): bad.append(f'{out}: xarray values differ')
        for name in dims:
            if name in i.coords and not same_bits(o[var].coords[name].values, i.coords[name].values):
                bad.append(f'{out}: xarray coordinate {name}')
        if o.attrs.get('history') != 'made by the test': bad.append(f'{out}: xarray global attributes')
print('\n'.join(bad) or 'ok')
sys.exit(1 if bad else 0)
)";

TEST(CliHdf5Meta, NetcdfReadersSeeTheDimensionsSwapped) {
  REQUIRE_TOOLS();
  TempDir d;
  ASSERT_EQ(0, run_python(d, kMakeNetcdf)) << python_log(d);
  for (const char* var : {"v", "w", "sub/c"}) {
    const std::string out = d / (std::string(1, var[0] == 's' ? 'c' : var[0]) + "T.nc");
    // .nc names no format gtranspose writes by itself: --format hdf5 (netCDF-4 is HDF5).
    Result r = gtranspose({d / "in.nc" + ":/" + var, out, "--format", "hdf5", "--engine", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    EXPECT_NE(r.out.find("dimension scales swapped with the axes"), std::string::npos) << why(r);
  }
  EXPECT_EQ(0, run_python(d, kCheckNetcdf)) << python_log(d);
  // ncdump reads the header and every value; v's dimensions are (x, y).
  ASSERT_EQ(0, shell("ncdump " + (d / "vT.nc") + " >" + (d / "dump.txt") + " 2>&1"))
      << gt::test::file_contents(d / "dump.txt");
  const std::string dump = gt::test::file_contents(d / "dump.txt");
  EXPECT_NE(dump.find("float v(x, y)"), std::string::npos) << dump;
  EXPECT_NE(dump.find(":title = \"transpose me\""), std::string::npos) << dump;
  EXPECT_EQ(0, shell("ncdump " + (d / "wT.nc") + " 2>&1 | grep -q 'short w(x, t)'")) << "ncdump of wT.nc";
}

// ncgen's own netCDF-4 file (CDL in, ncdump's CDL out): the transposed
// variable's CDL is the input's with the axes swapped, value for value.
TEST(CliHdf5Meta, NcgenFileRoundTripsThroughNcdump) {
  REQUIRE_TOOLS();
  TempDir d;
  write_file(d / "in.cdl",
             "netcdf in {\n"
             "dimensions:\n  row = 2 ;\n  col = 3 ;\n"
             "variables:\n  double m(row, col) ;\n  int row(row) ;\n"
             "// global attributes:\n  :source = \"ncgen\" ;\n"
             "data:\n  m = 1.5, -2.25, 3, 4e10, 5, -6 ;\n  row = 7, 8 ;\n}\n");
  ASSERT_EQ(0, shell("ncgen -k nc4 -o " + (d / "in.nc") + " " + (d / "in.cdl")));
  Result r = gtranspose({d / "in.nc" + ":/m", d / "mT.h5", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  ASSERT_EQ(0, shell("ncdump " + (d / "mT.h5") + " >" + (d / "out.cdl") + " 2>&1"));
  const std::string cdl = gt::test::file_contents(d / "out.cdl");
  EXPECT_NE(cdl.find("double m(col, row) ;"), std::string::npos) << cdl;
  EXPECT_NE(cdl.find("m =\n  1.5, 40000000000,\n  -2.25, 5,\n  3, -6 ;"), std::string::npos) << cdl;
  EXPECT_NE(cdl.find("row = 7, 8 ;"), std::string::npos) << cdl;
  EXPECT_NE(cdl.find(":source = \"ncgen\""), std::string::npos) << cdl;
}

// Plain HDF5: h5py's dimension labels and scales (one in a group, a
// chunked and compressed one) follow the axes; the root's attributes come along.
TEST(CliHdf5Meta, H5pyLabelsAndScalesSwapped) {
  REQUIRE_TOOLS();
  TempDir d;
  ASSERT_EQ(0, run_python(d, R"(
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f'{d}/in.h5', 'w') as f:
    f.attrs['creator'] = 'the test'
    a = f.create_dataset('a', data=np.arange(6 * 4, dtype='<u2').reshape(6, 4), chunks=(4, 3), compression='gzip')
    rows = f.create_dataset('rows', data=np.arange(6) * 1.25)
    cols = f.create_dataset('grid/cols', data=np.arange(4, dtype='i8') * -2, chunks=(2,), compression='gzip')
    rows.make_scale('rows'); cols.make_scale('columns')
    a.dims[0].attach_scale(rows); a.dims[1].attach_scale(cols)
    a.dims[0].label = 'y'; a.dims[1].label = 'x'
)")) << python_log(d);
  Result r = gtranspose({d / "in.h5", d / "out.h5", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(0, run_python(d, R"(
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f'{d}/in.h5', 'r') as i, h5py.File(f'{d}/out.h5', 'r') as o:
    a, t = i['a'], o['a']
    assert t.shape == (4, 6) and t[()].tobytes() == np.ascontiguousarray(a[()].T).tobytes()
    assert [t.dims[k].label for k in (0, 1)] == ['x', 'y'], [t.dims[k].label for k in (0, 1)]
    assert t.dims[0][0].name == '/grid/cols' and t.dims[1][0].name == '/rows'
    assert t.dims[0][0][()].tobytes() == i['grid/cols'][()].tobytes()
    assert t.dims[1][0][()].tobytes() == i['rows'][()].tobytes()
    assert t.dims[0].keys() == ['columns'] and t.dims[1].keys() == ['rows']
    assert o.attrs['creator'] == 'the test'
    assert o['grid/cols'].compression == 'gzip'
print('ok')
)")) << python_log(d);
}

}  // namespace
}  // namespace cli
