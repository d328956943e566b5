// The VM recommender (Srifty's search): hand cases, the branch and bound against the exhaustive
// oracle over the offer space on seeded random problems (every objective, with and without work,
// budgets, infeasible cases), the exact Pareto frontier against the oracle's non-dominated set,
// the model bound of the synchronous adapter, throughput and offer-cost models of the host's own
// (solve(request, model), solve(request, model, cost)), concept checks and every validation path.

#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/cost.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>

#include <catch2/catch.hpp>

#include "../../support/checks.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using dnnplan_test::close;

using dnnplan::objective_kind;
using dnnplan::price_kind;
using dnnplan::search_method;
using dnnplan::solve_status;
using dnnplan::vm_options;
using dnnplan::vm_problem;
using dnnplan::vm_request;

/// Perfect scaling: r = sum_k c_k u_k (its own exact linear bound).
struct linear_model {
    std::vector<double> per_instance;
    [[nodiscard]] std::size_t type_count() const noexcept { return per_instance.size(); }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> c) const noexcept {
        double r = 0.0;
        for (std::size_t k = 0; k < c.size(); ++k) r += c[k] * per_instance[k];
        return r;
    }
    void samples_per_s_linear_bound(std::span<const std::int32_t>, std::span<const std::int32_t>, std::span<double> rate,
                                    std::int64_t /*min_instances*/, double /*min_samples_per_s*/) const noexcept {
        for (std::size_t k = 0; k < rate.size(); ++k) rate[k] = per_instance[k];
    }
};

/// The same speeds without a bound: the recommender must fall back to the exhaustive search.
struct unbounded_model {
    linear_model inner;
    [[nodiscard]] std::size_t type_count() const noexcept { return inner.type_count(); }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> c) const noexcept { return inner.samples_per_s(c); }
};

/// Not a model: samples_per_s is missing.
struct not_a_model {
    [[nodiscard]] std::size_t type_count() const noexcept { return 1; }
};

/// samples_per_s may throw: rejected too (the concept asks for noexcept).
struct throwing_model {
    [[nodiscard]] std::size_t type_count() const noexcept { return 1; }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t>) const { return 1.0; }
};

static_assert(dnnplan::cluster_throughput_model<linear_model>);
static_assert(dnnplan::linearly_bounded_throughput_model<linear_model>);
static_assert(dnnplan::cluster_throughput_model<unbounded_model>);
static_assert(!dnnplan::linearly_bounded_throughput_model<unbounded_model>);
static_assert(!dnnplan::cluster_throughput_model<not_a_model>);
static_assert(!dnnplan::cluster_throughput_model<throwing_model>);
template <class M>
concept recommendable = requires(const M& m, const vm_request& r) { dnnplan::solve(r, m); };
static_assert(recommendable<linear_model>);
static_assert(recommendable<unbounded_model>);
static_assert(!recommendable<not_a_model>);
static_assert(dnnplan::linearly_bounded_throughput_model<dnnplan::sync_cluster_throughput>);

dnnplan::instance_type type(std::string name, std::int32_t gpus, std::int32_t quota, double spot, double on_demand) {
    return {.name = std::move(name), .gpus = gpus, .quota = quota, .spot_usd_per_h = spot, .on_demand_usd_per_h = on_demand};
}

vm_problem two_types() {
    vm_problem p;
    p.catalog.instances = {type("slow", 1, 4, 1.0, 3.0), type("fast", 4, 2, 5.0, 12.0)};
    return p;
}

std::int32_t count_of(const dnnplan::vm_result& r, const std::string& name, price_kind kind) {
    if (!r.plan) return -1;
    for (const auto& o : r.plan->offers)
        if (o.type == name && o.kind == kind) return o.count;
    return 0;
}

// ---- random problems ----------------------------------------------------------------------------

/// The recommender's objectives (min_time is not one: with work it is max_throughput).
constexpr std::array<objective_kind, 3> vm_objectives{objective_kind::min_cost, objective_kind::max_throughput,
                                                      objective_kind::max_samples_per_usd};

std::size_t objective_index(objective_kind o) {
    return static_cast<std::size_t>(std::find(vm_objectives.begin(), vm_objectives.end(), o) - vm_objectives.begin());
}

struct random_case {
    vm_problem problem;
    dnnplan::sync_cluster_throughput model;
};

/// `equal_batches`: the synchronous model with batch_policy::equal always (the frontier by replica
/// counts' domain; the same draws otherwise).
random_case random_problem(std::mt19937_64& rng, int max_types = 4, bool equal_batches = false) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> types_d(1, max_types), quota_d(0, 3), gpus_d(1, 4);
    vm_problem p;
    const int k_count = types_d(rng);
    std::vector<dnnplan::affine_time> compute;
    for (int k = 0; k < k_count; ++k) {
        const double spot = 0.2 + 3.0 * unit(rng);
        // Mostly on-demand above spot; sometimes below (then spot is the dominated offer).
        const double on_demand = unit(rng) < 0.8 ? spot * (1.5 + 2.0 * unit(rng)) : spot * (0.5 + 0.5 * unit(rng));
        std::string name = "t";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "t" + string
        name += std::to_string(k);
        p.catalog.instances.push_back(type(name, gpus_d(rng), quota_d(rng), spot, on_demand));
        compute.push_back({.fixed_s = 0.05 * unit(rng), .per_sample_s = 0.001 + 0.01 * unit(rng)});
    }
    if (unit(rng) < 0.15) p.catalog.instances[0].quota = 0;
    dnnplan::sync_cluster_spec spec;
    spec.network = {.alpha_n_s = 0.2 * unit(rng), .beta_n_s = 0.02 * unit(rng), .alpha_r_s = 0.05 * unit(rng),
                    .beta_r_s = 0.01 * unit(rng), .gamma = 1.0 + 9.0 * unit(rng) * unit(rng)};
    if (unit(rng) < 0.25)
        spec.ring = dnnplan::ring_allreduce{.parameter_bytes = 1e8 * (0.5 + unit(rng)),
                                            .intra_node_bytes_per_s = 5e9, .inter_node_bytes_per_s = 1e9 * (0.5 + unit(rng)),
                                            .latency_s = 0.001};
    spec.policy = unit(rng) < 0.5 || equal_batches ? dnnplan::batch_policy::equal : dnnplan::batch_policy::balanced;
    spec.basis = unit(rng) < 0.5 ? dnnplan::batch_basis::per_replica : dnnplan::batch_basis::global;
    spec.batch = spec.basis == dnnplan::batch_basis::per_replica ? 16.0 + 48.0 * unit(rng) : 64.0 + 512.0 * unit(rng);
    spec.accumulation_steps = unit(rng) < 0.2 ? 1 : 0;
    auto model = dnnplan::sync_cluster_throughput::from_catalog(p.catalog, compute, spec);

    auto& c = p.constraints;
    const double scale = model.samples_per_s(std::vector<std::int32_t>(static_cast<std::size_t>(k_count), 1));
    if (unit(rng) < 0.4) c.max_usd_per_h = 1.0 + 12.0 * unit(rng);
    if (unit(rng) < 0.3) c.min_samples_per_s = scale * 1.5 * unit(rng);
    if (unit(rng) < 0.5) {
        if (unit(rng) < 0.5) p.work.samples = 1e6 * (0.5 + unit(rng));
        else {
            p.work.epochs = 1.0 + std::floor(4.0 * unit(rng));
            p.work.dataset_samples = 2e5;
        }
        if (unit(rng) < 0.5 && scale > 0.0) c.deadline_s = p.work.total_samples() / (scale * 2.0 * unit(rng) + 1e-9);
    }
    if (unit(rng) < 0.4) c.max_instances = std::uniform_int_distribution<std::int32_t>(1, 6)(rng);
    if (unit(rng) < 0.3) c.max_distinct_types = std::uniform_int_distribution<std::int32_t>(1, 2)(rng);
    if (unit(rng) < 0.2) c.allowed_price_kinds = {unit(rng) < 0.5 ? price_kind::spot : price_kind::on_demand};
    if (unit(rng) < 0.2 && k_count > 1) c.allowed_types = {"t1"};
    p.objective = vm_objectives[std::uniform_int_distribution<std::size_t>(0, 2)(rng)];
    return {std::move(p), std::move(model)};
}

