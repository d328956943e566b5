#pragma once
// Synchronous data-parallel step time and throughput: the Pollux model (Qiao et al., "Pollux:
// Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning", OSDI 2021, section 3.2 and
// adaptdl/goodput.py; the project's reference note sync-models.md), with heterogeneous replicas
// (slowest replica, or LB-BSP batches balanced to speed: Chen et al., "Semi-Dynamic Load
// Balancing", SoCC 2020), a ring all-reduce alternative for the synchronisation time
// (Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms", JPDC 2009), and the price of a
// configuration from the instance catalog. See docs/models/sync-data-parallel.md.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/affine_time.hpp>
#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// The seven parameters of Pollux's step-time model (adaptdl/goodput.py, PerfParams).
struct pollux_params {
    double alpha_c_s = 0.0;  ///< fixed part of the compute time of one micro-batch
    double beta_c_s = 0.0;   ///< compute time per sample of the local (per-replica) batch
    double alpha_n_s = 0.0;  ///< fixed part of the inter-node synchronisation time
    double beta_n_s = 0.0;   ///< inter-node synchronisation time per replica beyond 2
    double alpha_r_s = 0.0;  ///< fixed part of the intra-node synchronisation time
    double beta_r_s = 0.0;   ///< intra-node synchronisation time per replica beyond 2
    double gamma = 1.0;      ///< overlap exponent in [1, 10]: 1 = no overlap, 10 ~ max()
    // The variants' parameters (docs/models/sync-data-parallel.md, "Variants"); these defaults
    // give Pollux's form exactly.
    double delta_n_s = 0.0;       ///< inter-node sync time per mean replica per node beyond 1 (0 = Pollux)
    double batch_exponent = 1.0;  ///< p in T_grad = alpha_c + beta_c m^p, in [0.25, 4] (1 = Pollux)

    void validate(std::string_view path = "params") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "alpha_c_s", alpha_c_s);
        detail::require_non_negative(p + "beta_c_s", beta_c_s);
        detail::require_non_negative(p + "alpha_n_s", alpha_n_s);
        detail::require_non_negative(p + "beta_n_s", beta_n_s);
        detail::require_non_negative(p + "alpha_r_s", alpha_r_s);
        detail::require_non_negative(p + "beta_r_s", beta_r_s);
        if (!std::isfinite(gamma) || gamma < 1.0 || gamma > 10.0)
            throw invalid_input(p + "gamma", detail::format_number(gamma), "a number in [1, 10]");
        detail::require_non_negative(p + "delta_n_s", delta_n_s);
        if (!std::isfinite(batch_exponent) || batch_exponent < 0.25 || batch_exponent > 4.0)
            throw invalid_input(p + "batch_exponent", detail::format_number(batch_exponent), "a number in [0.25, 4]");
    }

    friend bool operator==(const pollux_params&, const pollux_params&) = default;
};

/// Where the replicas of a job sit: GPUs (one replica each) on every node used. Pollux's trace
/// string "1124" is {1, 1, 2, 4}: 4 nodes, 8 replicas.
struct placement {
    std::vector<std::int32_t> gpus_per_node{};

    [[nodiscard]] std::int64_t nodes() const noexcept { return static_cast<std::int64_t>(gpus_per_node.size()); }
    [[nodiscard]] std::int64_t replicas() const noexcept {
        return std::accumulate(gpus_per_node.begin(), gpus_per_node.end(), std::int64_t{0});
    }

    void validate(std::string_view path = "placement") const {
        const std::string p = detail::field_prefix(path);
        if (gpus_per_node.empty()) throw invalid_input(p + "gpus_per_node", "[]", "at least one node");
        for (std::size_t i = 0; i < gpus_per_node.size(); ++i)
            detail::require_at_least(p + "gpus_per_node[" + std::to_string(i) + "]", gpus_per_node[i], 1);
    }

    friend bool operator==(const placement&, const placement&) = default;
};

/// The shape of one synchronous step: K replicas on N nodes, local batch m per replica and
/// micro-step, s gradient-accumulation micro-steps before the synchronising one (0 = none).
struct sync_shape {
    std::int64_t replicas = 1;
    std::int64_t nodes = 1;
    double local_batch = 1.0;
    std::int32_t accumulation_steps = 0;

