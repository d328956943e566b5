// One result shape with one meaning (docs/architecture.md, "Statuses"): every planner's solve on
// its bundled problem (examples/data/), on a problem no plan can meet and under a tiny budget,
// checked against the rules a scheduler reads them by: optimal => bound == value, exact figures
// and no reason; infeasible => no plan and no limit; a budget that stops a search => `limit`
// names it; estimated figures => their interval and sample count; best_effort only without a plan;
// every status but optimal says why.

#include <dnnplan/dnnplan.hpp>
#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/io/hybrid_plan_json.hpp>
#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/io/vm_recommend_json.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace {

using dnnplan::search_limit;
using dnnplan::solve_status;

std::string bundled(const std::string& name) {
    const std::filesystem::path path = std::filesystem::path(DNNPLAN_TEST_FIXTURES_DIR) / ".." / ".." / "examples" / "data" / name;
    std::ifstream in(path);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The rules of the one shape, and what a scheduler acts on.
template <class Plan, class Details>
void check_shape(const dnnplan::solve_result<Plan, Details>& r) {
    dnnplan_test::check_result_shape(r);
    CHECK(r.plan_to_run().has_value() == (r.plan.has_value() || r.best_effort.has_value()));
}

/// A plan that meets the goals.
template <class Result>
void check_planned(const Result& r) {
    check_shape(r);
    CHECK((r.status == solve_status::optimal || r.status == solve_status::feasible));
    CHECK(r.limit == search_limit::none);
}

/// No plan meets the goals: infeasible when the planner proves it, no_plan_found when it cannot.
template <class Result>
void check_unplanned(const Result& r, solve_status expected) {
    check_shape(r);
    CHECK(r.status == expected);
    CHECK_FALSE(r.plan);
}

/// A budget stopped the search: `limit` says which, and the status follows from the plan so far.
template <class Result>
void check_limited(const Result& r, search_limit expected) {
    check_shape(r);
    CHECK(r.limit == expected);
    CHECK(r.status == (r.plan ? solve_status::feasible : solve_status::no_plan_found));
}

constexpr dnnplan::search_budget one_node{.max_nodes = 1, .max_evaluations = 0, .max_time_s = 0.0};
constexpr dnnplan::search_budget one_evaluation{.max_nodes = 0, .max_evaluations = 1, .max_time_s = 0.0};

dnnplan::resilience_request bundled_resilience() {
    // The bundled problem's {"trace_csv": "p3-trace.csv"}, resolved as resilience_plan does.
    auto document = nlohmann::json::parse(bundled("resilience_gpt2_p3.json"));
    const dnnplan::instance_trace trace = dnnplan::parse_instance_trace(bundled("p3-trace.csv"));
    nlohmann::json events = nlohmann::json::array();
    for (const auto& e : trace.events)
        events.push_back({{"time_ms", e.time_ms}, {"event", std::string(to_string(e.kind))}, {"node", e.node}});
    document["offers"][0]["preemption"] = {{"trace", {{"events", events}}}};
    document["options"]["samples"] = 40;  // enough to exercise every strategy, fast
    return document.get<dnnplan::resilience_request>();
}

}  // namespace

TEST_CASE("result shape: the spot planner", "[architecture][result_shape]") {
    const dnnplan::spot_request bundled_request = dnnplan::parse_spot_request(bundled("resnet110.json"));
    check_planned(dnnplan::solve(bundled_request));

    auto impossible = bundled_request;
    impossible.problem.goals.deadline_s = 1.0;
    const auto none = dnnplan::solve(impossible);
    check_unplanned(none, solve_status::infeasible);
    REQUIRE(none.best_effort);  // the fastest plan, which misses the deadline
    CHECK(none.best_effort->prediction.training_time_s > 1.0);

    for (const auto method : {dnnplan::search_method::exact, dnnplan::search_method::exhaustive, dnnplan::search_method::sliding_window}) {
        INFO(to_string(method));
        auto tiny = bundled_request;
        tiny.options.method = method;
        tiny.options.budget = one_evaluation;
        check_limited(dnnplan::solve(tiny), search_limit::evaluations);
    }
}

