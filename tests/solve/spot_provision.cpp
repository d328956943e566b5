// The spot-provisioning planner end to end: the published figures of spotDNN (Shang et al.,
// IWQoS 2023) and its released artifact (as summarised in the reference note), statuses, the
// re-plan with existing instances, and every validation path.

#include <dnnplan/solve/spot_provision.hpp>

#include "../../benchmarks/problems.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using dnnplan::solve_status;
using dnnplan::spot_method;
using dnnplan::spot_options;
using dnnplan::spot_problem;

std::vector<std::int32_t> plan_of(const dnnplan::spot_result& r) {
    std::vector<std::int32_t> counts;
    for (const auto& c : r.counts) counts.push_back(c.count);
    return counts;
}

spot_options with_method(spot_method m) {
    spot_options o;
    o.method = m;
    return o;
}

// Runs `mutate` on a copy of the ResNet-110 problem and expects invalid_input naming `field`.
void expect_rejected(const std::function<void(spot_problem&, spot_options&)>& mutate, const std::string& field) {
    spot_problem p = dnnplan_bench::resnet110_problem();
    spot_options o;
    mutate(p, o);
    INFO("expected a rejection of " << field);
    try {
        (void)dnnplan::solve(p, o);
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == field);
        CHECK_FALSE(e.expected().empty());
    }
}

}  // namespace

TEST_CASE("the artifact's ResNet-110 plans are reproduced", "[solve][spot][published]") {
    // Counts in the artifact's order p2.xlarge, g4dn.4xlarge, g3.8xlarge, g3.16xlarge, p2.8xlarge.
    struct published { double loss, deadline_s; std::vector<std::int32_t> plan; };
    for (const auto& [loss, deadline, plan] : {published{0.9, 1900, {2, 0, 2, 0, 0}}, published{0.8, 2400, {2, 0, 4, 0, 0}}}) {
        INFO("loss " << loss << ", deadline " << deadline);
        const auto problem = dnnplan_bench::resnet110_problem(loss, deadline);
        const auto exact = dnnplan::solve(problem, with_method(spot_method::exact));
        CHECK(exact.status == solve_status::optimal);
        CHECK(plan_of(exact) == plan);
        CHECK(exact.prediction->training_time_s <= deadline);
        CHECK(exact.lower_bound == exact.prediction->cost_usd);
        CHECK(plan_of(dnnplan::solve(problem, with_method(spot_method::exhaustive))) == plan);
        const auto window = dnnplan::solve(problem, with_method(spot_method::sliding_window));
        CHECK(window.status == solve_status::feasible);
        CHECK(plan_of(window) == plan);
        auto artifact = with_method(spot_method::sliding_window);
        artifact.sliding_window_paper_bounds = false;
        artifact.sliding_window_wrap_around = true;
        CHECK(plan_of(dnnplan::solve(problem, artifact)) == plan);
    }
}

TEST_CASE("at (0.7, 3700 s) the window keeps the artifact's plan and the exact plan is cheaper",
          "[solve][spot][published]") {
    const auto problem = dnnplan_bench::resnet110_problem(0.7, 3700);
    const auto window = dnnplan::solve(problem, with_method(spot_method::sliding_window));
    CHECK(plan_of(window) == std::vector<std::int32_t>{2, 0, 4, 0, 0});  // the artifact's plan
    const auto exact = dnnplan::solve(problem, with_method(spot_method::exact));
    // One g4dn.4xlarge in place of a g3.8xlarge: not a window of the time-sorted list, because
    // g4dn.4xlarge (1.37 s per iteration) sorts after g3.8xlarge (1.01 s) and g3.16xlarge (1.03 s).
    CHECK(plan_of(exact) == std::vector<std::int32_t>{2, 1, 3, 0, 0});
    CHECK(exact.prediction->cost_usd < 0.97 * window.prediction->cost_usd);
    CHECK(exact.prediction->cost_usd == Approx(4.36133).epsilon(1e-5));
    CHECK(window.prediction->cost_usd == Approx(4.53263).epsilon(1e-5));
}

