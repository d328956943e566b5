// The synchronous data-parallel fitter (fit/sync_data_parallel.hpp; Pollux, adaptdl/goodput.py
// fit_perf_params): recovery of known parameters from seeded noisy synthetic steps, each pinning
// rule, interval coverage and the errors, in Pollux's form (named: the default chooses the form
// by cross-validation, tested with the variants); then the variants (docs/models/
// sync-data-parallel.md, "Variants"): recovery of a known node term and batch exponent, their
// pinning rules, the cross-validated choice of a form, and a variant fit's JSON.

#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/fit_json.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::error_of;
using dnnplan_test::field_of;

namespace {

/// Pollux's form, named (the default chooses among the forms by cross-validation from 25 samples).
const sync_fit_options pollux_form{.variant = sync_variant::pollux};
/// Pollux's form: the parameters the fits must recover.
const pollux_params pollux_truth{.alpha_c_s = 0.05,
                          .beta_c_s = 0.002,
                          .alpha_n_s = 0.15,
                          .beta_n_s = 0.01,
                          .alpha_r_s = 0.04,
                          .beta_r_s = 0.005,
                          .gamma = 2.0};

/// The same with both variant terms: a node term and a batch exponent below 1.
const pollux_params variant_truth = [] {
    pollux_params p = pollux_truth;
    p.delta_n_s = 0.03;
    p.batch_exponent = 0.7;
    return p;
}();

double normal(std::mt19937_64& g) { return dnnplan_test::standard_normal(g); }

/// A placement as in the Pollux traces: 1-4 nodes of 1-4 GPUs each, local batch 16..128.
sync_shape draw_shape(std::mt19937_64& g) {
    const double batches[] = {16.0, 32.0, 64.0, 128.0};
    const auto nodes = static_cast<std::int64_t>(1 + g() % 4);
    std::int64_t replicas = 0;
    for (std::int64_t k = 0; k < nodes; ++k) replicas += static_cast<std::int64_t>(1 + g() % 4);
    return {.replicas = replicas, .nodes = nodes, .local_batch = batches[g() % 4], .accumulation_steps = 0};
}

std::vector<sync_shape> shapes(std::mt19937_64& g, std::size_t count) {
    std::vector<sync_shape> out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(draw_shape(g));
    return out;
}

/// Steps of `pollux_truth` at the given shapes, with log-normal noise of `sigma`.
std::vector<sync_step_sample> noisy(const std::vector<sync_shape>& where, double sigma, std::mt19937_64& g) {
    std::vector<sync_step_sample> out;
    for (const auto& s : where)
        out.push_back({.shape = s, .step_time_s = pollux_step_time_s(pollux_truth, s) * std::exp(sigma * normal(g))});
    return out;
}

/// `count` steps of `p` at drawn shapes (each shape, then its noise), seeded.
std::vector<sync_step_sample> synthetic(const pollux_params& p, std::size_t count, double sigma, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::vector<sync_step_sample> out;
    for (std::size_t i = 0; i < count; ++i) {
        const sync_shape shape = draw_shape(g);
        out.push_back({.shape = shape, .step_time_s = pollux_step_time_s(p, shape) * std::exp(sigma * normal(g))});
    }
    return out;
}

sync_step_sample at(std::int64_t replicas, std::int64_t nodes, double batch, double time_s) {
    return {.shape = {.replicas = replicas, .nodes = nodes, .local_batch = batch, .accumulation_steps = 0},
            .step_time_s = time_s};
}
}  // namespace

