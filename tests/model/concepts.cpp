// The model concepts of model/concepts.hpp accept the published models and a researcher's own
// conforming types, and reject, for each concept, a type missing a member or with a wrong
// signature (return type, parameters, noexcept, the pre-refactor free-function forms).

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/convergence.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/preemption/process.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

using dnnplan::layer_chain;
using dnnplan::pipeline_config;
using dnnplan::price_kind;
using dnnplan::stage_breakdown;
using dnnplan::stage_candidate;

namespace {

using counts_view = std::span<const std::int32_t>;

// ---- asynchronous_throughput_model, capped_throughput_model ------------------------------------

struct no_batch {  // lacks worker_batch
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0; }
};
struct throwing_time {  // evaluation must be noexcept
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const { return 1.0; }
    double worker_batch(std::size_t) const noexcept { return 1.0; }
};
struct float_time {  // returns float, not double
    std::size_t type_count() const noexcept { return 1; }
    float iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0f; }
    double worker_batch(std::size_t) const noexcept { return 1.0; }
};
struct conforming_time {  // a constant-time model: a researcher's own, accepted as is
    std::size_t type_count() const noexcept { return 1; }
    double iteration_time_s(std::size_t, std::int64_t) const noexcept { return 1.0; }
    double worker_batch(std::size_t) const noexcept { return 64.0; }
};
struct capped_time : conforming_time {  // with a cap: a capped_throughput_model
    std::optional<std::int64_t> n_upper() const noexcept { return 8; }
};
struct plain_cap : conforming_time {  // the cap as a bare integer: "no cap" cannot be said
    std::int64_t n_upper() const noexcept { return 8; }
};
struct throwing_cap : conforming_time {  // must be noexcept
    std::optional<std::int64_t> n_upper() const { return 8; }
};
struct cap_only {  // a cap without the asynchronous model it caps
    std::optional<std::int64_t> n_upper() const noexcept { return 8; }
};

// ---- convergence_model, linear_cost_model ------------------------------------------------------

struct no_minorant {  // an exact solver cannot bound it
    double loss_floor() const noexcept { return 0.0; }
    double iterations_to_reach(double, std::int64_t, double, double) const noexcept { return 1.0; }
};
struct scalar_minorant {  // the minorant must be affine in the batch, not a number
    double loss_floor() const noexcept { return 0.0; }
    double iterations_to_reach(double, std::int64_t, double, double) const noexcept { return 1.0; }
    double iterations_minorant(double, std::int64_t, double) const noexcept { return 0.0; }
};
struct conforming_convergence {
    double loss_floor() const noexcept { return 0.0; }
    double iterations_to_reach(double, std::int64_t, double, double) const noexcept { return 1.0; }
    dnnplan::affine_in_batch iterations_minorant(double, std::int64_t, double) const noexcept { return {}; }
};
struct no_billing {
    double type_usd_per_h(std::size_t) const noexcept { return 1.0; }
    double fixed_usd_per_h() const noexcept { return 0.0; }
};
struct throwing_price {
    double type_usd_per_h(std::size_t) const { return 1.0; }
    double fixed_usd_per_h() const noexcept { return 0.0; }
    double billed_s(double seconds) const noexcept { return seconds; }
};

// ---- cluster_throughput_model and its bounds ---------------------------------------------------