TEST_CASE("n_upper of eq. (15) is 13 for alpha1 = 0.8, beta1 = -1.92, and caps n when asked", "[solve][spot][published]") {
    const auto problem = dnnplan_bench::resnet110_problem();
    spot_options o;
    CHECK(dnnplan::make_spotdnn_setup(problem, o).provisioner.n_upper == 13);
    CHECK(dnnplan::make_spotdnn_setup(problem, o).provisioner.space.largest_size() == 25);
    o.cap_at_n_upper = true;
    CHECK(dnnplan::make_spotdnn_setup(problem, o).provisioner.space.largest_size() == 13);
}

TEST_CASE("the re-plan keeps existing instances", "[solve][spot][existing]") {
    auto problem = dnnplan_bench::resnet110_problem(0.8, 2400);
    problem.existing = {{"p2.8xlarge", 1}, {"g4dn.4xlarge", 2}};
    const auto exact = dnnplan::solve(problem, spot_options{});
    const auto oracle = dnnplan::solve(problem, with_method(spot_method::exhaustive));
    REQUIRE(exact.status == solve_status::optimal);
    CHECK(exact.counts[4].count >= 1);
    CHECK(exact.counts[1].count >= 2);
    CHECK(exact.prediction->cost_usd == Approx(oracle.prediction->cost_usd).epsilon(1e-9));
    // Keeping them costs at least as much as the free plan.
    CHECK(exact.prediction->cost_usd >= dnnplan::solve(dnnplan_bench::resnet110_problem(), spot_options{}).prediction->cost_usd);
}

TEST_CASE("a target at or below gamma5 is infeasible with a reason", "[solve][spot][status]") {
    for (const auto method : {spot_method::exact, spot_method::exhaustive, spot_method::sliding_window}) {
        const auto r = dnnplan::solve(dnnplan_bench::resnet110_problem(0.5, 2400), with_method(method));
        CHECK(r.status == solve_status::infeasible);
        CHECK_THAT(r.reason, Catch::Contains("gamma5"));
        CHECK(std::isinf(r.lower_bound));
        CHECK_FALSE(r.prediction);
        CHECK(r.counts.empty());
    }
}

TEST_CASE("a deadline no plan meets is infeasible and names the fastest plan's time", "[solve][spot][status]") {
    const auto r = dnnplan::solve(dnnplan_bench::resnet110_problem(0.8, 300), spot_options{});
    CHECK(r.status == solve_status::infeasible);
    REQUIRE(r.fastest_training_time_s);
    CHECK(*r.fastest_training_time_s > 300.0);
    CHECK_THAT(r.reason, Catch::Contains("fastest plan"));
    // The fastest time is the minimum over all clusters.
    auto fastest = with_method(spot_method::exhaustive);
    fastest.objective = dnnplan::search_objective::minimize_time;
    auto relaxed = dnnplan_bench::resnet110_problem(0.8, 1e9);
    CHECK(*r.fastest_training_time_s == Approx(dnnplan::solve(relaxed, fastest).prediction->training_time_s).epsilon(1e-12));
    // The window reports not_found, not infeasible: it proves nothing.
    CHECK(dnnplan::solve(dnnplan_bench::resnet110_problem(0.8, 300), with_method(spot_method::sliding_window)).status ==
          solve_status::not_found);
}

TEST_CASE("minimize_time finds the fastest plan within the goals", "[solve][spot][objective]") {
    auto o = spot_options{};
    o.objective = dnnplan::search_objective::minimize_time;
    const auto problem = dnnplan_bench::resnet110_problem(0.8, 2400);
    const auto fast = dnnplan::solve(problem, o);
    o.method = spot_method::exhaustive;
    const auto oracle = dnnplan::solve(problem, o);
    REQUIRE(fast.status == solve_status::optimal);
    CHECK(fast.prediction->training_time_s == Approx(oracle.prediction->training_time_s).epsilon(1e-12));
    CHECK(fast.prediction->training_time_s < dnnplan::solve(problem, spot_options{}).prediction->training_time_s);
}