    [[nodiscard]] static sync_shape of(const placement& where, double local_batch, std::int32_t accumulation_steps = 0) {
        return {.replicas = where.replicas(), .nodes = where.nodes(), .local_batch = local_batch,
                .accumulation_steps = accumulation_steps};
    }
    /// Samples per step: K * m * (s + 1).
    [[nodiscard]] double global_batch() const noexcept {
        return static_cast<double>(replicas) * local_batch * static_cast<double>(accumulation_steps + 1);
    }

    void validate(std::string_view path = "shape") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "nodes", nodes, 1);
        detail::require_at_least(p + "replicas", replicas, nodes);
        detail::require_positive(p + "local_batch", local_batch);
        detail::require_at_least(p + "accumulation_steps", accumulation_steps, 0);
    }
};

/// One measurement: a step of `shape` took `step_time_s` seconds (of which `sync_time_s` in
/// gradient synchronisation, when the profile says).
struct sync_step_sample {
    sync_shape shape{};
    double step_time_s = 0.0;
    std::optional<double> sync_time_s{};

    void validate(std::string_view path = "sample") const {
        const std::string p = detail::field_prefix(path);
        shape.validate(p + "shape");
        detail::require_positive(p + "step_time_s", step_time_s);
        if (sync_time_s) detail::require_non_negative(p + "sync_time_s", *sync_time_s);
    }
};

/// The parts of one step's time.
struct step_time_parts {
    double compute_s = 0.0;  ///< T_grad of one micro-batch
    double sync_s = 0.0;     ///< T_sync
    double step_s = 0.0;     ///< T_iter
};

/// T_grad(m) = alpha_c + beta_c * m (Pollux eq. for T_grad; goodput.py _predict_compute). The
/// batch-power variant: T_grad(m) = alpha_c + beta_c * m^p (batch_exponent p; p = 1 is Pollux's,
/// p < 1 a GPU whose utilisation still grows with the batch; docs/models/sync-data-parallel.md).
[[nodiscard]] inline double pollux_compute_time_s(const pollux_params& p, double local_batch) noexcept {
    if (p.batch_exponent == 1.0) return p.alpha_c_s + p.beta_c_s * local_batch;
    return p.alpha_c_s + p.beta_c_s * std::pow(local_batch, p.batch_exponent);
}

/// T_sync (sync-models.md; goodput.py _predict_network): alpha_n + beta_n (K - 2) when the
/// replicas span N > 1 nodes, alpha_r + beta_r (K - 2) when K > 1 replicas share one node, and 0
/// for K = 1 (nothing to synchronise). At K = 2 the retrogression term vanishes (T_sync = alpha):
/// beta models only the slow-down beyond two replicas. goodput.py writes max(K - 2, 1e-8) and
/// returns 1e-8 s for K = 1; the difference is below 1e-7 s.
/// The node-term variant adds delta_n (K / N - 1) across N > 1 nodes, linear in the mean
/// replicas per node beyond one: a hierarchical all-reduce reduces within each node, all-reduces
/// across nodes and broadcasts within each node (Jia et al., "Highly Scalable Deep Learning
/// Training System with Mixed-Precision", arXiv:1807.11205, 2018, hierarchical all-reduce), and
/// the intra-node phases over a node's shared PCIe and NIC grow with the replicas the node holds
/// (ring over G replicas: 2 (G - 1) steps; Patarasuk and Yuan 2009), so at fixed K, packing the
/// replicas onto fewer nodes costs more. delta_n = 0 is Pollux's form, which sees only K and N > 1.
[[nodiscard]] inline double pollux_sync_time_s(const pollux_params& p, std::int64_t replicas, std::int64_t nodes) noexcept {
    if (replicas <= 1) return 0.0;
    const double beyond_two = static_cast<double>(replicas - 2);
    if (nodes > 1) {
        if (p.delta_n_s == 0.0) return p.alpha_n_s + p.beta_n_s * beyond_two;
        const double per_node_beyond_one = static_cast<double>(replicas) / static_cast<double>(nodes) - 1.0;
        return p.alpha_n_s + p.beta_n_s * beyond_two + p.delta_n_s * per_node_beyond_one;
    }
    return p.alpha_r_s + p.beta_r_s * beyond_two;
}

