// The shared library libgtranspose has no code of its own: it is every area
// of lib/ linked whole (lib/CMakeLists.txt). This file gives the target the
// source file CMake requires.
