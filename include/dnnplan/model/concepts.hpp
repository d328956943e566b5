#pragma once
// What a solver needs from the models it composes. A researcher can swap any of the three
// models for one of their own that satisfies the concept; the search is unchanged.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

namespace dnnplan {

/// Asynchronous (ASP) training: each worker steps on its own, and its iteration time depends
/// only on its instance type k and on the number of workers n in the cluster.
/// Requirements beyond the syntax: iteration_time_s(k, n) > 0 and finite, worker_batch(k) > 0,
/// for every k < type_count() and n >= 1.
template <class M>
concept asynchronous_throughput_model = requires(const M& m, std::size_t k, std::int64_t n) {
    { m.type_count() } noexcept -> std::convertible_to<std::size_t>;
    { m.iteration_time_s(k, n) } noexcept -> std::same_as<double>;
    { m.worker_batch(k) } noexcept -> std::same_as<double>;
};

/// The speed of a whole cluster, whatever the training discipline: a cluster is a count of
/// instances per type (index k < type_count()), and the model says how many samples per second
/// it trains. Both the asynchronous spotDNN model (asp_cluster_throughput in model/asp_cluster.hpp)
/// and the synchronous data-parallel model (sync_cluster_throughput in model/sync_data_parallel.hpp)
/// satisfy it, so a recommender written against this concept takes either.
/// Requirements beyond the syntax: instances_per_type.size() == type_count() and every count >= 0;
/// samples_per_s(...) is finite and >= 0, and 0 for the empty cluster (all counts 0). A cluster the
/// model cannot run (e.g. a synchronous job whose global batch does not split over its replicas)
/// gives 0 samples/s, never a negative or non-finite value.
template <class M>
concept cluster_throughput_model = requires(const M& m, std::span<const std::int32_t> instances_per_type) {
    { m.type_count() } noexcept -> std::convertible_to<std::size_t>;
    { m.samples_per_s(instances_per_type) } noexcept -> std::same_as<double>;
};

/// An affine function of the weighted-average batch b_w: intercept + slope * b_w.
struct affine_in_batch {
    double intercept = 0.0;
    double slope = 0.0;
    [[nodiscard]] constexpr double at(double batch) const noexcept { return intercept + slope * batch; }
};

/// Iterations needed to reach a target loss, as a function of the cluster size n, the
/// weighted-average batch b_w and the convergence coefficient R.
/// Requirements beyond the syntax, for every target > loss_floor(), n >= 1, b_w > 0, R >= r_lower:
///   iterations_to_reach(target, n, b_w, R) >= 0 and finite, and
///   iterations_to_reach(target, n, b_w, R) >= max(0, iterations_minorant(target, n, r_lower).at(b_w)).
/// The minorant is what lets an exact solver bound the iterations of a whole subtree of clusters.
template <class M>
concept convergence_model = requires(const M& m, double target, std::int64_t n, double batch, double r) {
    { m.loss_floor() } noexcept -> std::same_as<double>;
    { m.iterations_to_reach(target, n, batch, r) } noexcept -> std::same_as<double>;
    { m.iterations_minorant(target, n, r) } noexcept -> std::same_as<affine_in_batch>;
};

/// A price per hour that is a fixed part plus a price per instance of each type, and a billing
/// rule. Requirements beyond the syntax: prices >= 0; billed_s(t) >= t and non-decreasing in t.
template <class C>
concept linear_cost_model = requires(const C& c, std::size_t k, double seconds) {
    { c.type_usd_per_h(k) } noexcept -> std::same_as<double>;
    { c.fixed_usd_per_h() } noexcept -> std::same_as<double>;
    { c.billed_s(seconds) } noexcept -> std::same_as<double>;
};

}  // namespace dnnplan
