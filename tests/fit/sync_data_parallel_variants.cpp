// The opt-in variants of the synchronous model (docs/models/sync-data-parallel.md, "Variants"):
// hand-computed step times, recovery of known delta_n and batch exponent from seeded synthetic
// steps, the variants' pinning rules, the cross-validated choice, and their JSON.

#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/json.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace dnnplan;

namespace {
const pollux_params truth{.alpha_c_s = 0.05,
                          .beta_c_s = 0.002,
                          .alpha_n_s = 0.15,
                          .beta_n_s = 0.01,
                          .alpha_r_s = 0.04,
                          .beta_r_s = 0.005,
                          .gamma = 2.0,
                          .delta_n_s = 0.03,
                          .batch_exponent = 0.7};

double normal(std::mt19937_64& g) { return dnnplan_test::standard_normal(g); }

/// 1-4 nodes of 1-4 GPUs each, local batches 16..128.
std::vector<sync_step_sample> synthetic(const pollux_params& p, std::size_t count, double sigma, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    const double batches[] = {16.0, 32.0, 64.0, 128.0};
    std::vector<sync_step_sample> out;
    for (std::size_t i = 0; i < count; ++i) {
        const auto nodes = static_cast<std::int64_t>(1 + g() % 4);
        std::int64_t replicas = 0;
        for (std::int64_t k = 0; k < nodes; ++k) replicas += static_cast<std::int64_t>(1 + g() % 4);
        const sync_shape shape{.replicas = replicas, .nodes = nodes, .local_batch = batches[g() % 4], .accumulation_steps = 0};
        out.push_back({.shape = shape, .step_time_s = pollux_step_time_s(p, shape) * std::exp(sigma * normal(g))});
    }
    return out;
}

sync_step_sample at(std::int64_t replicas, std::int64_t nodes, double batch, double time_s) {
    return {.shape = {.replicas = replicas, .nodes = nodes, .local_batch = batch, .accumulation_steps = 0},
            .step_time_s = time_s};
}

std::string field_of(auto&& f) {
    try {
        f();
    } catch (const invalid_input& e) {
        return e.field();
    }
    return "(no exception)";
}
}  // namespace

TEST_CASE("the node term and the batch power by hand", "[model][sync][variant]") {
    const pollux_params p{.alpha_c_s = 0.01, .beta_c_s = 0.001, .alpha_n_s = 0.1, .beta_n_s = 0.01,
                          .alpha_r_s = 0.05, .beta_r_s = 0.02, .gamma = 1.0, .delta_n_s = 0.02, .batch_exponent = 0.5};
    // T_sync = alpha_n + beta_n (K - 2) + delta_n (K / N - 1) for N > 1.
    CHECK(pollux_sync_time_s(p, 8, 2) == Approx(0.1 + 0.01 * 6 + 0.02 * 3));
    CHECK(pollux_sync_time_s(p, 8, 4) == Approx(0.1 + 0.01 * 6 + 0.02 * 1));
    CHECK(pollux_sync_time_s(p, 8, 8) == Approx(0.1 + 0.01 * 6));  // one replica per node: no term
    CHECK(pollux_sync_time_s(p, 4, 1) == Approx(0.05 + 0.02 * 2));  // one node: Pollux's intra-node term
    CHECK(pollux_sync_time_s(p, 1, 1) == 0.0);
    // T_grad = alpha_c + beta_c m^p.
    CHECK(pollux_compute_time_s(p, 64.0) == Approx(0.01 + 0.001 * 8.0));
    // gamma = 1: T_iter = T_grad + T_sync.
    const sync_shape shape{.replicas = 8, .nodes = 2, .local_batch = 64.0};
    CHECK(pollux_step_time_s(p, shape) == Approx(0.018 + 0.22));

    // The defaults are Pollux's form, bit for bit.
    const pollux_params q{.alpha_c_s = 0.01, .beta_c_s = 0.001, .alpha_n_s = 0.1, .beta_n_s = 0.01,
                          .alpha_r_s = 0.05, .beta_r_s = 0.02, .gamma = 1.0};
    CHECK(pollux_sync_time_s(q, 8, 2) == 0.1 + 0.01 * 6.0);
    CHECK(pollux_compute_time_s(q, 64.0) == 0.01 + 0.001 * 64.0);
}

