// The elastic advisor's extension points (solve/elastic_advisor/concepts.hpp): a throughput model
// of one's own (a per-worker speed, linear in the workers, the PS never limiting) in solve() and in
// the replay harness; the default model is the load-contention PS model; types that are not a
// model or not a policy are rejected.

#include <dnnplan/solve/elastic_advisor/advisor.hpp>
#include <dnnplan/solve/elastic_advisor/concepts.hpp>
#include <dnnplan/solve/elastic_advisor/policies.hpp>
#include <dnnplan/solve/elastic_advisor/replay.hpp>

#include <catch2/catch.hpp>

#include <cstdint>

using namespace dnnplan;

namespace {

/// Every worker runs `rate` steps/s whatever the cluster: X = rate n, +- 10%.
struct per_worker_fit {
    double rate = 0.0;
    [[nodiscard]] interval predict(const ps_configuration& c, double /*confidence*/) const {
        const double x = rate * c.workers;
        return {.value = x, .lower = 0.9 * x, .upper = 1.1 * x};
    }
    [[nodiscard]] ps_load_state ps_load_at(const ps_configuration&, double) const noexcept { return {}; }
};

/// Fitted: the mean measured speed per worker.
struct per_worker_model {
    [[nodiscard]] per_worker_fit fit(const measured_speeds& measured, const elastic_options&) const {
        double sum = 0.0;
        for (const auto& [c, x] : measured) sum += x / c.workers;
        return {.rate = sum / static_cast<double>(measured.size())};
    }
};

// Not models: no fit; a fit that is a number; a fitted model without the PS load; a fit that is not const.
struct predict_only_fit {
    [[nodiscard]] interval predict(const ps_configuration&, double) const { return {}; }
};
struct predict_only_model {
    [[nodiscard]] predict_only_fit fit(const measured_speeds&, const elastic_options&) const { return {}; }
};
struct number_model {
    [[nodiscard]] double fit(const measured_speeds&, const elastic_options&) const { return 1.0; }
};
struct mutable_fit_model {
    [[nodiscard]] per_worker_fit fit(const measured_speeds&, const elastic_options&) { return {}; }
};
// Not a policy: answers with a number.
struct says_nothing_policy {
    int operator()(const policy_view&) const { return 0; }
};

}  // namespace

TEST_CASE("elastic concepts: conforming and non-conforming types", "[elastic][concepts]") {
    STATIC_REQUIRE(elastic_throughput_model<ps_load_contention_model>);
    STATIC_REQUIRE(elastic_throughput_model<per_worker_model>);
    STATIC_REQUIRE(fitted_elastic_throughput<per_worker_fit>);
    STATIC_REQUIRE(ps_parameter_fit<ps_load_contention_fit>);
    STATIC_REQUIRE_FALSE(ps_parameter_fit<per_worker_fit>);
    STATIC_REQUIRE_FALSE(elastic_throughput_model<per_worker_fit>);
    STATIC_REQUIRE_FALSE(elastic_throughput_model<predict_only_model>);
    STATIC_REQUIRE_FALSE(elastic_throughput_model<number_model>);
    STATIC_REQUIRE_FALSE(elastic_throughput_model<mutable_fit_model>);
    STATIC_REQUIRE_FALSE(fitted_elastic_throughput<predict_only_fit>);

    STATIC_REQUIRE(elastic_policy<model_policy>);
    STATIC_REQUIRE(elastic_policy<basic_model_policy<per_worker_model>>);
    STATIC_REQUIRE(elastic_policy<dlrover_policy>);
    STATIC_REQUIRE_FALSE(elastic_policy<says_nothing_policy>);
    STATIC_REQUIRE_FALSE(elastic_policy<int>);
}

TEST_CASE("elastic advisor with a model of one's own: its predictions, cut to the model's bounds", "[elastic][concepts]") {
    // (1, 2) measured at 20 steps/s: 10 per worker.
    const elastic_request r{.job = {.remaining_steps = 100'000.0, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                                    .configurations = {{1, 2}, {1, 4}, {1, 8}, {2, 4}}},
                            .observations = {{1, 2, 20.0}}};
    const elastic_result res = solve(r, per_worker_model{});
    CHECK(!result_shape_violation(res));
    CHECK(res.details.model_fitted);
    // No PS parameters to report, no PS load.
    CHECK(res.details.compute_s == 0.0);
    CHECK(res.details.pinned.empty());
    CHECK_FALSE(res.details.ps_bottleneck);
    for (const auto& e : res.details.candidates) {
        INFO("(" << e.ps << ", " << e.workers << ")");
        CHECK(e.steps_per_s == Approx(10.0 * e.workers));  // the model's prediction, inside its bounds
        if (e.tried) continue;
        // The model's 10% (wider than speed_noise, 5%), then cut to the bounds from (1, 2): a worker
        // more never raises a worker's rate, so (1, 4) and (1, 8) run at most 10 per worker + 5%;
        // (2, 4) has as many PS per worker, so a worker's rate never falls: at least 10 - 5%.
        CHECK(e.lower == Approx(e.ps == 1 ? 0.9 * 10.0 * e.workers : 0.95 * 10.0 * e.workers));
        CHECK(e.upper == Approx(e.ps == 1 ? 1.05 * 10.0 * e.workers : 1.1 * 10.0 * e.workers));
    }
    // The load-contention model reads the same single measurement otherwise (one point, no
    // contention seen): another model, other intervals.
    const elastic_result load = solve(r);
    CHECK(load.details.compute_s > 0.0);
    CHECK(load.details.candidates != res.details.candidates);
    CHECK(solve(r, ps_load_contention_model{}).details.candidates == load.details.candidates);
}

TEST_CASE("elastic replay with a model of one's own: the optimum of a table its model describes", "[elastic][concepts][replay]") {
    // 10 steps/s per worker whatever the PS: the most steps per USD is the fewest PS with the most
    // workers, (1, 8), at (8 x 0.9 + 0.15) / 80 USD/h per step/s.
    measurement_table t{.gpu = "linear", .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15};
    for (std::int32_t p = 1; p <= 2; ++p)
        for (std::int32_t n = 1; n <= 8; ++n) t.measured.push_back({p, n, 10.0 * n});
    for (const bool deadline : {false, true}) {
        replay_options o{.work_steps = 1.0e6};
        if (deadline) o.deadline_s = 1.0e6 / 80.0 * 1.5;
        const auto best = best_with_hindsight(t, o);
        REQUIRE(best);
        CHECK(best->configuration == ps_configuration{1, 8});
        const replay_report report = replay(t, o, basic_model_policy<per_worker_model>{});
        INFO("deadline " << deadline << ": final " << to_string(report.final));
        CHECK(report.met_deadline);
        CHECK(report.final == ps_configuration{1, 8});
        CHECK(report.trials.size() <= 5);
        CHECK(report.cost_usd <= 1.02 * best->cost_usd);
    }
}