/// T_iter = s * T_grad + (T_grad^gamma + T_sync^gamma)^(1/gamma) (Pollux section 3.2, goodput.py
/// _predict). The gamma-norm is evaluated as hi * (1 + (lo/hi)^gamma)^(1/gamma) so it neither
/// overflows nor loses the small term; gamma = 1 gives the sum, gamma = 10 at most 2^(1/10) ~ 1.072
/// times the max.
[[nodiscard]] inline double combine_step_time_s(double compute_s, double sync_s, double gamma,
                                                std::int32_t accumulation_steps) noexcept {
    const double hi = std::max(compute_s, sync_s);
    const double lo = std::min(compute_s, sync_s);
    const double overlapped = hi > 0.0 ? hi * std::pow(1.0 + std::pow(lo / hi, gamma), 1.0 / gamma) : 0.0;
    return static_cast<double>(accumulation_steps) * compute_s + overlapped;
}

/// The step time of a homogeneous job under Pollux's model.
[[nodiscard]] inline step_time_parts pollux_step_time(const pollux_params& p, const sync_shape& shape) noexcept {
    step_time_parts out;
    out.compute_s = pollux_compute_time_s(p, shape.local_batch);
    out.sync_s = pollux_sync_time_s(p, shape.replicas, shape.nodes);
    out.step_s = combine_step_time_s(out.compute_s, out.sync_s, p.gamma, shape.accumulation_steps);
    return out;
}

[[nodiscard]] inline double pollux_step_time_s(const pollux_params& p, const sync_shape& shape) noexcept {
    return pollux_step_time(p, shape).step_s;
}

/// Throughput K * m * (s + 1) / T_iter samples per second (goodput.py GoodputFunction.throughput).
[[nodiscard]] inline double pollux_throughput_samples_per_s(const pollux_params& p, const sync_shape& shape) noexcept {
    return shape.global_batch() / pollux_step_time_s(p, shape);
}

/// Pollux's statistical efficiency E(M) = (phi + M0) / (phi + M) of a global batch M relative to
/// the initial batch M0, with phi the gradient noise scale in samples (Pollux eq. 6, after
/// McCandlish et al. 2018). Goodput = throughput * E (Pollux eq. 1).
struct statistical_efficiency {
    double noise_scale_samples = 0.0;  ///< phi
    double initial_batch = 1.0;        ///< M0

    [[nodiscard]] double at(double global_batch) const noexcept {
        return (noise_scale_samples + initial_batch) / (noise_scale_samples + global_batch);
    }

    void validate(std::string_view path = "efficiency") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "noise_scale_samples", noise_scale_samples);
        detail::require_positive(p + "initial_batch", initial_batch);
    }
};

/// Goodput = throughput(K, N, m, s) * E(K m (s + 1)) samples per second (Pollux eq. 1).
[[nodiscard]] inline double pollux_goodput_samples_per_s(const pollux_params& p, const statistical_efficiency& e,
                                                         const sync_shape& shape) noexcept {
    return pollux_throughput_samples_per_s(p, shape) * e.at(shape.global_batch());
}

// ---- ring all-reduce ---------------------------------------------------------------------------

/// A physics-based T_sync: a ring all-reduce of P bytes over K replicas sends and receives
/// 2 (K - 1) / K * P bytes per replica (reduce-scatter then all-gather; Patarasuk and Yuan 2009),
/// at the bandwidth of the slowest link of the ring: the intra-node one when all replicas share a
/// node (N = 1), the inter-node one otherwise.
struct ring_allreduce {
    double parameter_bytes = 0.0;
    double intra_node_bytes_per_s = 0.0;
    double inter_node_bytes_per_s = 0.0;
    double latency_s = 0.0;  ///< fixed cost added to every synchronising step with K > 1

    void validate(std::string_view path = "ring") const {
        const std::string p = detail::field_prefix(path);
        detail::require_positive(p + "parameter_bytes", parameter_bytes);
        detail::require_positive(p + "intra_node_bytes_per_s", intra_node_bytes_per_s);
        detail::require_positive(p + "inter_node_bytes_per_s", inter_node_bytes_per_s);
        detail::require_non_negative(p + "latency_s", latency_s);
    }
};

/// T_sync = 2 (K - 1) / K * P / B_bottleneck + latency, 0 for K = 1.
[[nodiscard]] inline double ring_sync_time_s(const ring_allreduce& r, std::int64_t replicas, std::int64_t nodes) noexcept {
    if (replicas <= 1) return 0.0;
    const double k = static_cast<double>(replicas);
    const double bandwidth = nodes > 1 ? r.inter_node_bytes_per_s : r.intra_node_bytes_per_s;
    return 2.0 * (k - 1.0) / k * r.parameter_bytes / bandwidth + r.latency_s;
}

