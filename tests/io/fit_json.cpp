// JSON of the fitted models (io/fit_json.hpp): the synchronous model's parameters and fit, the
// asynchronous (ps-async) fit and its clusters file; round trips (predictions survive), none as
// null (an infinite residual variance, an undefined R^2), strict reading naming every field, and
// the checks of a fit's statistics when it is read back (degrees of freedom at most the samples,
// a finite symmetric covariance).

#include <dnnplan/io/fit_json.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"
#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <limits>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;
using nlohmann::ordered_json;

namespace {

sync_fit_result sample_fit() {
    const std::vector<sync_step_sample> samples{
        {.shape = {.replicas = 1, .nodes = 1, .local_batch = 32.0}, .step_time_s = 0.1},
        {.shape = {.replicas = 1, .nodes = 1, .local_batch = 64.0}, .step_time_s = 0.16},
        {.shape = {.replicas = 1, .nodes = 1, .local_batch = 128.0}, .step_time_s = 0.27},
        {.shape = {.replicas = 1, .nodes = 1, .local_batch = 16.0}, .step_time_s = 0.072}};
    return fit_sync_data_parallel(samples);
}

std::string field_of_parse(const std::string& text) {
    try {
        static_cast<void>(parse_sync_fit_result(text));
    } catch (const invalid_input& e) {
        return e.field();
    } catch (const parse_error& e) {
        return e.where();
    }
    return "(no exception)";
}

// A ps-async fit of two worker types, three free parameters (built by hand: the reader's rules,
// not the fitter, are under test here).
ps_async_fit_result sample_ps_fit() {
    ps_async_fit_result f;
    f.types = {{.name = "k80", .gpus = 1, .worker_batch = 128}, {.name = "v100", .gpus = 2, .worker_batch = 256}};
    f.contention_model = ps_contention_model::spotdnn;
    f.network = {.parameter_bytes = 1e6,
                 .required_bandwidth_bytes_per_s = 1e8,
                 .ps_bandwidth_bytes_per_s = 1e9,
                 .pcie_bandwidth_bytes_per_s = 1e10,
                 .contention = {.alpha1 = 0.1, .beta1 = 0.5}};
    f.compute_s = {0.2, 1.0 / 3.0};
    f.pinned = {{.name = "log required_bandwidth_bytes_per_s", .value = std::log(1e8), .reason = "no sample saturates the PS"}};
    f.free_names = {"log compute_s[k80]", "log compute_s[v100]", "alpha1"};
    f.covariance = Eigen::MatrixXd(3, 3);
    f.covariance << 0.04, 0.01, -0.002, 0.01, 0.09, 0.003, -0.002, 0.003, 0.0025;
    f.residual_variance = 0.01;
    f.degrees_of_freedom = 5;
    f.quality = {.samples = 8, .rmse = 0.05, .median_ape_ratio = 0.02, .p90_ape_ratio = 0.04, .r_squared = 0.97};
    f.status = fit_status::converged;
    f.iterations = 12;
    return f;
}

constexpr const char* clusters_text = R"({"per_worker_batch": 128, "parameter_bytes": 1e6, "samples": [
    {"counts": {"k80": 2, "v100": 1}, "iterations_per_s": 3.5},
    {"counts": {"v100": 4}, "iterations_per_s": 9.25, "parameter_servers": 2},
    {"counts": {"k80": 1}}]})";

}  // namespace

// ---- the synchronous model --------------------------------------------------------------------