TEST_CASE("the fit recovers known parameters from noisy synthetic steps", "[fit][sync]") {
    std::mt19937_64 g(7);
    const auto samples = noisy(shapes(g, 200), 0.01, g);
    sync_fit_options options;
    options.gamma_weight = 0.0;  // no pull towards gamma = 1 or small betas: recover the truth
    options.retrogression_weight = 0.0;
    options.variant = sync_variant::pollux;
    const auto fit = fit_sync_data_parallel(samples, options);
    CHECK(fit.pinned.empty());
    CHECK(fit.params.alpha_c_s == Approx(pollux_truth.alpha_c_s).epsilon(0.1));
    CHECK(fit.params.beta_c_s == Approx(pollux_truth.beta_c_s).epsilon(0.05));
    CHECK(fit.params.alpha_n_s == Approx(pollux_truth.alpha_n_s).epsilon(0.1));
    CHECK(fit.params.beta_n_s == Approx(pollux_truth.beta_n_s).epsilon(0.2));
    CHECK(fit.params.alpha_r_s == Approx(pollux_truth.alpha_r_s).epsilon(0.2));
    CHECK(fit.params.gamma == Approx(pollux_truth.gamma).epsilon(0.1));
    CHECK(fit.quality.median_ape_ratio < 0.015);  // noise of 1%: median |e| ~ 0.67%
    CHECK(fit.degrees_of_freedom == 200 - 7);
    CHECK(std::sqrt(fit.residual_variance) == Approx(0.01).epsilon(0.2));

    // With Pollux's regularisers the fit stays close (they are small nudges).
    const auto regularised = fit_sync_data_parallel(samples, pollux_form);
    CHECK(regularised.quality.median_ape_ratio < 0.02);
    CHECK(regularised.params.gamma <= fit.params.gamma + 1e-6);
}

TEST_CASE("the fit is deterministic", "[fit][sync]") {
    std::mt19937_64 g(3);
    const auto samples = noisy(shapes(g, 40), 0.02, g);
    const auto a = fit_sync_data_parallel(samples, pollux_form);
    const auto b = fit_sync_data_parallel(samples, pollux_form);
    CHECK(a.params == b.params);
}

TEST_CASE("pinning: one local batch fixes alpha_c at half the mean compute time", "[fit][sync][pinning]") {
    std::mt19937_64 g(11);
    std::vector<sync_shape> where = shapes(g, 30);
    for (auto& s : where) s.local_batch = 32.0;
    auto samples = noisy(where, 0.01, g);
    double compute = 0.0;
    for (auto& s : samples) {
        s.sync_time_s = 0.25 * s.step_time_s;
        compute += 0.75 * s.step_time_s;
    }
    const auto fit = fit_sync_data_parallel(samples, pollux_form);
    CHECK(fit.is_pinned("alpha_c_s"));
    CHECK_FALSE(fit.is_pinned("beta_c_s"));
    CHECK(fit.params.alpha_c_s == Approx(compute / 30.0 / 2.0));
    CHECK(fit.covariance(0, 0) == 0.0);  // pinned: no variance
    // Without sync times, the step time stands for the compute time.
    for (auto& s : samples) s.sync_time_s.reset();
    double mean_step = 0.0;
    for (const auto& s : samples) mean_step += s.step_time_s / 30.0;
    CHECK(fit_sync_data_parallel(samples, pollux_form).params.alpha_c_s == Approx(mean_step / 2.0));
}

TEST_CASE("pinning: no multi-node sample fixes alpha_n and beta_n", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const std::int64_t k : {1, 2, 3, 4})
        for (const double m : {16.0, 64.0})
            samples.push_back(at(k, 1, m, pollux_step_time_s(pollux_truth, {.replicas = k, .nodes = 1, .local_batch = m})));
    const auto fit = fit_sync_data_parallel(samples, pollux_form);
    CHECK(fit.pinned == std::vector<std::string>{"alpha_n_s", "beta_n_s"});
    CHECK(fit.params.alpha_n_s == 1e-8);
    CHECK(fit.params.beta_n_s == 1e-8);
    CHECK(fit.quality.median_ape_ratio < 0.01);
}