/// Pollux's compute and overlap with the ring's T_sync instead of the fitted linear one.
[[nodiscard]] inline step_time_parts ring_step_time(const pollux_params& p, const ring_allreduce& r,
                                                    const sync_shape& shape) noexcept {
    step_time_parts out;
    out.compute_s = pollux_compute_time_s(p, shape.local_batch);
    out.sync_s = ring_sync_time_s(r, shape.replicas, shape.nodes);
    out.step_s = combine_step_time_s(out.compute_s, out.sync_s, p.gamma, shape.accumulation_steps);
    return out;
}

// ---- heterogeneous replicas --------------------------------------------------------------------

/// Compute speed of one GPU type: T_grad(m) = alpha_c + beta_c * m.
/// A GPU type's compute time T_grad(m) = fixed_s + per_sample_s * m for a local batch of m (Pollux's
/// alpha_c, beta_c): valid as an affine_time, and per_sample_s > 0 (the batch split divides by it).
inline void validate_gpu_compute(const affine_time& compute, std::string_view path) {
    compute.validate(path);
    detail::require_positive(detail::field_prefix(path) + "per_sample_s", compute.per_sample_s);
}

/// `replicas` replicas of one GPU type in a synchronous job.
struct replica_group {
    affine_time compute{};
    std::int64_t replicas = 0;
};

/// How the global batch is split over replicas of different speeds.
enum class batch_policy {
    equal,     ///< every replica takes the same local batch; the step waits for the slowest
    balanced,  ///< LB-BSP: local batches chosen so every replica's T_grad is equal
};

template <>
struct enum_text<batch_policy> {
    static constexpr std::array<enum_name<batch_policy>, 2> names{{{batch_policy::equal, "equal"}, {batch_policy::balanced, "balanced"}}};
};

/// What came out of splitting a batch over heterogeneous replicas.
enum class balance_status {
    balanced,       ///< every replica got a share >= 0 and all finish T_grad together
    idle_replicas,  ///< some groups' fixed time alpha_c exceeds the balanced T_grad: they get a
                    ///< zero share, stay in the job, and the step waits for their alpha_c
};

template <>
struct enum_text<balance_status> {
    static constexpr std::array<enum_name<balance_status>, 2> names{
        {{balance_status::balanced, "balanced"}, {balance_status::idle_replicas, "idle_replicas"}}};
};

/// The T_grad of a balanced split of `micro_batch` samples (one micro-step, all replicas) over the
/// groups, allocation-free. Solving alpha_i + beta_i m_i = T with sum_i n_i m_i = B for T gives
/// T = (B + sum n_i alpha_i / beta_i) / (sum n_i / beta_i) (LB-BSP; T_grad is affine in m). When
/// T < alpha_j for some group, its share m_j would be negative: such a replica cannot finish before
/// the others even with no work, so the step takes max_j alpha_j. Returns max(T, max_j alpha_j).
[[nodiscard]] inline double balanced_compute_time_s(std::span<const replica_group> groups, double micro_batch) noexcept {
    double numerator = micro_batch, denominator = 0.0, slowest_fixed = 0.0;
    for (const auto& g : groups) {
        if (g.replicas <= 0) continue;
        const double n = static_cast<double>(g.replicas);
        numerator += n * g.compute.fixed_s / g.compute.per_sample_s;
        denominator += n / g.compute.per_sample_s;
        slowest_fixed = std::max(slowest_fixed, g.compute.fixed_s);
    }
    if (!(denominator > 0.0)) return 0.0;
    return std::max(numerator / denominator, slowest_fixed);
}

/// The T_grad of the slowest replica when every replica takes `local_batch`.
[[nodiscard]] inline double slowest_compute_time_s(std::span<const replica_group> groups, double local_batch) noexcept {
    double slowest = 0.0;
    for (const auto& g : groups)
        if (g.replicas > 0) slowest = std::max(slowest, g.compute.at(local_batch));
    return slowest;
}

