// Path pieces shared by the temp-file and format code (internal).
#pragma once
#include <string>

namespace gt::paths {

// The folder of a path: "." for a bare name, "/" for a file in the root.
inline std::string dir_of(const std::string& p) {
  auto pos = p.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return p.substr(0, pos);
}

// The last component of a path.
inline std::string base_of(const std::string& p) {
  auto pos = p.find_last_of('/');
  return pos == std::string::npos ? p : p.substr(pos + 1);
}

}  // namespace gt::paths