TEST_CASE("the variant parameters are validated", "[model][sync][variant]") {
    pollux_params p;
    p.delta_n_s = -1.0;
    CHECK(field_of([&] { p.validate(); }) == "params.delta_n_s");
    p = {};
    p.batch_exponent = 5.0;
    CHECK_THROWS_WITH(p.validate(), Catch::Contains("batch_exponent = 5") && Catch::Contains("[0.25, 4]"));
    p.batch_exponent = 0.2;
    CHECK(field_of([&] { p.validate(); }) == "params.batch_exponent");
    CHECK(parse_sync_variant("node-term+batch-power") == sync_variant::node_term_batch_power);
    CHECK(field_of([] { (void)parse_sync_variant("nodes"); }) == "variant");
    CHECK(sync_param_count(sync_variant::pollux) == 7);
    CHECK(sync_param_count(sync_variant::node_term) == 8);
    CHECK(sync_param_count(sync_variant::node_term_batch_power) == 9);
    CHECK(sync_param_names(sync_variant::batch_power).back() == "batch_exponent");
}

TEST_CASE("the variant fit recovers a known node term and batch exponent", "[fit][sync][variant]") {
    const auto samples = synthetic(truth, 300, 0.01, 11);
    sync_fit_options options;
    options.variant = sync_variant::node_term_batch_power;
    const auto fit = fit_sync_data_parallel(samples, options);
    CHECK(fit.variant == sync_variant::node_term_batch_power);
    CHECK(fit.pinned.empty());
    CHECK(fit.params.delta_n_s == Approx(truth.delta_n_s).epsilon(0.15));
    CHECK(fit.params.batch_exponent == Approx(truth.batch_exponent).epsilon(0.05));
    CHECK(fit.params.alpha_n_s == Approx(truth.alpha_n_s).epsilon(0.15));
    CHECK(fit.quality.median_ape_ratio < 0.015);
    CHECK(fit.covariance.rows() == 9);
    CHECK(fit.degrees_of_freedom == 300 - 9);
    // The Pollux form cannot express these steps: its error is several times larger.
    const auto pollux = fit_sync_data_parallel(samples);
    CHECK(pollux.variant == sync_variant::pollux);
    CHECK(pollux.covariance.rows() == 7);
    CHECK(pollux.params.delta_n_s == 0.0);
    CHECK(pollux.params.batch_exponent == 1.0);
    CHECK(pollux.quality.median_ape_ratio > 2.0 * fit.quality.median_ape_ratio);
    // Intervals with the variant's parameters.
    const sync_shape shape{.replicas = 6, .nodes = 2, .local_batch = 48.0};
    const auto band = predict_step_time_with_interval(fit, shape);
    CHECK(band.lower < band.value);
    CHECK(band.value < band.upper);
    CHECK(band.value == Approx(pollux_step_time_s(truth, shape)).epsilon(0.03));
}

TEST_CASE("the variants' pinning rules", "[fit][sync][variant]") {
    // Multi-node samples all at K / N = 2 and two local batches: neither extra parameter is
    // identifiable, both are pinned (delta_n at the floor, p at Pollux's 1).
    const std::vector<sync_step_sample> samples{
        at(1, 1, 32, 0.10), at(1, 1, 64, 0.17), at(2, 1, 32, 0.14), at(3, 1, 64, 0.25), at(4, 2, 32, 0.30),
        at(6, 3, 64, 0.41), at(8, 4, 32, 0.38), at(4, 2, 64, 0.36), at(2, 1, 64, 0.21), at(8, 4, 64, 0.45)};
    sync_fit_options options;
    options.variant = sync_variant::node_term_batch_power;
    const auto fit = fit_sync_data_parallel(samples, options);
    CHECK(fit.is_pinned("delta_n_s"));
    CHECK(fit.is_pinned("batch_exponent"));
    CHECK(fit.params.delta_n_s == 1e-8);
    CHECK(fit.params.batch_exponent == 1.0);
    CHECK(fit.covariance(7, 7) == 0.0);
    CHECK(fit.covariance(8, 8) == 0.0);
    // A third batch frees p; a second replicas-per-node value frees delta_n.
    auto more = samples;
    more.push_back(at(1, 1, 128, 0.31));
    more.push_back(at(4, 4, 32, 0.28));
    const auto freed = fit_sync_data_parallel(more, options);
    CHECK_FALSE(freed.is_pinned("delta_n_s"));
    CHECK_FALSE(freed.is_pinned("batch_exponent"));
}