TEST_CASE("pinning: no single-node multi-replica sample fixes alpha_r and beta_r", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const std::int64_t n : {2, 3, 4})
        for (const double m : {16.0, 64.0})
            samples.push_back(at(2 * n, n, m, pollux_step_time_s(pollux_truth, {.replicas = 2 * n, .nodes = n, .local_batch = m})));
    samples.push_back(at(1, 1, 32.0, pollux_step_time_s(pollux_truth, {.replicas = 1, .nodes = 1, .local_batch = 32.0})));
    const auto fit = fit_sync_data_parallel(samples, pollux_form);
    CHECK(fit.pinned == std::vector<std::string>{"alpha_r_s", "beta_r_s"});
    CHECK(fit.params.alpha_r_s == 1e-8);
    CHECK(fit.params.beta_r_s == 1e-8);
}

TEST_CASE("pinning: no sample with more than 2 replicas fixes beta_n and beta_r", "[fit][sync][pinning]") {
    std::vector<sync_step_sample> samples;
    for (const double m : {16.0, 32.0, 64.0, 128.0}) {
        samples.push_back(at(1, 1, m, pollux_step_time_s(pollux_truth, {.replicas = 1, .nodes = 1, .local_batch = m})));
        samples.push_back(at(2, 1, m, pollux_step_time_s(pollux_truth, {.replicas = 2, .nodes = 1, .local_batch = m})));
        samples.push_back(at(2, 2, m, pollux_step_time_s(pollux_truth, {.replicas = 2, .nodes = 2, .local_batch = m})));
    }
    const auto fit = fit_sync_data_parallel(samples, pollux_form);
    CHECK(fit.pinned == std::vector<std::string>{"beta_n_s", "beta_r_s"});
    CHECK(fit.params.beta_n_s == 1e-8);
    CHECK(fit.params.beta_r_s == 1e-8);
    CHECK(fit.quality.median_ape_ratio < 0.02);
}

TEST_CASE("pinning: every rule at once on a single sample", "[fit][sync][pinning]") {
    // One K = 1 sample: alpha_c pinned (one batch), all four network parameters pinned; beta_c
    // and gamma free -> 2 samples needed.
    const std::vector<sync_step_sample> one{at(1, 1, 32.0, 0.1)};
    try {
        (void)fit_sync_data_parallel(one, pollux_form);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.value() == "1 samples");
        CHECK(e.expected().find("at least 2 samples") != std::string::npos);
        CHECK(e.expected().find("beta_c_s, gamma") != std::string::npos);
    }
    const std::vector<sync_step_sample> two{at(1, 1, 32.0, 0.1), at(1, 1, 32.0, 0.102)};
    const auto fit = fit_sync_data_parallel(two, pollux_form);
    CHECK(fit.pinned.size() == 5);
    CHECK(fit.params.alpha_c_s == Approx(0.101 / 2.0));
    CHECK(pollux_step_time_s(fit.params, two[0].shape) == Approx(0.101).epsilon(0.02));
}

TEST_CASE("prediction intervals cover new observations at the nominal rate", "[fit][sync][interval]") {
    std::mt19937_64 g(21);
    const double sigma = 0.03;
    const auto train = noisy(shapes(g, 120), sigma, g);
    const auto fit = fit_sync_data_parallel(train, pollux_form);
    const auto where = shapes(g, 1000);
    int inside = 0;
    for (const auto& s : where) {
        const double observed = pollux_step_time_s(pollux_truth, s) * std::exp(sigma * normal(g));
        const auto i = predict_step_time_with_interval(fit, s, 0.9);
        CHECK(i.lower < i.value);
        CHECK(i.value < i.upper);
        if (i.lower <= observed && observed <= i.upper) ++inside;
    }
    const double rate = inside / 1000.0;
    CHECK(rate > 0.86);
    CHECK(rate < 0.94);
}

