#pragma once
// VM recommendation (Srifty: Luo et al., "SRIFTY: Swift and Thrifty Distributed Neural Network
// Training on the Cloud", MLSys 2022): given a throughput model of a training job on any mix of
// instance types, a catalog with spot and on-demand prices and quotas, constraints and an
// objective, the best set of VMs with a proof, or the exact cost-vs-time Pareto frontier.
// Every bound used here is proved in docs/solvers/vm-recommend.md (numbers B0-B10 below).
//
// The search space (the same for the branch and bound and the exhaustive oracle): a count
// x[k][kind] >= 0 per offer (an allowed instance type k, an allowed price kind) with
//   x[k][spot] + x[k][on_demand] <= quota[k]          (the quota is shared by both price kinds)
//   sum of all counts <= max_instances                 (when max_instances > 0)
//   number of types with a positive count <= max_distinct_types   (when > 0)
//   sum of all counts >= 1.
// A configuration is feasible when its predicted speed r = samples_per_s(counts per type) is > 0
// and >= min_samples_per_s, its price P <= max_usd_per_h, and, with a deadline, work / r <=
// deadline_s.
//
// Offer dominance (B1): the model sees counts per type only, so moving an instance of type k
// from one price kind to the other keeps r and every space constraint; all objectives and the
// constraints prefer the lower price. The branch and bound therefore searches counts per type,
// each type at its cheapest allowed price (spot on a tie), which loses no optimal value and no
// frontier point. The exhaustive oracle enumerates the offer space itself.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/detail/validate.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>
#include <dnnplan/search/pareto.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

// ---- the model requirement the bounds need ----------------------------------------------------

/// A linear upper bound on a cluster's speed over a box of clusters: after
/// samples_per_s_linear_bound(model, lower, upper, rate), every counts c with lower <= c <= upper
/// (element-wise) has model.samples_per_s(c) <= sum_k c[k] * rate[k], with every rate[k] finite
/// and >= 0. A member function of the same name (without the model argument) works too.
/// The bound may depend on the box (it tightens as the box shrinks) but must hold over all of it.
template <class M>
concept linearly_bounded_throughput_model =
    cluster_throughput_model<M> &&
    (requires(const M& m, std::span<const std::int32_t> c, std::span<double> rate) {
        { m.samples_per_s_linear_bound(c, c, rate) } noexcept;
    } || requires(const M& m, std::span<const std::int32_t> c, std::span<double> rate) {
        { samples_per_s_linear_bound(m, c, c, rate) } noexcept;
    });

/// The bound for spotDNN's asynchronous model (eq. (2): v = sum_k c[k] b_k / T_k(n)): with n in
/// [max(1, min_instances, sum lower), sum upper], v <= sum_k c[k] b_k / min_n T_k(n). Scans the
/// sizes of the box: O(K * (n_hi - n_lo + 1)) model calls. `min_instances`: the bound need only
/// hold for the clusters of the box with at least that many instances (B7 in the docs).
template <asynchronous_throughput_model M>
void samples_per_s_linear_bound(const asp_cluster_throughput<M>& m, std::span<const std::int32_t> lower,
                                std::span<const std::int32_t> upper, std::span<double> rate,
                                std::int64_t min_instances = 1) noexcept {
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
        for (std::int64_t n = n_lo; n <= n_hi; ++n) t_min = std::min(t_min, m.model().iteration_time_s(k, n));
        rate[k] = std::isfinite(t_min) ? m.model().worker_batch(k) / t_min : 0.0;
    }
}

namespace detail {

/// The fewest replicas K of a cluster of the box [lower, upper] with at least `min_instances`
/// instances: the fixed GPUs plus, for each instance still missing, the smallest GPU count of a
/// type with room (B7). With min_instances >= 2, a per-replica batch b and a speed of at least
/// `min_samples_per_s` = r_min (B10): every such cluster has r <= f(K) = K b (s + 1) /
/// combine(t_lo, T_sync(K)), t_lo the smallest T_grad(b) of a type the box allows, so f(K) >=
/// r_min. f is non-decreasing in K when T_sync(K) / K is non-increasing (the ring; Pollux with
/// alpha_n >= 2 beta_n): then K is at least the smallest K with f(K) >= r_min (bisection);
/// otherwise f(K) <= K b / t_lo gives K >= r_min t_lo / b.
[[nodiscard]] inline std::int64_t sync_replicas_lower_bound(const sync_cluster_throughput& m,
                                                            std::span<const std::int32_t> lower,
                                                            std::span<const std::int32_t> upper,
                                                            std::int64_t min_instances,
                                                            double min_samples_per_s = 0.0) noexcept {
    const auto& spec = m.spec();
    std::int64_t n_lo = 0, k_lo = 0, k_hi = 0, g_min = std::numeric_limits<std::int64_t>::max();
    double t_lo = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < lower.size(); ++k) {
        n_lo += lower[k];
        k_lo += std::int64_t{lower[k]} * spec.types[k].gpus;
        k_hi += std::int64_t{upper[k]} * spec.types[k].gpus;
        if (upper[k] > lower[k]) g_min = std::min<std::int64_t>(g_min, spec.types[k].gpus);
        if (upper[k] > 0) t_lo = std::min(t_lo, spec.types[k].compute.at(spec.batch));
    }
    if (n_lo < min_instances && g_min != std::numeric_limits<std::int64_t>::max()) k_lo += (min_instances - n_lo) * g_min;
    if (min_instances < 2 || !(min_samples_per_s > 0.0) || spec.basis != batch_basis::per_replica || !std::isfinite(t_lo))
        return k_lo;
    const double r_min = min_samples_per_s * (1.0 - 1e-9);  // rounding margin
    const bool monotone = spec.ring || spec.network.alpha_n_s >= 2.0 * spec.network.beta_n_s;
    if (!monotone) {
        const double need = std::ceil(r_min * t_lo / spec.batch);
        return need < static_cast<double>(k_hi) ? std::max(k_lo, static_cast<std::int64_t>(need)) : std::max(k_lo, k_hi);
    }
    const double steps = static_cast<double>(spec.accumulation_steps) + 1.0;
    const auto f = [&](std::int64_t replicas) {
        const double sync = spec.ring ? ring_sync_time_s(*spec.ring, replicas, 2) : pollux_sync_time_s(spec.network, replicas, 2);
        return static_cast<double>(replicas) * spec.batch * steps /
               combine_step_time_s(t_lo, sync, spec.network.gamma, spec.accumulation_steps);
    };
    std::int64_t lo = std::max<std::int64_t>(k_lo, 2), hi = std::max(lo, k_hi);
    if (f(lo) >= r_min) return lo;
    if (!(f(hi) >= r_min)) return hi;  // no cluster of the box is that fast: any K is a valid bound
    while (hi - lo > 1) {  // f(lo) < r_min <= f(hi)
        const std::int64_t mid = lo + (hi - lo) / 2;
        (f(mid) >= r_min ? hi : lo) = mid;
    }
    return hi;
}

/// min T_sync over the clusters of the box [lower, upper] (at least max(1, min_instances)
/// instances). T_sync depends on the replicas K and on whether the cluster spans one node (N = 1)
/// or more, and is non-decreasing in K for each (Pollux: beta >= 0; ring: 2 (K - 1) / K grows),
/// so the minimum is at the smallest K of each case (B0, B7).
[[nodiscard]] inline double sync_time_lower_bound_s(const sync_cluster_throughput& m, std::span<const std::int32_t> lower,
                                                    std::span<const std::int32_t> upper,
                                                    std::int64_t min_instances = 1,
                                                    double min_samples_per_s = 0.0) noexcept {
    const auto& spec = m.spec();
    const auto sync = [&](std::int64_t replicas, std::int64_t nodes) {
        return spec.ring ? ring_sync_time_s(*spec.ring, replicas, nodes) : pollux_sync_time_s(spec.network, replicas, nodes);
    };
    std::int64_t n_lo = 0, n_hi = 0;
    for (std::size_t k = 0; k < lower.size(); ++k) {
        n_lo += lower[k];
        n_hi += upper[k];
    }
    const std::int64_t k_lo = sync_replicas_lower_bound(m, lower, upper, min_instances, min_samples_per_s);
    double best = std::numeric_limits<double>::infinity();
    if (n_lo <= 1 && min_instances <= 1) {  // one instance: it is the fixed one, or any type the box allows
        for (std::size_t k = 0; k < lower.size(); ++k)
            if (upper[k] >= 1 && (n_lo == 0 || lower[k] == 1)) best = std::min(best, sync(spec.types[k].gpus, 1));
    }
    if (n_hi >= 2) best = std::min(best, sync(std::max<std::int64_t>(k_lo, 2), 2));
    return best;
}

}  // namespace detail