/// A heterogeneous split with its per-group local batches.
struct heterogeneous_step {
    batch_policy policy = batch_policy::equal;
    balance_status status = balance_status::balanced;
    std::vector<double> local_batches{};   ///< per group, per micro-step (real-valued: rounding is the caller's)
    std::vector<std::size_t> idle_groups{};  ///< groups with a zero share (status idle_replicas)
    double global_batch = 0.0;             ///< samples per step, all micro-steps
    step_time_parts time{};
    [[nodiscard]] double samples_per_s() const noexcept { return global_batch / time.step_s; }
};

/// A synchronous step of mixed GPU types. `network` supplies the synchronisation parameters and
/// gamma, and delta_n_s when set (its alpha_c_s, beta_c_s and batch_exponent are not used: each
/// group brings its own affine compute). `batch` is
/// the local batch per replica for batch_policy::equal and the global batch of one micro-step
/// (summed over replicas) for batch_policy::balanced. For equal the step is that of the slowest
/// replica; for balanced the water-filling split below, where a group whose alpha_c is at or above
/// the water level gets a zero share and is listed in idle_groups (status idle_replicas), never
/// dropped. Throws invalid_input on bad inputs.
[[nodiscard]] inline heterogeneous_step heterogeneous_step_time(std::span<const replica_group> groups,
                                                                 const pollux_params& network, std::int64_t nodes,
                                                                 batch_policy policy, double batch,
                                                                 std::int32_t accumulation_steps = 0) {
    network.validate("network");
    std::int64_t replicas = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const std::string at = "groups[" + std::to_string(i) + "]";
        validate_gpu_compute(groups[i].compute, at + ".compute");
        detail::require_at_least(at + ".replicas", groups[i].replicas, 0);
        replicas += groups[i].replicas;
    }
    detail::require_at_least("replicas", replicas, 1);
    detail::require_at_least("nodes", nodes, 1);
    detail::require_at_least("nodes", replicas, nodes);
    detail::require_positive("batch", batch);
    detail::require_at_least("accumulation_steps", accumulation_steps, 0);

    heterogeneous_step out;
    out.policy = policy;
    out.local_batches.assign(groups.size(), 0.0);
    const double steps = static_cast<double>(accumulation_steps + 1);
    if (policy == batch_policy::equal) {
        std::fill(out.local_batches.begin(), out.local_batches.end(), batch);
        out.time.compute_s = slowest_compute_time_s(groups, batch);
        out.global_batch = static_cast<double>(replicas) * batch * steps;
    } else {
        out.time.compute_s = balanced_compute_time_s(groups, batch);
        out.global_batch = batch * steps;
        // Water-filling: drop groups whose alpha is at or above the level, re-solve the level for the
        // rest, until stable (the level only falls, so at most groups.size() rounds).
        std::vector<char> active(groups.size(), 0);
        for (std::size_t i = 0; i < groups.size(); ++i) active[i] = groups[i].replicas > 0 ? 1 : 0;
        double level = std::numeric_limits<double>::infinity();
        for (std::size_t round = 0; round <= groups.size(); ++round) {
            double num = batch, den = 0.0;
            for (std::size_t i = 0; i < groups.size(); ++i) {
                if (!active[i]) continue;
                const double n = static_cast<double>(groups[i].replicas);
                num += n * groups[i].compute.fixed_s / groups[i].compute.per_sample_s;
                den += n / groups[i].compute.per_sample_s;
            }
            level = num / den;
            bool changed = false;
            for (std::size_t i = 0; i < groups.size(); ++i)
                if (active[i] && groups[i].compute.fixed_s >= level) {
                    active[i] = 0;
                    changed = true;
                }
            if (!changed) break;
        }
        for (std::size_t i = 0; i < groups.size(); ++i) {
            if (groups[i].replicas <= 0) continue;
            if (active[i]) {
                out.local_batches[i] = (level - groups[i].compute.fixed_s) / groups[i].compute.per_sample_s;
            } else {
                out.idle_groups.push_back(i);
            }
        }
        if (!out.idle_groups.empty()) out.status = balance_status::idle_replicas;
    }
    out.time.sync_s = pollux_sync_time_s(network, replicas, nodes);
    out.time.step_s = combine_step_time_s(out.time.compute_s, out.time.sync_s, network.gamma, accumulation_steps);
    return out;
}

// ---- prices ------------------------------------------------------------------------------------

