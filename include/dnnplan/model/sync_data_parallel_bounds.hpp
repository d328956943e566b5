#pragma once
// The speed bounds of the synchronous data-parallel model over a box of clusters, which make it a
// linearly_bounded_throughput_model and a box_bounded_throughput_model (model/concepts.hpp): the
// definitions of sync_cluster_throughput's two bound members, proved in
// docs/solvers/vm_recommend.md (B0, B0', B7, B8, B10). Included by model/sync_data_parallel.hpp.

#include <dnnplan/model/sync_data_parallel.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace dnnplan {

namespace detail {

/// The synchronisation time the bounds use: Pollux's (or the ring's) without the node term. The
/// node-term variant adds delta_n (K / N - 1) >= 0 across nodes (K / N >= 1), which falls as the
/// same replicas spread over more nodes: dropping it keeps every bound below the true time, where
/// evaluating it at N = 2 would not (a cluster on 3 nodes syncs faster than on 2).
[[nodiscard]] inline double sync_time_for_bound_s(const sync_cluster_spec& spec, std::int64_t replicas,
                                                  std::int64_t nodes) noexcept {
    if (spec.ring) return ring_sync_time_s(*spec.ring, replicas, nodes);
    pollux_params without_node_term = spec.network;
    without_node_term.delta_n_s = 0.0;
    return pollux_sync_time_s(without_node_term, replicas, nodes);
}

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
        const double sync = detail::sync_time_for_bound_s(spec, replicas, 2);
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
        return sync_time_for_bound_s(spec, replicas, nodes);
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

/// The figures of the box [lower, upper] the box bound reads.
struct sync_box {
    const sync_cluster_spec& spec;
    std::span<const std::int32_t> lower;
    std::span<const std::int32_t> upper;
    std::size_t n_types = 0;
    std::int64_t n_lo = 0;            ///< fixed instances
    std::int64_t k_lo = 0;            ///< fixed replicas (GPUs)
    std::int64_t free_instances = 0;  ///< sum of upper - lower
    double inv_beta_hi = 0.0;         ///< sum of upper g / beta
    double steps = 1.0;               ///< s + 1, s the accumulation steps
};

[[nodiscard]] inline sync_box make_sync_box(const sync_cluster_spec& spec, std::span<const std::int32_t> lower,
                                            std::span<const std::int32_t> upper) noexcept {
    sync_box box{.spec = spec, .lower = lower, .upper = upper};
    box.steps = static_cast<double>(spec.accumulation_steps) + 1.0;
    box.n_types = std::min(lower.size(), spec.types.size());
    for (std::size_t k = 0; k < box.n_types; ++k) {
        box.n_lo += lower[k];
        box.k_lo += std::int64_t{lower[k]} * spec.types[k].gpus;
        box.inv_beta_hi += static_cast<double>(upper[k]) * spec.types[k].gpus / spec.types[k].compute.per_sample_s;
        box.free_instances += std::int64_t{upper[k]} - lower[k];
    }
    return box;
}

/// The clusters of one instance of type k: g_k replicas on one node, bounded by their speed
/// exactly; 0 when the box or min_instances has none.
[[nodiscard]] inline double one_instance_upper_bound(const sync_box& box, std::int64_t min_instances) noexcept {
    const auto& spec = box.spec;
    double best = 0.0;
    if (!(box.n_lo <= 1 && min_instances <= 1)) return best;
    for (std::size_t k = 0; k < box.n_types; ++k) {
        if (!(box.upper[k] >= 1 && (box.n_lo == 0 || box.lower[k] == 1))) continue;
        const auto& t = spec.types[k];
        const double g = static_cast<double>(t.gpus);
        const double local = spec.basis == batch_basis::global ? spec.batch / g : spec.batch;
        const double sync1 = sync_time_for_bound_s(spec, t.gpus, 1);
        best = std::max(best, g * local * box.steps /
                                  combine_step_time_s(t.compute.at(local), sync1, spec.network.gamma, spec.accumulation_steps));
    }
    return best;
}

/// The clusters of N >= 2 instances of the box: `slots` instances may join the fixed ones, and
/// K >= k_1 = max(K_lo, 2) replicas.
struct multi_node_box {
    const sync_box& box;
    std::int64_t slots = 0;
    std::int64_t k_1 = 2;