/// The bound for the synchronous data-parallel model (model/sync_data_parallel.hpp), proved in
/// docs/solvers/vm-recommend.md ("B0"). With s accumulation steps, T_s >= T_s,min over the box and
/// combine(c, t) = s c + (c^gamma + t^gamma)^(1/gamma) increasing in both arguments:
///  - equal batches: step >= combine(T_grad,k(m), T_s,min) for every type k present, so each of
///    its g_k replicas adds at most m_max (s + 1) / combine(T_grad,k(m_min), T_s,min), where m is
///    the local batch (per_replica: the batch; global: batch / K, K in [K_lo, K_hi]);
///  - balanced batches: B = sum_i n_i (L - alpha_i) / beta_i <= sum_i n_i (T - alpha_i) / beta_i
///    with T = max(L, max alpha) the compute time, and (T - alpha) / combine(T, t) is
///    non-decreasing in T, so T may be replaced by an upper bound T_hi over the box.
/// `min_instances` (B7) and `min_samples_per_s` (B10): the bound need only hold for the clusters
/// with at least that many instances and at least that speed (the branch and bound evaluates the
/// one-instance clusters first and then passes 2; it passes the speed every feasible or
/// non-dominated completion needs). Only K_lo (hence T_s,min) uses them, never m_max.
inline void samples_per_s_linear_bound(const sync_cluster_throughput& m, std::span<const std::int32_t> lower,
                                       std::span<const std::int32_t> upper, std::span<double> rate,
                                       std::int64_t min_instances = 1, double min_samples_per_s = 0.0) noexcept {
    const auto& spec = m.spec();
    const double steps = static_cast<double>(spec.accumulation_steps) + 1.0;
    const double t_sync = detail::sync_time_lower_bound_s(m, lower, upper, min_instances, min_samples_per_s);
    const auto combine = [&](double compute_s) {
        return combine_step_time_s(compute_s, t_sync, spec.network.gamma, spec.accumulation_steps);
    };
    std::int64_t k_hi = 0;
    double inv_beta_lo = 0.0, inv_beta_min = std::numeric_limits<double>::infinity(), alpha_max = 0.0,
           per_replica_t_max = 0.0;
    for (std::size_t k = 0; k < lower.size(); ++k) {
        const auto& t = spec.types[k];
        k_hi += std::int64_t{upper[k]} * t.gpus;
        inv_beta_lo += static_cast<double>(lower[k]) * t.gpus / t.compute.beta_c_s;
        if (upper[k] > 0) {
            inv_beta_min = std::min(inv_beta_min, static_cast<double>(t.gpus) / t.compute.beta_c_s);
            alpha_max = std::max(alpha_max, t.compute.alpha_c_s);
            per_replica_t_max = std::max(per_replica_t_max, t.compute.at(spec.batch));
        }
    }
    const std::int64_t k_lo = std::max<std::int64_t>(detail::sync_replicas_lower_bound(m, lower, upper, min_instances), 1);
    const bool global = spec.basis == batch_basis::global;
    if (spec.policy == batch_policy::equal) {
        const double m_max = global ? spec.batch / static_cast<double>(k_lo) : spec.batch;
        const double m_min = global ? spec.batch / static_cast<double>(std::max<std::int64_t>(k_hi, 1)) : spec.batch;
        // The step waits for the slowest replica, and the types with lower[k] > 0 are present.
        double fixed_floor = 0.0;
        for (std::size_t k = 0; k < rate.size(); ++k)
            if (lower[k] > 0) fixed_floor = std::max(fixed_floor, spec.types[k].compute.at(m_min));
        for (std::size_t k = 0; k < rate.size(); ++k) {
            const auto& t = spec.types[k];
            rate[k] = upper[k] > 0 ? static_cast<double>(t.gpus) * m_max * steps /
                                         combine(std::max(t.compute.at(m_min), fixed_floor))
                                   : 0.0;
        }
        return;
    }
    // Balanced: the level L = (B + sum n alpha / beta) / (sum n / beta) is a weighted mean of
    // alpha_i + beta_i * batch (per_replica), or at most B / (sum n / beta) + max alpha (global).
    const double t_hi = global ? spec.batch / std::max(inv_beta_lo, inv_beta_min) + alpha_max
                               : std::max(per_replica_t_max, alpha_max);
    const double denominator = combine(t_hi);
    for (std::size_t k = 0; k < rate.size(); ++k) {
        const auto& t = spec.types[k];
        rate[k] = upper[k] > 0 ? static_cast<double>(t.gpus) * steps * (t_hi - t.compute.alpha_c_s) /
                                     (t.compute.beta_c_s * denominator)
                               : 0.0;
    }
}

/// An optional second bound a model may give (found like samples_per_s_linear_bound): a
/// number >= samples_per_s(c) for every c in the box [lower, upper] with sum c <= max_instances.
/// It captures what a linear bound cannot, e.g. a synchronisation time that grows with the
/// cluster and caps its speed; the branch and bound uses the smaller of the two.
template <class M>
concept box_bounded_throughput_model =
    cluster_throughput_model<M> &&
    (requires(const M& m, std::span<const std::int32_t> c, std::int64_t n) {
        { m.samples_per_s_upper_bound(c, c, n) } noexcept -> std::same_as<double>;
    } || requires(const M& m, std::span<const std::int32_t> c, std::int64_t n) {
        { samples_per_s_upper_bound(m, c, c, n) } noexcept -> std::same_as<double>;
    });