struct no_noexcept {
    std::size_t type_count() const { return 1; }
    double samples_per_s(counts_view) const { return 1.0; }
};
struct float_speed {
    std::size_t type_count() const noexcept { return 1; }
    float samples_per_s(counts_view) const noexcept { return 1.0f; }
};
struct no_type_count {
    double samples_per_s(counts_view) const noexcept { return 1.0; }
};
struct conforming_cluster {  // every instance adds 10 samples/s
    std::size_t type_count() const noexcept { return 1; }
    double samples_per_s(counts_view c) const noexcept { return 10.0 * c[0]; }
};
struct linear_cluster : conforming_cluster {  // the member bound, defaults for the last two
    void samples_per_s_linear_bound(counts_view, counts_view, std::span<double> rate, std::int64_t = 1,
                                    double = 0.0) const noexcept {
        rate[0] = 10.0;
    }
};
struct old_linear_bound : conforming_cluster {  // the pre-refactor (lower, upper, rate) member
    void samples_per_s_linear_bound(counts_view, counts_view, std::span<double> rate) const noexcept { rate[0] = 10.0; }
};
struct throwing_linear_bound : conforming_cluster {
    void samples_per_s_linear_bound(counts_view, counts_view, std::span<double> rate, std::int64_t,
                                    double) const {
        rate[0] = 10.0;
    }
};
struct free_linear_bound : conforming_cluster {};  // the pre-refactor free-function form only
[[maybe_unused]] void samples_per_s_linear_bound(const free_linear_bound&, counts_view, counts_view, std::span<double> rate,
                                                 std::int64_t = 1, double = 0.0) noexcept {
    rate[0] = 10.0;
}
struct bound_without_speed {  // a bound on nothing: not a cluster_throughput_model
    std::size_t type_count() const noexcept { return 1; }
    void samples_per_s_linear_bound(counts_view, counts_view, std::span<double> rate, std::int64_t,
                                    double) const noexcept {
        rate[0] = 10.0;
    }
};

struct box_cluster : conforming_cluster {
    double samples_per_s_upper_bound(counts_view, counts_view upper, std::int64_t, std::int64_t = 1) const noexcept {
        return 10.0 * upper[0];
    }
};
struct old_box_bound : conforming_cluster {  // the pre-refactor (lower, upper, max_instances) member
    double samples_per_s_upper_bound(counts_view, counts_view upper, std::int64_t) const noexcept { return 10.0 * upper[0]; }
};
struct float_box_bound : conforming_cluster {
    float samples_per_s_upper_bound(counts_view, counts_view, std::int64_t, std::int64_t) const noexcept { return 1.0f; }
};
struct throwing_box_bound : conforming_cluster {
    double samples_per_s_upper_bound(counts_view, counts_view, std::int64_t, std::int64_t) const { return 1.0; }
};
struct free_box_bound : conforming_cluster {};
[[maybe_unused]] double samples_per_s_upper_bound(const free_box_bound&, counts_view, counts_view, std::int64_t,
                                                  std::int64_t = 1) noexcept {
    return 1.0;
}
struct box_bound_without_speed {
    std::size_t type_count() const noexcept { return 1; }
    double samples_per_s_upper_bound(counts_view, counts_view, std::int64_t, std::int64_t) const noexcept { return 1.0; }
};

// ---- offer_cost_model --------------------------------------------------------------------------

struct conforming_offer {
    std::size_t type_count() const noexcept { return 1; }
    double usd_per_h(std::size_t, price_kind kind) const noexcept { return kind == price_kind::spot ? 1.0 : 3.0; }
};
struct price_without_kind {  // one price per type: spot and on-demand cannot differ
    std::size_t type_count() const noexcept { return 1; }
    double usd_per_h(std::size_t) const noexcept { return 1.0; }
};
struct offer_without_type_count {
    double usd_per_h(std::size_t, price_kind) const noexcept { return 1.0; }
};
struct throwing_offer {
    std::size_t type_count() const noexcept { return 1; }
    double usd_per_h(std::size_t, price_kind) const { return 1.0; }
};
struct float_offer {
    std::size_t type_count() const noexcept { return 1; }
    float usd_per_h(std::size_t, price_kind) const noexcept { return 1.0f; }
};

// ---- stage_cost_model, remaining_stages_cost_model, stage_breakdown_model ----------------------

struct remaining_model {  // a researcher's own stage-cost model, buildable from the suffix
    static constexpr bool needs_stage_count = true;
    static constexpr bool depends_only_on_remaining_stages = true;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const stage_candidate&) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};
struct position_free {  // says it reads more than the remaining stages
    static constexpr bool needs_stage_count = false;
    static constexpr bool depends_only_on_remaining_stages = false;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const stage_candidate&) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};
struct silent_on_remaining {  // does not say: not a remaining_stages_cost_model
    static constexpr bool needs_stage_count = true;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const stage_candidate&) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};
