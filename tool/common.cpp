#include "common.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "gtranspose/tempfile.hpp"

namespace gt::tool {

std::string flag_of(std::string_view param) {
  std::string f = "--" + std::string(param);
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::string message_of(const Error& e) { return e.render(flag_of); }

int fail(const char* program, const std::string& message, int code) {
  std::cerr << program << ": " << message << "\n";
  return code;
}

int fail(const char* program, const Error& e) { return fail(program, message_of(e), e.exit_code()); }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(',', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::optional<DType> dtype_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  const std::optional<DType> t = parse_dtype(name);
  if (!t) throw Error(ErrorKind::usage, "unknown {dtype} '" + name + "': use one of " + dtype_names());
  return t;
}

void check_json_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(ErrorKind::usage, "--json " + path + " is a folder: name a file");
  TempPath probe(path);
  const int fd = ::open(probe.path().c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) throw_errno(ErrorKind::output, "cannot create the --json file " + path);
  ::close(fd);
}

void write_text_file(const std::string& path, const std::string& text) {
  TempPath tmp(path);
  std::ofstream f(tmp.path(), std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw_errno(ErrorKind::output, "cannot write --json file " + path);
  f.close();
  tmp.commit();
}

}  // namespace gt::tool