TEST_CASE("a fit result must not carry a parameter its variant lacks", "[fit][sync][variant]") {
    sync_fit_result fit;
    fit.params = {.alpha_c_s = 0.1, .beta_c_s = 0.01, .delta_n_s = 0.5};
    CHECK(field_of([&] { fit.validate(); }) == "fit.params.delta_n_s");
    fit.variant = sync_variant::node_term;
    CHECK(field_of([&] { fit.validate(); }) == "fit.covariance");  // 8 x 8 expected
    fit.covariance = Eigen::MatrixXd::Zero(8, 8);
    CHECK_NOTHROW(fit.validate());
    fit.pinned = {"batch_exponent"};
    CHECK(field_of([&] { fit.validate(); }) == "fit.pinned[0]");
}

TEST_CASE("cross-validation on the training rows picks the form that generated them", "[fit][sync][variant]") {
    pollux_params node_only = truth;
    node_only.batch_exponent = 1.0;
    node_only.delta_n_s = 0.08;
    const auto samples = synthetic(node_only, 160, 0.02, 5);
    sync_selection_options options;
    options.candidates = {sync_variant::pollux, sync_variant::node_term};
    const auto chosen = select_sync_variant(samples, options);
    REQUIRE(chosen.scores.size() == 2);
    CHECK(chosen.chosen == sync_variant::node_term);
    CHECK(chosen.scores[1].cv_median_ape_ratio < chosen.scores[0].cv_median_ape_ratio);
    // Deterministic for a seed.
    const auto again = select_sync_variant(samples, options);
    CHECK(again.scores[0].cv_median_ape_ratio == chosen.scores[0].cv_median_ape_ratio);
    // A larger model must beat the smaller by the margin: with an impossible margin, Pollux stays.
    options.min_improvement_ratio = 1.0;
    CHECK(select_sync_variant(samples, options).chosen == sync_variant::pollux);
    options.folds = 1;
    CHECK(field_of([&] { (void)select_sync_variant(samples, options); }) == "options.folds");
    options.folds = 5;
    options.candidates.clear();
    CHECK(field_of([&] { (void)select_sync_variant(samples, options); }) == "options.candidates");
}

TEST_CASE("a variant fit round-trips through JSON; absent fields mean Pollux's form", "[io][json][sync][variant]") {
    const auto samples = synthetic(truth, 120, 0.01, 3);
    sync_fit_options options;
    options.variant = sync_variant::node_term_batch_power;
    const auto fit = fit_sync_data_parallel(samples, options);
    const std::string text = to_json_text(fit);
    CHECK(text.find("\"variant\": \"node-term+batch-power\"") != std::string::npos);
    const auto back = parse_sync_fit_result(text);
    CHECK(back.variant == fit.variant);
    CHECK(back.params == fit.params);
    CHECK(back.covariance == fit.covariance);
    const sync_shape shape{.replicas = 5, .nodes = 2, .local_batch = 40.0};
    CHECK(predict_step_time_with_interval(back, shape).upper == predict_step_time_with_interval(fit, shape).upper);

    // Pollux's form: "variant" is written, the variant fields of params are not; a document
    // without "variant" reads as Pollux's form.
    const auto pollux = fit_sync_data_parallel(samples);
    nlohmann::json j = nlohmann::json::parse(to_json_text(pollux));
    CHECK(j["variant"] == "pollux");
    CHECK_FALSE(j["params"].contains("delta_n_s"));
    CHECK_FALSE(j["params"].contains("batch_exponent"));
    j.erase("variant");
    CHECK(parse_sync_fit_result(j.dump()).variant == sync_variant::pollux);

    const auto field_of_parse = [](const nlohmann::json& d) {
        return field_of([&] { (void)parse_sync_fit_result(d.dump()); });
    };
    nlohmann::json bad = nlohmann::json::parse(text);
    bad["variant"] = "nodes";
    CHECK(field_of_parse(bad) == "variant");
    bad = nlohmann::json::parse(text);
    bad["variant"] = "pollux";  // 9 x 9 covariance and a node term for a 7-parameter form
    CHECK(field_of_parse(bad) == "covariance");
    bad = nlohmann::json::parse(text);
    bad["params"]["batch_exponent"] = 9.0;
    CHECK(field_of_parse(bad) == "params.batch_exponent");
    bad = nlohmann::json::parse(text);
    bad["params"]["delta"] = 1.0;  // strict: unknown keys are rejected
    CHECK_THROWS_AS(parse_sync_fit_result(bad.dump()), invalid_input);
}
