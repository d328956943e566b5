#pragma once
// What the planners need from the models they compose: every extension point of the library is
// one of these concepts, and extending it means writing a type with these members (the one
// mechanism: members, checked by a concept; optional capabilities are further concepts a planner
// tests with `if constexpr`). The syntax is checked at compile time; the requirements "beyond the
// syntax" below are what the planners' proofs rely on, and a model that breaks them gets plans
// without the guarantees. docs/architecture.md ("Swapping in a model") shows one of each in use.
//
//   concept                              used by
//   asynchronous_throughput_model        spot planner (solve/spot_provision/solve.hpp)
//   capped_throughput_model              spot planner, options.cap_at_n_upper (optional)
//   convergence_model                    spot planner
//   linear_cost_model                    spot planner
//   cluster_throughput_model             VM recommender (solve/vm_recommend/solve.hpp)
//   linearly_bounded_throughput_model    VM recommender's branch and bound (without it: exhaustive)
//   box_bounded_throughput_model         VM recommender's branch and bound (optional, tighter)
//   offer_cost_model                     VM recommender
//   stage_cost_model                     pipeline partitioners (partition/), hybrid planner
//   remaining_stages_cost_model          pipeline DP's fast recurrence, hybrid planner
//   pipeline_model_factory               hybrid planner (solve/hybrid_plan/solve.hpp)
//   stage_breakdown_model                hybrid planner's per-stage figures (optional)

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dnnplan {

// ---- asynchronous parameter-server training (spotDNN) ----------------------------------------

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

/// An asynchronous model that knows the cluster size past which more workers cannot add speed
/// (spotDNN's n_upper, eq. (15): the PS bandwidth is saturated); none when there is no such size.
/// Only used when the planner is asked to cap sizes there (spot_options::cap_at_n_upper).
template <class M>
concept capped_throughput_model = asynchronous_throughput_model<M> && requires(const M& m) {
    { m.n_upper() } noexcept -> std::same_as<std::optional<std::int64_t>>;
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
/// The minorant is what lets an exact solver bound the iterations of a whole subtree of clusters;
/// {0, 0} is always valid (and gives weak bounds).
template <class M>
concept convergence_model = requires(const M& m, double target, std::int64_t n, double batch, double r) {
    { m.loss_floor() } noexcept -> std::same_as<double>;
    { m.iterations_to_reach(target, n, batch, r) } noexcept -> std::same_as<double>;
    { m.iterations_minorant(target, n, r) } noexcept -> std::same_as<affine_in_batch>;
};

/// A price per hour that is a fixed part plus a price per instance of each type, and a billing
/// rule. Requirements beyond the syntax: prices >= 0 and finite; billed_s(t) >= t and
/// non-decreasing in t. The cluster price is fixed + sum_k n_k * type_usd_per_h(k); the cost is
/// billed_s(T) * price / 3600.
template <class C>
concept linear_cost_model = requires(const C& c, std::size_t k, double seconds) {
    { c.type_usd_per_h(k) } noexcept -> std::same_as<double>;
    { c.fixed_usd_per_h() } noexcept -> std::same_as<double>;
    { c.billed_s(seconds) } noexcept -> std::same_as<double>;
};

// ---- whole clusters, any training discipline (VM recommendation) ------------------------------

/// The speed of a whole cluster, whatever the training discipline: a cluster is a count of
/// instances per type (index k < type_count()), and the model says how many samples per second
/// it trains. Both the asynchronous model (asp_cluster_throughput, model/asp_cluster.hpp) and the
/// synchronous data-parallel model (sync_cluster_throughput, model/sync_data_parallel.hpp) are.
/// Requirements beyond the syntax: instances_per_type.size() == type_count() and every count >= 0;
/// samples_per_s(...) is finite and >= 0, and 0 for the empty cluster. A cluster the model cannot
/// run gives 0 samples/s, never a negative or non-finite value.
template <class M>
concept cluster_throughput_model = requires(const M& m, std::span<const std::int32_t> instances_per_type) {
    { m.type_count() } noexcept -> std::convertible_to<std::size_t>;
    { m.samples_per_s(instances_per_type) } noexcept -> std::same_as<double>;
};

/// A linear upper bound on a cluster's speed over a box of clusters: after
/// m.samples_per_s_linear_bound(lower, upper, rate, min_instances, min_samples_per_s), every counts
/// c with lower <= c <= upper (element-wise), at least min_instances instances and
/// samples_per_s(c) >= min_samples_per_s has samples_per_s(c) <= sum_k c[k] * rate[k], with every
/// rate[k] finite and >= 0. The bound may use the last two arguments to tighten (or ignore them);
/// it must hold over all of the box they describe. This is what lets the VM recommender prune.
template <class M>
concept linearly_bounded_throughput_model =
    cluster_throughput_model<M> &&
    requires(const M& m, std::span<const std::int32_t> c, std::span<double> rate, std::int64_t n, double r) {
        { m.samples_per_s_linear_bound(c, c, rate, n, r) } noexcept;
    };

/// An optional second bound: m.samples_per_s_upper_bound(lower, upper, max_instances,
/// min_instances) >= samples_per_s(c) for every c in the box [lower, upper] with min_instances <=
/// sum c <= max_instances. It captures what a linear bound cannot (a synchronisation time that
/// grows with the cluster and caps its speed); the branch and bound uses the smaller of the two.
template <class M>
concept box_bounded_throughput_model =
    cluster_throughput_model<M> && requires(const M& m, std::span<const std::int32_t> c, std::int64_t n) {
        { m.samples_per_s_upper_bound(c, c, n, n) } noexcept -> std::same_as<double>;
    };

/// The price per hour of one instance of type k bought at a price kind (+inf: that offer is not
/// available). Requirements beyond the syntax: every price is >= 0 (or +inf), and a configuration
/// costs the sum over its instances of their prices (the recommender's bounds B3-B6 rely on it).
template <class C>
concept offer_cost_model = requires(const C& c, std::size_t k, price_kind kind) {
    { c.type_count() } noexcept -> std::convertible_to<std::size_t>;
    { c.usd_per_h(k, kind) } noexcept -> std::same_as<double>;
};

// ---- pipeline stages (partitioners, hybrid parallelism) ----------------------------------------

/// One pipeline configuration a planner prices: its micro-batching and the device it runs on
/// (what the 1F1B model of model/pipeline_1f1b.hpp takes, and what a pipeline_model_factory builds
/// a model from).
struct pipeline_config {
    std::int32_t micro_batch_size = 1;        ///< b, samples per micro-batch (>= 1)
    std::int32_t micro_batches = 1;           ///< M, micro-batches per minibatch (>= 1)
    double bandwidth_bytes_per_s = 1e9;       ///< per device, for activations and all-reduce (PipeDream's -b default)
    double sync_overlap_ratio = 0.0;          ///< share of the all-reduce hidden behind compute, [0, 1]
    double device_memory_bytes = 16e9;        ///< per device (PipeDream's -s default; a 16 GB V100)
    double speed_ratio = 1.0;                 ///< device speed / profiled device speed (> 0); times are divided by it

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "micro_batch_size", micro_batch_size, 1);
        detail::require_at_least(p + "micro_batches", micro_batches, 1);
        detail::require_positive(p + "bandwidth_bytes_per_s", bandwidth_bytes_per_s);
        if (!(sync_overlap_ratio >= 0.0 && sync_overlap_ratio <= 1.0))
            throw invalid_input(p + "sync_overlap_ratio", detail::format_number(sync_overlap_ratio), "a number in [0, 1]");
        detail::require_positive(p + "device_memory_bytes", device_memory_bytes);
        detail::require_positive(p + "speed_ratio", speed_ratio);
    }
};