/// The box bound of the synchronous model ("B0'" and "B8" in the docs), over the clusters c of
/// the box [lower, upper] with min_instances <= sum c <= max_instances. Clusters of one instance
/// are bounded by their speed, exactly. Clusters of N >= 2 instances have K in [K_1, K_2]
/// replicas (K_1 >= max(K_lo, 2), K_2 the most GPUs the remaining instance slots can add), a
/// compute time T_c >= t and step = s T_c + (T_c^gamma + T_sync(K)^gamma)^(1/gamma), increasing
/// in T_c and T_sync. Per-replica batch b: r = b (s + 1) / (step / K), and step / K = combine(T_c /
/// K, T_sync(K) / K) (1-homogeneity) with T_sync(K) / K monotone in K (Pollux: beta + (alpha - 2
/// beta) / K; ring: decreasing), so step / K >= combine(t / K_2, min(T_sync(K_1) / K_1,
/// T_sync(K_2) / K_2)). Global batch B: r = B (s + 1) / step <= B (s + 1) / combine(t,
/// T_sync(K_1)). B8 couples t with K_2 for a per-replica batch: with equal batches the slowest
/// present type j gives T_c >= T_j(b) and every present type has T_k(b) <= T_j(b); balanced
/// batches (LB-BSP) make T_c >= L, a weighted mean of the present T_k(b), so T_c >= T_j(b) for
/// the fastest present type j and every present type has T_k(b) >= T_j(b). The bound is the
/// maximum over the possible j of the bound with t = T_j(b) and K_2 from the types on j's side.
inline double samples_per_s_upper_bound(const sync_cluster_throughput& m, std::span<const std::int32_t> lower,
                                        std::span<const std::int32_t> upper, std::int64_t max_instances,
                                        std::int64_t min_instances = 1) noexcept {
    const auto& spec = m.spec();
    const double steps = static_cast<double>(spec.accumulation_steps) + 1.0;
    const bool global = spec.basis == batch_basis::global;
    const std::size_t n_types = std::min(lower.size(), spec.types.size());
    std::int64_t n_lo = 0, k_lo = 0, free_instances = 0;
    double inv_beta_hi = 0.0;
    for (std::size_t k = 0; k < n_types; ++k) {
        n_lo += lower[k];
        k_lo += std::int64_t{lower[k]} * spec.types[k].gpus;
        inv_beta_hi += static_cast<double>(upper[k]) * spec.types[k].gpus / spec.types[k].compute.beta_c_s;
        free_instances += std::int64_t{upper[k]} - lower[k];
    }
    double best = 0.0;
    if (n_lo <= 1 && min_instances <= 1) {  // one instance of type k: g_k replicas on one node, its speed exactly
        for (std::size_t k = 0; k < n_types; ++k) {
            if (!(upper[k] >= 1 && (n_lo == 0 || lower[k] == 1))) continue;
            const auto& t = spec.types[k];
            const double g = static_cast<double>(t.gpus);
            const double local = global ? spec.batch / g : spec.batch;
            const double sync1 = spec.ring ? ring_sync_time_s(*spec.ring, t.gpus, 1) : pollux_sync_time_s(spec.network, t.gpus, 1);
            best = std::max(best, g * local * steps /
                                      combine_step_time_s(t.compute.at(local), sync1, spec.network.gamma, spec.accumulation_steps));
        }
    }
    const std::int64_t slots = std::max<std::int64_t>(0, std::min(max_instances - n_lo, free_instances));
    if (max_instances < 2 || n_lo + slots < 2) return best;
    // N >= 2 from here.
    const auto sync = [&](std::int64_t replicas) {
        return spec.ring ? ring_sync_time_s(*spec.ring, replicas, 2) : pollux_sync_time_s(spec.network, replicas, 2);
    };
    const auto combine = [&](double compute_s, double sync_s) {
        return combine_step_time_s(compute_s, sync_s, spec.network.gamma, spec.accumulation_steps);
    };
    const std::int64_t k_1 =
        std::max<std::int64_t>(detail::sync_replicas_lower_bound(m, lower, upper, std::max<std::int64_t>(min_instances, 2)), 2);
    // K_2 over the types `in(k)` admits: the fixed GPUs plus the remaining slots, each at most the
    // largest GPU count with room, and no more than the room's GPUs (B0').
    const auto k_2_of = [&](const auto& in) {
        std::int64_t room_gpus = 0, room_instances = 0, g_max = 0;
        for (std::size_t k = 0; k < n_types; ++k) {
            const std::int64_t room = std::int64_t{upper[k]} - lower[k];
            if (room <= 0 || !in(k)) continue;
            room_gpus += room * spec.types[k].gpus;
            room_instances += room;
            g_max = std::max<std::int64_t>(g_max, spec.types[k].gpus);
        }
        return k_lo + std::min(room_gpus, std::min(slots, room_instances) * g_max);
    };
    // The per-replica bound for t and K in [k_1, k_2] (needs n_lo + slots >= 2 on that side).
    const auto per_replica_bound = [&](double t, std::int64_t k_2) {
        if (k_2 < k_1) return 0.0;
        const double k1 = static_cast<double>(k_1), k2 = static_cast<double>(k_2);
        const double sync_per_replica = std::min(sync(k_1) / k1, sync(k_2) / k2);
        return spec.batch * steps / combine(t / k2, sync_per_replica);
    };
    if (!global) {
        // B8: j is the slowest present type (equal) or the fastest (balanced).
        const bool equal = spec.policy == batch_policy::equal;
        double fixed_slowest = 0.0, fixed_fastest = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < n_types; ++k) {
            if (lower[k] <= 0) continue;
            fixed_slowest = std::max(fixed_slowest, spec.types[k].compute.at(spec.batch));
            fixed_fastest = std::min(fixed_fastest, spec.types[k].compute.at(spec.batch));
        }
        for (std::size_t j = 0; j < n_types; ++j) {
            if (upper[j] <= 0) continue;
            const double t_j = spec.types[j].compute.at(spec.batch);
            if (equal ? t_j < fixed_slowest : t_j > fixed_fastest) continue;  // a fixed type would be on the wrong side
            bool seen = false;  // the same threshold twice gives the same bound
            for (std::size_t i = 0; i < j && !seen; ++i) seen = upper[i] > 0 && spec.types[i].compute.at(spec.batch) == t_j;
            if (seen) continue;
            const std::int64_t k_2 = k_2_of([&](std::size_t k) {
                const double t_k = spec.types[k].compute.at(spec.batch);
                return equal ? t_k <= t_j : t_k >= t_j;
            });
            const double cheap = spec.batch * static_cast<double>(k_2) / t_j;  // compute only: >= the bound below
            if (cheap <= best) continue;
            best = std::max(best, per_replica_bound(t_j, k_2));
        }
        return best;
    }
    const std::int64_t k_max = k_2_of([](std::size_t) { return true; });
    if (k_max < k_1) return best;
    double t_c_lo = std::numeric_limits<double>::infinity();
    const double local = spec.batch / static_cast<double>(k_max);
    for (std::size_t k = 0; k < n_types; ++k)
        if (upper[k] > 0) t_c_lo = std::min(t_c_lo, spec.types[k].compute.at(local));
    if (spec.policy == batch_policy::equal) {  // the slowest present replica sets the step
        for (std::size_t k = 0; k < n_types; ++k)
            if (lower[k] > 0) t_c_lo = std::max(t_c_lo, spec.types[k].compute.at(local));
    } else {
        t_c_lo = inv_beta_hi > 0.0 ? spec.batch / inv_beta_hi : 0.0;
    }
    if (!std::isfinite(t_c_lo)) return best;  // an empty box
    return std::max(best, spec.batch * steps / combine(t_c_lo, sync(k_1)));
}

// ---- problem, options, result -----------------------------------------------------------------

enum class vm_objective {
    min_cost,             ///< USD to finish the work (when work is given), else USD/h
    max_throughput,       ///< samples/s
    max_samples_per_usd,  ///< samples per USD (3600 r / P)
};

[[nodiscard]] constexpr std::string_view to_string(vm_objective o) noexcept {
    switch (o) {
        case vm_objective::min_cost: return "min_cost";
        case vm_objective::max_throughput: return "max_throughput";
        case vm_objective::max_samples_per_usd: return "max_samples_per_usd";
    }
    return "unknown";
}

enum class vm_method {
    branch_and_bound,  ///< counts per type, bounds B0-B10 (needs linearly_bounded_throughput_model)
    exhaustive,        ///< every configuration of the offer space: the oracle
};

[[nodiscard]] constexpr std::string_view to_string(vm_method m) noexcept {
    return m == vm_method::branch_and_bound ? "branch_and_bound" : "exhaustive";
}

/// The work to finish: `samples`, or `epochs` passes over `dataset_samples` (at most one form).
struct vm_work {
    double samples = 0.0;          ///< 0: not given this way
    double epochs = 0.0;           ///< 0: not given this way
    double dataset_samples = 0.0;  ///< samples per epoch; needed with epochs

    [[nodiscard]] double total_samples() const noexcept { return samples > 0.0 ? samples : epochs * dataset_samples; }
    [[nodiscard]] bool given() const noexcept { return total_samples() > 0.0; }

    void validate(std::string_view path = "work") const {
        const std::string base = detail::field_prefix(path);
        detail::require_non_negative(base + "samples", samples);
        detail::require_non_negative(base + "epochs", epochs);
        detail::require_non_negative(base + "dataset_samples", dataset_samples);
        if (samples > 0.0 && epochs > 0.0)
            throw invalid_input(base + "epochs", detail::format_number(epochs),
                                "0 when work.samples is given (one form of the work)");
        if (epochs > 0.0 && !(dataset_samples > 0.0))
            throw invalid_input(base + "dataset_samples", detail::format_number(dataset_samples),
                                "a number > 0 when work.epochs is given");
        if (!std::isfinite(total_samples()))
            throw invalid_input(base + "epochs", detail::format_number(epochs),
                                "epochs * dataset_samples finite");
    }
};