/// Price per hour of `instances_per_type[k]` instances of catalog type k at the chosen price.
/// Requires instances_per_type.size() == catalog.instances.size() (checked: invalid_input).
[[nodiscard]] inline double configuration_usd_per_h(const instance_catalog& catalog,
                                                    std::span<const std::int32_t> instances_per_type,
                                                    price_kind pricing) {
    if (instances_per_type.size() != catalog.instances.size())
        throw invalid_input("instances_per_type", std::to_string(instances_per_type.size()) + " counts",
                            std::to_string(catalog.instances.size()) + " counts, one per catalog instance type");
    double usd_per_h = 0.0;
    for (std::size_t k = 0; k < instances_per_type.size(); ++k) {
        detail::require_at_least("instances_per_type[" + std::to_string(k) + "]", instances_per_type[k], 0);
        usd_per_h += static_cast<double>(instances_per_type[k]) * catalog.instances[k].usd_per_h(pricing);
    }
    return usd_per_h;
}

/// Dollars per sample trained: usd_per_h / 3600 / samples_per_s (+inf when nothing trains).
[[nodiscard]] inline double usd_per_sample(double usd_per_h, double samples_per_s) noexcept {
    if (!(samples_per_s > 0.0)) return std::numeric_limits<double>::infinity();
    return usd_per_h / 3600.0 / samples_per_s;
}

// ---- the cluster adapter -----------------------------------------------------------------------

/// One instance type as the synchronous model sees it: GPUs per instance (one replica each) and the
/// compute speed of its GPU type.
struct sync_instance_type {
    std::int32_t gpus = 1;
    affine_time compute{};
};

/// How the batch is given to the cluster adapter.
enum class batch_basis {
    per_replica,  ///< `batch` is the local batch of every replica (global batch grows with K)
    global,       ///< `batch` is the global batch of one micro-step, split over the replicas
};

template <>
struct enum_text<batch_basis> {
    static constexpr std::array<enum_name<batch_basis>, 2> names{{{batch_basis::per_replica, "per_replica"}, {batch_basis::global, "global"}}};
};

/// Everything but the instance counts: the whole synchronous job on a cluster of instances, each
/// instance a node. With `ring` set, T_sync is the ring all-reduce's; otherwise Pollux's fitted
/// alpha_n/beta_n/alpha_r/beta_r.
struct sync_cluster_spec {
    std::vector<sync_instance_type> types{};
    pollux_params network{};  ///< sync parameters (delta_n_s too) and gamma (alpha_c_s / beta_c_s / batch_exponent unused)
    std::optional<ring_allreduce> ring{};
    batch_policy policy = batch_policy::equal;
    batch_basis basis = batch_basis::per_replica;
    double batch = 0.0;
    std::int32_t accumulation_steps = 0;

    void validate(std::string_view path = "spec") const {
        const std::string p = detail::field_prefix(path);
        if (types.empty()) throw invalid_input(p + "types", "[]", "at least one instance type");
        for (std::size_t k = 0; k < types.size(); ++k) {
            const std::string at = p + "types[" + std::to_string(k) + "]";
            detail::require_at_least(at + ".gpus", types[k].gpus, 1);
            validate_gpu_compute(types[k].compute, at + ".compute");
        }
        network.validate(p + "network");
        if (ring) ring->validate(p + "ring");
        detail::require_positive(p + "batch", batch);
        detail::require_at_least(p + "accumulation_steps", accumulation_steps, 0);
    }
};

/// The synchronous model as a cluster_throughput_model: samples_per_s(counts) for counts[k]
/// instances of type k, K = sum counts[k] * gpus[k] replicas on N = sum counts[k] nodes.
/// Allocation-free and noexcept; the spec is validated once at construction.
class sync_cluster_throughput {
public:
    explicit sync_cluster_throughput(sync_cluster_spec spec) : spec_(std::move(spec)) { spec_.validate(); }

    /// Types from a catalog (GPUs per instance) with the compute speed of each type's GPU,
    /// compute[k] for catalog.instances[k].
    [[nodiscard]] static sync_cluster_throughput from_catalog(const instance_catalog& catalog,
                                                              std::span<const affine_time> compute,
                                                              sync_cluster_spec spec) {
        catalog.validate();
        if (compute.size() != catalog.instances.size())
            throw invalid_input("compute", std::to_string(compute.size()) + " entries",
                                std::to_string(catalog.instances.size()) + " entries, one per catalog instance type");
        spec.types.clear();
        for (std::size_t k = 0; k < compute.size(); ++k)
            spec.types.push_back({.gpus = catalog.instances[k].gpus, .compute = compute[k]});
        return sync_cluster_throughput(std::move(spec));
    }