struct no_needs_stage_count {
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(const stage_candidate&) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};
struct range_stage_time {  // prices a bare range, not a stage_candidate in its place
    static constexpr bool needs_stage_count = false;
    std::size_t num_states() const noexcept { return 1; }
    double stage_time_s(std::size_t, std::size_t) const noexcept { return 1.0; }
    double pipeline_time_s(double slowest, std::int32_t) const noexcept { return slowest; }
};
struct broken_down : remaining_model {
    stage_breakdown breakdown(const stage_candidate&) const noexcept { return {}; }
};
struct time_as_breakdown : remaining_model {  // "breakdown" must return the figures
    double breakdown(const stage_candidate&) const noexcept { return 1.0; }
};
struct breakdown_without_model {  // the figures without the stage-cost model
    stage_breakdown breakdown(const stage_candidate&) const noexcept { return {}; }
};

// ---- pipeline_model_factory --------------------------------------------------------------------

struct own_factory {
    remaining_model operator()(const layer_chain&, const pipeline_config&) const { return {}; }
};
struct one_f_one_b_factory {
    dnnplan::pipeline_1f1b_model operator()(const layer_chain& chain, const pipeline_config& config) const {
        return dnnplan::pipeline_1f1b_model(chain, config);
    }
};
struct position_free_factory {  // builds a model the suffix recurrence cannot use
    position_free operator()(const layer_chain&, const pipeline_config&) const { return {}; }
};
struct chain_only_factory {  // ignores the configuration
    remaining_model operator()(const layer_chain&) const { return {}; }
};
struct mutable_factory {  // the planner holds the factory const
    remaining_model operator()(const layer_chain&, const pipeline_config&) { return {}; }
};
struct time_factory {  // returns a time, not a model
    double operator()(const layer_chain&, const pipeline_config&) const { return 1.0; }
};

// ---- preemption_process -------------------------------------------------------------------------

using dnnplan::instance_trace;

struct own_process {  // a researcher's own: never preempted
    double preemptions_per_instance_h() const noexcept { return 0.0; }
    instance_trace events(std::int32_t, std::int64_t, std::uint64_t) const { return {}; }
};
struct process_without_rate {
    instance_trace events(std::int32_t, std::int64_t, std::uint64_t) const { return {}; }
};
struct process_without_seed {  // events must take a seed
    double preemptions_per_instance_h() const noexcept { return 0.0; }
    instance_trace events(std::int32_t, std::int64_t) const { return {}; }
};
struct process_returning_count {  // events must be an instance_trace
    double preemptions_per_instance_h() const noexcept { return 0.0; }
    std::int64_t events(std::int32_t, std::int64_t, std::uint64_t) const { return 0; }
};
struct mutable_process {  // the planners hold the process const
    double preemptions_per_instance_h() const noexcept { return 0.0; }
    instance_trace events(std::int32_t, std::int64_t, std::uint64_t) { return {}; }
};

}  // namespace

TEST_CASE("the published models satisfy the concepts", "[model][concepts]") {
    STATIC_REQUIRE(dnnplan::asynchronous_throughput_model<dnnplan::heterogeneous_ps_model>);
    STATIC_REQUIRE(dnnplan::capped_throughput_model<dnnplan::heterogeneous_ps_model>);
    STATIC_REQUIRE(dnnplan::convergence_model<dnnplan::spotdnn_loss_model>);
    STATIC_REQUIRE(dnnplan::linear_cost_model<dnnplan::instance_cost_model>);
    STATIC_REQUIRE(dnnplan::cluster_throughput_model<dnnplan::sync_cluster_throughput>);
    STATIC_REQUIRE(dnnplan::linearly_bounded_throughput_model<dnnplan::sync_cluster_throughput>);
    STATIC_REQUIRE(dnnplan::box_bounded_throughput_model<dnnplan::sync_cluster_throughput>);
    using asp = dnnplan::asp_cluster_throughput<dnnplan::heterogeneous_ps_model>;
    STATIC_REQUIRE(dnnplan::cluster_throughput_model<asp>);
    STATIC_REQUIRE(dnnplan::linearly_bounded_throughput_model<asp>);
    STATIC_REQUIRE(dnnplan::offer_cost_model<dnnplan::catalog_offer_cost>);
    STATIC_REQUIRE(dnnplan::stage_cost_model<dnnplan::pipeline_1f1b_model>);
    STATIC_REQUIRE(dnnplan::remaining_stages_cost_model<dnnplan::pipeline_1f1b_model>);
    STATIC_REQUIRE(dnnplan::stage_breakdown_model<dnnplan::pipeline_1f1b_model>);
    STATIC_REQUIRE(dnnplan::pipeline_model_factory<one_f_one_b_factory>);
}