TEST_CASE("on-demand pricing and a priced parameter server change the cost, not the model", "[solve][spot][cost]") {
    auto problem = dnnplan_bench::resnet110_problem();
    const auto spot = dnnplan::solve(problem, spot_options{});
    problem.catalog.parameter_server_usd_per_h = 0.192;  // m5.xlarge on demand
    const auto with_ps = dnnplan::solve(problem, spot_options{});
    CHECK(with_ps.prediction->usd_per_h >= 0.192);
    CHECK(with_ps.prediction->cost_usd > spot.prediction->cost_usd);
    spot_options od;
    od.pricing = dnnplan::price_kind::on_demand;
    const auto on_demand = dnnplan::solve(problem, od);
    CHECK(on_demand.prediction->cost_usd > with_ps.prediction->cost_usd);
    CHECK(on_demand.prediction->cost_usd ==
          Approx(on_demand.prediction->billed_s * on_demand.prediction->usd_per_h / 3600.0));
}

TEST_CASE("a budget stops the search and reports a gap", "[solve][spot][budget]") {
    spot_options o;
    o.node_budget = 2000;  // deterministic: the same stop on every machine
    const auto problem = dnnplan_bench::synthetic_problem(30, 32);
    const auto r = dnnplan::solve(problem, o);
    // The 30-type catalog needs about 5,000 nodes to prove (docs/performance.md): after 2,000
    // there is a plan and a bound below it.
    REQUIRE(r.status == solve_status::budget_exhausted);
    REQUIRE(r.prediction);
    CHECK(r.counters.nodes == 2000);
    CHECK(r.lower_bound <= r.prediction->cost_usd);
    CHECK(r.lower_bound > 0.0);
    CHECK(r.prediction->training_time_s <= problem.goals.deadline_s);
    // Same input, same output.
    const auto again = dnnplan::solve(problem, o);
    CHECK(plan_of(again) == plan_of(r));
    CHECK(again.lower_bound == r.lower_bound);
    // A wall-clock budget also stops it (its result depends on timing, so only the status is checked).
    spot_options timed;
    timed.time_budget_s = 1e-6;  // the clock is read every 256 nodes
    CHECK(dnnplan::solve(problem, timed).status == solve_status::budget_exhausted);
    // Without a budget the same problem is proven optimal, and the budgeted bound was valid.
    const auto full = dnnplan::solve(problem, spot_options{});
    REQUIRE(full.status == solve_status::optimal);
    CHECK(r.lower_bound <= full.prediction->cost_usd * (1.0 + 1e-12));
    CHECK(r.prediction->cost_usd >= full.prediction->cost_usd * (1.0 - 1e-12));
}

