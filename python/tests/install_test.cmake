# Installs the build into PREFIX and imports the installed dnnplan package (python/CMakeLists.txt).
# cmake -DBUILD_DIR=... -DPREFIX=... -DPYTHON=... -DPACKAGE_DIR=... -DPROBLEM=... -P install_test.cmake
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" OUTPUT_QUIET RESULT_VARIABLE code)
if(NOT code EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${code})")
endif()
set(script "import json, dnnplan\nassert dnnplan.__file__.startswith('${PREFIX}/'), dnnplan.__file__\nr = dnnplan.spot_provision(json.load(open('${PROBLEM}')))\nprint(r['status'], r['objective_value'])\n")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${PREFIX}/${PACKAGE_DIR}" "${PYTHON}" -c "${script}"
                WORKING_DIRECTORY "${PREFIX}"  # not the build folder: Python imports from its working directory first
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(NOT code EQUAL 0 OR NOT out MATCHES "^optimal 2.97")
    message(FATAL_ERROR "the installed package: exit ${code}\nstdout: ${out}\nstderr: ${err}")
endif()
message(STATUS "installed in ${PREFIX}/${PACKAGE_DIR}: ${out}")
