// The program of a project that uses dnnplan, built by every consumer test. It includes dnnplan
// exactly as a user would and sets no language standard of its own: C++20 must come from
// dnnplan::dnnplan's compile features. The find_package consumer includes the umbrella header (every
// public header but the opt-in JSON ones) in the header-only mode users get (the suite's own builds
// use the separate-compilation mode). The other two include what the program uses, which checks the
// same target, include path and compile features in about 2 s instead of 17 s (docs/performance.md).
#if defined(DNNPLAN_CONSUMER_UMBRELLA)
#include <dnnplan/dnnplan.hpp>
#else
#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/version.hpp>
#endif

#include <iostream>

#if defined(_MSVC_LANG)
static_assert(_MSVC_LANG >= 202002L, "dnnplan::dnnplan must carry cxx_std_20 to its users");
#else
static_assert(__cplusplus >= 202002L, "dnnplan::dnnplan must carry cxx_std_20 to its users");
#endif

// The find_package consumer passes the version of the CMake package it found.
#if defined(DNNPLAN_CONSUMER_EXPECTED_MAJOR)
static_assert(dnnplan::version_major == DNNPLAN_CONSUMER_EXPECTED_MAJOR &&
                  dnnplan::version_minor == DNNPLAN_CONSUMER_EXPECTED_MINOR &&
                  dnnplan::version_patch == DNNPLAN_CONSUMER_EXPECTED_PATCH,
              "include/dnnplan/version.hpp disagrees with project(dnnplan VERSION ...)");
#endif

int main() {
    dnnplan::instance_catalog catalog;
    catalog.instances.push_back(
        {.name = "p2.xlarge", .gpus = 1, .quota = 2, .spot_usd_per_h = 0.918, .on_demand_usd_per_h = 0.90});
    try {
        catalog.validate();
    } catch (const dnnplan::invalid_input& e) {
        std::cerr << "a valid catalog was rejected: " << e.what() << '\n';
        return 1;
    }
    try {
        dnnplan::instance_catalog{}.validate();
        std::cerr << "an empty catalog was accepted\n";
        return 1;
    } catch (const dnnplan::invalid_input& e) {
        std::cout << "empty catalog rejected as expected (" << e.field() << ")\n";
    }
    std::cout << "dnnplan " << dnnplan::version_major << '.' << dnnplan::version_minor << '.'
              << dnnplan::version_patch << " consumer OK\n";
    return 0;
}
