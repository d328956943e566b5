// The VM recommender (Srifty's search): hand cases, the branch and bound against the exhaustive
// oracle over the offer space on seeded random problems (every objective, with and without work,
// budgets, infeasible cases), the exact Pareto frontier against the oracle's non-dominated set,
// the model bound of the synchronous adapter, concept checks and every validation path.

#include <dnnplan/solve/vm_recommend.hpp>

#include <dnnplan/model/heterogeneous_ps.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using dnnplan::price_kind;
using dnnplan::solve_status;
using dnnplan::vm_method;
using dnnplan::vm_objective;
using dnnplan::vm_options;
using dnnplan::vm_problem;

/// Perfect scaling: r = sum_k c_k u_k (its own exact linear bound).
struct linear_model {
    std::vector<double> per_instance;
    [[nodiscard]] std::size_t type_count() const noexcept { return per_instance.size(); }
    [[nodiscard]] double samples_per_s(std::span<const std::int32_t> c) const noexcept {
        double r = 0.0;
        for (std::size_t k = 0; k < c.size(); ++k) r += c[k] * per_instance[k];
        return r;
    }
    void samples_per_s_linear_bound(std::span<const std::int32_t>, std::span<const std::int32_t>,
                                    std::span<double> rate) const noexcept {
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
concept recommendable = requires(const M& m, const vm_problem& p) { dnnplan::recommend_vms(m, p); };
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
    if (!r.best) return -1;
    for (const auto& o : r.best->offers)
        if (o.type == name && o.kind == kind) return o.count;
    return 0;
}

// ---- random problems ----------------------------------------------------------------------------

struct random_case {
    vm_problem problem;
    dnnplan::sync_cluster_throughput model;
};

random_case random_problem(std::mt19937_64& rng, int max_types = 4) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<int> types_d(1, max_types), quota_d(0, 3), gpus_d(1, 4);
    vm_problem p;
    const int k_count = types_d(rng);
    std::vector<dnnplan::gpu_compute> compute;
    for (int k = 0; k < k_count; ++k) {
        const double spot = 0.2 + 3.0 * unit(rng);
        // Mostly on-demand above spot; sometimes below (then spot is the dominated offer).
        const double on_demand = unit(rng) < 0.8 ? spot * (1.5 + 2.0 * unit(rng)) : spot * (0.5 + 0.5 * unit(rng));
        std::string name = "t";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "t" + string
        name += std::to_string(k);
        p.catalog.instances.push_back(type(name, gpus_d(rng), quota_d(rng), spot, on_demand));
        compute.push_back({.alpha_c_s = 0.05 * unit(rng), .beta_c_s = 0.001 + 0.01 * unit(rng)});
    }
    if (unit(rng) < 0.15) p.catalog.instances[0].quota = 0;
    dnnplan::sync_cluster_spec spec;
    spec.network = {.alpha_n_s = 0.2 * unit(rng), .beta_n_s = 0.02 * unit(rng), .alpha_r_s = 0.05 * unit(rng),
                    .beta_r_s = 0.01 * unit(rng), .gamma = 1.0 + 9.0 * unit(rng) * unit(rng)};
    if (unit(rng) < 0.25)
        spec.ring = dnnplan::ring_allreduce{.parameter_bytes = 1e8 * (0.5 + unit(rng)),
                                            .intra_node_bytes_per_s = 5e9, .inter_node_bytes_per_s = 1e9 * (0.5 + unit(rng)),
                                            .latency_s = 0.001};
    spec.policy = unit(rng) < 0.5 ? dnnplan::batch_policy::equal : dnnplan::batch_policy::balanced;
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
    p.objective = static_cast<vm_objective>(std::uniform_int_distribution<int>(0, 2)(rng));
    return {std::move(p), std::move(model)};
}