    [[nodiscard]] double sync(std::int64_t replicas) const noexcept { return sync_time_for_bound_s(box.spec, replicas, 2); }
    [[nodiscard]] double combine(double compute_s, double sync_s) const noexcept {
        return combine_step_time_s(compute_s, sync_s, box.spec.network.gamma, box.spec.accumulation_steps);
    }

    /// K_2 over the types `in(k)` admits: the fixed GPUs plus the remaining slots, each at most the
    /// largest GPU count with room, and no more than the room's GPUs (B0').
    template <class Admits>
    [[nodiscard]] std::int64_t k_2_of(const Admits& in) const noexcept {
        std::int64_t room_gpus = 0, room_instances = 0, g_max = 0;
        for (std::size_t k = 0; k < box.n_types; ++k) {
            const std::int64_t room = std::int64_t{box.upper[k]} - box.lower[k];
            if (room <= 0 || !in(k)) continue;
            room_gpus += room * box.spec.types[k].gpus;
            room_instances += room;
            g_max = std::max<std::int64_t>(g_max, box.spec.types[k].gpus);
        }
        return box.k_lo + std::min(room_gpus, std::min(slots, room_instances) * g_max);
    }

    /// The per-replica bound for t and K in [k_1, k_2] (needs n_lo + slots >= 2 on that side).
    [[nodiscard]] double per_replica_bound(double t, std::int64_t k_2) const noexcept {
        if (k_2 < k_1) return 0.0;
        const double k1 = static_cast<double>(k_1), k2 = static_cast<double>(k_2);
        const double sync_per_replica = std::min(sync(k_1) / k1, sync(k_2) / k2);
        return box.spec.batch * box.steps / combine(t / k2, sync_per_replica);
    }
};

/// B8 for a per-replica batch: the maximum, over the types j that can be the slowest present
/// type (equal batches) or the fastest (balanced), of the bound with t = T_j(b) and K_2 from the
/// types on j's side; at least `best`.
[[nodiscard]] inline double per_replica_batch_upper_bound(const multi_node_box& mn, double best) noexcept {
    const sync_box& box = mn.box;
    const auto& spec = box.spec;
    const bool equal = spec.policy == batch_policy::equal;
    double fixed_slowest = 0.0, fixed_fastest = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < box.n_types; ++k) {
        if (box.lower[k] <= 0) continue;
        fixed_slowest = std::max(fixed_slowest, spec.types[k].compute.at(spec.batch));
        fixed_fastest = std::min(fixed_fastest, spec.types[k].compute.at(spec.batch));
    }
    for (std::size_t j = 0; j < box.n_types; ++j) {
        if (box.upper[j] <= 0) continue;
        const double t_j = spec.types[j].compute.at(spec.batch);
        if (equal ? t_j < fixed_slowest : t_j > fixed_fastest) continue;  // a fixed type would be on the wrong side
        bool seen = false;  // the same threshold twice gives the same bound
        for (std::size_t i = 0; i < j && !seen; ++i) seen = box.upper[i] > 0 && spec.types[i].compute.at(spec.batch) == t_j;
        if (seen) continue;
        const std::int64_t k_2 = mn.k_2_of([&](std::size_t k) {
            const double t_k = spec.types[k].compute.at(spec.batch);
            return equal ? t_k <= t_j : t_k >= t_j;
        });
        const double cheap = spec.batch * static_cast<double>(k_2) / t_j;  // compute only: >= the bound below
        if (cheap <= best) continue;
        best = std::max(best, mn.per_replica_bound(t_j, k_2));
    }
    return best;
}