TEST_CASE("a sync fit round-trips through JSON text", "[io][json][fit][sync]") {
    const auto fit = sample_fit();
    const std::string text = to_json_text(fit);
    CHECK(text.find("\"model\": \"sync-data-parallel\"") != std::string::npos);
    const auto back = parse_sync_fit_result(text);
    CHECK(back.params == fit.params);
    CHECK(back.variant == fit.variant);
    CHECK(back.pinned == fit.pinned);
    CHECK(back.covariance == fit.covariance);
    CHECK(back.residual_variance == fit.residual_variance);
    CHECK(back.degrees_of_freedom == fit.degrees_of_freedom);
    CHECK(back.quality == fit.quality);
    CHECK(back.status == fit.status);
    CHECK(back.iterations == fit.iterations);
    const sync_shape shape{.replicas = 1, .nodes = 1, .local_batch = 48.0};
    const auto a = predict_step_time_with_interval(fit, shape);
    const auto b = predict_step_time_with_interval(back, shape);
    CHECK(a.value == b.value);
    CHECK(a.lower == b.lower);
    CHECK(a.upper == b.upper);
    check_round_trip(fit);
    check_round_trip(fit.quality);
    check_round_trip(fit.params);
    // The layout's keys, in order.
    const ordered_json j = fit;
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"model", "variant", "params", "pinned", "quality", "covariance", "residual_variance",
                                           "degrees_of_freedom", "status", "iterations"});
    CHECK(j["covariance"].size() == 7);
    CHECK(j["covariance"][0].size() == 7);
}

TEST_CASE("infinite residual variance and an undefined R^2 are written as null", "[io][json][fit][sync]") {
    auto fit = sample_fit();
    fit.residual_variance = std::numeric_limits<double>::infinity();
    fit.quality.r_squared.reset();  // every observation equal: R^2 undefined
    fit.degrees_of_freedom = -1;
    const ordered_json j = fit;
    CHECK(j["residual_variance"].is_null());
    CHECK(j["quality"]["r_squared"].is_null());
    CHECK(j["degrees_of_freedom"] == -1);
    const auto back = parse_sync_fit_result(to_json_text(fit));
    CHECK(std::isinf(back.residual_variance));
    CHECK_FALSE(back.quality.r_squared.has_value());
    CHECK(back.degrees_of_freedom == -1);
    check_round_trip(fit);
    // R^2 may be negative (predictions worse than the mean), and is a number otherwise.
    fit.quality.r_squared = -0.5;
    CHECK(parse_sync_fit_result(to_json_text(fit)).quality.r_squared == -0.5);
    auto bad = ordered_json(fit);
    bad["quality"]["r_squared"] = "nan";
    check_rejected<sync_fit_result>(bad, "quality.r_squared", "a number or null");
    // NaN is never written: a fit holding one is a library bug.
    fit.quality.rmse = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(to_json_text(fit), Catch::Matchers::Contains("quality.rmse = nan"));
}

TEST_CASE("pollux_params JSON is strict and validated; every field is written", "[io][json][fit][sync]") {
    const pollux_params p{.alpha_c_s = 0.1, .beta_c_s = 0.01, .gamma = 2.0};
    const nlohmann::json j = p;
    CHECK(j.get<pollux_params>() == p);
    check_round_trip(p);
    CHECK(j.contains("delta_n_s"));
    CHECK(j.contains("batch_exponent"));
    CHECK(ordered_json(p).dump() ==
          R"({"alpha_c_s":0.1,"beta_c_s":0.01,"alpha_n_s":0.0,"beta_n_s":0.0,"alpha_r_s":0.0,"beta_r_s":0.0,"gamma":2.0,)"
          R"("delta_n_s":0.0,"batch_exponent":1.0})");
    // The optional ones take Pollux's values when absent.
    nlohmann::json old = j;
    old.erase("delta_n_s");
    old.erase("batch_exponent");
    CHECK(old.get<pollux_params>() == p);
    nlohmann::json bad = j;
    bad["gamma"] = 11.0;
    CHECK_THROWS_WITH(bad.get<pollux_params>(), Catch::Contains("gamma = 11"));
    bad = j;
    bad["delta"] = 1.0;
    CHECK_THROWS_AS(bad.get<pollux_params>(), invalid_input);
    bad = j;
    bad.erase("beta_r_s");
    CHECK_THROWS_WITH(bad.get<pollux_params>(), Catch::Contains("beta_r_s = missing"));
    bad = j;
    bad["batch_exponent"] = 5;
    CHECK_THROWS_WITH(bad.get<pollux_params>(), Catch::Contains("batch_exponent = 5"));
    // pollux_params keeps the names alpha_c_s / beta_c_s (they are not an affine_time's).
    check_rejected<pollux_params>(ordered_json{{"fixed_s", 0.1}, {"per_sample_s", 0.01}, {"alpha_n_s", 0}, {"beta_n_s", 0},
                                               {"alpha_r_s", 0}, {"beta_r_s", 0}, {"gamma", 1}},
                                  "fixed_s");
}