struct vm_constraints {
    double max_usd_per_h = std::numeric_limits<double>::infinity();  ///< +inf: no budget
    double min_samples_per_s = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();  ///< +inf: none; needs work
    std::int32_t max_instances = 0;       ///< 0: quotas only
    std::int32_t max_distinct_types = 0;  ///< 0: no limit
    std::vector<std::string> allowed_types{};  ///< empty: every catalog type
    std::vector<price_kind> allowed_price_kinds{price_kind::spot, price_kind::on_demand};

    void validate(const instance_catalog& catalog, bool work_given, std::string_view path = "constraints") const {
        const std::string base = detail::field_prefix(path);
        if (!(max_usd_per_h > 0.0) || std::isnan(max_usd_per_h))
            throw invalid_input(base + "max_usd_per_h", detail::format_number(max_usd_per_h), "a number > 0 (or +inf)");
        detail::require_non_negative(base + "min_samples_per_s", min_samples_per_s);
        if (!(deadline_s > 0.0) || std::isnan(deadline_s))
            throw invalid_input(base + "deadline_s", detail::format_number(deadline_s), "a number > 0 (or +inf)");
        if (std::isfinite(deadline_s) && !work_given)
            throw invalid_input(base + "deadline_s", detail::format_number(deadline_s),
                                "+inf (no deadline) unless work is given (work.samples or work.epochs)");
        detail::require_at_least(base + "max_instances", max_instances, 0);
        detail::require_at_least(base + "max_distinct_types", max_distinct_types, 0);
        for (std::size_t i = 0; i < allowed_types.size(); ++i) {
            const std::string at = base + "allowed_types[" + std::to_string(i) + "]";
            if (!catalog.find(allowed_types[i]))
                throw invalid_input(at, '"' + allowed_types[i] + '"', "the name of an instance type in the catalog");
            for (std::size_t j = 0; j < i; ++j)
                if (allowed_types[j] == allowed_types[i])
                    throw invalid_input(at, '"' + allowed_types[i] + '"', "a name not listed twice");
        }
        if (allowed_price_kinds.empty())
            throw invalid_input(base + "allowed_price_kinds", "[]", "at least one of \"spot\", \"on_demand\"");
        for (std::size_t i = 0; i < allowed_price_kinds.size(); ++i) {
            const auto kind = allowed_price_kinds[i];
            if (kind != price_kind::spot && kind != price_kind::on_demand)
                throw invalid_input(base + "allowed_price_kinds[" + std::to_string(i) + "]", "?", "\"spot\" or \"on_demand\"");
            for (std::size_t j = 0; j < i; ++j)
                if (allowed_price_kinds[j] == kind)
                    throw invalid_input(base + "allowed_price_kinds[" + std::to_string(i) + "]",
                                        '"' + std::string(to_string(kind)) + '"', "a price kind not listed twice");
        }
    }

    [[nodiscard]] bool allows(std::string_view type) const noexcept {
        return allowed_types.empty() || std::find(allowed_types.begin(), allowed_types.end(), type) != allowed_types.end();
    }
    [[nodiscard]] bool allows(price_kind kind) const noexcept {
        return std::find(allowed_price_kinds.begin(), allowed_price_kinds.end(), kind) != allowed_price_kinds.end();
    }
};

/// Everything but the throughput model (which is a template argument of recommend_vms): the
/// model's type k is catalog.instances[k].
struct vm_problem {
    instance_catalog catalog{};
    vm_work work{};
    vm_constraints constraints{};
    vm_objective objective = vm_objective::min_cost;

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        catalog.validate(p + "catalog");
        work.validate(p + "work");
        constraints.validate(catalog, work.given(), p + "constraints");
    }
};

struct vm_options {
    vm_method method = vm_method::branch_and_bound;
    bool pareto = false;                ///< also compute the exact Pareto frontier
    std::int64_t node_budget = 0;       ///< branch and bound: most nodes per search (0: unlimited)
    std::int64_t evaluation_budget = 0; ///< most model evaluations per search (0: unlimited)
    double relative_gap = 1e-9;         ///< cut a subtree whose bound is within this of the incumbent

    void validate(std::string_view path = "options") const {
        const std::string base = detail::field_prefix(path);
        detail::require_at_least(base + "node_budget", node_budget, 0);
        detail::require_at_least(base + "evaluation_budget", evaluation_budget, 0);
        if (!(relative_gap >= 0.0 && relative_gap < 1.0))
            throw invalid_input(base + "relative_gap", detail::format_number(relative_gap), "a number in [0, 1)");
    }
};

/// Instances of one offer in a configuration.
struct vm_offer_count {
    std::string type{};
    price_kind kind = price_kind::spot;
    std::int32_t count = 0;
    friend bool operator==(const vm_offer_count&, const vm_offer_count&) = default;
};

/// Predicted figures of one configuration.
struct vm_figures {
    std::int64_t instances = 0;
    std::int64_t gpus = 0;
    double samples_per_s = 0.0;
    double usd_per_h = 0.0;
    double samples_per_usd = 0.0;            ///< 3600 r / P
    std::optional<double> time_s{};          ///< work / r, when work is given
    std::optional<double> cost_usd{};        ///< time_s * P / 3600, when work is given
};

struct vm_configuration {
    std::vector<vm_offer_count> offers{};  ///< positive counts only, catalog order, spot first
    vm_figures figures{};
};

struct vm_result {
    solve_status status = solve_status::infeasible;
    std::string reason{};                   ///< why, for every status but optimal
    vm_method method = vm_method::branch_and_bound;  ///< the method that ran
    std::optional<vm_configuration> best{};
    /// The objective of `best` in its unit (USD or USD/h for min_cost, samples/s, samples/USD);
    /// NaN without a plan.
    double objective_value = std::numeric_limits<double>::quiet_NaN();
    /// Proven bound on the objective over the whole space: a lower bound for min_cost, an upper
    /// bound for the max_ objectives. When optimal, objective_value moved by options.relative_gap
    /// (the cut tolerance) towards the better side; +-inf (the side no plan can reach) when
    /// infeasible.
    double objective_bound = std::numeric_limits<double>::quiet_NaN();
    search_counters counters{};
    /// With options.pareto: the exact frontier, fastest first. With work: time_s ascending,
    /// cost_usd descending; without: samples_per_s descending, usd_per_h descending.
    std::vector<vm_configuration> frontier{};
    std::optional<solve_status> frontier_status{};  ///< optimal (exact) or budget_exhausted
    search_counters frontier_counters{};
};