/// A global batch B: r <= B (s + 1) / combine(t, T_sync(K_1)), t the least compute time of a
/// cluster of the box at the smallest local batch B / K_max; at least `best`.
[[nodiscard]] inline double global_batch_upper_bound(const multi_node_box& mn, double best) noexcept {
    const sync_box& box = mn.box;
    const auto& spec = box.spec;
    const std::int64_t k_max = mn.k_2_of([](std::size_t) { return true; });
    if (k_max < mn.k_1) return best;
    double t_c_lo = std::numeric_limits<double>::infinity();
    const double local = spec.batch / static_cast<double>(k_max);
    for (std::size_t k = 0; k < box.n_types; ++k)
        if (box.upper[k] > 0) t_c_lo = std::min(t_c_lo, spec.types[k].compute.at(local));
    if (spec.policy == batch_policy::equal) {  // the slowest present replica sets the step
        for (std::size_t k = 0; k < box.n_types; ++k)
            if (box.lower[k] > 0) t_c_lo = std::max(t_c_lo, spec.types[k].compute.at(local));
    } else {
        t_c_lo = box.inv_beta_hi > 0.0 ? spec.batch / box.inv_beta_hi : 0.0;
    }
    if (!std::isfinite(t_c_lo)) return best;  // an empty box
    return std::max(best, spec.batch * box.steps / mn.combine(t_c_lo, mn.sync(mn.k_1)));
}

}  // namespace detail

/// The bound for the synchronous data-parallel model (model/sync_data_parallel.hpp), proved in
/// docs/solvers/vm_recommend.md ("B0"). With s accumulation steps, T_s >= T_s,min over the box and
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
inline void sync_cluster_throughput::samples_per_s_linear_bound(std::span<const std::int32_t> lower,
                                                                 std::span<const std::int32_t> upper, std::span<double> rate,
                                                                 std::int64_t min_instances,
                                                                 double min_samples_per_s) const noexcept {
    const sync_cluster_throughput& m = *this;
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
        inv_beta_lo += static_cast<double>(lower[k]) * t.gpus / t.compute.per_sample_s;
        if (upper[k] > 0) {
            inv_beta_min = std::min(inv_beta_min, static_cast<double>(t.gpus) / t.compute.per_sample_s);
            alpha_max = std::max(alpha_max, t.compute.fixed_s);
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
        rate[k] = upper[k] > 0 ? static_cast<double>(t.gpus) * steps * (t_hi - t.compute.fixed_s) /
                                     (t.compute.per_sample_s * denominator)
                               : 0.0;
    }
}

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
inline double sync_cluster_throughput::samples_per_s_upper_bound(std::span<const std::int32_t> lower,
                                                                  std::span<const std::int32_t> upper,
                                                                  std::int64_t max_instances,
                                                                  std::int64_t min_instances) const noexcept {
    const detail::sync_box box = detail::make_sync_box(spec(), lower, upper);
    const double best = detail::one_instance_upper_bound(box, min_instances);
    const std::int64_t slots = std::max<std::int64_t>(0, std::min(max_instances - box.n_lo, box.free_instances));
    if (max_instances < 2 || box.n_lo + slots < 2) return best;
    // N >= 2 from here.
    const std::int64_t k_1 = std::max<std::int64_t>(
        detail::sync_replicas_lower_bound(*this, lower, upper, std::max<std::int64_t>(min_instances, 2)), 2);
    const detail::multi_node_box multi_node{.box = box, .slots = slots, .k_1 = k_1};
    if (box.spec.basis != batch_basis::global) return detail::per_replica_batch_upper_bound(multi_node, best);
    return detail::global_batch_upper_bound(multi_node, best);
}

static_assert(linearly_bounded_throughput_model<sync_cluster_throughput>);
static_assert(box_bounded_throughput_model<sync_cluster_throughput>);

}  // namespace dnnplan