double unit_draw(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

vm_options with(search_method m, bool pareto = false) {
    vm_options o;
    o.method = m;
    o.pareto = pareto;
    return o;
}

/// The recommender with a model of the host's own: solve(vm_request, model) (the workload is not read).
template <class Model>
dnnplan::vm_result recommend(const Model& model, const vm_problem& problem, const vm_options& options = {}) {
    return dnnplan::solve(vm_request{.problem = problem, .workload = {}, .options = options}, model);
}

/// The objective value (status optimal, or feasible when a limit stopped the search with a plan).
double value_of(const dnnplan::vm_result& r) {
    REQUIRE(r.objective_value);
    return *r.objective_value;
}

// Runs `mutate` on a valid problem and expects invalid_input naming `field`.
void expect_rejected(const std::function<void(vm_problem&, vm_options&)>& mutate, const std::string& field) {
    vm_problem p = two_types();
    vm_options o;
    mutate(p, o);
    INFO("expected a rejection of " << field);
    try {
        (void)recommend(linear_model{{10.0, 50.0}}, p, o);
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == field);
        CHECK_FALSE(e.expected().empty());
    }
}

}  // namespace

TEST_CASE("hand cases: each objective on two types with perfect scaling", "[solve][vm]") {
    const linear_model model{{10.0, 50.0}};  // slow: 10 samples/s for 1 USD/h spot; fast: 50 for 5
    vm_problem p = two_types();

    SECTION("min USD/h without work: one spot instance of the cheapest type") {
        const auto r = recommend(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(r.details.method == search_method::exact);
        CHECK(value_of(r) == 1.0);
        // Optimal: the bound is the value (proven within the relative gap, the cut tolerance).
        REQUIRE(r.bound);
        CHECK(*r.bound == value_of(r));
        CHECK(count_of(r, "slow", price_kind::spot) == 1);
        CHECK(r.plan->figures.samples_per_s == 10.0);
        CHECK_FALSE(r.plan->figures.time_s);
    }
    SECTION("max throughput: every instance the quotas allow, all spot") {
        p.objective = objective_kind::max_throughput;
        const auto r = recommend(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(value_of(r) == 4 * 10.0 + 2 * 50.0);
        REQUIRE(r.bound);
        CHECK(*r.bound == value_of(r));
        CHECK(count_of(r, "slow", price_kind::spot) == 4);
        CHECK(count_of(r, "fast", price_kind::spot) == 2);
        CHECK(r.plan->figures.usd_per_h == 14.0);
        CHECK(r.plan->figures.gpus == 4 + 8);
    }
    SECTION("max throughput on demand only under a budget of 26 USD/h") {
        p.objective = objective_kind::max_throughput;
        p.constraints.allowed_price_kinds = {price_kind::on_demand};
        p.constraints.max_usd_per_h = 26.0;  // 2 fast (24) + 0 slow, or 1 fast + 4 slow (24): 100 vs 90
        const auto r = recommend(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(value_of(r) == 100.0);
        CHECK(count_of(r, "fast", price_kind::on_demand) == 2);
        CHECK(r.plan->figures.usd_per_h == 24.0);
    }
    SECTION("min cost of a deadline job: work / r * P / 3600") {
        p.work.samples = 3.6e5;
        p.constraints.deadline_s = 3600.0;  // needs r >= 100 samples/s
        const auto r = recommend(model, p);
        REQUIRE(r.status == solve_status::optimal);
        // Every spot mix costs 0.1 USD/h per sample/s: 3.6e5 samples take 100 h-samples/s, 10 USD.
        CHECK(value_of(r) == Approx(10.0));
        CHECK(r.plan->figures.samples_per_s >= 100.0);
        CHECK(*r.plan->figures.time_s <= 3600.0);
        CHECK(*r.plan->figures.cost_usd == Approx(10.0));
    }
    SECTION("max samples per USD: a cheaper on-demand price flips the dominated offer") {
        p.objective = objective_kind::max_samples_per_usd;
        p.catalog.instances[1].on_demand_usd_per_h = 4.0;  // below its spot price of 5
        const auto r = recommend(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(value_of(r) == Approx(3600.0 * 50.0 / 4.0));
        CHECK(count_of(r, "fast", price_kind::on_demand) >= 1);
        CHECK(count_of(r, "fast", price_kind::spot) == 0);
        CHECK(count_of(r, "slow", price_kind::spot) == 0);
    }
    SECTION("an unreachable deadline is infeasible, with no plan, value or bound") {
        p.work.samples = 1e9;
        p.constraints.deadline_s = 10.0;
        const auto r = recommend(model, p);
        CHECK(r.status == solve_status::infeasible);
        CHECK_FALSE(r.plan);
        CHECK_FALSE(r.objective_value);
        CHECK_FALSE(r.bound);
        CHECK_FALSE(r.reason.empty());
        CHECK(r.counters.pruned_by_constraint >= 1);
    }
    SECTION("no allowed type with a quota: infeasible") {
        p.constraints.allowed_types = {"fast"};
        p.catalog.instances[1].quota = 0;
        const auto r = recommend(model, p);
        CHECK(r.status == solve_status::infeasible);
        CHECK_FALSE(r.bound);
        CHECK(r.reason == "no instance type is allowed with a positive quota");
    }
    SECTION("the Pareto frontier of USD/h vs samples/s: every count of spot instances that is not beaten") {
        p.constraints.max_instances = 2;
        const auto r = recommend(model, p, with(search_method::exact, true));
        REQUIRE(r.details.frontier_status == solve_status::optimal);
        // (P, r): (1, 10), (2, 20), (5, 50), (6, 60), (10, 100): 1 slow, 2 slow, 1 fast, 1+1, 2 fast.
        std::vector<std::pair<double, double>> points;
        for (const auto& c : r.details.frontier) points.emplace_back(c.figures.usd_per_h, c.figures.samples_per_s);
        CHECK(points == std::vector<std::pair<double, double>>{{10, 100}, {6, 60}, {5, 50}, {2, 20}, {1, 10}});
    }
}

TEST_CASE("a model without a bound is searched exhaustively, and says so", "[solve][vm]") {
    const unbounded_model model{{{10.0, 50.0}}};
    vm_problem p = two_types();
    p.objective = objective_kind::max_throughput;
    const auto r = recommend(model, p);  // asks for the exact method (the default)
    CHECK(r.details.method == search_method::exhaustive);
    CHECK(r.status == solve_status::optimal);
    CHECK(value_of(r) == 140.0);
    // Offer space: (spot, on demand) per type with spot + on demand <= quota: 15 * 6 - 1 empty.
    // The oracle counts every configuration it visits as a node (it counted none before).
    CHECK(r.counters.evaluations == 15 * 6 - 1);
    CHECK(r.counters.nodes == 15 * 6 - 1);
    // At most one type: the configurations mixing both are visited but not evaluated.
    p.constraints.max_distinct_types = 1;
    const auto one = recommend(model, p);
    CHECK(one.counters.nodes == 15 * 6 - 1);
    CHECK(one.counters.evaluations == 14 + 5);
    CHECK(value_of(one) == 100.0);
}

TEST_CASE("the asynchronous spotDNN adapter is accepted with its bound", "[solve][vm]") {
    dnnplan::ps_network net{.parameter_bytes = 1e8, .required_bandwidth_bytes_per_s = 1e9,
                            .ps_bandwidth_bytes_per_s = 2e9, .pcie_bandwidth_bytes_per_s = 1e10,
                            .contention = {.alpha1 = 0.1, .beta1 = 0.2}};
    const dnnplan::asp_cluster_throughput model(dnnplan::heterogeneous_ps_model(
        net, {{.gpus = 1, .worker_batch = 64, .compute_s = 0.5}, {.gpus = 4, .worker_batch = 256, .compute_s = 0.6}}));
    static_assert(dnnplan::linearly_bounded_throughput_model<decltype(model)>);
    for (const auto objective : vm_objectives) {
        vm_problem p = two_types();
        p.objective = objective;
        p.work.samples = 1e6;
        const auto bb = recommend(model, p);
        const auto ex = recommend(model, p, with(search_method::exhaustive));
        REQUIRE(bb.status == solve_status::optimal);
        REQUIRE(ex.status == solve_status::optimal);
        CHECK(bb.details.method == search_method::exact);
        CHECK(close(value_of(bb), value_of(ex)));
    }
}

TEST_CASE("the synchronous adapter's linear and box bounds hold over random boxes", "[solve][vm][bound]") {
    std::mt19937_64 rng(7);
    std::int64_t checked = 0;
    for (int trial = 0; trial < 200; ++trial) {
        auto rc = random_problem(rng);
        const std::size_t k_count = rc.model.type_count();
        std::vector<std::int32_t> lo(k_count), hi(k_count), c(k_count);
        for (std::size_t k = 0; k < k_count; ++k) {
            lo[k] = std::uniform_int_distribution<std::int32_t>(0, 1)(rng);
            hi[k] = lo[k] + std::uniform_int_distribution<std::int32_t>(0, 3)(rng);
        }
        std::vector<double> rate(k_count);
        rc.model.samples_per_s_linear_bound(lo, hi, rate);
        std::int64_t lo_sum = 0;
        for (const auto v : lo) lo_sum += v;
        const std::int64_t cap = lo_sum + std::uniform_int_distribution<std::int64_t>(0, 4)(rng);
        const double box_bound = rc.model.samples_per_s_upper_bound(lo, hi, cap);
        // Every cluster of the box (odometer).
        c = lo;
        while (true) {
            double bound = 0.0;
            for (std::size_t k = 0; k < k_count; ++k) bound += c[k] * rate[k];
            const double r = rc.model.samples_per_s(c);
            INFO("trial " << trial);
            CHECK(r <= bound * (1.0 + 1e-12));
            std::int64_t total = 0;
            for (const auto v : c) total += v;
            if (total <= cap) CHECK(r <= box_bound * (1.0 + 1e-12));
            ++checked;
            std::size_t k = 0;
            while (k < k_count && c[k] == hi[k]) c[k] = lo[k], ++k;
            if (k == k_count) break;
            ++c[k];
        }
    }
    CHECK(checked > 2000);
}

TEST_CASE("the synchronous bounds restricted to large or fast clusters hold over random boxes (B7-B10)",
          "[solve][vm][bound]") {
    // B7: clusters of at least min_instances instances; B8: the box bound's coupling of the compute
    // time with the replicas its side of the threshold can reach; B10: clusters at least
    // min_samples_per_s fast. Every cluster of each box that meets the restriction is checked.
    std::mt19937_64 rng(11);
    std::int64_t checked = 0, fast = 0;
    for (int trial = 0; trial < 300; ++trial) {
        auto rc = random_problem(rng, 6);
        const std::size_t k_count = rc.model.type_count();
        std::vector<std::int32_t> lo(k_count), hi(k_count), c(k_count);
        for (std::size_t k = 0; k < k_count; ++k) {
            lo[k] = std::uniform_int_distribution<std::int32_t>(0, 4)(rng) == 0 ? 1 : 0;
            hi[k] = lo[k] + std::uniform_int_distribution<std::int32_t>(0, k_count > 3 ? 2 : 4)(rng);
        }
        // The fastest cluster of the box sets the scale of the speed restriction.
        double r_max = 0.0;
        c = lo;
        while (true) {
            r_max = std::max(r_max, rc.model.samples_per_s(c));
            std::size_t k = 0;
            while (k < k_count && c[k] == hi[k]) c[k] = lo[k], ++k;
            if (k == k_count) break;
            ++c[k];
        }
        const std::int64_t min_instances = std::uniform_int_distribution<std::int64_t>(1, 3)(rng);
        const double min_speed = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? 0.0 : r_max * unit_draw(rng);
        std::int64_t lo_sum = 0;
        for (const auto v : lo) lo_sum += v;
        const std::int64_t cap = lo_sum + std::uniform_int_distribution<std::int64_t>(0, 6)(rng);
        std::vector<double> rate(k_count);
        rc.model.samples_per_s_linear_bound(lo, hi, rate, min_instances, min_speed);
        const double box_bound = rc.model.samples_per_s_upper_bound(lo, hi, cap, min_instances);
        c = lo;
        while (true) {
            std::int64_t total = 0;
            for (const auto v : c) total += v;
            const double r = rc.model.samples_per_s(c);
            INFO("trial " << trial << ", min_instances " << min_instances << ", min speed " << min_speed);
            if (total >= min_instances) {
                if (r >= min_speed) {
                    double bound = 0.0;
                    for (std::size_t k = 0; k < k_count; ++k) bound += c[k] * rate[k];
                    CHECK(r <= bound * (1.0 + 1e-12));
                    fast += min_speed > 0.0 && total >= 2 ? 1 : 0;
                }
                if (total <= cap) CHECK(r <= box_bound * (1.0 + 1e-12));
                ++checked;
            }
            std::size_t k = 0;
            while (k < k_count && c[k] == hi[k]) c[k] = lo[k], ++k;
            if (k == k_count) break;
            ++c[k];
        }
    }
    CHECK(checked > 5000);
    CHECK(fast > 500);
}

TEST_CASE("branch and bound equals the exhaustive oracle on larger random problems (5-6 types)", "[solve][vm][oracle]") {
    std::mt19937_64 rng(31);
    int optimal = 0, used = 0;
    std::int64_t evals_bb = 0, evals_ex = 0, points = 0;
    for (int trial = 0; used < 40; ++trial) {
        auto rc = random_problem(rng, 6);
        if (rc.problem.catalog.instances.size() < 5) continue;
        ++used;
        rc.problem.constraints.max_instances = std::min(rc.problem.constraints.max_instances, 6);
        if (rc.problem.constraints.max_instances == 0) rc.problem.constraints.max_instances = 6;
        INFO("trial " << trial << ", objective " << to_string(rc.problem.objective));
        const auto bb = recommend(rc.model, rc.problem, with(search_method::exact, true));
        const auto ex = recommend(rc.model, rc.problem, with(search_method::exhaustive, true));
        REQUIRE(bb.status == ex.status);
        if (bb.status == solve_status::optimal) {
            ++optimal;
            CHECK(close(value_of(bb), value_of(ex)));
        }
        REQUIRE(bb.details.frontier.size() == ex.details.frontier.size());
        evals_bb += bb.counters.evaluations + bb.details.frontier_counters.evaluations;
        evals_ex += ex.counters.evaluations + ex.details.frontier_counters.evaluations;
        points += static_cast<std::int64_t>(bb.details.frontier.size());
        for (std::size_t i = 0; i < bb.details.frontier.size(); ++i) {
            CHECK(close(bb.details.frontier[i].figures.samples_per_s, ex.details.frontier[i].figures.samples_per_s));
            CHECK(close(bb.details.frontier[i].figures.usd_per_h, ex.details.frontier[i].figures.usd_per_h));
        }
    }
    CHECK(optimal >= 15);
    CHECK(points >= 40);
    CHECK(evals_bb < evals_ex);
}

TEST_CASE("branch and bound equals the exhaustive oracle on seeded random problems", "[solve][vm][oracle]") {
    std::mt19937_64 rng(2024);
    int optimal = 0, infeasible = 0, with_work = 0;
    int by_objective[3] = {0, 0, 0};
    std::int64_t bb_evaluations = 0, oracle_evaluations = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const auto rc = random_problem(rng);
        INFO("trial " << trial << ", objective " << to_string(rc.problem.objective));
        const auto bb = recommend(rc.model, rc.problem);
        const auto ex = recommend(rc.model, rc.problem, with(search_method::exhaustive));
        REQUIRE(ex.details.method == search_method::exhaustive);
        REQUIRE(bb.details.method == search_method::exact);
        REQUIRE(bb.status == ex.status);
        if (bb.status == solve_status::optimal) {
            ++optimal;
            ++by_objective[objective_index(rc.problem.objective)];
            with_work += rc.problem.work.given() ? 1 : 0;
            CHECK(close(value_of(bb), value_of(ex)));
            // Optimal: the bound is the value (proven within the relative gap, 1e-9).
            REQUIRE(bb.bound);
            CHECK(*bb.bound == value_of(bb));
            // The plan's figures are its own, and it meets every constraint.
            const auto& f = bb.plan->figures;
            const auto& c = rc.problem.constraints;
            CHECK(f.samples_per_s >= c.min_samples_per_s);
            CHECK(f.usd_per_h <= c.max_usd_per_h);
            if (f.time_s) CHECK(*f.time_s <= c.deadline_s);
            if (c.max_instances > 0) CHECK(f.instances <= c.max_instances);
        } else {
            REQUIRE(bb.status == solve_status::infeasible);
            ++infeasible;
            CHECK_FALSE(bb.plan);
            CHECK_FALSE(bb.bound);
            CHECK_FALSE(ex.bound);
        }
        bb_evaluations += bb.counters.evaluations;
        oracle_evaluations += ex.counters.evaluations;
    }
    CHECK(optimal >= 200);
    CHECK(infeasible >= 20);
    CHECK(with_work >= 50);
    for (const int n : by_objective) CHECK(n >= 50);
    CHECK(bb_evaluations < oracle_evaluations);
}

TEST_CASE("the Pareto frontier equals the oracle's non-dominated set", "[solve][vm][oracle][pareto]") {
    std::mt19937_64 rng(99);
    int non_trivial = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const auto rc = random_problem(rng);
        INFO("trial " << trial);
        const auto bb = recommend(rc.model, rc.problem, with(search_method::exact, true));
        const auto ex = recommend(rc.model, rc.problem, with(search_method::exhaustive, true));
        REQUIRE(bb.details.frontier_status == solve_status::optimal);
        REQUIRE(ex.details.frontier_status == solve_status::optimal);
        const auto& front = bb.details.frontier;
        REQUIRE(front.size() == ex.details.frontier.size());
        for (std::size_t i = 0; i < front.size(); ++i) {
            const auto& a = front[i].figures;
            const auto& b = ex.details.frontier[i].figures;
            CHECK(close(a.samples_per_s, b.samples_per_s));
            CHECK(close(a.usd_per_h, b.usd_per_h));
            if (a.time_s) CHECK(close(*a.cost_usd, *b.cost_usd));
            // Sorted fastest first, and every later point strictly cheaper.
            if (i > 0) {
                CHECK(a.samples_per_s < front[i - 1].figures.samples_per_s);
                if (a.cost_usd) CHECK(*a.cost_usd < *front[i - 1].figures.cost_usd);
                else CHECK(a.usd_per_h < front[i - 1].figures.usd_per_h);
            }
        }
        // The optimum of the objective lies on the frontier.
        if (bb.plan) {
            bool found = false;
            for (const auto& c : front) {
                const auto& f = c.figures;
                const double v = rc.problem.objective == objective_kind::max_throughput ? f.samples_per_s
                               : rc.problem.objective == objective_kind::max_samples_per_usd ? f.samples_per_usd
                               : f.cost_usd ? *f.cost_usd : f.usd_per_h;
                found = found || close(v, value_of(bb));
            }
            CHECK(found);
        }
        non_trivial += front.size() >= 3 ? 1 : 0;
    }
    CHECK(non_trivial >= 50);
}

TEST_CASE("the frontier by replica counts equals the branch and bound's frontier on random problems (5-12 types)",
          "[solve][vm][oracle][pareto]") {
    // solve() reads the frontier of the synchronous model with equal batches off the table of
    // solve/vm_recommend/replica_frontier.hpp; here both searches run on the same offer space.
    namespace d = dnnplan::detail;
    const dnnplan::search_budget none{.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.0};
    std::mt19937_64 rng(77);
    int non_trivial = 0, global_batch = 0, distinct_cap = 0;
    for (int trial = 0; trial < 60; ++trial) {
        auto rc = random_problem(rng, 12, true);
        auto& most = rc.problem.constraints.max_instances;
        most = most == 0 ? 10 : std::min(most, 10);
        INFO("trial " << trial);
        const d::vm_space s = d::make_vm_space(rc.problem, dnnplan::catalog_offer_cost(rc.problem.catalog));
        d::vm_replica_frontier table(rc.model, s, none);
        REQUIRE(table.fits());
        const d::vm_search_outcome by_replicas = table.run();
        const d::vm_search_outcome bb = d::vm_branch_and_bound<dnnplan::sync_cluster_throughput>(rc.model, s, true, none, 1e-9).run();
        CHECK(by_replicas.limit == dnnplan::search_limit::none);
        const auto& a = by_replicas.frontier.points();
        const auto& b = bb.frontier.points();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            CHECK(close(a[i].first, b[i].first));
            CHECK(close(a[i].second, b[i].second));
        }
        non_trivial += a.size() >= 3 ? 1 : 0;
        global_batch += rc.model.spec().basis == dnnplan::batch_basis::global ? 1 : 0;
        distinct_cap += rc.problem.constraints.max_distinct_types > 0 ? 1 : 0;
    }
    CHECK(non_trivial >= 20);
    CHECK(global_batch >= 10);  // the type order may change with the replica count
    CHECK(distinct_cap >= 5);
}

TEST_CASE("the frontier by replica counts: a budget stops it with real points, a table past the node budget is not built",
          "[solve][vm][budget][pareto]") {
    std::mt19937_64 rng(12);
    auto rc = random_problem(rng, 4, true);
    for (int trial = 0; trial < 200; ++trial) {  // one whose frontier has at least 3 points
        if (recommend(rc.model, rc.problem, with(search_method::exact, true)).details.frontier.size() >= 3) break;
        rc = random_problem(rng, 4, true);
    }
    const auto full = recommend(rc.model, rc.problem, with(search_method::exact, true));
    REQUIRE(full.details.frontier.size() >= 3);
    auto o = with(search_method::exact, true);
    o.budget = {.max_nodes = 0, .max_evaluations = 2, .max_time_s = 0.0};
    const auto cut = recommend(rc.model, rc.problem, o);
    CHECK(cut.details.frontier_status == solve_status::feasible);
    CHECK(cut.details.frontier_limit == dnnplan::search_limit::evaluations);
    CHECK(cut.details.frontier.size() <= 2);
    for (const auto& c : cut.details.frontier) {  // each a configuration with the model's own figures
        std::vector<std::int32_t> counts(rc.problem.catalog.instances.size(), 0);
        for (const auto& x : c.offers) counts[*rc.problem.catalog.find(x.type)] += x.count;
        CHECK(close(c.figures.samples_per_s, rc.model.samples_per_s(std::span<const std::int32_t>(counts))));
    }
    // vm_run reads the frontier off the table when it fits the node budget, else runs the branch
    // and bound: the counters say which ran.
    namespace d = dnnplan::detail;
    const d::vm_space s = d::make_vm_space(rc.problem, dnnplan::catalog_offer_cost(rc.problem.catalog));
    const dnnplan::search_budget none{.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.0};
    const auto table = d::vm_replica_frontier(rc.model, s, none).run();
    const auto by_run = d::vm_run(rc.model, s, true, none, 1e-9, search_method::exact);
    CHECK(by_run.counters.nodes == table.counters.nodes);
    CHECK(by_run.counters.evaluations == table.counters.evaluations);
    const auto cells = table.counters.nodes;
    for (const std::int64_t budget : {cells, cells + 1}) {  // the budget is spent when the nodes reach it
        INFO("node budget " << budget << ", table " << cells);
        const dnnplan::search_budget b{.max_nodes = budget, .max_evaluations = 0, .max_time_s = 0.0};
        CHECK(d::vm_replica_frontier(rc.model, s, b).fits() == (budget > cells));
        const auto ran = d::vm_run(rc.model, s, true, b, 1e-9, search_method::exact);
        const auto bb = d::vm_branch_and_bound<dnnplan::sync_cluster_throughput>(rc.model, s, true, b, 1e-9).run();
        const auto& expected = budget > cells ? table : bb;
        CHECK(ran.counters.nodes == expected.counters.nodes);
        CHECK(ran.counters.evaluations == expected.counters.evaluations);
        CHECK(ran.frontier.points().size() == expected.frontier.points().size());
    }
}

TEST_CASE("budgets: a limit stops the search with a valid bound on the optimum", "[solve][vm][budget]") {
    std::mt19937_64 rng(5);
    int exhausted = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const auto rc = random_problem(rng);
        const auto ex = recommend(rc.model, rc.problem, with(search_method::exhaustive));
        vm_options o;
        o.budget.max_nodes = 1 + trial % 7;
        const auto r = recommend(rc.model, rc.problem, o);
        INFO("trial " << trial);
        if (r.limit != dnnplan::search_limit::none) {
            ++exhausted;
            CHECK(r.limit == dnnplan::search_limit::nodes);
            CHECK(r.status == (r.plan ? solve_status::feasible : solve_status::no_plan_found));
            CHECK(r.counters.nodes <= o.budget.max_nodes + 1);
            CHECK(r.plan.has_value() == r.objective_value.has_value());
            if (ex.status == solve_status::optimal) {
                // The bound is on the right side of the optimum, and so is the plan so far.
                const bool maximise = dnnplan::maximises(rc.problem.objective);
                const double best = value_of(ex);
                const double slack = 1e-9 * std::abs(best);
                if (r.bound) {
                    if (maximise) CHECK(*r.bound >= best - slack);
                    else CHECK(*r.bound <= best + slack);
                }
                if (r.plan) CHECK((maximise ? value_of(r) <= best + slack : value_of(r) >= best - slack));
            }
        } else {
            CHECK(r.status == ex.status);
        }
    }
    CHECK(exhausted >= 50);

    // The exhaustive method's evaluation budget: no bound (the configurations not visited are unknown).
    vm_problem p = two_types();
    vm_options o = with(search_method::exhaustive);
    o.budget.max_evaluations = 5;
    const auto r = recommend(linear_model{{10.0, 50.0}}, p, o);
    CHECK(r.status == solve_status::feasible);
    CHECK(r.limit == dnnplan::search_limit::evaluations);
    CHECK(r.counters.evaluations == 5);
    CHECK_FALSE(r.bound);
    REQUIRE(r.plan);
    CHECK_FALSE(r.reason.empty());
}