namespace detail {

// ---- shared by both methods ---------------------------------------------------------------------

/// The model's linear bound over the box; a model whose bound takes a trailing `min_instances`
/// (the bound need only hold for the clusters with at least that many instances, B7) gets it.
template <class M>
void call_linear_bound(const M& model, std::span<const std::int32_t> lo, std::span<const std::int32_t> hi,
                       std::span<double> rate, std::int64_t min_instances, double min_samples_per_s = 0.0) noexcept {
    if constexpr (requires { model.samples_per_s_linear_bound(lo, hi, rate, min_instances, min_samples_per_s); })
        model.samples_per_s_linear_bound(lo, hi, rate, min_instances, min_samples_per_s);
    else if constexpr (requires { samples_per_s_linear_bound(model, lo, hi, rate, min_instances, min_samples_per_s); })
        samples_per_s_linear_bound(model, lo, hi, rate, min_instances, min_samples_per_s);
    else if constexpr (requires { model.samples_per_s_linear_bound(lo, hi, rate, min_instances); })
        model.samples_per_s_linear_bound(lo, hi, rate, min_instances);
    else if constexpr (requires { model.samples_per_s_linear_bound(lo, hi, rate); })
        model.samples_per_s_linear_bound(lo, hi, rate);
    else if constexpr (requires { samples_per_s_linear_bound(model, lo, hi, rate, min_instances); })
        samples_per_s_linear_bound(model, lo, hi, rate, min_instances);
    else
        samples_per_s_linear_bound(model, lo, hi, rate);
}

template <class M>
[[nodiscard]] double call_box_bound(const M& model, std::span<const std::int32_t> lo, std::span<const std::int32_t> hi,
                                    std::int64_t max_instances, std::int64_t min_instances) noexcept {
    if constexpr (requires { model.samples_per_s_upper_bound(lo, hi, max_instances, min_instances); })
        return model.samples_per_s_upper_bound(lo, hi, max_instances, min_instances);
    else if constexpr (requires { model.samples_per_s_upper_bound(lo, hi, max_instances); })
        return model.samples_per_s_upper_bound(lo, hi, max_instances);
    else if constexpr (requires { samples_per_s_upper_bound(model, lo, hi, max_instances, min_instances); })
        return samples_per_s_upper_bound(model, lo, hi, max_instances, min_instances);
    else if constexpr (box_bounded_throughput_model<M>)
        return samples_per_s_upper_bound(model, lo, hi, max_instances);
    else
        return std::numeric_limits<double>::infinity();
}

/// The inputs of a search, after validation: what both methods read.
struct vm_space {
    std::size_t k_count = 0;
    std::vector<std::int32_t> quota;       ///< 0 for a type not allowed (or with no allowed kind)
    std::vector<double> spot_usd_per_h;    ///< +inf when spot is not allowed
    std::vector<double> on_demand_usd_per_h;
    std::vector<double> gpus;
    std::int64_t max_instances = 0;        ///< effective cap (sum of quotas without one)
    std::int64_t max_distinct = 0;         ///< effective cap (k_count without one)
    double work = 0.0;
    double min_samples_per_s = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();
    double max_usd_per_h = std::numeric_limits<double>::infinity();
    vm_objective objective = vm_objective::min_cost;

    [[nodiscard]] double cheapest(std::size_t k) const noexcept {
        return std::min(spot_usd_per_h[k], on_demand_usd_per_h[k]);
    }
    [[nodiscard]] price_kind cheapest_kind(std::size_t k) const noexcept {
        return spot_usd_per_h[k] <= on_demand_usd_per_h[k] ? price_kind::spot : price_kind::on_demand;
    }
};

[[nodiscard]] inline vm_space make_vm_space(const vm_problem& problem) {
    vm_space s;
    const auto& types = problem.catalog.instances;
    const auto& c = problem.constraints;
    s.k_count = types.size();
    const double inf = std::numeric_limits<double>::infinity();
    std::int64_t quota_sum = 0;
    for (const auto& t : types) {
        const bool type_ok = c.allows(t.name) && (c.allows(price_kind::spot) || c.allows(price_kind::on_demand));
        s.quota.push_back(type_ok ? t.quota : 0);
        s.spot_usd_per_h.push_back(c.allows(price_kind::spot) ? t.spot_usd_per_h : inf);
        s.on_demand_usd_per_h.push_back(c.allows(price_kind::on_demand) ? t.on_demand_usd_per_h : inf);
        s.gpus.push_back(static_cast<double>(t.gpus));
        quota_sum += s.quota.back();
    }
    s.max_instances = c.max_instances > 0 ? std::min<std::int64_t>(c.max_instances, quota_sum) : quota_sum;
    s.max_distinct = c.max_distinct_types > 0 ? std::min<std::int64_t>(c.max_distinct_types, static_cast<std::int64_t>(s.k_count))
                                              : static_cast<std::int64_t>(s.k_count);
    s.work = problem.work.total_samples();
    s.min_samples_per_s = c.min_samples_per_s;
    s.deadline_s = c.deadline_s;
    s.max_usd_per_h = c.max_usd_per_h;
    s.objective = problem.objective;
    return s;
}

/// Price of a configuration given as counts per offer (2k: spot, 2k + 1: on demand), summed in
/// type order: the branch and bound (all of a type at one kind) and the oracle get the same bits
/// for the same configuration.
[[nodiscard]] inline double vm_price(const vm_space& s, std::span<const std::int32_t> offer_counts) noexcept {
    double price = 0.0;
    for (std::size_t k = 0; k < s.k_count; ++k) {
        const std::int32_t spot = offer_counts[2 * k], on_demand = offer_counts[2 * k + 1];
        double type_price = 0.0;
        if (spot > 0) type_price += static_cast<double>(spot) * s.spot_usd_per_h[k];
        if (on_demand > 0) type_price += static_cast<double>(on_demand) * s.on_demand_usd_per_h[k];
        price += type_price;
    }
    return price;
}

[[nodiscard]] inline vm_figures vm_make_figures(const vm_space& s, std::span<const std::int32_t> type_counts,
                                                double samples_per_s, double usd_per_h) noexcept {
    vm_figures f;
    for (std::size_t k = 0; k < s.k_count; ++k) {
        f.instances += type_counts[k];
        f.gpus += static_cast<std::int64_t>(type_counts[k]) * static_cast<std::int64_t>(s.gpus[k]);
    }
    f.samples_per_s = samples_per_s;
    f.usd_per_h = usd_per_h;
    f.samples_per_usd = 3600.0 * samples_per_s / usd_per_h;
    if (s.work > 0.0) {
        f.time_s = s.work / samples_per_s;
        f.cost_usd = *f.time_s * usd_per_h / 3600.0;
    }
    return f;
}

[[nodiscard]] inline bool vm_feasible(const vm_space& s, const vm_figures& f) noexcept {
    if (!(f.samples_per_s > 0.0) || !std::isfinite(f.samples_per_s)) return false;
    if (f.samples_per_s < s.min_samples_per_s) return false;
    if (f.usd_per_h > s.max_usd_per_h) return false;
    if (f.time_s && *f.time_s > s.deadline_s) return false;
    return true;
}

/// The objective as a key to minimise: min_cost as is, the max_ objectives negated.
[[nodiscard]] inline double vm_key(const vm_space& s, const vm_figures& f) noexcept {
    switch (s.objective) {
        case vm_objective::min_cost: return f.cost_usd ? *f.cost_usd : f.usd_per_h;
        case vm_objective::max_throughput: return -f.samples_per_s;
        case vm_objective::max_samples_per_usd: return -f.samples_per_usd;
    }
    return 0.0;
}

[[nodiscard]] inline double vm_value_of_key(const vm_space& s, double key) noexcept {
    return s.objective == vm_objective::min_cost ? key : -key;
}

/// Frontier coordinates, both minimised: (time_s, cost_usd) with work, (-samples_per_s, usd_per_h) without.
[[nodiscard]] inline std::pair<double, double> vm_frontier_point(const vm_figures& f) noexcept {
    if (f.time_s) return {*f.time_s, *f.cost_usd};
    return {-f.samples_per_s, f.usd_per_h};
}

/// The best configuration offered so far (strictly better keys replace; ties keep the first).
struct vm_incumbent {
    double key = std::numeric_limits<double>::infinity();
    std::vector<std::int32_t> offer_counts;
    std::vector<std::int32_t> type_counts;
    std::optional<vm_figures> figures;