double unit_draw(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

vm_options with(vm_method m, bool pareto = false) {
    vm_options o;
    o.method = m;
    o.pareto = pareto;
    return o;
}

// Runs `mutate` on a valid problem and expects invalid_input naming `field`.
void expect_rejected(const std::function<void(vm_problem&, vm_options&)>& mutate, const std::string& field) {
    vm_problem p = two_types();
    vm_options o;
    mutate(p, o);
    INFO("expected a rejection of " << field);
    try {
        (void)dnnplan::recommend_vms(linear_model{{10.0, 50.0}}, p, o);
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
        const auto r = dnnplan::recommend_vms(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(r.method == vm_method::branch_and_bound);
        CHECK(r.objective_value == 1.0);
        CHECK(r.objective_bound == Approx(r.objective_value).epsilon(1e-9));
        CHECK(count_of(r, "slow", price_kind::spot) == 1);
        CHECK(r.best->figures.samples_per_s == 10.0);
        CHECK_FALSE(r.best->figures.time_s);
    }
    SECTION("max throughput: every instance the quotas allow, all spot") {
        p.objective = vm_objective::max_throughput;
        const auto r = dnnplan::recommend_vms(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(r.objective_value == 4 * 10.0 + 2 * 50.0);
        CHECK(count_of(r, "slow", price_kind::spot) == 4);
        CHECK(count_of(r, "fast", price_kind::spot) == 2);
        CHECK(r.best->figures.usd_per_h == 14.0);
        CHECK(r.best->figures.gpus == 4 + 8);
    }
    SECTION("max throughput on demand only under a budget of 26 USD/h") {
        p.objective = vm_objective::max_throughput;
        p.constraints.allowed_price_kinds = {price_kind::on_demand};
        p.constraints.max_usd_per_h = 26.0;  // 2 fast (24) + 0 slow, or 1 fast + 4 slow (24): 100 vs 90
        const auto r = dnnplan::recommend_vms(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(r.objective_value == 100.0);
        CHECK(count_of(r, "fast", price_kind::on_demand) == 2);
        CHECK(r.best->figures.usd_per_h == 24.0);
    }
    SECTION("min cost of a deadline job: work / r * P / 3600") {
        p.work.samples = 3.6e5;
        p.constraints.deadline_s = 3600.0;  // needs r >= 100 samples/s
        const auto r = dnnplan::recommend_vms(model, p);
        REQUIRE(r.status == solve_status::optimal);
        // Every spot mix costs 0.1 USD/h per sample/s: 3.6e5 samples take 100 h-samples/s, 10 USD.
        CHECK(r.objective_value == Approx(10.0));
        CHECK(r.best->figures.samples_per_s >= 100.0);
        CHECK(*r.best->figures.time_s <= 3600.0);
        CHECK(*r.best->figures.cost_usd == Approx(10.0));
    }
    SECTION("max samples per USD: a cheaper on-demand price flips the dominated offer") {
        p.objective = vm_objective::max_samples_per_usd;
        p.catalog.instances[1].on_demand_usd_per_h = 4.0;  // below its spot price of 5
        const auto r = dnnplan::recommend_vms(model, p);
        REQUIRE(r.status == solve_status::optimal);
        CHECK(r.objective_value == Approx(3600.0 * 50.0 / 4.0));
        CHECK(count_of(r, "fast", price_kind::on_demand) >= 1);
        CHECK(count_of(r, "fast", price_kind::spot) == 0);
        CHECK(count_of(r, "slow", price_kind::spot) == 0);
    }
    SECTION("an unreachable deadline is infeasible, with an infinite bound") {
        p.work.samples = 1e9;
        p.constraints.deadline_s = 10.0;
        const auto r = dnnplan::recommend_vms(model, p);
        CHECK(r.status == solve_status::infeasible);
        CHECK_FALSE(r.best);
        CHECK(std::isinf(r.objective_bound));
        CHECK_FALSE(r.reason.empty());
        CHECK(r.counters.pruned_by_deadline >= 1);
    }
    SECTION("no allowed type with a quota: infeasible") {
        p.constraints.allowed_types = {"fast"};
        p.catalog.instances[1].quota = 0;
        const auto r = dnnplan::recommend_vms(model, p);
        CHECK(r.status == solve_status::infeasible);
        CHECK(r.reason == "no instance type is allowed with a positive quota");
    }
    SECTION("the Pareto frontier of USD/h vs samples/s: every count of spot instances that is not beaten") {
        p.constraints.max_instances = 2;
        const auto r = dnnplan::recommend_vms(model, p, with(vm_method::branch_and_bound, true));
        REQUIRE(r.frontier_status == solve_status::optimal);
        // (P, r): (1, 10), (2, 20), (5, 50), (6, 60), (10, 100): 1 slow, 2 slow, 1 fast, 1+1, 2 fast.
        std::vector<std::pair<double, double>> points;
        for (const auto& c : r.frontier) points.emplace_back(c.figures.usd_per_h, c.figures.samples_per_s);
        CHECK(points == std::vector<std::pair<double, double>>{{10, 100}, {6, 60}, {5, 50}, {2, 20}, {1, 10}});
    }
}

TEST_CASE("a model without a bound is searched exhaustively, and says so", "[solve][vm]") {
    const unbounded_model model{{{10.0, 50.0}}};
    vm_problem p = two_types();
    p.objective = vm_objective::max_throughput;
    const auto r = dnnplan::recommend_vms(model, p);
    CHECK(r.method == vm_method::exhaustive);
    CHECK(r.status == solve_status::optimal);
    CHECK(r.objective_value == 140.0);
    CHECK(r.counters.nodes == 0);
    // Offer space: (spot, on demand) per type with spot + on demand <= quota: 15 * 6 - 1 empty.
    CHECK(r.counters.clusters_evaluated == 15 * 6 - 1);
}

TEST_CASE("the asynchronous spotDNN adapter is accepted with its bound", "[solve][vm]") {
    dnnplan::ps_network net{.parameter_bytes = 1e8, .required_bandwidth_bytes_per_s = 1e9,
                            .ps_bandwidth_bytes_per_s = 2e9, .pcie_bandwidth_bytes_per_s = 1e10,
                            .contention = {.alpha1 = 0.1, .beta1 = 0.2}};
    const dnnplan::asp_cluster_throughput model(dnnplan::heterogeneous_ps_model(
        net, {{.gpus = 1, .worker_batch = 64, .compute_s = 0.5}, {.gpus = 4, .worker_batch = 256, .compute_s = 0.6}}));
    static_assert(dnnplan::linearly_bounded_throughput_model<decltype(model)>);
    for (const auto objective : {vm_objective::min_cost, vm_objective::max_throughput, vm_objective::max_samples_per_usd}) {
        vm_problem p = two_types();
        p.objective = objective;
        p.work.samples = 1e6;
        const auto bb = dnnplan::recommend_vms(model, p);
        const auto ex = dnnplan::recommend_vms(model, p, with(vm_method::exhaustive));
        REQUIRE(bb.status == solve_status::optimal);
        REQUIRE(ex.status == solve_status::optimal);
        CHECK(close(bb.objective_value, ex.objective_value));
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
        dnnplan::samples_per_s_linear_bound(rc.model, lo, hi, rate);
        std::int64_t lo_sum = 0;
        for (const auto v : lo) lo_sum += v;
        const std::int64_t cap = lo_sum + std::uniform_int_distribution<std::int64_t>(0, 4)(rng);
        const double box_bound = dnnplan::samples_per_s_upper_bound(rc.model, lo, hi, cap);
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
        dnnplan::samples_per_s_linear_bound(rc.model, lo, hi, rate, min_instances, min_speed);
        const double box_bound = dnnplan::samples_per_s_upper_bound(rc.model, lo, hi, cap, min_instances);
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
        const auto bb = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::branch_and_bound, true));
        const auto ex = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::exhaustive, true));
        REQUIRE(bb.status == ex.status);
        if (bb.status == solve_status::optimal) {
            ++optimal;
            CHECK(close(bb.objective_value, ex.objective_value));
        }
        REQUIRE(bb.frontier.size() == ex.frontier.size());
        evals_bb += bb.counters.clusters_evaluated + bb.frontier_counters.clusters_evaluated;
        evals_ex += ex.counters.clusters_evaluated + ex.frontier_counters.clusters_evaluated;
        points += static_cast<std::int64_t>(bb.frontier.size());
        for (std::size_t i = 0; i < bb.frontier.size(); ++i) {
            CHECK(close(bb.frontier[i].figures.samples_per_s, ex.frontier[i].figures.samples_per_s));
            CHECK(close(bb.frontier[i].figures.usd_per_h, ex.frontier[i].figures.usd_per_h));
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
        const auto bb = dnnplan::recommend_vms(rc.model, rc.problem);
        const auto ex = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::exhaustive));
        REQUIRE(ex.method == vm_method::exhaustive);
        REQUIRE(bb.method == vm_method::branch_and_bound);
        REQUIRE(bb.status == ex.status);
        if (bb.status == solve_status::optimal) {
            ++optimal;
            ++by_objective[static_cast<int>(rc.problem.objective)];
            with_work += rc.problem.work.given() ? 1 : 0;
            CHECK(close(bb.objective_value, ex.objective_value));
            CHECK(std::abs(bb.objective_bound - bb.objective_value) <= 2e-9 * std::abs(bb.objective_value));
            // The plan's figures are its own, and it meets every constraint.
            const auto& f = bb.best->figures;
            const auto& c = rc.problem.constraints;
            CHECK(f.samples_per_s >= c.min_samples_per_s);
            CHECK(f.usd_per_h <= c.max_usd_per_h);
            if (f.time_s) CHECK(*f.time_s <= c.deadline_s);
            if (c.max_instances > 0) CHECK(f.instances <= c.max_instances);
        } else {
            REQUIRE(bb.status == solve_status::infeasible);
            ++infeasible;
            CHECK_FALSE(bb.best);
        }
        bb_evaluations += bb.counters.clusters_evaluated;
        oracle_evaluations += ex.counters.clusters_evaluated;
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
        const auto bb = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::branch_and_bound, true));
        const auto ex = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::exhaustive, true));
        REQUIRE(bb.frontier_status == solve_status::optimal);
        REQUIRE(ex.frontier_status == solve_status::optimal);
        REQUIRE(bb.frontier.size() == ex.frontier.size());
        for (std::size_t i = 0; i < bb.frontier.size(); ++i) {
            const auto& a = bb.frontier[i].figures;
            const auto& b = ex.frontier[i].figures;
            CHECK(close(a.samples_per_s, b.samples_per_s));
            CHECK(close(a.usd_per_h, b.usd_per_h));
            if (a.time_s) CHECK(close(*a.cost_usd, *b.cost_usd));
            // Sorted fastest first, and every later point strictly cheaper.
            if (i > 0) {
                CHECK(a.samples_per_s < bb.frontier[i - 1].figures.samples_per_s);
                if (a.cost_usd) CHECK(*a.cost_usd < *bb.frontier[i - 1].figures.cost_usd);
                else CHECK(a.usd_per_h < bb.frontier[i - 1].figures.usd_per_h);
            }
        }
        // The optimum of the objective lies on the frontier.
        if (bb.best) {
            bool found = false;
            for (const auto& c : bb.frontier) {
                const auto& f = c.figures;
                const double v = rc.problem.objective == vm_objective::max_throughput ? f.samples_per_s
                               : rc.problem.objective == vm_objective::max_samples_per_usd ? f.samples_per_usd
                               : f.cost_usd ? *f.cost_usd : f.usd_per_h;
                found = found || close(v, bb.objective_value);
            }
            CHECK(found);
        }
        non_trivial += bb.frontier.size() >= 3 ? 1 : 0;
    }
    CHECK(non_trivial >= 50);
}