namespace {

/// A large problem: 10 types, quota `quota` each, the linear model; the offer space has about
/// (quota^2 / 2)^10 configurations.
vm_problem large_problem(std::int32_t quota) {
    vm_problem p;
    for (int k = 0; k < 10; ++k) {
        std::string name = "t";
        name += std::to_string(k);
        p.catalog.instances.push_back(type(name, 1 + k % 4, quota, 0.3 + 0.17 * k, 0.9 + 0.31 * k));
    }
    p.objective = objective_kind::max_throughput;
    p.constraints.max_usd_per_h = 50.0;
    return p;
}

linear_model large_model() {
    linear_model m;
    for (int k = 0; k < 10; ++k) m.per_instance.push_back(7.0 + 3.1 * k + 0.4 * (k % 3));
    return m;
}

}  // namespace

TEST_CASE("every method stops within a small budget on a large problem, with a valid bound or none",
          "[solve][vm][budget]") {
    // The unbudgeted branch and bound (checked against the oracle above) gives the optimum.
    const vm_problem p = large_problem(40);
    const linear_model model = large_model();
    const auto full = recommend(model, p);
    REQUIRE(full.status == solve_status::optimal);
    const double best = value_of(full);
    for (const auto method : {search_method::exact, search_method::exhaustive}) {
        for (const bool by_evaluations : {false, true}) {
            INFO(to_string(method) << (by_evaluations ? ", evaluation budget" : ", node budget"));
            vm_options o = with(method);
            if (by_evaluations) o.budget = {.max_nodes = 0, .max_evaluations = 200, .max_time_s = 0.0};
            else o.budget = {.max_nodes = 200, .max_evaluations = 0, .max_time_s = 0.0};
            const auto start = std::chrono::steady_clock::now();
            const auto r = recommend(model, p, o);
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            CHECK(elapsed < 5.0);
            REQUIRE(r.limit == (by_evaluations ? dnnplan::search_limit::evaluations : dnnplan::search_limit::nodes));
            CHECK(r.status == (r.plan ? solve_status::feasible : solve_status::no_plan_found));
            CHECK_THAT(r.reason, Catch::Contains("budget"));
            // Checked at every node (evaluation): met exactly, or overrun by one.
            if (by_evaluations) CHECK(r.counters.evaluations <= 200 + 1);
            else CHECK(r.counters.nodes <= 200 + 1);
            CHECK(r.plan.has_value() == r.objective_value.has_value());
            if (r.plan) {
                CHECK(value_of(r) <= best * (1.0 + 1e-12));
                CHECK(r.plan->figures.usd_per_h <= 50.0);
            }
            if (method == search_method::exact) {
                // The subtrees not searched are bounded by their nodes' bounds.
                REQUIRE(r.bound);
                CHECK(*r.bound >= best * (1.0 - 1e-9));
                if (r.plan) CHECK(*r.bound >= value_of(r));
            } else {
                CHECK_FALSE(r.bound);
            }
        }
    }
}

