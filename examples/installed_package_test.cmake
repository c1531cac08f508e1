# cmake -P: installs the build into a fresh prefix, then builds the examples
# against it twice, as users would: with find_package(gtranspose), and with
# pkg-config, and runs each. Fails on the first step that fails.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "installed_package_test.cmake: -D${v}=... missing")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/gtranspose/host.hpp include/gtranspose/version.hpp)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the install tree lacks ${f}")
  endif()
endforeach()
file(GLOB_RECURSE configs ${prefix}/*/gtranspose-config.cmake)
file(GLOB_RECURSE pcs ${prefix}/*/gtranspose.pc)
if(NOT configs OR NOT pcs)
  message(FATAL_ERROR "the install tree lacks gtranspose-config.cmake or gtranspose.pc")
endif()

# find_package, in a project of its own.
step("configure the examples against the install" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/cmake
     -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step("build the examples" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
step("run the example (find_package)" ${WORK_DIR}/cmake/gt-example-host-api 333 129)

# pkg-config, as a Makefile would.
list(GET pcs 0 pc)
get_filename_component(pcdir ${pc} DIRECTORY)
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${pcdir})
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs gtranspose OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs gtranspose failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
get_filename_component(libdir ${pcdir} DIRECTORY)
step("compile with pkg-config" ${CXX} -std=c++17 -O1 ${SOURCE_DIR}/host_api.cpp ${flags} -Wl,-rpath,${libdir}
     -o ${WORK_DIR}/example-pkgconfig)
step("run the example (pkg-config)" ${WORK_DIR}/example-pkgconfig 257 1000)