TEST_CASE("budgets: budget_exhausted with a valid bound on the optimum", "[solve][vm][budget]") {
    std::mt19937_64 rng(5);
    int exhausted = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const auto rc = random_problem(rng);
        const auto ex = dnnplan::recommend_vms(rc.model, rc.problem, with(vm_method::exhaustive));
        vm_options o;
        o.node_budget = 1 + trial % 7;
        const auto r = dnnplan::recommend_vms(rc.model, rc.problem, o);
        INFO("trial " << trial);
        if (r.status == solve_status::budget_exhausted) {
            ++exhausted;
            CHECK(r.counters.nodes <= o.node_budget + 1);
            if (ex.status == solve_status::optimal) {
                // The bound is on the right side of the optimum, and so is the plan so far.
                const bool maximise = rc.problem.objective != vm_objective::min_cost;
                const double slack = 1e-9 * std::abs(ex.objective_value);
                if (maximise) CHECK(r.objective_bound >= ex.objective_value - slack);
                else CHECK(r.objective_bound <= ex.objective_value + slack);
                if (r.best) CHECK((maximise ? r.objective_value <= ex.objective_value + slack
                                            : r.objective_value >= ex.objective_value - slack));
            }
        } else {
            CHECK(r.status == ex.status);
        }
    }
    CHECK(exhausted >= 50);

    // The exhaustive method's evaluation budget.
    vm_problem p = two_types();
    vm_options o = with(vm_method::exhaustive);
    o.evaluation_budget = 5;
    const auto r = dnnplan::recommend_vms(linear_model{{10.0, 50.0}}, p, o);
    CHECK(r.status == solve_status::budget_exhausted);
    CHECK(r.counters.clusters_evaluated == 5);
    CHECK(r.objective_bound == -std::numeric_limits<double>::infinity());
    CHECK_FALSE(r.reason.empty());
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
    expect_rejected([](vm_problem&, vm_options& o) { o.node_budget = -1; }, "options.node_budget");
    expect_rejected([](vm_problem&, vm_options& o) { o.evaluation_budget = -1; }, "options.evaluation_budget");
    expect_rejected([](vm_problem&, vm_options& o) { o.relative_gap = 1.0; }, "options.relative_gap");
    // A model with the wrong number of types.
    try {
        (void)dnnplan::recommend_vms(linear_model{{1.0}}, two_types());
        FAIL("no exception");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == "model.type_count()");
    }
}