TEST_CASE("quotas of 1e9: both methods return promptly within a small budget", "[solve][vm][budget]") {
    // A regression for fuzz findings: neither search may scale with the quotas.
    const vm_problem p = large_problem(1'000'000'000);
    const linear_model model = large_model();
    for (const auto method : {search_method::exact, search_method::exhaustive}) {
        for (const bool timed : {false, true}) {
            INFO(to_string(method) << (timed ? ", 50 ms" : ", 1000 nodes"));
            vm_options o = with(method);
            if (timed) o.budget = {.max_nodes = 0, .max_evaluations = 0, .max_time_s = 0.05};
            else o.budget = {.max_nodes = 1000, .max_evaluations = 1000, .max_time_s = 0.0};
            const auto start = std::chrono::steady_clock::now();
            const auto r = recommend(model, p, o);
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            CHECK(elapsed < 5.0);
            CHECK((r.limit != dnnplan::search_limit::none || r.status == solve_status::optimal));
            if (!timed) {
                CHECK(r.counters.nodes <= 1000 + 1);
                CHECK(r.counters.evaluations <= 1000 + 1);
            }
            if (r.plan) CHECK(r.plan->figures.usd_per_h <= 50.0);
            if (r.bound && r.plan) CHECK(*r.bound >= value_of(r));
            if (method == search_method::exhaustive) CHECK_FALSE(r.bound);
        }
    }
}

TEST_CASE("fuzz finding: an evaluation budget of 1 on quotas of 1e9 returns at once", "[solve][vm][budget][fuzz]") {
    // tests/fixtures/fuzz_findings/README.md, vm_request-6: the exhaustive method with
    // evaluation_budget 1 (a key of dnnplan 0.1), max_instances 1 and quotas of 1e9 took 15 s.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/vm_request-6-exhaustive-budget-hang.json");
    REQUIRE(in);
    const vm_request request = dnnplan::parse_vm_request(in);
    REQUIRE(request.options.method == search_method::exhaustive);
    REQUIRE(request.options.budget.max_evaluations == 1);
    const auto start = std::chrono::steady_clock::now();
    const auto r = dnnplan::solve(request);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.0);
    CHECK(r.limit != dnnplan::search_limit::none);
    CHECK(r.counters.evaluations == 1);
    CHECK(r.counters.nodes <= 2);
    CHECK_FALSE(r.bound);
    CHECK_THAT(r.reason, Catch::Contains("budget"));
}