TEST_CASE("fitter errors name the field", "[fit][sync]") {
    const std::vector<sync_step_sample> none;
    try {
        (void)fit_sync_data_parallel(none, pollux_form);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples");
        CHECK(e.expected().find("at least 1 samples") != std::string::npos);
    }
    std::vector<sync_step_sample> bad{at(1, 1, 32.0, 0.1), at(4, 1, 32.0, -0.1)};
    try {
        (void)fit_sync_data_parallel(bad, pollux_form);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples[1].step_time_s");
    }
    bad[1] = at(1, 2, 32.0, 0.1);
    try {
        (void)fit_sync_data_parallel(bad, pollux_form);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "samples[1].shape.replicas");
    }
    sync_fit_options options;
    options.reweighting_rounds = 0;
    const std::vector<sync_step_sample> ok{at(1, 1, 32.0, 0.1), at(1, 1, 64.0, 0.15), at(1, 1, 128.0, 0.26)};
    try {
        (void)fit_sync_data_parallel(ok, options);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "options.reweighting_rounds");
    }
    const auto fit = fit_sync_data_parallel(ok, pollux_form);
    try {
        (void)predict_step_time_with_interval(fit, {.replicas = 1, .nodes = 1, .local_batch = 32.0}, 1.5);
        FAIL("expected invalid_input");
    } catch (const invalid_input& e) {
        CHECK(e.field() == "confidence");
    }
}

// ---- the variants -----------------------------------------------------------------------------

TEST_CASE("the default fit names the caller's fields before it chooses the form", "[fit][sync][variant]") {
    // With 25 samples or more the default cross-validates on subsets; errors must still name the
    // caller's sample index and options, not a fold's.
    std::mt19937_64 g(3);
    auto samples = noisy(shapes(g, 30), 0.01, g);
    samples[20].step_time_s = -1.0;
    CHECK(field_of([&] { (void)fit_sync_data_parallel(samples); }) == "samples[20].step_time_s");
    samples[20].step_time_s = 0.5;
    sync_fit_options bad;
    bad.reweighting_rounds = 0;
    CHECK(field_of([&] { (void)fit_sync_data_parallel(samples, bad); }) == "options.reweighting_rounds");
}

TEST_CASE("the variants are named and counted", "[fit][sync][variant]") {
    CHECK(parse_enum<sync_variant>("node-term+batch-power", "variant") == sync_variant::node_term_batch_power);
    for (const sync_variant v : all_sync_variants) CHECK(parse_enum<sync_variant>(to_string(v), "variant") == v);
    const auto e = error_of([] { (void)parse_enum<sync_variant>("nodes", "variant"); });
    CHECK(e.field() == "variant");
    CHECK(e.value() == "\"nodes\"");
    CHECK(e.expected() == "one of \"pollux\", \"node-term\", \"batch-power\", \"node-term+batch-power\"");
    CHECK(sync_param_count(sync_variant::pollux) == 7);
    CHECK(sync_param_count(sync_variant::node_term) == 8);
    CHECK(sync_param_count(sync_variant::node_term_batch_power) == 9);
    CHECK(sync_param_names(sync_variant::batch_power).back() == "batch_exponent");
}