TEST_CASE("result shape: the spot planner under preemptions", "[architecture][result_shape]") {
    dnnplan::spot_resilience_request request;
    request.spot = dnnplan::parse_spot_request(bundled("resnet110.json"));
    for (const auto& type : request.spot.problem.catalog.instances)
        request.preemption.per_type[type.name] = dnnplan::poisson_preemption{.rate_per_instance_h = 0.5};
    request.preemption.samples = 40;
    const auto planned = dnnplan::solve(request);
    check_planned(planned);
    CHECK(planned.figures == dnnplan::figure_kind::estimated);  // simulated: never optimal
    CHECK(planned.status == solve_status::feasible);

    auto impossible = request;
    impossible.spot.problem.goals.deadline_s = 1.0;
    const auto none = dnnplan::solve(impossible);
    check_shape(none);
    CHECK_FALSE(none.plan);
    CHECK(none.status != solve_status::optimal);
}

TEST_CASE("result shape: the VM recommender", "[architecture][result_shape]") {
    const dnnplan::vm_request request = dnnplan::parse_vm_request(bundled("vm_problem.json"));
    check_planned(dnnplan::solve(request));

    auto impossible = request;
    impossible.problem.constraints.max_usd_per_h = 1e-6;
    check_unplanned(dnnplan::solve(impossible), solve_status::infeasible);

    for (const auto method : {dnnplan::search_method::exact, dnnplan::search_method::exhaustive}) {
        INFO(to_string(method));
        auto tiny = request;
        tiny.options.method = method;
        tiny.options.budget = one_evaluation;
        check_limited(dnnplan::solve(tiny), search_limit::evaluations);
    }
}

TEST_CASE("result shape: PipeDream's partitioner and the 1F1B partitioner", "[architecture][result_shape]") {
    const dnnplan::layer_graph graph = dnnplan::parse_pipedream_graph(bundled("vgg16.txt"));
    dnnplan::pipedream_request request{.graph = graph, .options = {}};
    request.options.machines = {4};
    check_planned(dnnplan::solve(request));

    // PipeDream's memory rule always lets one stage replicated on every machine fit; a straight
    // pipeline has no such way out.
    auto impossible = request;
    impossible.options.memory_bytes = 1.0;
    impossible.options.use_memory_constraint = true;
    impossible.options.straight_pipeline = true;
    check_unplanned(dnnplan::solve(impossible), solve_status::infeasible);

    auto tiny = request;
    tiny.options.budget = one_node;
    check_limited(dnnplan::solve(tiny), search_limit::nodes);
    tiny.options.budget = one_evaluation;
    tiny.options.machines = {2, 2};  // two levels: the recurrence, which counts stage times
    check_limited(dnnplan::solve(tiny), search_limit::evaluations);

    // The 1F1B partitioner on the same profile.
    const dnnplan::layer_chain chain = dnnplan::build_layer_chain(graph, 128);
    const auto model = dnnplan::pipeline_1f1b_factory{}(chain, {.micro_batch_size = 32, .micro_batches = 4});
    check_planned(dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 4}}, model));
    const auto tight = dnnplan::pipeline_1f1b_factory{}(chain, {.micro_batch_size = 32, .micro_batches = 4, .device_memory_bytes = 1.0});
    check_unplanned(dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 4}}, tight), solve_status::infeasible);
    check_limited(dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 4, .budget = one_node}}, model),
                  search_limit::nodes);
}

TEST_CASE("result shape: the hybrid-parallel planner", "[architecture][result_shape]") {
    dnnplan::hybrid_request request;
    request.problem.profiles.push_back({.batch_size = 128, .graph = dnnplan::parse_pipedream_graph(bundled("vgg16.txt"))});
    request.problem.catalog = dnnplan::parse_container_catalog(bundled("containers.json"));
    request.problem.max_workers = 8;
    request.problem.global_batch_sizes = {128, 256};
    check_planned(dnnplan::solve(request));

    auto capped = request;
    capped.options.objective = dnnplan::objective_kind::max_throughput;
    capped.options.budget_usd_per_h = 1e-6;
    const auto none = dnnplan::solve(capped);
    check_unplanned(none, solve_status::infeasible);
    CHECK(none.best_effort);  // the cheapest plan, over the cap

    auto tiny = request;
    tiny.options.budget = one_node;
    check_limited(dnnplan::solve(tiny), search_limit::nodes);
}