    void offer(double k, std::span<const std::int32_t> offers, std::span<const std::int32_t> types, const vm_figures& f) {
        if (figures && !(k < key)) return;
        key = k;
        offer_counts.assign(offers.begin(), offers.end());
        type_counts.assign(types.begin(), types.end());
        figures = f;
    }
};

struct vm_frontier_payload {
    std::vector<std::int32_t> offer_counts;
    vm_figures figures;
};

[[nodiscard]] inline vm_configuration vm_make_configuration(const instance_catalog& catalog,
                                                            std::span<const std::int32_t> offer_counts,
                                                            const vm_figures& figures) {
    vm_configuration c;
    for (std::size_t k = 0; k < catalog.instances.size(); ++k) {
        if (offer_counts[2 * k] > 0)
            c.offers.push_back({.type = catalog.instances[k].name, .kind = price_kind::spot, .count = offer_counts[2 * k]});
        if (offer_counts[2 * k + 1] > 0)
            c.offers.push_back(
                {.type = catalog.instances[k].name, .kind = price_kind::on_demand, .count = offer_counts[2 * k + 1]});
    }
    c.figures = figures;
    return c;
}

/// What a search hands back to recommend_vms.
struct vm_search_outcome {
    bool stopped = false;
    double unexplored_key_lb = std::numeric_limits<double>::infinity();  ///< bound of subtrees not searched
    vm_incumbent best;
    pareto_frontier<vm_frontier_payload> frontier;
    search_counters counters;
};

// ---- the exhaustive oracle ------------------------------------------------------------------------

/// Every configuration of the offer space (odometer over the offers' counts, skipping those that
/// break a space constraint). O(prod (quota_k + 1)^2) configurations.
template <cluster_throughput_model M>
[[nodiscard]] vm_search_outcome vm_exhaustive(const M& model, const vm_space& s, bool pareto,
                                              const vm_options& options) {
    vm_search_outcome out;
    std::vector<std::size_t> offers;  // offer indices 2k + kind that are allowed
    for (std::size_t k = 0; k < s.k_count; ++k) {
        if (s.quota[k] <= 0) continue;
        if (std::isfinite(s.spot_usd_per_h[k])) offers.push_back(2 * k);
        if (std::isfinite(s.on_demand_usd_per_h[k])) offers.push_back(2 * k + 1);
    }
    std::vector<std::int32_t> x(2 * s.k_count, 0), types(s.k_count, 0);
    if (offers.empty()) return out;
    while (true) {
        // Next configuration: odometer over the allowed offers, each in [0, quota of its type].
        std::size_t i = 0;
        while (i < offers.size()) {
            const std::size_t o = offers[i];
            if (x[o] < s.quota[o / 2]) {
                ++x[o];
                break;
            }
            x[o] = 0;
            ++i;
        }
        if (i == offers.size()) break;  // wrapped around to all zeros: done
        std::int64_t total = 0, distinct = 0;
        bool ok = true;
        for (std::size_t k = 0; k < s.k_count; ++k) {
            types[k] = x[2 * k] + x[2 * k + 1];
            if (types[k] > s.quota[k]) ok = false;
            total += types[k];
            distinct += types[k] > 0 ? 1 : 0;
        }
        if (!ok || total > s.max_instances || distinct > s.max_distinct) continue;
        if (options.evaluation_budget > 0 && out.counters.clusters_evaluated >= options.evaluation_budget) {
            out.stopped = true;
            out.unexplored_key_lb = -std::numeric_limits<double>::infinity();
            break;
        }
        ++out.counters.clusters_evaluated;
        const double r = model.samples_per_s(std::span<const std::int32_t>(types));
        const vm_figures f = vm_make_figures(s, types, r, vm_price(s, x));
        if (!vm_feasible(s, f)) continue;
        if (pareto) {
            const auto [a, b] = vm_frontier_point(f);
            out.frontier.offer(a, b, vm_frontier_payload{.offer_counts = x, .figures = f});
        } else {
            out.best.offer(vm_key(s, f), x, types, f);
        }
    }
    return out;
}

// ---- the branch and bound -----------------------------------------------------------------------

/// Depth-first branch and bound over counts per type (each at its cheapest allowed price, B1).
/// The one-instance clusters are evaluated first, then the tree covers the clusters of at least
/// two instances (B7). One level per usable type; the bounds of a node hold for every completion
/// of its prefix with at least min_instances_ instances (and, B10, the speed it must reach).
template <linearly_bounded_throughput_model M>
class vm_branch_and_bound {
public:
    vm_branch_and_bound(const M& model, const vm_space& space, bool pareto, const vm_options& options)
        : model_(model), s_(space), pareto_(pareto), options_(options) {
        const std::size_t k = s_.k_count;
        counts_.assign(k, 0);
        lo_.assign(k, 0);
        hi_.assign(k, 0);
        rate_.assign(k, 0.0);
        slab_rate_.assign(k, 0.0);
        offer_counts_.assign(2 * k, 0);
        order_.reserve(k);
        for (std::size_t t = 0; t < k; ++t)
            if (s_.quota[t] > 0) perm_.push_back(t);
        // Types in order of their root bound: best throughput per USD first (fastest first for
        // max_throughput), so that the first leaves are good plans and the incumbent prunes early.
        for (const std::size_t t : perm_)
            hi_[t] = static_cast<std::int32_t>(std::min<std::int64_t>(s_.quota[t], s_.max_instances));
        call_linear_bound(model_, std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                          std::span<double>(rate_), std::min<std::int64_t>(2, s_.max_instances));
        std::vector<double> key(k, 0.0);
        for (const std::size_t t : perm_)
            key[t] = s_.objective == vm_objective::max_throughput ? -rate_[t] : s_.cheapest(t) / rate_[t];
        std::stable_sort(perm_.begin(), perm_.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    }

    // B7: the one-instance clusters first (one leaf per usable type, in search order), then the
    // tree over the clusters of at least two instances, whose bounds may use that (a cluster of
    // one instance synchronises within its node, or not at all).
    [[nodiscard]] vm_search_outcome run() {
        min_instances_ = 1;
        const node_bound root = bound(0, state{});
        if (root.prune) {
            ++out_.counters.pruned_by_deadline;
        } else {
            for (const std::size_t t : perm_) {
                if (out_of_budget()) {
                    out_.unexplored_key_lb = std::min(out_.unexplored_key_lb, root.key_lb);
                    break;
                }
                counts_[t] = 1;
                evaluate_leaf(state{.count = 1, .distinct = 1, .price = s_.cheapest(t)});
                counts_[t] = 0;
            }
            min_instances_ = 2;
            if (!stopped_ && s_.max_instances >= 2) search(0, state{});
        }
        out_.stopped = stopped_;
        return std::move(out_);
    }

private:
    struct state {
        std::int64_t count = 0;     // instances fixed
        std::int64_t distinct = 0;  // types fixed at a positive count
        double price = 0.0;         // P of the fixed types
    };
    struct node_bound {
        bool prune = false;        // a constraint cannot be met, or the objective bound cuts
        bool by_constraint = false;
        double key_lb = 0.0;       // lower bound on the key of every completion
        double first_lb = 0.0;     // lower bounds on the frontier coordinates
        double second_lb = 0.0;
    };

    static constexpr double slack = 1e-9;  // rounding margin of the constraint cuts

    [[nodiscard]] bool out_of_budget() noexcept {
        if (stopped_) return true;
        if (options_.node_budget > 0 && out_.counters.nodes >= options_.node_budget) stopped_ = true;
        if (options_.evaluation_budget > 0 && out_.counters.clusters_evaluated >= options_.evaluation_budget)
            stopped_ = true;
        return stopped_;
    }

    // Bounds over every completion of the prefix perm_[0, depth) (B2-B6, B9, B10 of the docs).
    [[nodiscard]] node_bound bound(std::size_t depth, const state& f) noexcept {
        ++out_.counters.nodes;
        const double inf = std::numeric_limits<double>::infinity();
        const std::int64_t cap_left = s_.max_instances - f.count;
        const bool types_left = f.distinct < s_.max_distinct;
        // The box of the completions: fixed types at their count, free types in [0, hi].
        for (std::size_t i = 0; i < perm_.size(); ++i) {
            const std::size_t t = perm_[i];
            if (i < depth) {
                lo_[t] = hi_[t] = counts_[t];
            } else {
                lo_[t] = 0;
                hi_[t] = types_left ? static_cast<std::int32_t>(std::min<std::int64_t>(s_.quota[t], cap_left)) : 0;
            }
        }
        // The clusters of this search have at least min_instances_ instances (B7).
        std::int64_t reachable = f.count;
        for (std::size_t i = depth; i < perm_.size(); ++i) reachable += hi_[perm_[i]];
        if (std::min(reachable, s_.max_instances) < min_instances_) {
            node_bound empty;
            empty.prune = empty.by_constraint = true;
            return empty;
        }
        // The speed every feasible completion needs: min_samples_per_s, and work / deadline.
        const double r_need = std::max(s_.min_samples_per_s, s_.work > 0.0 ? s_.work / s_.deadline_s : 0.0);
        call_linear_bound(model_, std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                          std::span<double>(rate_), min_instances_, r_need);
        double r_fixed = 0.0;
        for (std::size_t i = 0; i < depth; ++i) r_fixed += static_cast<double>(counts_[perm_[i]]) * rate_[perm_[i]];

        // B2: r <= R_fixed + max { y.w : 0 <= y <= hi, sum y <= cap_left } (greedy by w), and
        // B3: with a budget, r <= R_fixed + max { y.w : 0 <= y <= hi, y.p <= P_max - P_fixed }
        // (fractional knapsack, greedy by w / p).
        order_.clear();
        for (std::size_t i = depth; i < perm_.size(); ++i)
            if (hi_[perm_[i]] > 0) order_.push_back(perm_[i]);
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return rate_[a] > rate_[b]; });
        double r_count = r_fixed;
        std::int64_t left = cap_left;
        for (const std::size_t t : order_) {
            if (left <= 0) break;
            const std::int64_t take = std::min<std::int64_t>(hi_[t], left);
            r_count += static_cast<double>(take) * rate_[t];
            left -= take;
        }
        double r_budget = inf;
        if (std::isfinite(s_.max_usd_per_h)) {
            std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
                return rate_[a] / s_.cheapest(a) > rate_[b] / s_.cheapest(b);
            });
            r_budget = r_fixed;
            double money = s_.max_usd_per_h - f.price;
            for (const std::size_t t : order_) {
                if (money <= 0.0) break;
                const double units = std::min(static_cast<double>(hi_[t]), money / s_.cheapest(t));
                r_budget += units * rate_[t];
                money -= units * s_.cheapest(t);
            }
        }
        // B2': the model's own bound over the box with at most max_instances instances.
        const double r_box = call_box_bound(model_, std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                                            s_.max_instances, min_instances_);
        const double r_ub = std::min({r_count, r_budget, r_box}) * (1.0 + slack);
        node_bound nb;
        if (!(r_ub > 0.0) || r_ub < r_need) {
            nb.prune = nb.by_constraint = true;
            return nb;
        }

        // B4: P >= P_fixed + max(cheapest free instance if none is fixed yet,
        //                        min { y.p : 0 <= y <= hi, y.w >= r_need - R_fixed }) (fractional cover).
        double p_first = 0.0;
        if (f.count == 0) {
            p_first = inf;
            for (const std::size_t t : order_) p_first = std::min(p_first, s_.cheapest(t));
        }
        const double p_cover = cover_price(r_need - r_fixed, rate_);
        const double p_lb = f.price + std::max(p_first, p_cover);
        if (p_lb > s_.max_usd_per_h * (1.0 + slack)) {
            nb.prune = nb.by_constraint = true;
            return nb;
        }

        // B5: P / r >= P / (sum c w) >= min(P_fixed / R_fixed, min over free types of p / w)
        // (mediant inequality), and B6: P / r >= P_lb / r_ub.
        double ratio_lb = r_fixed > 0.0 ? f.price / r_fixed : inf;
        for (const std::size_t t : order_)
            if (rate_[t] > 0.0) ratio_lb = std::min(ratio_lb, s_.cheapest(t) / rate_[t]);
        if (s_.objective != vm_objective::max_throughput || pareto_)
            ratio_lb = min_ratio(f.price, r_fixed, cap_left, ratio_lb);
        ratio_lb = std::max(ratio_lb * (1.0 - slack), p_lb / r_ub);

        const double work = s_.work;
        switch (s_.objective) {
            case vm_objective::min_cost: nb.key_lb = work > 0.0 ? work * ratio_lb / 3600.0 : p_lb; break;
            case vm_objective::max_throughput: nb.key_lb = -r_ub; break;
            case vm_objective::max_samples_per_usd: nb.key_lb = -3600.0 / ratio_lb; break;
        }
        if (work > 0.0) {
            nb.first_lb = work / r_ub;
            nb.second_lb = work * ratio_lb / 3600.0;
        } else {
            nb.first_lb = -r_ub;
            nb.second_lb = p_lb;
        }
        if (pareto_) {
            nb.prune = out_.frontier.dominates_region(nb.first_lb, nb.second_lb, options_.relative_gap) ||
                       staircase_dominates(nb, f, p_first, r_need);
        } else if (out_.best.figures) {
            const double inc = out_.best.key;
            nb.prune = nb.key_lb >= inc - options_.relative_gap * std::abs(inc);
        }
        return nb;
    }

    // B9 (the frontier's staircase): held points q_1, ..., q_n sorted by the first coordinate.
    // A completion whose first coordinate lies in [q_i.first, q_{i+1}.first) is faster than
    // q_{i+1} (r > its speed), so its price is at least P_f + max(p_first, the fractional cover of
    // that speed) (B4) and its second coordinate at least that price (no work) or time x price /
    // 3600 with time >= max(q_i.first, first_lb) (work). When that is >= q_i.second in every slab
    // the box meets, q_i weakly dominates every completion in its slab. Bounds lowered by the
    // margin relative_gap (and the cover by 1e-9) against rounding.
    [[nodiscard]] bool staircase_dominates(const node_bound& nb, const state& f, double p_first, double r_need) noexcept {
        const auto& points = out_.frontier.points();
        if (points.empty()) return false;
        const double gap = options_.relative_gap;
        if (!(points.front().first <= nb.first_lb - gap * std::abs(nb.first_lb))) return false;
        // The cheapest price of a completion of speed >= `speed`, with linear rates `w` valid for
        // those completions (B4, with B10's rates).
        const auto price_to_reach = [&](double speed, const std::vector<double>& w) {
            double fixed = 0.0;
            for (std::size_t i = 0; i < perm_.size(); ++i) fixed += static_cast<double>(lo_[perm_[i]]) * w[perm_[i]];
            return f.price + std::max(p_first, cover_price(speed - fixed, w));
        };
        const double work = s_.work;
        const auto speed_of = [&](double first) { return work > 0.0 ? work / first : -first; };
        const auto second_of = [&](std::size_t i, double price) {
            const double second = work > 0.0 ? std::max(points[i].first, nb.first_lb) * price / 3600.0 : price;
            return std::max(second, nb.second_lb);
        };
        const auto dominated = [&](std::size_t i, double second) {
            return points[i].second <= second - gap * std::abs(second);
        };
        for (std::size_t i = 0; i < points.size(); ++i) {
            const bool last = i + 1 == points.size();
            if (!last && points[i + 1].first <= nb.first_lb) continue;  // the slab ends before the box starts
            const double r_low = std::max(r_need, last ? 0.0 : speed_of(points[i + 1].first));
            if (dominated(i, second_of(i, price_to_reach(r_low, rate_)))) continue;
            if (!(r_low > r_need)) return false;
            // B10: the rates of the completions at least r_low fast are smaller.
            call_linear_bound(model_, std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                              std::span<double>(slab_rate_), min_instances_, r_low);
            if (!dominated(i, second_of(i, price_to_reach(r_low, slab_rate_)))) return false;
        }
        return true;
    }

    // B4: a lower bound on min { y.p : y.w >= need, 0 <= y <= hi } over the free types (order_):
    // the fractional cover, greedy by p / w (exact for the relaxation), lowered by the rounding
    // margin.
    [[nodiscard]] double cover_price(double need, const std::vector<double>& w) noexcept {
        if (!(need > 0.0)) return 0.0;
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
            return s_.cheapest(a) * w[b] < s_.cheapest(b) * w[a];  // p/w ascending
        });
        double left = need, price = 0.0;
        for (const std::size_t t : order_) {
            if (left <= 0.0) break;
            if (!(w[t] > 0.0)) continue;
            const double units = std::min(static_cast<double>(hi_[t]), left / w[t]);
            price += units * s_.cheapest(t);
            left -= units * w[t];
        }
        return price * (1.0 - slack);  // short of `need`: still the least price of what it reached
    }

    // B5': min over { 0 <= y <= hi, sum y <= cap } of (a0 + y.p) / (d0 + y.w), over the y with
    // d0 + y.w > 0, by Dinkelbach's method (1967). For a lambda, F(lambda) = min_y (a0 + y.p) -
    // lambda (d0 + y.w) is reached by taking y = hi on the most negative coefficients p - lambda w
    // up to the cap (a box cut by one cardinality row: the greedy is exact). F(lambda) >= 0 proves
    // every ratio >= lambda. Starting from the ratio of some completion, lambda <- ratio of the
    // minimiser decreases to the minimum in finitely many steps (F = 0 there). The result is
    // lowered by a relative 1e-9 against rounding; without convergence the mediant bound stays.
    [[nodiscard]] double min_ratio(double a0, double d0, std::int64_t cap, double mediant) noexcept {
        if (!std::isfinite(mediant) || order_.empty()) return mediant;
        const auto fill = [&](double lambda, double& num, double& den) {
            std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
                return s_.cheapest(a) - lambda * rate_[a] < s_.cheapest(b) - lambda * rate_[b];
            });
            num = a0;
            den = d0;
            std::int64_t left = cap;
            for (const std::size_t t : order_) {
                if (left <= 0 || !(s_.cheapest(t) - lambda * rate_[t] < 0.0)) break;
                const std::int64_t take = std::min<std::int64_t>(hi_[t], left);
                num += static_cast<double>(take) * s_.cheapest(t);
                den += static_cast<double>(take) * rate_[t];
                left -= take;
            }
        };
        // A completion: fill at a lambda just above the mediant bound (takes the best-ratio types).
        double num = 0.0, den = 0.0;
        fill(mediant * (1.0 + 1e-12) + 1e-300, num, den);
        if (!(den > 0.0)) return mediant;
        double lambda = num / den;
        for (int iteration = 0; iteration < 32; ++iteration) {
            fill(lambda, num, den);
            if (num - lambda * den >= 0.0) return std::max(mediant, lambda * (1.0 - 1e-9));
            if (!(den > 0.0)) return mediant;
            const double next = num / den;
            if (!(next < lambda)) return std::max(mediant, lambda * (1.0 - 1e-9));  // rounding stall
            lambda = next;
        }
        return mediant;
    }

    void evaluate_leaf(const state& f) {
        if (f.count < min_instances_) return;  // none, or a one-instance cluster evaluated first (B7)
        ++out_.counters.clusters_evaluated;
        for (std::size_t k = 0; k < s_.k_count; ++k) {
            const bool spot = s_.cheapest_kind(k) == price_kind::spot;
            offer_counts_[2 * k] = spot ? counts_[k] : 0;
            offer_counts_[2 * k + 1] = spot ? 0 : counts_[k];
        }
        const double r = model_.samples_per_s(std::span<const std::int32_t>(counts_));
        const vm_figures fig = vm_make_figures(s_, counts_, r, vm_price(s_, offer_counts_));
        if (!vm_feasible(s_, fig)) return;
        if (pareto_) {
            const auto [a, b] = vm_frontier_point(fig);
            out_.frontier.offer(a, b, vm_frontier_payload{.offer_counts = offer_counts_, .figures = fig});
        } else {
            out_.best.offer(vm_key(s_, fig), offer_counts_, counts_, fig);
        }
    }

    void search(std::size_t depth, const state& f) {
        const node_bound nb = bound(depth, f);
        if (nb.prune) {
            if (nb.by_constraint) ++out_.counters.pruned_by_deadline;
            else ++out_.counters.pruned_by_bound;
            return;
        }
        const std::int64_t cap_left = s_.max_instances - f.count;
        if (depth == perm_.size() || cap_left == 0 || f.distinct == s_.max_distinct) {
            evaluate_leaf(f);  // every free type at 0
            return;
        }
        const std::size_t t = perm_[depth];
        const std::int64_t x_hi = std::min<std::int64_t>(s_.quota[t], cap_left);
        for (std::int64_t x = x_hi; x >= 0; --x) {
            if (out_of_budget()) {
                // The children not searched lie in this node's box: its bound covers them.
                out_.unexplored_key_lb = std::min(out_.unexplored_key_lb, nb.key_lb);
                break;
            }
            counts_[t] = static_cast<std::int32_t>(x);
            state g = f;
            if (x > 0) {
                g.count += x;
                g.distinct += 1;
                g.price += static_cast<double>(x) * s_.cheapest(t);
            }
            search(depth + 1, g);
        }
        counts_[t] = 0;
    }

    const M& model_;
    const vm_space& s_;
    bool pareto_;
    vm_options options_;
    std::vector<std::size_t> perm_, order_;
    std::vector<std::int32_t> counts_, lo_, hi_, offer_counts_;
    std::vector<double> rate_;
    vm_search_outcome out_;
    bool stopped_ = false;
    std::int64_t min_instances_ = 1;  // the fewest instances of a cluster the current search covers
    std::vector<double> slab_rate_;   // B10's rates in staircase_dominates
};

