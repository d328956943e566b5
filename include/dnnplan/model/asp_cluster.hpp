#pragma once
// Figures of a whole asynchronous (ASP) cluster from its workers' iteration times:
// spotDNN (Shang et al., IWQoS 2023), eqs. (1), (2), (4), (5), and the cost of eq. (11).

#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace dnnplan {

/// Instance counts, one entry per instance type of a model (its type order).
using cluster_counts = std::vector<std::int32_t>;

/// Everything the spotDNN models predict for one cluster (see docs/models/).
struct cluster_prediction {
    std::int64_t workers = 0;                 ///< n
    double iterations_per_s = 0.0;            ///< 1 / T_exp, eq. (2)
    double samples_per_s = 0.0;               ///< cluster speed v, eq. (2)
    double expected_iteration_time_s = 0.0;   ///< T_exp, eq. (2)
    double wa_batch = 0.0;                    ///< weighted-average batch b_w, eq. (4)
    double convergence_coefficient = 0.0;     ///< R, eq. (5)
    double normalized_iterations = 0.0;       ///< j at which the loss reaches the target, eq. (3)
    double training_time_s = 0.0;             ///< T = j * T_exp, eq. (1)
    double usd_per_h = 0.0;                   ///< price of the workers (and the PS, if priced)
    double billed_s = 0.0;                    ///< T rounded up to the billing increment
    double cost_usd = 0.0;                    ///< eq. (11) on the billed time

    friend bool operator==(const cluster_prediction&, const cluster_prediction&) = default;
};

/// Speeds of a cluster under asynchronous updates.
struct asp_rates {
    std::int64_t workers = 0;
    double iterations_per_s = 0.0;         ///< sum_i 1 / T_i = 1 / T_exp, eq. (2)
    double samples_per_s = 0.0;            ///< v = sum_i b_i / T_i, eq. (2)
    double wa_batch = 0.0;                 ///< b_w = v * T_exp, eq. (4)
    double convergence_coefficient = 0.0;  ///< R, eq. (5)
};

/// Eqs. (2), (4), (5) for the cluster with `counts[k]` workers of type k. R is the Euclidean
/// distance from the speed shares w_i = v_i / v to the nearest one-hot vector, the one at the
/// fastest worker: R^2 = (1 - w_max)^2 + sum_{i != max} w_i^2. Allocation-free. An empty
/// cluster gives all zeros.
template <asynchronous_throughput_model M>
[[nodiscard]] asp_rates asp_aggregate(const M& model, std::span<const std::int32_t> counts) noexcept {
    asp_rates out;
    for (const std::int32_t c : counts) out.workers += c;
    if (out.workers <= 0) return out;
    double rate = 0.0, speed = 0.0, speed_sq = 0.0, fastest = 0.0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        if (counts[k] <= 0) continue;
        const double x = static_cast<double>(counts[k]);
        const double t = model.iteration_time_s(k, out.workers);
        const double v = model.worker_batch(k) / t;
        rate += x / t;
        speed += x * v;
        speed_sq += x * v * v;
        fastest = std::max(fastest, v);
    }
    out.iterations_per_s = rate;
    out.samples_per_s = speed;
    out.wa_batch = speed / rate;
    const double rest = std::max(0.0, speed - fastest) / speed;  // 1 - w_max
    const double others_sq = std::max(0.0, speed_sq - fastest * fastest) / (speed * speed);
    out.convergence_coefficient = std::sqrt(rest * rest + others_sq);
    return out;
}

/// Adapter from an asynchronous per-worker model to cluster_throughput_model: the speed of a
/// cluster is v = sum_i b_i / T_i of eq. (2) (asp_aggregate). Holds the model by value.
template <asynchronous_throughput_model M>
class asp_cluster_throughput {
public:
    explicit asp_cluster_throughput(M model) : model_(std::move(model)) {}

    [[nodiscard]] std::size_t type_count() const noexcept { return static_cast<std::size_t>(model_.type_count()); }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> instances_per_type) const noexcept {
        return asp_aggregate(model_, instances_per_type).samples_per_s;
    }
    [[nodiscard]] const M& model() const noexcept { return model_; }

    /// The linear bound of linearly_bounded_throughput_model (eq. (2): v = sum_k c[k] b_k / T_k(n)):
    /// with n in [max(1, min_instances, sum lower), sum upper], v <= sum_k c[k] b_k / min_n T_k(n).
    /// Scans the sizes of the box: O(K * (n_hi - n_lo + 1)) model calls. min_samples_per_s is not
    /// used.
    void samples_per_s_linear_bound(std::span<const std::int32_t> lower, std::span<const std::int32_t> upper,
                                    std::span<double> rate, std::int64_t min_instances = 1,
                                    double /*min_samples_per_s*/ = 0.0) const noexcept {
        std::int64_t n_lo = 0, n_hi = 0;
        for (const auto v : lower) n_lo += v;
        for (const auto v : upper) n_hi += v;
        n_lo = std::max<std::int64_t>({n_lo, min_instances, 1});
        for (std::size_t k = 0; k < rate.size(); ++k) {
            if (upper[k] <= 0) {
                rate[k] = 0.0;
                continue;
            }
            double t_min = std::numeric_limits<double>::infinity();
            for (std::int64_t n = n_lo; n <= n_hi; ++n) t_min = std::min(t_min, model_.iteration_time_s(k, n));
            rate[k] = std::isfinite(t_min) ? model_.worker_batch(k) / t_min : 0.0;
        }
    }

private:
    M model_;
};

/// Everything predicted for one cluster: eq. (3) solved for j, T = j * T_exp (eq. 1), and the
/// billed cost (eq. 11). Allocation-free. Requires a non-empty cluster and a target above
/// the loss floor (otherwise the iterations and times are +inf).
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] cluster_prediction predict_cluster(const Throughput& throughput, const Convergence& convergence,
                                                 const Cost& cost, std::span<const std::int32_t> counts,
                                                 double target_loss) noexcept {
    const asp_rates rates = asp_aggregate(throughput, counts);
    cluster_prediction p;
    p.workers = rates.workers;
    p.iterations_per_s = rates.iterations_per_s;
    p.samples_per_s = rates.samples_per_s;
    p.expected_iteration_time_s = 1.0 / rates.iterations_per_s;
    p.wa_batch = rates.wa_batch;
    p.convergence_coefficient = rates.convergence_coefficient;
    p.normalized_iterations =
        convergence.iterations_to_reach(target_loss, rates.workers, rates.wa_batch, rates.convergence_coefficient);
    p.training_time_s = p.normalized_iterations / rates.iterations_per_s;
    p.usd_per_h = cost.fixed_usd_per_h();
    for (std::size_t k = 0; k < counts.size(); ++k)
        p.usd_per_h += static_cast<double>(counts[k]) * cost.type_usd_per_h(k);
    p.billed_s = cost.billed_s(p.training_time_s);
    p.cost_usd = p.billed_s * p.usd_per_h / 3600.0;
    return p;
}

}  // namespace dnnplan