//
// A partition space is an ordered list of S states (cut points of the DNN: PipeDream's antichain
// states, or the prefixes of a topological order of the layers). State s stands for "every layer
// of D_s done", with D_0 ⊂ ... along any path of the state DAG. A stage holds the states
// [first_state, end_state): the layers of D_(end_state-1) that are not in D_(first_state-1) (none
// before the first state). A pipeline is a sequence of stages whose ranges chain, each on
// `replicas` devices.

/// A candidate stage in its place in a pipeline, as a partitioner asks a stage-cost model about
/// it. Fields the partitioner cannot know (the stage count, for a partitioner that does not fix
/// it) are 0, and a model that needs them says so (`needs_stage_count`).
struct stage_candidate {
    std::size_t first_state = 0;      ///< the stage holds states [first_state, end_state)
    std::size_t end_state = 0;        ///< exclusive; == the space's size for the last stage
    std::int32_t replicas = 1;        ///< devices running this stage (data parallel within it)
    std::int32_t devices_before = 0;  ///< devices of the stages before this one
    std::int32_t devices_total = 0;   ///< devices of the whole pipeline (PipeDream's M)
    std::int32_t stage_index = 0;     ///< 0-based position; 0 when stage_count is 0
    std::int32_t stage_count = 0;     ///< stages in the pipeline; 0 when the partitioner leaves it free
};