TEST_CASE("result shape: the resilience planner and checkpoint-restart", "[architecture][result_shape]") {
    const dnnplan::resilience_request request = bundled_resilience();
    const auto planned = dnnplan::solve(request);
    check_planned(planned);
    CHECK(planned.status == solve_status::feasible);  // compared on estimates: never optimal

    auto impossible = request;
    impossible.job.deadline_h = 0.01;  // below every configuration's time without preemptions
    check_unplanned(dnnplan::solve(impossible), solve_status::infeasible);

    auto tiny = request;
    tiny.options.budget = one_evaluation;
    check_limited(dnnplan::solve(tiny), search_limit::samples);

    dnnplan::checkpoint_request checkpoint{.work_h = 10.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                                           .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = 0.2},
                                           .deadline_h = 14.0};
    check_planned(dnnplan::solve(checkpoint));
    checkpoint.preemption = dnnplan::poisson_preemption{.rate_per_instance_h = 1e4};  // E[T] beyond a double
    check_unplanned(dnnplan::solve(checkpoint), solve_status::infeasible);
}

TEST_CASE("result shape: the elastic advisor", "[architecture][result_shape]") {
    const dnnplan::measurement_table table = dnnplan::parse_measurement_table(bundled("elastic_icac19_v100.json"));
    dnnplan::elastic_request request;
    request.job = {.gpu = table.gpu, .remaining_steps = 64000, .deadline_s = std::nullopt,
                   .worker_usd_per_h = table.worker_usd_per_h, .ps_usd_per_h = table.ps_usd_per_h,
                   .configurations = table.configurations()};
    check_planned(dnnplan::solve(request));  // the first trial
    request.observations = {table.measured.front(), table.measured.back()};
    const auto measured = dnnplan::solve(request);
    check_planned(measured);
    CHECK(measured.figures == dnnplan::figure_kind::estimated);  // from the fitted model

    request.job.deadline_s = 1.0;
    const auto none = dnnplan::solve(request);
    check_unplanned(none, solve_status::infeasible);
    CHECK(none.best_effort);  // the configuration it runs anyway: the fastest
}

TEST_CASE("result shape: the deadline policy's decision", "[architecture][result_shape]") {
    // A scheduler's observation on a slice of the shared traces (tests/fixtures/spot_availability).
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/spot_availability/observation.json");
    dnnplan::deadline_observation o = dnnplan::parse_deadline_observation(in);
    check_planned(dnnplan::solve(o));
    for (const auto kind : {dnnplan::deadline_policy_kind::greedy, dnnplan::deadline_policy_kind::uniform_progress,
                            dnnplan::deadline_policy_kind::on_demand}) {
        o.policy = kind;
        check_planned(dnnplan::solve(o));
    }
    o.job.deadline_s = o.elapsed_s() + 1.0;  // not even on-demand from now makes it
    const auto none = dnnplan::solve(o);
    check_unplanned(none, solve_status::infeasible);
    REQUIRE(none.best_effort);
    // The fastest way on: the fixture's spot run going on (it has spot at the last tick); from
    // waiting, on-demand.
    REQUIRE(o.state.mode == dnnplan::deadline_action::spot);
    CHECK(none.best_effort->action == dnnplan::deadline_action::spot);
    o.state.mode = dnnplan::deadline_action::wait;
    const auto waiting = dnnplan::solve(o);
    check_unplanned(waiting, solve_status::infeasible);
    REQUIRE(waiting.best_effort);
    CHECK(waiting.best_effort->action == dnnplan::deadline_action::on_demand);
}