TEST_CASE("a malformed sync fit document names the field", "[io][json][fit][sync]") {
    const std::string good = to_json_text(sample_fit());
    nlohmann::json j = nlohmann::json::parse(good);
    auto with = [&](auto&& change) {
        nlohmann::json copy = j;
        change(copy);
        return field_of_parse(copy.dump());
    };
    CHECK(with([](nlohmann::json& d) { d["model"] = "ps-async"; }) == "model");
    CHECK(with([](nlohmann::json& d) { d["variant"] = "pollux2"; }) == "variant");
    CHECK(with([](nlohmann::json& d) { d["params"]["gamma"] = 0.5; }) == "params.gamma");
    CHECK(with([](nlohmann::json& d) { d["pinned"] = {"alpha_x"}; }) == "pinned[0]");
    CHECK(with([](nlohmann::json& d) { d["covariance"].erase(0); }) == "covariance[0]");  // 6 rows of 7: not square
    CHECK(with([](nlohmann::json& d) { d["covariance"] = nlohmann::json::array(); }) == "covariance");  // 0x0, not 7x7
    CHECK(with([](nlohmann::json& d) { d["covariance"][2] = {1.0}; }) == "covariance[2]");
    CHECK(with([](nlohmann::json& d) { d["covariance"][2][3] = "x"; }) == "covariance[2][3]");
    CHECK(with([](nlohmann::json& d) { d["status"] = "done"; }) == "status");
    CHECK(with([](nlohmann::json& d) { d["quality"].erase("rmse"); }) == "quality.rmse");
    CHECK(with([](nlohmann::json& d) { d["residual_variance"] = -1.0; }) == "residual_variance");
    CHECK(with([](nlohmann::json& d) { d["degrees_of_freedom"] = 1.5; }) == "degrees_of_freedom");
    CHECK(with([](nlohmann::json& d) { d.erase("degrees_of_freedom"); }) == "degrees_of_freedom");
    CHECK(with([](nlohmann::json& d) { d["iterations"] = -1; }) == "iterations");
    CHECK(with([](nlohmann::json& d) { d["extra"] = 1; }) == "extra");
    CHECK(field_of_parse("{\"params\": ").rfind("byte ", 0) == 0);
    // The model key is optional (a document without it is this model's).
    nlohmann::json no_model = j;
    no_model.erase("model");
    CHECK(parse_sync_fit_result(no_model.dump()).params == sample_fit().params);
}

TEST_CASE("a fit's statistics are checked when read: degrees of freedom and covariance", "[io][json][fit][sync][errors]") {
    const ordered_json good = sample_fit();
    REQUIRE(good["quality"]["samples"] == 4);
    auto d = good;
    d["degrees_of_freedom"] = 5;  // more than the 4 samples
    auto e = check_rejected<sync_fit_result>(d, "degrees_of_freedom");
    CHECK(e.value() == "5");
    CHECK(e.expected().starts_with("at most quality.samples (4)"));
    d["degrees_of_freedom"] = 4;  // the samples minus no free parameter: allowed
    CHECK(d.get<sync_fit_result>().degrees_of_freedom == 4);
    d["degrees_of_freedom"] = 18446744073709551615ULL;  // 2^64 - 1: not an int64
    e = check_rejected<sync_fit_result>(d, "degrees_of_freedom");
    CHECK(e.expected() == "an integer in [-9223372036854775808, 9223372036854775807]");
    d["degrees_of_freedom"] = 9223372036854775807LL;
    check_rejected<sync_fit_result>(d, "degrees_of_freedom", "at most quality.samples (4)");
    d["degrees_of_freedom"] = std::numeric_limits<std::int64_t>::min();
    CHECK(d.get<sync_fit_result>().degrees_of_freedom == std::numeric_limits<std::int64_t>::min());
    d = good;
    d["quality"]["samples"] = -1;
    check_rejected<sync_fit_result>(d, "quality.samples");

    // Every entry finite, but their sum overflows.
    d = good;
    for (auto& row : d["covariance"])
        for (auto& v : row) v = 1e308;
    e = check_rejected<sync_fit_result>(d, "covariance");
    CHECK(e.expected() == "entries whose absolute sum is finite");
    // Not symmetric: named at the first entry that differs from its mirror.
    d = good;
    d["covariance"][0][1] = d["covariance"][1][0].get<double>() + 1.0;
    e = check_rejected<sync_fit_result>(d, "covariance[0][1]");
    CHECK_THAT(e.expected(), Catch::Matchers::Contains("a symmetric matrix"));
    // A negative variance on the diagonal.
    d = good;
    d["covariance"][0][0] = -1.0;
    e = check_rejected<sync_fit_result>(d, "covariance[0][0]");
    CHECK(e.expected() == "a variance >= 0");
    // An off-diagonal entry larger than the variances allow (|c_ij| <= sqrt(c_ii c_jj)).
    d = good;
    for (auto& row : d["covariance"])
        for (auto& v : row) v = 0.0;
    d["covariance"][0][0] = 1.0;
    d["covariance"][1][1] = 1.0;
    d["covariance"][0][1] = 2.0;
    d["covariance"][1][0] = 2.0;
    check_rejected<sync_fit_result>(d, "covariance[0][1]", "at most sqrt(c_ii c_jj)");
}