TEST_CASE("every validation path names its field", "[solve][spot][errors]") {
    using P = spot_problem;
    using O = spot_options;
    expect_rejected([](P& p, O&) { p.catalog.instances.clear(); }, "catalog.instances");
    expect_rejected([](P& p, O&) { p.catalog.instances[1].name = "p2.xlarge"; }, "catalog.instances[1].name");
    expect_rejected([](P& p, O&) { p.catalog.instances[2].name.clear(); }, "catalog.instances[2].name");
    expect_rejected([](P& p, O&) { p.catalog.instances[0].gpus = 0; }, "catalog.instances[0].gpus");
    expect_rejected([](P& p, O&) { p.catalog.instances[3].quota = -1; }, "catalog.instances[3].quota");
    expect_rejected([](P& p, O&) { p.catalog.instances[0].spot_usd_per_h = 0.0; }, "catalog.instances[0].spot_usd_per_h");
    expect_rejected([](P& p, O&) { p.catalog.instances[0].on_demand_usd_per_h = std::nan(""); },
                    "catalog.instances[0].on_demand_usd_per_h");
    expect_rejected([](P& p, O&) { p.catalog.instances[0].gpu_memory_bytes = -1.0; },
                    "catalog.instances[0].gpu_memory_bytes");
    expect_rejected([](P& p, O&) { p.catalog.parameter_server_usd_per_h = -0.1; }, "catalog.parameter_server_usd_per_h");
    expect_rejected([](P& p, O&) { p.profile.parameter_bytes = 0.0; }, "profile.parameter_bytes");
    expect_rejected([](P& p, O&) { p.profile.required_bandwidth_bytes_per_s = -1.0; },
                    "profile.required_bandwidth_bytes_per_s");
    expect_rejected([](P& p, O&) { p.profile.ps_bandwidth_bytes_per_s = INFINITY; }, "profile.ps_bandwidth_bytes_per_s");
    expect_rejected([](P& p, O&) { p.profile.pcie_bandwidth_bytes_per_s = 0.0; }, "profile.pcie_bandwidth_bytes_per_s");
    expect_rejected([](P& p, O&) { p.profile.per_instance.clear(); }, "profile.per_instance");
    expect_rejected([](P& p, O&) { p.profile.per_instance["p9.huge"] = {.per_gpu_batch = 1, .samples_per_s = 1}; },
                    "profile.per_instance.p9.huge");
    expect_rejected([](P& p, O&) { p.profile.per_instance["g3.8xlarge"].per_gpu_batch = 0; },
                    "profile.per_instance.g3.8xlarge.per_gpu_batch");
    expect_rejected([](P& p, O&) { p.profile.per_instance["g3.8xlarge"].samples_per_s = -5.0; },
                    "profile.per_instance.g3.8xlarge.samples_per_s");
    expect_rejected([](P& p, O&) { p.profile.per_instance["g3.8xlarge"].samples_per_s = 1e7; },
                    "profile.per_instance.g3.8xlarge.samples_per_s");  // faster than its communication
    expect_rejected([](P& p, O&) { p.profile.contention.alpha1 = NAN; }, "profile.contention.alpha1");
    expect_rejected([](P& p, O&) { p.profile.contention.beta1 = -INFINITY; }, "profile.contention.beta1");
    expect_rejected([](P& p, O&) { p.profile.loss.gamma1 = -1.0; }, "profile.loss.gamma1");
    expect_rejected([](P& p, O&) { p.profile.loss.gamma2 = NAN; }, "profile.loss.gamma2");
    expect_rejected([](P& p, O&) { p.profile.loss.gamma3 = INFINITY; }, "profile.loss.gamma3");
    expect_rejected([](P& p, O&) { p.profile.loss.gamma4 = -0.5; }, "profile.loss.gamma4");
    expect_rejected([](P& p, O&) { p.profile.loss.gamma5 = NAN; }, "profile.loss.gamma5");
    expect_rejected([](P& p, O&) { p.goals.target_loss = NAN; }, "goals.target_loss");
    expect_rejected([](P& p, O&) { p.goals.deadline_s = 0.0; }, "goals.deadline_s");
    expect_rejected([](P& p, O&) { p.existing["nope"] = 1; }, "existing.nope");
    expect_rejected([](P& p, O&) { p.existing["p2.8xlarge"] = -1; }, "existing.p2.8xlarge");
    expect_rejected([](P& p, O&) { p.existing["p2.8xlarge"] = 6; }, "existing.p2.8xlarge");  // quota 5
    expect_rejected(
        [](P& p, O&) {
            p.catalog.instances.push_back({.name = "unprofiled", .gpus = 1, .quota = 1, .spot_usd_per_h = 1, .on_demand_usd_per_h = 1});
            p.existing["unprofiled"] = 1;
        },
        "existing.unprofiled");
    expect_rejected([](P&, O& o) { o.billing_increment_s = -1.0; }, "options.billing_increment_s");
    expect_rejected([](P&, O& o) { o.node_budget = -1; }, "options.node_budget");
    expect_rejected([](P&, O& o) { o.time_budget_s = NAN; }, "options.time_budget_s");
    expect_rejected([](P&, O& o) { o.relative_gap = 1.0; }, "options.relative_gap");
    expect_rejected(
        [](P& p, O& o) {
            p.profile.contention.alpha1 = 0.0;
            o.cap_at_n_upper = true;
        },
        "options.cap_at_n_upper");
}

