#pragma once
// Load-driven contention at a parameter server: the fitter's default alternative to spotDNN's eqs. (8)-(9)
// (Shang et al., IWQoS 2023), where the slowdown depends on the worker count n only.
//
// Model (docs/models/fitting-async.md, "The load contention model"): every worker cycles between
// its own work, Z_k = T_comp_k + 2 g_k S / B_pcie (eqs. (6), (7) without the PS term; nothing
// shared), and one exchange of 2 S bytes with the PS. A worker exchanging alone moves B_req bytes/s
// (eq. (7) at n = 1); when j workers exchange at the same moment the PS splits B_ps evenly, each
// gets min(B_req, B_ps / j) (eq. (8) with P = 1, but j counts the workers communicating NOW, not
// all n). Fast workers spend a larger share of their time at the PS, so they load it more: the
// contention follows the load, not the count.
//
// This is a closed queueing network of two stations: an infinite-server (delay) station for the
// workers' own work and a processor-sharing station with load-dependent capacity
// c(j) = min(j B_req, B_ps) for the PS, one customer class per worker type. Both station types are
// BCMP stations (Baskett, Chandy, Muntz, Palacios, "Open, closed, and mixed networks of queues
// with different classes of customers", JACM 22(2), 1975: types 2 (PS, load-dependent rates
// allowed) and 3 (IS)), so the stationary distribution has product form and depends on the time
// distributions only through their means (insensitivity, same paper and Kelly, "Reversibility
// and Stochastic Networks", 1979, Sec. 3.3): deterministic compute times are covered. With a_k
// workers of type k at the PS (j = sum a_k) and b_k = x_k - a_k working:
//   pi(a) ~ F(j) prod_k Z_k^{b_k} / (a_k! b_k!),   F(j) = prod_{m=1..j} u(m),
//   u(m) = m * 2 S / c(m) = max(2 S / B_req, 2 S m / B_ps)   [seconds]
// and the iteration rate of type k is X_k = G(x - e_k) / G(x), G the normalising constant
// (Buzen, "Computational algorithms for closed queueing networks with exponential servers",
// CACM 16(9), 1973: the convolution algorithm; X = G(N - 1) / G(N) with unit visit ratios).
// G is computed by convolving the per-type factors in log space (no overflow for large n).
//
// Checks: n = 1 gives X = 1 / (Z + 2 S / min(B_req, B_ps)), eq. (6)-(7) at n = 1; B_ps -> infinity
// gives every worker its alone speed; adding a worker never lowers the cluster rate nor raises
// any worker's rate (c(j) non-decreasing), tested in tests/model/ps_load_contention.cpp.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace dnnplan {

namespace detail::ps_load {

inline double log_add(double a, double b) noexcept {
    if (a == -std::numeric_limits<double>::infinity()) return b;
    if (b == -std::numeric_limits<double>::infinity()) return a;
    const double hi = std::max(a, b);
    return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

/// log G for populations `counts` (log of the normalising constant of pi above).
inline double log_normaliser(std::span<const double> work_s, std::span<const std::int32_t> counts,
                             std::span<const double> log_f) {
    const double ninf = -std::numeric_limits<double>::infinity();
    std::vector<double> acc{0.0};  // log of the coefficient of j workers at the PS
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const std::int32_t x = counts[k];
        if (x <= 0) continue;
        const double log_z = std::log(work_s[k]);
        std::vector<double> next(acc.size() + static_cast<std::size_t>(x), ninf);
        for (std::int32_t a = 0; a <= x; ++a) {
            const std::int32_t b = x - a;
            const double term = static_cast<double>(b) * log_z - std::lgamma(static_cast<double>(a) + 1.0) -
                                std::lgamma(static_cast<double>(b) + 1.0);
            for (std::size_t j = 0; j < acc.size(); ++j) {
                double& slot = next[j + static_cast<std::size_t>(a)];
                slot = log_add(slot, acc[j] + term);
            }
        }
        acc = std::move(next);
    }
    double g = ninf;
    for (std::size_t j = 0; j < acc.size(); ++j) g = log_add(g, acc[j] + log_f[j]);
    return g;
}

}  // namespace detail::ps_load

/// Iterations per second of each worker type (per type, all its workers together) under load
/// contention. work_s[k] = Z_k (> 0), counts[k] >= 0 workers of type k, exchange_bytes = 2 S,
/// required / ps bandwidths in bytes/s (> 0). `rates` must hold counts.size() entries.
/// Allocates (vectors of size n); not noexcept for that reason only.
inline void ps_load_type_rates(std::span<const double> work_s, std::span<const std::int32_t> counts,
                               double exchange_bytes, double required_bandwidth_bytes_per_s,
                               double ps_bandwidth_bytes_per_s, std::span<double> rates) {
    std::int64_t n = 0;
    for (const std::int32_t c : counts) n += std::max<std::int32_t>(c, 0);
    // log F(j) = sum_{m <= j} log u(m), u(m) = max(2S / B_req, 2S m / B_ps).
    std::vector<double> log_f(static_cast<std::size_t>(n) + 1, 0.0);
    for (std::int64_t m = 1; m <= n; ++m) {
        const double u = std::max(exchange_bytes / required_bandwidth_bytes_per_s,
                                  exchange_bytes * static_cast<double>(m) / ps_bandwidth_bytes_per_s);
        log_f[static_cast<std::size_t>(m)] = log_f[static_cast<std::size_t>(m - 1)] + std::log(u);
    }
    const double log_g = detail::ps_load::log_normaliser(work_s, counts, log_f);
    std::vector<std::int32_t> less(counts.begin(), counts.end());
    for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] <= 0) {
            rates[k] = 0.0;
            continue;
        }
        less[k] = counts[k] - 1;
        rates[k] = std::exp(detail::ps_load::log_normaliser(work_s, less, log_f) - log_g);
        less[k] = counts[k];
    }
}

/// The cluster's iterations per second (sum over types), eq. (2) of spotDNN with the rates above.
[[nodiscard]] inline double ps_load_iterations_per_s(std::span<const double> work_s, std::span<const std::int32_t> counts,
                                                     double exchange_bytes, double required_bandwidth_bytes_per_s,
                                                     double ps_bandwidth_bytes_per_s) {
    std::vector<double> rates(counts.size(), 0.0);
    ps_load_type_rates(work_s, counts, exchange_bytes, required_bandwidth_bytes_per_s, ps_bandwidth_bytes_per_s, rates);
    double total = 0.0;
    for (const double r : rates) total += r;
    return total;
}

}  // namespace dnnplan
