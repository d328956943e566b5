# The umbrella <dnnplan/dnnplan.hpp> includes every public header but the JSON integration
# (io/*_json.hpp, io/json.hpp: opt-in, they bring in nlohmann/json), the internals (detail/) and
# separate_compilation.hpp (docs/architecture.md). Run by ctest as dnnplan_umbrella:
#   cmake -DPROJECT_SOURCE_DIR=<repo> -P tests/check_umbrella.cmake
cmake_policy(VERSION 3.21)
set(_include "${PROJECT_SOURCE_DIR}/include")
file(READ "${_include}/dnnplan/dnnplan.hpp" _umbrella)
file(GLOB_RECURSE _headers RELATIVE "${_include}" "${_include}/dnnplan/*.hpp")
set(_missing "")
foreach(_header IN LISTS _headers)
    if(_header MATCHES "/detail/|_json\\.hpp$|^dnnplan/io/json\\.hpp$|^dnnplan/dnnplan\\.hpp$|^dnnplan/separate_compilation\\.hpp$")
        continue()
    endif()
    string(FIND "${_umbrella}" "#include <${_header}>" _at)
    if(_at EQUAL -1)
        string(APPEND _missing "\n  ${_header}")
    endif()
endforeach()
if(_missing)
    message(FATAL_ERROR "include/dnnplan/dnnplan.hpp does not include:${_missing}")
endif()