TEST_CASE("a researcher's own conforming types satisfy the concepts", "[model][concepts]") {
    STATIC_REQUIRE(dnnplan::asynchronous_throughput_model<conforming_time>);
    STATIC_REQUIRE(dnnplan::capped_throughput_model<capped_time>);
    STATIC_REQUIRE(dnnplan::convergence_model<conforming_convergence>);
    STATIC_REQUIRE(dnnplan::cluster_throughput_model<conforming_cluster>);
    STATIC_REQUIRE(dnnplan::linearly_bounded_throughput_model<linear_cluster>);
    STATIC_REQUIRE(dnnplan::box_bounded_throughput_model<box_cluster>);
    STATIC_REQUIRE(dnnplan::offer_cost_model<conforming_offer>);
    STATIC_REQUIRE(dnnplan::remaining_stages_cost_model<remaining_model>);
    STATIC_REQUIRE(dnnplan::stage_cost_model<position_free>);
    STATIC_REQUIRE(dnnplan::stage_cost_model<silent_on_remaining>);
    STATIC_REQUIRE(dnnplan::stage_breakdown_model<broken_down>);
    STATIC_REQUIRE(dnnplan::pipeline_model_factory<own_factory>);
}

TEST_CASE("non-conforming asynchronous, convergence and cost models are rejected", "[model][concepts]") {
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<no_batch>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<throwing_time>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<float_time>);
    STATIC_REQUIRE_FALSE(dnnplan::asynchronous_throughput_model<dnnplan::spotdnn_loss_model>);
    // capped_throughput_model: a cap is optional (none: no saturation), noexcept, and refines an
    // asynchronous model.
    STATIC_REQUIRE_FALSE(dnnplan::capped_throughput_model<conforming_time>);
    STATIC_REQUIRE_FALSE(dnnplan::capped_throughput_model<plain_cap>);
    STATIC_REQUIRE_FALSE(dnnplan::capped_throughput_model<throwing_cap>);
    STATIC_REQUIRE_FALSE(dnnplan::capped_throughput_model<cap_only>);
    STATIC_REQUIRE_FALSE(dnnplan::convergence_model<no_minorant>);
    STATIC_REQUIRE_FALSE(dnnplan::convergence_model<scalar_minorant>);
    STATIC_REQUIRE_FALSE(dnnplan::linear_cost_model<no_billing>);
    STATIC_REQUIRE_FALSE(dnnplan::linear_cost_model<throwing_price>);
}

TEST_CASE("non-conforming cluster models and bounds are rejected", "[model][concepts]") {
    STATIC_REQUIRE_FALSE(dnnplan::cluster_throughput_model<no_noexcept>);
    STATIC_REQUIRE_FALSE(dnnplan::cluster_throughput_model<float_speed>);
    STATIC_REQUIRE_FALSE(dnnplan::cluster_throughput_model<no_type_count>);
    STATIC_REQUIRE_FALSE(dnnplan::cluster_throughput_model<dnnplan::heterogeneous_ps_model>);  // per worker
    // linearly_bounded_throughput_model: the member (lower, upper, rate, min_instances,
    // min_samples_per_s), noexcept, on a cluster model. The pre-refactor forms (three arguments,
    // or a free function found by ADL) no longer count.
    STATIC_REQUIRE_FALSE(dnnplan::linearly_bounded_throughput_model<conforming_cluster>);
    STATIC_REQUIRE_FALSE(dnnplan::linearly_bounded_throughput_model<old_linear_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::linearly_bounded_throughput_model<throwing_linear_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::linearly_bounded_throughput_model<free_linear_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::linearly_bounded_throughput_model<bound_without_speed>);
    // box_bounded_throughput_model: the member (lower, upper, max_instances, min_instances) ->
    // double, noexcept, on a cluster model.
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<linear_cluster>);
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<old_box_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<float_box_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<throwing_box_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<free_box_bound>);
    STATIC_REQUIRE_FALSE(dnnplan::box_bounded_throughput_model<box_bound_without_speed>);
    STATIC_REQUIRE_FALSE(
        dnnplan::box_bounded_throughput_model<dnnplan::asp_cluster_throughput<dnnplan::heterogeneous_ps_model>>);
}