/// A model that prices one stage in its place (stage_time_s per unit of work: PipeDream's
/// minibatch, the 1F1B model's micro-batch; +inf: not allowed there, e.g. it does not fit in
/// memory) and turns the slowest stage and the number of stages into the time per minibatch
/// (pipeline_time_s). `needs_stage_count`: whether stage_time_s reads stage_index / stage_count
/// (then only a partitioner that fixes the stage count may use it). `num_states()`: the size of
/// the space the model was built for.
/// Requirements beyond the syntax: stage_time_s >= 0 (or +inf); pipeline_time_s is
/// non-decreasing in the slowest stage's time (the partitioners minimise the slowest stage).
template <class Model>
concept stage_cost_model = requires(const Model& model, const stage_candidate& stage, double slowest_s, std::int32_t stages) {
    { model.num_states() } -> std::convertible_to<std::size_t>;
    { model.stage_time_s(stage) } -> std::convertible_to<double>;
    { model.pipeline_time_s(slowest_s, stages) } -> std::convertible_to<double>;
    { Model::needs_stage_count } -> std::convertible_to<bool>;
};

/// A stage-cost model whose stage_time_s depends on the stage's place only through
/// stage_count - stage_index (the stages from it to the end), never through devices_before or
/// devices_total. It says so with `static constexpr bool depends_only_on_remaining_stages = true`,
/// which lets a partitioner build the pipeline from the back (pipeline_dp's suffix recurrence).
template <class Model>
concept remaining_stages_cost_model = stage_cost_model<Model> && requires {
    { Model::depends_only_on_remaining_stages } -> std::convertible_to<bool>;
} && static_cast<bool>(Model::depends_only_on_remaining_stages);

struct layer_chain;  // workload/layer_chain.hpp

/// Builds the stage-cost model of one configuration of the hybrid planner from the layer chain:
/// factory(chain, config) is a remaining_stages_cost_model over the chain's states. Requirements
/// beyond the syntax: the model depends on the configuration only through its fields (the planner
/// partitions once for configurations that differ only in the container's price).
template <class F>
concept pipeline_model_factory = requires(const F& factory, const layer_chain& chain, const pipeline_config& config) {
    { factory(chain, config) } -> remaining_stages_cost_model;
};

/// Every figure of one stage, per micro-batch and per replica (what stage_time_s is made of).
struct stage_breakdown {
    std::int32_t samples_per_replica = 0;  ///< b_r = ceil(b / r)
    std::int32_t in_flight = 0;            ///< micro-batches whose activations a device holds: min(u, M)
    double forward_s = 0.0;                ///< compute of the forward pass of b_r samples
    double backward_s = 0.0;
    double compute_s = 0.0;                ///< forward_s + backward_s
    double transfer_s = 0.0;               ///< activations in and out, and their gradients
    double allreduce_s = 0.0;              ///< once per minibatch
    double exposed_sync_s = 0.0;           ///< (1 - overlap) * allreduce_s, once per minibatch
    double memory_bytes = 0.0;             ///< per device
    bool fits = true;                      ///< memory_bytes <= device_memory_bytes
    double stage_time_s = 0.0;             ///< max(compute, transfer) + exposed / M; +inf when !fits
    friend bool operator==(const stage_breakdown&, const stage_breakdown&) = default;
};

/// A stage-cost model that also reports what a stage's time is made of (the 1F1B model does); the
/// hybrid planner puts it in each stage of its plan (without it, only stage_time_s is filled).
template <class Model>
concept stage_breakdown_model = stage_cost_model<Model> && requires(const Model& model, const stage_candidate& stage) {
    { model.breakdown(stage) } -> std::same_as<stage_breakdown>;
};

}  // namespace dnnplan