TEST_CASE("the variant fit recovers a known node term and batch exponent", "[fit][sync][variant]") {
    const auto samples = synthetic(variant_truth, 300, 0.01, 11);
    sync_fit_options options;
    options.variant = sync_variant::node_term_batch_power;
    const auto fit = fit_sync_data_parallel(samples, options);
    CHECK(fit.variant == sync_variant::node_term_batch_power);
    CHECK(fit.pinned.empty());
    CHECK(fit.params.delta_n_s == Approx(variant_truth.delta_n_s).epsilon(0.15));
    CHECK(fit.params.batch_exponent == Approx(variant_truth.batch_exponent).epsilon(0.05));
    CHECK(fit.params.alpha_n_s == Approx(variant_truth.alpha_n_s).epsilon(0.15));
    CHECK(fit.quality.median_ape_ratio < 0.015);
    CHECK(fit.covariance.rows() == 9);
    CHECK(fit.degrees_of_freedom == 300 - 9);
    // The Pollux form cannot express these steps: its error is several times larger.
    const auto pollux = fit_sync_data_parallel(samples, sync_fit_options{.variant = sync_variant::pollux});
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
    CHECK(band.value == Approx(pollux_step_time_s(variant_truth, shape)).epsilon(0.03));
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
    pollux_params node_only = variant_truth;
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

TEST_CASE("by default the form is chosen by cross-validation, Pollux's below 25 samples", "[fit][sync][variant]") {
    const auto samples = synthetic(variant_truth, 60, 0.01, 5);
    const auto chosen = select_sync_variant(samples).chosen;
    CHECK(chosen != sync_variant::pollux);  // the data has a node term and a batch exponent
    const auto fit = fit_sync_data_parallel(samples);
    CHECK(fit.variant == chosen);
    sync_fit_options explicit_form;
    explicit_form.variant = chosen;
    CHECK(fit.params == fit_sync_data_parallel(samples, explicit_form).params);
    // One sample fewer than the threshold: Pollux's form, whatever the data.
    const std::vector<sync_step_sample> few(samples.begin(), samples.begin() + (sync_fit_options::auto_variant_min_samples - 1));
    CHECK(fit_sync_data_parallel(few).variant == sync_variant::pollux);
    const std::vector<sync_step_sample> enough(samples.begin(), samples.begin() + sync_fit_options::auto_variant_min_samples);
    CHECK(fit_sync_data_parallel(enough).variant == select_sync_variant(enough).chosen);
}

TEST_CASE("a variant fit round-trips through JSON; absent fields mean Pollux's form", "[fit][io][json][sync][variant]") {
    const auto samples = synthetic(variant_truth, 120, 0.01, 3);
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

    // Pollux's form: every field is written, "variant" and the variant fields of params at
    // Pollux's values (0 and 1); a document without them (an older file) reads as Pollux's form.
    const auto pollux = fit_sync_data_parallel(samples, sync_fit_options{.variant = sync_variant::pollux});
    nlohmann::json j = nlohmann::json::parse(to_json_text(pollux));
    CHECK(j["variant"] == "pollux");
    CHECK(j["params"]["delta_n_s"] == 0.0);
    CHECK(j["params"]["batch_exponent"] == 1.0);
    j.erase("variant");
    j["params"].erase("delta_n_s");
    j["params"].erase("batch_exponent");
    const auto old = parse_sync_fit_result(j.dump());
    CHECK(old.variant == sync_variant::pollux);
    CHECK(old.params == pollux.params);

    const auto field_of_parse = [](const nlohmann::json& d) {
        return field_of([&] { (void)parse_sync_fit_result(d.dump()); });
    };
    nlohmann::json bad = nlohmann::json::parse(text);
    bad["variant"] = "nodes";
    CHECK(field_of_parse(bad) == "variant");
    CHECK_THROWS_WITH(parse_sync_fit_result(bad.dump()), Catch::Contains("one of \"pollux\", \"node-term\""));
    bad = nlohmann::json::parse(text);
    bad["variant"] = "pollux";  // a node term, a batch power and a 9 x 9 covariance for a 7-parameter form
    CHECK(field_of_parse(bad) == "params.delta_n_s");  // the parameters are checked first
    bad["params"]["delta_n_s"] = 0.0;
    bad["params"]["batch_exponent"] = 1.0;
    CHECK(field_of_parse(bad) == "covariance");
    bad = nlohmann::json::parse(text);
    bad["params"]["batch_exponent"] = 9.0;
    CHECK(field_of_parse(bad) == "params.batch_exponent");
    bad = nlohmann::json::parse(text);
    bad["params"]["delta"] = 1.0;  // strict: unknown keys are rejected
    CHECK_THROWS_AS(parse_sync_fit_result(bad.dump()), invalid_input);
}
