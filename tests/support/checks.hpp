#pragma once
// Small helpers shared by the test files: the invalid_input a call throws (to check the field it
// names), an Eigen vector from a list, and the JSON round-trip and rejection checks of the
// io/json.hpp sections that compare documents (not values).

#include <dnnplan/core/error.hpp>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <initializer_list>

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

inline Eigen::VectorXd vec(std::initializer_list<double> values) {
    Eigen::VectorXd v(static_cast<Eigen::Index>(values.size()));
    Eigen::Index i = 0;
    for (const double x : values) v(i++) = x;
    return v;
}

}  // namespace dnnplan_test
