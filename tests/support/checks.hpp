#pragma once
// Small helpers shared by the test files: the invalid_input a call throws (to check the field it
// names), an Eigen vector from a list, and a seeded standard normal draw. (The JSON round-trip and
// rejection checks are in json_checks.hpp.)

#include <dnnplan/core/error.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <cmath>
#include <initializer_list>
#include <random>
#include <string>

namespace dnnplan_test {

/// The invalid_input `f()` throws; fails the test when it throws none.
template <class F>
dnnplan::invalid_input error_of(F&& f) {
    try {
        f();
    } catch (const dnnplan::invalid_input& e) {
        return e;
    }
    FAIL("no invalid_input thrown");
    return {"", "", ""};
}

/// The field named by the invalid_input `f()` throws; "(no exception)" when it throws none (for
/// CHECK(field_of(...) == "a.b"), which then fails showing that).
template <class F>
std::string field_of(F&& f) {
    try {
        f();
    } catch (const dnnplan::invalid_input& e) {
        return e.field();
    }
    return "(no exception)";
}

inline Eigen::VectorXd vec(std::initializer_list<double> values) {
    Eigen::VectorXd v(static_cast<Eigen::Index>(values.size()));
    Eigen::Index i = 0;
    for (const double x : values) v(i++) = x;
    return v;
}

/// A standard normal draw from a seeded engine (Box-Muller on the engine's bits: the same
/// numbers with every standard library, unlike std::normal_distribution).
inline double standard_normal(std::mt19937_64& g) {
    const double u1 = 1.0 - static_cast<double>(g() >> 11) * 0x1.0p-53;
    const double u2 = static_cast<double>(g() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace dnnplan_test