TEST_CASE("non-conforming offer costs are rejected", "[model][concepts]") {
    STATIC_REQUIRE_FALSE(dnnplan::offer_cost_model<price_without_kind>);
    STATIC_REQUIRE_FALSE(dnnplan::offer_cost_model<offer_without_type_count>);
    STATIC_REQUIRE_FALSE(dnnplan::offer_cost_model<throwing_offer>);
    STATIC_REQUIRE_FALSE(dnnplan::offer_cost_model<float_offer>);
    STATIC_REQUIRE_FALSE(dnnplan::offer_cost_model<dnnplan::instance_cost_model>);  // a linear cost, not per offer
}

TEST_CASE("non-conforming stage models and factories are rejected", "[model][concepts]") {
    STATIC_REQUIRE_FALSE(dnnplan::stage_cost_model<no_needs_stage_count>);
    STATIC_REQUIRE_FALSE(dnnplan::stage_cost_model<range_stage_time>);
    STATIC_REQUIRE_FALSE(dnnplan::remaining_stages_cost_model<position_free>);        // says false
    STATIC_REQUIRE_FALSE(dnnplan::remaining_stages_cost_model<silent_on_remaining>);  // does not say
    STATIC_REQUIRE_FALSE(dnnplan::remaining_stages_cost_model<no_needs_stage_count>);
    STATIC_REQUIRE_FALSE(dnnplan::stage_breakdown_model<remaining_model>);
    STATIC_REQUIRE_FALSE(dnnplan::stage_breakdown_model<time_as_breakdown>);
    STATIC_REQUIRE_FALSE(dnnplan::stage_breakdown_model<breakdown_without_model>);
    STATIC_REQUIRE_FALSE(dnnplan::pipeline_model_factory<position_free_factory>);
    STATIC_REQUIRE_FALSE(dnnplan::pipeline_model_factory<chain_only_factory>);
    STATIC_REQUIRE_FALSE(dnnplan::pipeline_model_factory<mutable_factory>);
    STATIC_REQUIRE_FALSE(dnnplan::pipeline_model_factory<time_factory>);
    STATIC_REQUIRE_FALSE(dnnplan::pipeline_model_factory<remaining_model>);  // a model, not a factory
}

TEST_CASE("non-conforming preemption processes are rejected", "[model][concepts][preemption]") {
    STATIC_REQUIRE(dnnplan::preemption_process<own_process>);
    STATIC_REQUIRE_FALSE(dnnplan::preemption_process<process_without_rate>);
    STATIC_REQUIRE_FALSE(dnnplan::preemption_process<process_without_seed>);
    STATIC_REQUIRE_FALSE(dnnplan::preemption_process<process_returning_count>);
    STATIC_REQUIRE_FALSE(dnnplan::preemption_process<mutable_process>);
}

TEST_CASE("a conforming type's members do what they say", "[model][concepts]") {
    // The types above are only checked for their shape; these few calls keep the definitions
    // honest (and used).
    const std::int32_t three[1]{3};
    CHECK(conforming_cluster{}.samples_per_s(three) == 30.0);
    double rate[1]{0.0};
    linear_cluster{}.samples_per_s_linear_bound(three, three, rate);
    CHECK(rate[0] == 10.0);
    CHECK(box_cluster{}.samples_per_s_upper_bound(three, three, 3) == 30.0);
    CHECK(conforming_offer{}.usd_per_h(0, price_kind::on_demand) == 3.0);
    CHECK(capped_time{}.n_upper() == std::optional<std::int64_t>{8});
    CHECK(own_factory{}(layer_chain{}, pipeline_config{}).pipeline_time_s(2.0, 3) == 2.0);
    CHECK(own_process{}.events(4, 1000, 0).events.empty());
    CHECK(own_process{}.preemptions_per_instance_h() == 0.0);
}