TEST_CASE("types without a profile are not candidates; zero quotas are not an error", "[solve][spot]") {
    auto problem = dnnplan_bench::resnet110_problem();
    problem.catalog.instances.push_back(
        {.name = "p3.2xlarge", .gpus = 1, .quota = 10, .spot_usd_per_h = 0.01, .on_demand_usd_per_h = 3.06});
    const auto r = dnnplan::solve(problem, spot_options{});
    REQUIRE(r.counts.size() == 6);
    CHECK(r.counts[5].name == "p3.2xlarge");
    CHECK(r.counts[5].count == 0);  // cheap, but nothing says how fast it is
    for (auto& t : problem.catalog.instances) t.quota = 0;
    const auto none = dnnplan::solve(problem, spot_options{});
    CHECK(none.status == solve_status::infeasible);
    CHECK_THAT(none.reason, Catch::Contains("no cluster size"));
}

TEST_CASE("eq. (3) outside its fitted range and bad loss coefficients are rejected", "[solve][spot][errors]") {
    // gamma2 * b + gamma3 <= 0 for p2.8xlarge's worker batch 8 x 1024 when gamma3 = 1500:
    // the fitted curve would put the loss below gamma5 before any iteration.
    expect_rejected([](spot_problem& p, spot_options&) { p.profile.loss.gamma3 = 1500.0; },
                    "profile.per_instance.p2.8xlarge.per_gpu_batch");
    CHECK_THROWS_AS(dnnplan::spotdnn_loss_model({.gamma1 = -1.0, .gamma2 = 0, .gamma3 = 1, .gamma5 = 0}),
                    dnnplan::invalid_input);
    CHECK_THROWS_AS(dnnplan::spotdnn_loss_model({.gamma1 = 1.0, .gamma2 = 0, .gamma3 = 1, .gamma4 = -0.1, .gamma5 = 0}),
                    dnnplan::invalid_input);
}

TEST_CASE("the sliding window's artifact mode is not capped at n_upper", "[solve][spot][sliding_window]") {
    // alpha1 = 2: n_upper = floor((2.92 / 2)^2) = 2, yet contention starts only at n = 9
    // (B_ps / B_req = 8.45), so the paper's cap forbids the 6-worker plan.
    auto problem = dnnplan_bench::resnet110_problem(0.8, 2400);
    problem.profile.contention.alpha1 = 2.0;
    auto paper = with_method(spot_method::sliding_window);
    auto artifact = paper;
    artifact.sliding_window_paper_bounds = false;
    REQUIRE(dnnplan::make_spotdnn_setup(problem, paper).provisioner.n_upper == 2);
    const auto capped = dnnplan::solve(problem, paper);
    const auto uncapped = dnnplan::solve(problem, artifact);
    if (capped.prediction) CHECK(capped.prediction->workers <= 2);
    REQUIRE(uncapped.prediction);
    CHECK(uncapped.prediction->workers > 2);
    CHECK(plan_of(uncapped) == std::vector<std::int32_t>{2, 0, 4, 0, 0});
}

TEST_CASE("a window that finds nothing says whether a plan exists", "[solve][spot][sliding_window]") {
    auto problem = dnnplan_bench::resnet110_problem(0.8, 2400);
    problem.existing = {{"p2.8xlarge", 1}, {"g4dn.4xlarge", 2}};
    const auto window = dnnplan::solve(problem, with_method(spot_method::sliding_window));
    const auto exact = dnnplan::solve(problem, spot_options{});
    REQUIRE(exact.status == solve_status::optimal);
    if (window.status == solve_status::not_found) {
        REQUIRE(window.fastest_training_time_s);
        CHECK(*window.fastest_training_time_s <= 2400.0);
        CHECK_THAT(window.reason, Catch::Contains("within the deadline"));
    }
}