namespace {

/// A throughput model of the host's own: r = sum_k c_k u_k / (1 + overhead (N - 1)) for N
/// instances (a synchronisation cost that grows with the cluster). `bounded` adds the members of
/// linearly_bounded_throughput_model (rate_k = u_k: the denominator is >= 1) and
/// box_bounded_throughput_model (the linear bound over the box, capped by the instances).
template <bool Bounded>
struct overhead_model {
    std::vector<double> per_instance;
    double overhead = 0.1;

    [[nodiscard]] std::size_t type_count() const noexcept { return per_instance.size(); }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> c) const noexcept {
        double r = 0.0;
        std::int64_t n = 0;
        for (std::size_t k = 0; k < c.size(); ++k) {
            r += c[k] * per_instance[k];
            n += c[k];
        }
        return n == 0 ? 0.0 : r / (1.0 + overhead * static_cast<double>(n - 1));
    }
    void samples_per_s_linear_bound(std::span<const std::int32_t>, std::span<const std::int32_t>, std::span<double> rate,
                                    std::int64_t, double) const noexcept
        requires Bounded
    {
        for (std::size_t k = 0; k < rate.size(); ++k) rate[k] = per_instance[k];
    }
    [[nodiscard]] double samples_per_s_upper_bound(std::span<const std::int32_t> lower, std::span<const std::int32_t> upper,
                                                   std::int64_t max_instances, std::int64_t min_instances) const noexcept
        requires Bounded
    {
        // r <= u_max N / (1 + overhead (N - 1)), increasing in N: at the most instances the box allows.
        double u_max = 0.0;
        std::int64_t n_hi = 0, n_lo = 0;
        for (std::size_t k = 0; k < upper.size(); ++k) {
            if (upper[k] > 0) u_max = std::max(u_max, per_instance[k]);
            n_hi += upper[k];
            n_lo += lower[k];
        }
        const auto n = static_cast<double>(std::max({std::int64_t{1}, min_instances, n_lo, std::min(n_hi, max_instances)}));
        return u_max * n / (1.0 + overhead * (n - 1.0));
    }
};
static_assert(dnnplan::linearly_bounded_throughput_model<overhead_model<true>>);
static_assert(dnnplan::box_bounded_throughput_model<overhead_model<true>>);
static_assert(dnnplan::cluster_throughput_model<overhead_model<false>>);
static_assert(!dnnplan::linearly_bounded_throughput_model<overhead_model<false>>);