template <cluster_throughput_model M>
[[nodiscard]] vm_search_outcome vm_run(const M& model, const vm_space& s, bool pareto, const vm_options& options,
                                       vm_method method) {
    if constexpr (linearly_bounded_throughput_model<M>) {
        if (method == vm_method::branch_and_bound) return vm_branch_and_bound<M>(model, s, pareto, options).run();
    }
    return vm_exhaustive(model, s, pareto, options);
}

}  // namespace detail

/// The best configuration of `problem` for `model` (type k = problem.catalog.instances[k]) with a
/// proof, and with options.pareto the exact frontier. Throws invalid_input for bad input
/// (including a model whose type_count() differs from the catalog's); every expected outcome
/// (infeasible, budget exhausted) is a status. A model without a linear bound is searched
/// exhaustively (result.method says so).
template <cluster_throughput_model M>
[[nodiscard]] vm_result recommend_vms(const M& model, const vm_problem& problem, const vm_options& options = {}) {
    problem.validate();
    options.validate();
    if (static_cast<std::size_t>(model.type_count()) != problem.catalog.instances.size())
        throw invalid_input("model.type_count()", std::to_string(static_cast<std::size_t>(model.type_count())),
                            "the number of catalog instance types (" +
                                std::to_string(problem.catalog.instances.size()) + ")");
    const detail::vm_space s = detail::make_vm_space(problem);
    vm_result result;
    result.method = linearly_bounded_throughput_model<M> ? options.method : vm_method::exhaustive;

    detail::vm_search_outcome best = detail::vm_run(model, s, false, options, result.method);
    result.counters = best.counters;
    const bool maximise = s.objective != vm_objective::min_cost;
    if (best.best.figures) {
        result.best = detail::vm_make_configuration(problem.catalog, best.best.offer_counts, *best.best.figures);
        result.objective_value = detail::vm_value_of_key(s, best.best.key);
    }
    if (best.stopped) {
        result.status = solve_status::budget_exhausted;
        const double key_lb = std::min(best.best.key, best.unexplored_key_lb);
        result.objective_bound = detail::vm_value_of_key(s, key_lb);
        result.reason = "search budget exhausted after " + std::to_string(best.counters.nodes) + " nodes and " +
                        std::to_string(best.counters.clusters_evaluated) + " evaluations; the objective is " +
                        (maximise ? "at most " : "at least ") + detail::format_number(result.objective_bound);
    } else if (best.best.figures) {
        result.status = solve_status::optimal;
        // Subtrees within options.relative_gap of the incumbent were cut: that is the proof's slack.
        result.objective_bound = detail::vm_value_of_key(s, best.best.key - options.relative_gap * std::abs(best.best.key));
    } else {
        result.status = solve_status::infeasible;
        result.objective_bound = maximise ? -std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::infinity();
        result.reason = s.max_instances == 0 ? "no instance type is allowed with a positive quota"
                                             : "no configuration in the search space meets the constraints";
    }

    if (options.pareto) {
        detail::vm_search_outcome front = detail::vm_run(model, s, true, options, result.method);
        result.frontier_counters = front.counters;
        result.frontier_status = front.stopped ? solve_status::budget_exhausted : solve_status::optimal;
        for (const auto& p : front.frontier.points())
            result.frontier.push_back(detail::vm_make_configuration(problem.catalog, p.payload.offer_counts, p.payload.figures));
    }
    return result;
}

}  // namespace dnnplan