// ---- the asynchronous (ps-async) model -----------------------------------------------------------

TEST_CASE("a ps-async fit round-trips; the model key is fixed", "[io][json][fit][ps_async]") {
    const auto fit = sample_ps_fit();
    REQUIRE_NOTHROW(fit.validate());
    check_round_trip(fit);
    const std::string text = to_json_text(fit);
    CHECK(text.find("\"model\": \"ps-async\"") != std::string::npos);
    const auto back = parse_ps_async_fit_result(text);
    CHECK(back.compute_s == fit.compute_s);
    CHECK(back.free_names == fit.free_names);
    CHECK(back.covariance == fit.covariance);
    CHECK(back.quality == fit.quality);
    CHECK(back.pinned.size() == 1);
    CHECK(back.pinned[0].value == fit.pinned[0].value);
    const std::vector<std::int32_t> cluster{2, 1};
    CHECK(predict_ps_async(back, cluster).upper == predict_ps_async(fit, cluster).upper);
    const ordered_json j = fit;
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"model", "contention_model", "types", "network", "compute_s", "pinned", "free_names",
                                           "covariance", "residual_variance", "degrees_of_freedom", "quality", "status",
                                           "iterations"});
    CHECK(j["types"][1] == ordered_json{{"name", "v100"}, {"gpus", 2}, {"worker_batch", 256.0}});

    // The load model, an infinite residual variance and no free parameter.
    auto load = fit;
    load.contention_model = ps_contention_model::load;
    load.residual_variance = std::numeric_limits<double>::infinity();
    load.degrees_of_freedom = 0;
    check_round_trip(load);
    CHECK(ordered_json(load)["contention_model"] == "load");
    CHECK(ordered_json(load)["residual_variance"].is_null());
    // A file without contention_model is the paper's model.
    auto old = ordered_json(fit);
    old.erase("contention_model");
    CHECK(old.get<ps_async_fit_result>().contention_model == ps_contention_model::spotdnn);
}

TEST_CASE("a malformed ps-async fit names the field", "[io][json][fit][ps_async][errors]") {
    const ordered_json good = sample_ps_fit();
    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/model", "sync-data-parallel", "model"},
        {"/contention_model", "none", "contention_model"},
        {"/types", ordered_json::array(), "types"},
        {"/types/0/gpus", 0, "types[0].gpus"},
        {"/types/1/extra", 1, "types[1].extra"},
        {"/network/parameter_bytes", 0, "network.parameter_bytes"},
        {"/compute_s", {0.2}, "compute_s"},
        {"/compute_s/1", -1, "compute_s[1]"},
        {"/pinned/0/value", "x", "pinned[0].value"},
        {"/free_names/0", 3, "free_names[0]"},
        {"/free_names", {"a", "b"}, "covariance"},  // 3x3 for two free parameters
        {"/degrees_of_freedom", 9, "degrees_of_freedom"},  // more than the 8 samples
        {"/degrees_of_freedom", 18446744073709551615ULL, "degrees_of_freedom"},
        {"/covariance/2/0", 0.5, "covariance[0][2]"},  // the mirror of [0][2] differs: named at the first
        {"/covariance/1/1", -0.09, "covariance[1][1]"},
        {"/residual_variance", "inf", "residual_variance"},
        {"/status", "done", "status"},
    };
    for (const auto& c : cases) {
        auto doc = good;
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        check_rejected<ps_async_fit_result>(doc, c.field);
    }
    auto huge = good;
    for (auto& row : huge["covariance"])
        for (auto& v : row) v = 1e308;
    check_rejected<ps_async_fit_result>(huge, "covariance", "entries whose absolute sum is finite");
    CHECK_THROWS_AS(parse_ps_async_fit_result("{\"types\": ["), parse_error);
}