/// An offer-cost model of the host's own: the catalog's prices with a discount on the spot price
/// of one type, and (optionally) one type's on-demand offer not sold (+inf).
struct discounted_cost {
    dnnplan::catalog_offer_cost catalog;
    std::size_t discounted_type = 0;
    double discount = 0.5;
    std::optional<std::size_t> no_on_demand{};

    [[nodiscard]] std::size_t type_count() const noexcept { return catalog.type_count(); }
    [[nodiscard]] double usd_per_h(std::size_t k, price_kind kind) const noexcept {
        if (kind == price_kind::on_demand && no_on_demand == k) return std::numeric_limits<double>::infinity();
        const double price = catalog.usd_per_h(k, kind);
        return k == discounted_type && kind == price_kind::spot ? price * (1.0 - discount) : price;
    }
};
static_assert(dnnplan::offer_cost_model<discounted_cost>);

}  // namespace

TEST_CASE("a throughput model of the host's own: with bounds it is branched, without it is enumerated; both agree",
          "[solve][vm][models]") {
    std::mt19937_64 rng(404);
    int optimal = 0;
    for (int trial = 0; trial < 150; ++trial) {
        auto rc = random_problem(rng);
        overhead_model<true> bounded;
        for (std::size_t k = 0; k < rc.problem.catalog.instances.size(); ++k) bounded.per_instance.push_back(5.0 + 40.0 * unit_draw(rng));
        bounded.overhead = 0.3 * unit_draw(rng);
        const overhead_model<false> plain{bounded.per_instance, bounded.overhead};
        // Deadlines and speed floors were drawn for the synchronous model: drop them.
        rc.problem.constraints.deadline_s = std::numeric_limits<double>::infinity();
        rc.problem.constraints.min_samples_per_s = 0.0;
        INFO("trial " << trial << ", objective " << to_string(rc.problem.objective));
        const auto bb = recommend(bounded, rc.problem, with(search_method::exact, true));
        const auto ex = recommend(bounded, rc.problem, with(search_method::exhaustive, true));
        const auto fallback = recommend(plain, rc.problem, with(search_method::exact, true));
        CHECK(bb.details.method == search_method::exact);
        CHECK(ex.details.method == search_method::exhaustive);
        CHECK(fallback.details.method == search_method::exhaustive);
        REQUIRE(bb.status == ex.status);
        REQUIRE(fallback.status == ex.status);
        // The fallback is the oracle itself: the same counters, the same plan.
        CHECK(fallback.counters.evaluations == ex.counters.evaluations);
        CHECK(fallback.plan == ex.plan);
        if (bb.status != solve_status::optimal) continue;
        ++optimal;
        CHECK(close(value_of(bb), value_of(ex)));
        REQUIRE(bb.details.frontier.size() == ex.details.frontier.size());
        for (std::size_t i = 0; i < bb.details.frontier.size(); ++i)
            CHECK(close(bb.details.frontier[i].figures.samples_per_s, ex.details.frontier[i].figures.samples_per_s));
        // The figures are the model's.
        std::vector<std::int32_t> counts(rc.problem.catalog.instances.size(), 0);
        for (const auto& offer : bb.plan->offers)
            counts[*rc.problem.catalog.find(offer.type)] += offer.count;
        CHECK(bb.plan->figures.samples_per_s == bounded.samples_per_s(counts));
    }
    CHECK(optimal >= 80);
}

