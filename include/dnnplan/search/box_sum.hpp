#pragma once
// Exact optimisation over the integer set Y = { y : lo <= y <= hi, sum y = m }, the relaxation
// every cluster-count bound of dnnplan rests on. The constraint matrix of Y (a box and one sum
// row) is totally unimodular, so its polytope has integer vertices, and:
//  - a linear function is minimised by a greedy fill (sort by coefficient, fill the cheapest
//    first): O(K log K);
//  - a linear-fractional function (a0 + a.y) / (d0 + d.y) with a positive denominator attains
//    its minimum over the polytope at a vertex (Charnes and Cooper, 1962), hence on Y, and
//    Dinkelbach's method (1967) finds it with one greedy fill per iteration.
// Callers pass scratch space for the sort so that no call allocates.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace dnnplan {

/// The set Y. Requires lo <= hi element-wise and sum lo <= m <= sum hi.
struct box_sum_set {
    std::span<const std::int32_t> lo{};
    std::span<const std::int32_t> hi{};
    std::int64_t m = 0;
};

namespace detail {

/// Fills y (conceptually) greedily in ascending order of key, calling take(k, units) for
/// every k with a positive amount, lo included. `order` must hold at least lo.size() entries.
template <class Key, class Take>
void greedy_fill(const box_sum_set& y, std::span<std::size_t> order, Key&& key, Take&& take) noexcept {
    const std::size_t k_count = y.lo.size();
    std::int64_t left = y.m;
    for (std::size_t k = 0; k < k_count; ++k) {
        order[k] = k;
        left -= y.lo[k];
        if (y.lo[k] > 0) take(k, static_cast<std::int64_t>(y.lo[k]));
    }
    const auto first = order.begin();
    const auto last = first + static_cast<std::ptrdiff_t>(k_count);
    std::sort(first, last, [&](std::size_t a, std::size_t b) {
        const double ka = key(a), kb = key(b);
        return ka < kb || (ka == kb && a < b);
    });
    for (auto it = first; it != last && left > 0; ++it) {
        const std::int64_t room = static_cast<std::int64_t>(y.hi[*it]) - y.lo[*it];
        const std::int64_t units = std::min(room, left);
        if (units > 0) take(*it, units);
        left -= units;
    }
}

}  // namespace detail

/// min over Y of sum_k c[k] * y[k].
[[nodiscard]] inline double box_sum_min_linear(const box_sum_set& y, std::span<const double> c,
                                               std::span<std::size_t> order) noexcept {
    double value = 0.0;
    detail::greedy_fill(y, order, [&](std::size_t k) { return c[k]; },
                        [&](std::size_t k, std::int64_t units) { value += static_cast<double>(units) * c[k]; });
    return value;
}

/// max over Y of sum_k c[k] * y[k].
[[nodiscard]] inline double box_sum_max_linear(const box_sum_set& y, std::span<const double> c,
                                               std::span<std::size_t> order) noexcept {
    double value = 0.0;
    detail::greedy_fill(y, order, [&](std::size_t k) { return -c[k]; },
                        [&](std::size_t k, std::int64_t units) { value += static_cast<double>(units) * c[k]; });
    return value;
}

/// A lower bound on min over Y of (a0 + a.y) / (d0 + d.y), exact up to rounding, where
/// d0 + d.y > 0 on all of Y. Dinkelbach: lambda <- ratio at the minimiser of
/// (a0 + a.y) - lambda (d0 + d.y); for any lambda, with F = that minimum (<= 0 once lambda is
/// attained), every y has ratio >= lambda + F / min(d0 + d.y), which is what is returned.
[[nodiscard]] inline double box_sum_min_ratio(const box_sum_set& y, double a0, std::span<const double> a, double d0,
                                              std::span<const double> d, std::span<std::size_t> order) noexcept {
    const double d_min = d0 + box_sum_min_linear(y, d, order);
    // Start at the minimiser of the numerator alone.
    double num = a0, den = d0;
    detail::greedy_fill(y, order, [&](std::size_t k) { return a[k]; }, [&](std::size_t k, std::int64_t units) {
        num += static_cast<double>(units) * a[k];
        den += static_cast<double>(units) * d[k];
    });
    double lambda = num / den;
    double best_bound = -std::numeric_limits<double>::infinity();
    for (int iteration = 0; iteration < 64; ++iteration) {
        num = a0;
        den = d0;
        detail::greedy_fill(y, order, [&](std::size_t k) { return a[k] - lambda * d[k]; },
                            [&](std::size_t k, std::int64_t units) {
                                num += static_cast<double>(units) * a[k];
                                den += static_cast<double>(units) * d[k];
                            });
        const double f = num - lambda * den;
        best_bound = std::max(best_bound, lambda + std::min(f, 0.0) / d_min);
        const double next = num / den;
        if (!(next < lambda) || f >= 0.0) break;
        lambda = next;
    }
    return best_bound;
}

}  // namespace dnnplan
