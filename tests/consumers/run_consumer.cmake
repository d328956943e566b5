# Driver of one consumer test (see CMakeLists.txt beside this file).
#   cmake -DSETTINGS=<consumer_settings.cmake> -DSTEP=<step> [-DCONFIG=<config>] -P run_consumer.cmake
# STEP: install | find_package | add_subdirectory | fetchcontent
cmake_minimum_required(VERSION 3.21)

foreach(var IN ITEMS SETTINGS STEP)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
    endif()
endforeach()
include("${SETTINGS}")

set(prefix "${WORK_DIR}/prefix")

# The toolchain of the outer build, for every nested configure.
set(toolchain_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(GENERATOR_PLATFORM)
    list(APPEND toolchain_args -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
    list(APPEND toolchain_args -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
    list(APPEND toolchain_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(NOT MULTI_CONFIG AND CONFIG)
    list(APPEND toolchain_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
# Find the dependencies where the outer build found them.
foreach(dep IN ITEMS Eigen3 Boost nlohmann_json)
    if(${dep}_DIR)
        list(APPEND toolchain_args "-D${dep}_DIR=${${dep}_DIR}")
    endif()
endforeach()
set(config_args "")
if(CONFIG)
    set(config_args --config "${CONFIG}")
endif()

function(run)
    execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT COMMAND_ERROR_IS_FATAL ANY)
endfunction()

# Configures, builds and runs the consumer project tests/consumers/<STEP>/ with extra -D args.
function(build_and_run_consumer)
    set(build_dir "${WORK_DIR}/${STEP}")
    file(REMOVE_RECURSE "${build_dir}")
    run("${CMAKE_COMMAND}" -S "${CONSUMERS_DIR}/${STEP}" -B "${build_dir}" ${toolchain_args} ${ARGN})
    run("${CMAKE_COMMAND}" --build "${build_dir}" ${config_args})
    run("${CMAKE_COMMAND}" --build "${build_dir}" --target run_consumer ${config_args})
endfunction()

if(STEP STREQUAL "install")
    # A nested, plain build of the source tree (nothing of ours built), installed into a prefix.
    set(build_dir "${WORK_DIR}/install-build")
    file(REMOVE_RECURSE "${build_dir}" "${prefix}")
    run("${CMAKE_COMMAND}" -S "${DNNPLAN_SOURCE_DIR}" -B "${build_dir}" ${toolchain_args}
        -DDNNPLAN_BUILD_TESTS=OFF -DDNNPLAN_BUILD_EXAMPLES=OFF -DDNNPLAN_BUILD_BENCHMARKS=OFF -DDNNPLAN_PYTHON=OFF
        "-DCMAKE_INSTALL_PREFIX=${prefix}")
    run("${CMAKE_COMMAND}" --build "${build_dir}" ${config_args})
    run("${CMAKE_COMMAND}" --install "${build_dir}" ${config_args})
elseif(STEP STREQUAL "find_package")
    set(prefix_path "${prefix}" ${OUTER_PREFIX_PATH})
    string(REPLACE ";" "\\;" prefix_path "${prefix_path}")
    build_and_run_consumer("-DCMAKE_PREFIX_PATH=${prefix_path}"
        "-DDNNPLAN_EXPECTED_PREFIX=${prefix}" "-DDNNPLAN_EXPECTED_VERSION=${DNNPLAN_VERSION}")
elseif(STEP STREQUAL "add_subdirectory" OR STEP STREQUAL "fetchcontent")
    build_and_run_consumer("-DDNNPLAN_SOURCE_DIR=${DNNPLAN_SOURCE_DIR}")
else()
    message(FATAL_ERROR "run_consumer.cmake: unknown STEP '${STEP}'")
endif()
