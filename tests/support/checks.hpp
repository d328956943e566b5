#pragma once
// Small helpers shared by the test files: the invalid_input a call throws (to check the field it
// names), an Eigen vector from a list, a seeded standard normal draw, equality to 1e-9 relative,
// substring search, the rules of the one result shape. (The JSON round-trip and rejection checks
// are in json_checks.hpp.)

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <string_view>

namespace dnnplan_test {

/// Checks `r` against the rules of the one result shape (core/result.hpp), naming the rule it
/// breaks, and that every status but optimal says why.
template <class Plan, class Details>
void check_result_shape(const dnnplan::solve_result<Plan, Details>& r) {
    INFO("status " << to_string(r.status) << ", limit " << to_string(r.limit) << ", reason: " << r.reason);
    const dnnplan::result_violation broken = dnnplan::result_shape_violation(r);
    INFO("breaks " << broken.field << ": " << broken.rule);
    CHECK_FALSE(broken);
    if (r.status != dnnplan::solve_status::optimal) CHECK_FALSE(r.reason.empty());
}

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

inline constexpr double inf = std::numeric_limits<double>::infinity();

/// a and b equal to 1e-9 relative (1e-12 absolute near zero).
inline bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-12; }

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace dnnplan_test