    [[nodiscard]] std::size_t type_count() const noexcept { return spec_.types.size(); }
    [[nodiscard]] const sync_cluster_spec& spec() const noexcept { return spec_; }

    /// Step time of the cluster (0 for the empty cluster).
    [[nodiscard]] step_time_parts step_time(std::span<const std::int32_t> counts) const noexcept {
        step_time_parts out;
        std::int64_t replicas = 0, nodes = 0;
        double slowest_fixed = 0.0, numerator = 0.0, denominator = 0.0, slowest = 0.0;
        for (std::size_t k = 0; k < counts.size() && k < spec_.types.size(); ++k) {
            if (counts[k] <= 0) continue;
            const auto& t = spec_.types[k];
            const std::int64_t n = std::int64_t{counts[k]} * t.gpus;
            replicas += n;
            nodes += counts[k];
            numerator += static_cast<double>(n) * t.compute.fixed_s / t.compute.per_sample_s;
            denominator += static_cast<double>(n) / t.compute.per_sample_s;
            slowest_fixed = std::max(slowest_fixed, t.compute.fixed_s);
        }
        if (replicas == 0) return out;
        const double micro_batch = micro_batch_of(replicas);
        if (spec_.policy == batch_policy::balanced) {
            // balanced_compute_time_s, inlined over the counts.
            out.compute_s = std::max((micro_batch + numerator) / denominator, slowest_fixed);
        } else {
            const double local = micro_batch / static_cast<double>(replicas);
            for (std::size_t k = 0; k < counts.size() && k < spec_.types.size(); ++k)
                if (counts[k] > 0) slowest = std::max(slowest, spec_.types[k].compute.at(local));
            out.compute_s = slowest;
        }
        out.sync_s = spec_.ring ? ring_sync_time_s(*spec_.ring, replicas, nodes)
                                : pollux_sync_time_s(spec_.network, replicas, nodes);
        out.step_s = combine_step_time_s(out.compute_s, out.sync_s, spec_.network.gamma, spec_.accumulation_steps);
        return out;
    }

    /// Samples per step (all micro-steps) for a cluster of K replicas.
    [[nodiscard]] double global_batch(std::int64_t replicas) const noexcept {
        return micro_batch_of(replicas) * static_cast<double>(spec_.accumulation_steps + 1);
    }

    /// The linear bound of linearly_bounded_throughput_model (model/concepts.hpp); defined, with
    /// its proof, in model/sync_data_parallel_bounds.hpp.
    void samples_per_s_linear_bound(std::span<const std::int32_t> lower, std::span<const std::int32_t> upper,
                                    std::span<double> rate, std::int64_t min_instances = 1,
                                    double min_samples_per_s = 0.0) const noexcept;
    /// The box bound of box_bounded_throughput_model; model/sync_data_parallel_bounds.hpp.
    [[nodiscard]] double samples_per_s_upper_bound(std::span<const std::int32_t> lower,
                                                   std::span<const std::int32_t> upper, std::int64_t max_instances,
                                                   std::int64_t min_instances = 1) const noexcept;

    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> counts) const noexcept {
        std::int64_t replicas = 0;
        for (std::size_t k = 0; k < counts.size() && k < spec_.types.size(); ++k)
            if (counts[k] > 0) replicas += std::int64_t{counts[k]} * spec_.types[k].gpus;
        if (replicas == 0) return 0.0;
        const double step_s = step_time(counts).step_s;
        if (!(step_s > 0.0) || !std::isfinite(step_s)) return 0.0;
        return global_batch(replicas) / step_s;
    }

private:
    [[nodiscard]] double micro_batch_of(std::int64_t replicas) const noexcept {
        return spec_.basis == batch_basis::global ? spec_.batch : spec_.batch * static_cast<double>(replicas);
    }

    sync_cluster_spec spec_;
};

static_assert(cluster_throughput_model<sync_cluster_throughput>);

}  // namespace dnnplan

#include <dnnplan/model/sync_data_parallel_bounds.hpp>  // the bound members' definitions
