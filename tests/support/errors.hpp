// Catching the library's errors in tests.
#pragma once
#include <gtest/gtest.h>

#include "gtranspose/error.hpp"

namespace gt::test {

// Runs `body` and returns the gt::Error it throws (fails the test otherwise).
template <class F>
Error catch_error(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a gt::Error";
  return Error(ErrorKind::internal, "no error thrown");
}

}  // namespace gt::test