TEST_CASE("an offer-cost model of the host's own: a discount moves the plan, and the oracle agrees", "[solve][vm][models]") {
    // Two types with the same speed per USD at catalog prices; half price on the slow type's spot
    // offer makes it the only choice per USD.
    const linear_model model{{10.0, 50.0}};
    vm_problem p = two_types();
    p.catalog.instances[0].spot_usd_per_h = 1.0;  // slow: 10 samples/s per USD/h
    p.catalog.instances[1].spot_usd_per_h = 5.0;  // fast: 10 samples/s per USD/h
    p.objective = objective_kind::max_samples_per_usd;
    const vm_request request{.problem = p, .workload = {}, .options = {}};
    const discounted_cost half_slow{.catalog = dnnplan::catalog_offer_cost(p.catalog), .discounted_type = 0, .discount = 0.5};
    const auto r = dnnplan::solve(request, model, half_slow);
    REQUIRE(r.status == solve_status::optimal);
    CHECK(value_of(r) == Approx(3600.0 * 10.0 / 0.5));
    CHECK(count_of(r, "fast", price_kind::spot) == 0);
    CHECK(count_of(r, "slow", price_kind::spot) >= 1);
    CHECK(r.plan->figures.usd_per_h == Approx(0.5 * count_of(r, "slow", price_kind::spot)));
    // Catalog prices (the default cost) give the undiscounted ratio.
    CHECK(value_of(dnnplan::solve(request, model)) == Approx(3600.0 * 10.0));
    CHECK(value_of(dnnplan::solve(request, model, dnnplan::catalog_offer_cost(p.catalog))) == Approx(3600.0 * 10.0));

    // Against the oracle on random problems, with a random discount and an offer not sold.
    std::mt19937_64 rng(77);
    int optimal = 0, discounted_used = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const auto rc = random_problem(rng);
        const std::size_t types = rc.problem.catalog.instances.size();
        discounted_cost cost{.catalog = dnnplan::catalog_offer_cost(rc.problem.catalog),
                             .discounted_type = std::uniform_int_distribution<std::size_t>(0, types - 1)(rng),
                             .discount = 0.2 + 0.7 * unit_draw(rng)};
        if (unit_draw(rng) < 0.3) cost.no_on_demand = std::uniform_int_distribution<std::size_t>(0, types - 1)(rng);
        INFO("trial " << trial << ", objective " << to_string(rc.problem.objective));
        vm_request req{.problem = rc.problem, .workload = {}, .options = {}};
        const auto bb = dnnplan::solve(req, rc.model, cost);
        req.options.method = search_method::exhaustive;
        const auto ex = dnnplan::solve(req, rc.model, cost);
        REQUIRE(bb.status == ex.status);
        if (bb.status != solve_status::optimal) continue;
        ++optimal;
        CHECK(close(value_of(bb), value_of(ex)));
        // The plan is priced by the cost model, offer by offer; an offer not sold is never bought.
        double price = 0.0;
        for (const auto& offer : bb.plan->offers) {
            const auto k = *rc.problem.catalog.find(offer.type);
            const double unit = cost.usd_per_h(k, offer.kind);
            REQUIRE(std::isfinite(unit));
            price += offer.count * unit;
            discounted_used += k == cost.discounted_type && offer.kind == price_kind::spot ? 1 : 0;
        }
        CHECK(bb.plan->figures.usd_per_h == Approx(price).epsilon(1e-12));
    }
    CHECK(optimal >= 150);
    CHECK(discounted_used >= 30);
}