TEST_CASE("a ps-async clusters file is read, and its faults are named", "[io][json][fit][ps_async]") {
    const auto set = parse_ps_cluster_set(clusters_text);
    REQUIRE(set.samples.size() == 3);
    CHECK(set.per_worker_batch == 128);
    CHECK(set.parameter_bytes == 1e6);
    CHECK(set.samples[0].counts.at("k80") == 2);
    CHECK(set.samples[1].parameter_servers == 2);
    CHECK(set.samples[0].parameter_servers == 1);  // absent: the default
    CHECK_FALSE(set.samples[2].iterations_per_s.has_value());
    check_round_trip(set);
    CHECK(ordered_json(set)["samples"][2]["iterations_per_s"].is_null());  // written, as none

    const ordered_json good = ordered_json::parse(clusters_text);
    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/per_worker_batch", 0, "per_worker_batch"},
        {"/parameter_bytes", -1, "parameter_bytes"},
        {"/samples", ordered_json::array(), "samples"},
        {"/samples/0/counts/v100", -1, "samples[0].counts.v100"},
        {"/samples/0/counts/v100", 1.5, "samples[0].counts.v100"},
        {"/samples/0/count", ordered_json::object(), "samples[0].count"},
        {"/samples/1/counts", ordered_json{{"v100", 0}}, "samples[1].counts"},
        {"/samples/1/iterations_per_s", 0, "samples[1].iterations_per_s"},
        {"/samples/1/parameter_servers", 0, "samples[1].parameter_servers"},
        {"/extra", 1, "extra"},
    };
    for (const auto& c : cases) {
        auto doc = good;
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        check_rejected<ps_cluster_set>(doc, c.field);
    }
    auto missing = good;
    missing.erase("samples");
    check_rejected<ps_cluster_set>(missing, "samples", "= missing");
    CHECK_THROWS_AS(parse_ps_cluster_set("{"), parse_error);
    CHECK_THROWS_WITH(parse_ps_cluster_set(R"({"per_worker_batch": 1, "per_worker_batch": 1})"),
                      Catch::Contains("per_worker_batch = given twice"));
}

TEST_CASE("fuzz findings: fit results with impossible statistics are rejected, naming the field", "[io][json][fit][fuzz]") {
    // tests/fixtures/fuzz_findings/README.md: degrees_of_freedom 2^64 - 1 was accepted and gave
    // [0, inf] intervals (5); covariance entries of 1e308 were accepted and gave narrow intervals (13).
    const auto read = [](const char* name) {
        std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/" + name);
        REQUIRE(in);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    };
    const std::string dof = read("ps_async_fit_result-5-dof-wrap.json");
    CHECK(dnnplan_test::field_of([&] { (void)dnnplan::parse_ps_async_fit_result(dof); }) == "degrees_of_freedom");
    const std::string covariance = read("sync_fit_result-13-covariance-overflow.json");
    const auto e = dnnplan_test::error_of([&] { (void)dnnplan::parse_sync_fit_result(covariance); });
    CHECK(e.field() == "covariance");
    CHECK_THAT(e.expected(), Catch::Contains("finite"));
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (fit)", "[io][json][fuzz]") {
    // A seed its reader rejects would seed only the error paths (scripts/fuzz).
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "fit_0_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::sync_fit_result>(text));
    }
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "fit_1_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::ps_async_fit_result>(text));
    }
}
