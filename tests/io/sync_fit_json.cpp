// JSON of the synchronous model's parameters and fit (io/json.hpp): round trip and strict reading.

#include <dnnplan/io/json.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace dnnplan;

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
        (void)parse_sync_fit_result(text);
    } catch (const invalid_input& e) {
        return e.field();
    } catch (const parse_error& e) {
        return e.where();
    }
    return "(no exception)";
}
}  // namespace

TEST_CASE("a sync fit round-trips through JSON text", "[io][json][sync]") {
    const auto fit = sample_fit();
    const std::string text = to_json_text(fit);
    CHECK(text.find("\"model\": \"sync-data-parallel\"") != std::string::npos);
    const auto back = parse_sync_fit_result(text);
    CHECK(back.params == fit.params);
    CHECK(back.pinned == fit.pinned);
    CHECK(back.covariance == fit.covariance);
    CHECK(back.degrees_of_freedom == fit.degrees_of_freedom);
    CHECK(back.quality.median_ape_ratio == fit.quality.median_ape_ratio);
    CHECK(back.status == fit.status);
    const sync_shape shape{.replicas = 1, .nodes = 1, .local_batch = 48.0};
    const auto a = predict_step_time_with_interval(fit, shape);
    const auto b = predict_step_time_with_interval(back, shape);
    CHECK(a.value == b.value);
    CHECK(a.lower == b.lower);
    CHECK(a.upper == b.upper);
}

TEST_CASE("infinite residual variance and NaN R^2 are written as null", "[io][json][sync]") {
    auto fit = sample_fit();
    fit.residual_variance = std::numeric_limits<double>::infinity();
    fit.quality.r_squared = std::numeric_limits<double>::quiet_NaN();
    fit.degrees_of_freedom = -1;
    const auto back = parse_sync_fit_result(to_json_text(fit));
    CHECK(std::isinf(back.residual_variance));
    CHECK(std::isnan(back.quality.r_squared));
    CHECK(back.degrees_of_freedom == -1);
}

TEST_CASE("pollux_params JSON is strict and validated", "[io][json][sync]") {
    const pollux_params p{.alpha_c_s = 0.1, .beta_c_s = 0.01, .gamma = 2.0};
    const nlohmann::json j = p;
    CHECK(j.get<pollux_params>() == p);
    nlohmann::json bad = j;
    bad["gamma"] = 11.0;
    CHECK_THROWS_WITH(bad.get<pollux_params>(), Catch::Contains("gamma = 11"));
    bad = j;
    bad["delta"] = 1.0;
    CHECK_THROWS_AS(bad.get<pollux_params>(), invalid_input);
    bad = j;
    bad.erase("beta_r_s");
    CHECK_THROWS_WITH(bad.get<pollux_params>(), Catch::Contains("beta_r_s = missing"));
}

TEST_CASE("a malformed fit document names the field", "[io][json][sync]") {
    const std::string good = to_json_text(sample_fit());
    nlohmann::json j = nlohmann::json::parse(good);
    auto with = [&](auto&& change) {
        nlohmann::json copy = j;
        change(copy);
        return field_of_parse(copy.dump());
    };
    CHECK(with([](nlohmann::json& d) { d["model"] = "ps-async"; }) == "model");
    CHECK(with([](nlohmann::json& d) { d["params"]["gamma"] = 0.5; }) == "params.gamma");
    CHECK(with([](nlohmann::json& d) { d["pinned"] = {"alpha_x"}; }) == "pinned[0]");
    CHECK(with([](nlohmann::json& d) { d["covariance"].erase(0); }) == "covariance");
    CHECK(with([](nlohmann::json& d) { d["covariance"][2] = {1.0}; }) == "covariance[2]");
    CHECK(with([](nlohmann::json& d) { d["status"] = "done"; }) == "status");
    CHECK(with([](nlohmann::json& d) { d["quality"].erase("rmse"); }) == "quality.rmse");
    CHECK(with([](nlohmann::json& d) { d["residual_variance"] = -1.0; }) == "residual_variance");
    CHECK(field_of_parse("{\"params\": ").rfind("byte ", 0) == 0);
}