TEST_CASE("solve(request) prices the request's synchronous workload", "[solve][vm]") {
    vm_request request;
    request.problem = two_types();
    request.problem.objective = objective_kind::max_samples_per_usd;
    request.workload.gpu_types = {{"K80", {.fixed_s = 0.02, .per_sample_s = 0.004}}, {"V100", {.fixed_s = 0.01, .per_sample_s = 0.001}}};
    request.workload.instance_gpu_types = {{"slow", "K80"}, {"fast", "V100"}};
    request.workload.network = {.alpha_n_s = 0.05, .beta_n_s = 0.01, .alpha_r_s = 0.01, .beta_r_s = 0.002, .gamma = 2.0};
    request.workload.batch = 32;
    const auto r = dnnplan::solve(request);
    const auto same = dnnplan::solve(request, request.workload.model(request.problem.catalog));
    REQUIRE(r.status == solve_status::optimal);
    CHECK(r.plan == same.plan);
    CHECK(r.objective_value == same.objective_value);
    CHECK(r.bound == same.bound);
    // The workload is validated with the request.
    request.workload.batch = 0;
    try {
        (void)dnnplan::solve(request);
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "workload.batch");
    }
}

TEST_CASE("invalid input names the field", "[solve][vm][validation]") {
    const double inf = std::numeric_limits<double>::infinity();
    expect_rejected([](vm_problem& p, vm_options&) { p.catalog.instances.clear(); }, "catalog.instances");
    expect_rejected([](vm_problem& p, vm_options&) { p.catalog.instances[1].quota = -1; }, "catalog.instances[1].quota");
    expect_rejected([](vm_problem& p, vm_options&) { p.work.samples = -1.0; }, "work.samples");
    expect_rejected([](vm_problem& p, vm_options&) { p.work.epochs = 2.0; }, "work.dataset_samples");
    expect_rejected([](vm_problem& p, vm_options&) { p.work.samples = 1.0, p.work.epochs = 1.0, p.work.dataset_samples = 1.0; },
                    "work.epochs");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.max_usd_per_h = 0.0; }, "constraints.max_usd_per_h");
    expect_rejected([inf](vm_problem& p, vm_options&) { p.constraints.min_samples_per_s = inf; },
                    "constraints.min_samples_per_s");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.deadline_s = 10.0; }, "constraints.deadline_s");
    expect_rejected([](vm_problem& p, vm_options&) { p.work.samples = 1.0, p.constraints.deadline_s = -1.0; },
                    "constraints.deadline_s");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.max_instances = -1; }, "constraints.max_instances");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.max_distinct_types = -2; },
                    "constraints.max_distinct_types");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.allowed_types = {"fast", "medium"}; },
                    "constraints.allowed_types[1]");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.allowed_types = {"fast", "fast"}; },
                    "constraints.allowed_types[1]");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.allowed_price_kinds.clear(); },
                    "constraints.allowed_price_kinds");
    expect_rejected([](vm_problem& p, vm_options&) { p.constraints.allowed_price_kinds = {price_kind::spot, price_kind::spot}; },
                    "constraints.allowed_price_kinds[1]");
    expect_rejected([](vm_problem& p, vm_options&) { p.objective = objective_kind::min_time; }, "objective");
    expect_rejected([](vm_problem&, vm_options& o) { o.method = search_method::sliding_window; }, "options.method");
    expect_rejected([](vm_problem&, vm_options& o) { o.budget.max_nodes = -1; }, "options.budget.max_nodes");
    expect_rejected([](vm_problem&, vm_options& o) { o.budget.max_evaluations = -1; }, "options.budget.max_evaluations");
    expect_rejected([](vm_problem&, vm_options& o) { o.budget.max_time_s = -1.0; }, "options.budget.max_time_s");
    expect_rejected([](vm_problem&, vm_options& o) { o.relative_gap = 1.0; }, "options.relative_gap");
    // A model or a cost model with the wrong number of types.
    const vm_request request{.problem = two_types(), .workload = {}, .options = {}};
    try {
        (void)dnnplan::solve(request, linear_model{{1.0}});
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "models.throughput.type_count()");
    }
    vm_problem one_type = two_types();
    one_type.catalog.instances.pop_back();
    try {
        (void)dnnplan::solve(request, linear_model{{10.0, 50.0}}, dnnplan::catalog_offer_cost(one_type.catalog));
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "models.cost.type_count()");
    }
}

TEST_CASE("fuzz findings: a subnormal price is rejected and max_throughput on 10000 instances ends at the budget",
          "[solve][vm][budget][fuzz]") {
    const auto open = [](const char* name) {
        return std::ifstream(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/" + name);
    };
    // vm_request-4: samples_per_usd came out infinite, was written as null and did not read back.
    auto price = open("vm_request-4-price-subnormal.json");
    REQUIRE(price);
    const auto e = dnnplan_test::error_of([&] { (void)dnnplan::parse_vm_request(price); });
    CHECK(e.field() == "catalog.instances[0].spot_usd_per_h");
    CHECK_THAT(e.expected(), Catch::Contains("subnormal"));
    // vm_request-9: 30 s on max_throughput with max_instances 10000. Read with the default budget,
    // solved here with a smaller one of the same kind so the test stays fast: it must stop there,
    // with the incumbent and a proven bound.
    auto quadratic = open("vm_request-9-bb-max-throughput-quadratic.json");
    REQUIRE(quadratic);
    vm_request request = dnnplan::parse_vm_request(quadratic);
    CHECK(request.options.budget.max_nodes == dnnplan::search_budget{}.max_nodes);
    request.options.budget.max_nodes = 100'000;
    const auto r = dnnplan::solve(request);
    CHECK(r.limit != dnnplan::search_limit::none);
    CHECK(r.counters.nodes <= 100'001);
    REQUIRE(r.plan);
    REQUIRE(r.objective_value);
    REQUIRE(r.bound);
    CHECK(*r.objective_value <= *r.bound);
    CHECK(std::isfinite(*r.bound));
}
