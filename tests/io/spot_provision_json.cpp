// JSON of the spot-provisioning planner (io/spot_provision_json.hpp): the problem-file format, every
// rejection naming its field exactly, deprecated option spellings, round trips of every input and
// result type (through nlohmann::json, nlohmann::ordered_json and text), the result layout, and a
// property test that no malformed document lets anything but a dnnplan::error escape; then the
// search and model layers' types (cluster spaces, goals, search options and outcomes, the PS model's
// inputs).

#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include <catch2/catch.hpp>

#include "../support/core_equality.hpp"
#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using dnnplan_test::same;
using nlohmann::ordered_json;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;
using dnnplan_test::rejection_of;

// The problem file of the format description.
constexpr std::string_view example_text = R"({ "catalog": {"instances": [{"name": "p3.2xlarge", "gpus": 1, "quota": 10,
                              "spot_usd_per_h": 1.25, "on_demand_usd_per_h": 3.06}]},
  "profile": {"parameter_bytes": 11.5e6, "required_bandwidth_bytes_per_s": 142e6,
              "ps_bandwidth_bytes_per_s": 1.2e9, "pcie_bandwidth_bytes_per_s": 1e10,
              "per_instance": {"p3.2xlarge": {"per_gpu_batch": 1024, "samples_per_s": 1885}},
              "contention": {"alpha1": 0.8, "beta1": -1.92},
              "loss": {"gamma1": 876.5, "gamma2": -0.2, "gamma3": 2507.6, "gamma5": 0.5}},
  "goals": {"target_loss": 0.8, "deadline_s": 2400},
  "existing": {"p3.2xlarge": 1},
  "options": {"pricing": "spot"} })";

ordered_json example_document() { return ordered_json::parse(example_text); }

// ---- field-by-field equality (the input types have no operator==, on purpose) ---------------

bool same(const dnnplan::instance_profile& a, const dnnplan::instance_profile& b) {
    return a.per_gpu_batch == b.per_gpu_batch && a.samples_per_s == b.samples_per_s;
}

bool same(const dnnplan::contention_coefficients& a, const dnnplan::contention_coefficients& b) {
    return a.alpha1 == b.alpha1 && a.beta1 == b.beta1;
}

bool same(const dnnplan::loss_coefficients& a, const dnnplan::loss_coefficients& b) {
    return std::tie(a.gamma1, a.gamma2, a.gamma3, a.gamma4, a.gamma5) == std::tie(b.gamma1, b.gamma2, b.gamma3, b.gamma4, b.gamma5);
}

bool same(const dnnplan::workload_profile& a, const dnnplan::workload_profile& b) {
    if (a.per_instance.size() != b.per_instance.size()) return false;
    for (auto i = a.per_instance.begin(), k = b.per_instance.begin(); i != a.per_instance.end(); ++i, ++k)
        if (i->first != k->first || !same(i->second, k->second)) return false;
    return std::tie(a.parameter_bytes, a.required_bandwidth_bytes_per_s, a.ps_bandwidth_bytes_per_s,
                    a.pcie_bandwidth_bytes_per_s) == std::tie(b.parameter_bytes, b.required_bandwidth_bytes_per_s,
                                                              b.ps_bandwidth_bytes_per_s, b.pcie_bandwidth_bytes_per_s) &&
           same(a.contention, b.contention) && same(a.loss, b.loss);
}

bool same(const dnnplan::training_goals& a, const dnnplan::training_goals& b) {
    return a.target_loss == b.target_loss && a.deadline_s == b.deadline_s;
}

bool same(const dnnplan::spot_options& a, const dnnplan::spot_options& b) {
    return std::tie(a.pricing, a.billing_increment_s, a.objective, a.method, a.cap_at_n_upper, a.sliding_window.paper_bounds,
                    a.sliding_window.wrap_around, a.relative_gap) ==
               std::tie(b.pricing, b.billing_increment_s, b.objective, b.method, b.cap_at_n_upper,
                        b.sliding_window.paper_bounds, b.sliding_window.wrap_around, b.relative_gap) &&
           same(a.budget, b.budget);
}

bool same(const dnnplan::spot_problem& a, const dnnplan::spot_problem& b) {
    return same(a.catalog, b.catalog) && same(a.profile, b.profile) && same(a.goals, b.goals) && a.existing == b.existing;
}

bool same(const dnnplan::spot_request& a, const dnnplan::spot_request& b) {
    return same(a.problem, b.problem) && same(a.options, b.options);
}

bool same(const dnnplan::spot_result& a, const dnnplan::spot_result& b) {
    return a.status == b.status && a.reason == b.reason && a.plan == b.plan && a.objective_value == b.objective_value &&
           a.bound == b.bound && a.counters == b.counters && a.details == b.details;
}

// from_json(to_json(x)) through nlohmann::json, nlohmann::ordered_json and their text, compared
// field by field (check_round_trip compares the documents).
template <class T>
void check_same_round_trip(const T& value) {
    const nlohmann::json sorted = value;
    CHECK(same(sorted.get<T>(), value));
    CHECK(same(nlohmann::json::parse(sorted.dump()).get<T>(), value));
    const ordered_json ordered = value;
    CHECK(same(ordered.get<T>(), value));
    CHECK(same(ordered_json::parse(ordered.dump(2)).get<T>(), value));
    CHECK(same(dnnplan::parse_json<T>(dnnplan::to_json_text(value)), value));
    check_round_trip(value);
}

// ---- rejections ------------------------------------------------------------------------------

std::optional<dnnplan::invalid_input> rejection_of_text(std::string_view text) {
    try {
        static_cast<void>(dnnplan::parse_spot_request(text));
    } catch (const dnnplan::invalid_input& e) {
        return e;
    }
    return std::nullopt;
}

// Parses `document` (as text, and as a document) and expects invalid_input naming exactly `field`.
dnnplan::invalid_input expect_rejected(const ordered_json& document, const std::string& field) {
    return check_rejected<dnnplan::spot_request>(document, field);
}

// A second instance type whose name sorts before the first: catalog order is not alphabetical.
dnnplan::spot_request rich_request() {
    auto request = dnnplan::parse_spot_request(example_text);
    auto& p = request.problem;
    p.catalog.instances[0].gpu_memory_bytes = 16e9;
    p.catalog.instances.push_back({.name = "g4dn.4xlarge",
                                   .gpus = 2,
                                   .quota = 5,
                                   .spot_usd_per_h = 0.3612,
                                   .on_demand_usd_per_h = 1.204,
                                   .gpu_memory_bytes = std::nullopt});
    p.catalog.parameter_server_usd_per_h = 0.1 + 0.2;  // not a short decimal: the round trip is exact
    p.profile.per_instance["g4dn.4xlarge"] = {.per_gpu_batch = 512, .samples_per_s = 750.125};
    p.profile.loss.gamma4 = 1.0 / 3.0;
    p.existing["g4dn.4xlarge"] = 5;
    request.options = {.pricing = dnnplan::price_kind::on_demand,
                       .billing_increment_s = 60,
                       .objective = dnnplan::objective_kind::min_time,
                       .method = dnnplan::search_method::sliding_window,
                       .cap_at_n_upper = true,
                       .sliding_window = {.paper_bounds = false, .wrap_around = true},
                       .budget = {.max_nodes = std::numeric_limits<std::int64_t>::max(), .max_evaluations = 0, .max_time_s = 2.5},
                       .relative_gap = 1e-3};
    return request;
}

dnnplan::cluster_prediction sample_prediction() {
    return {.workers = 10,
            .iterations_per_s = 1.0 / 7.0,
            .samples_per_s = 5123.25,
            .expected_iteration_time_s = 7.0,
            .wa_batch = 911.5,
            .convergence_coefficient = 0.1,
            .normalized_iterations = 4321.0,
            .training_time_s = 2345.678,
            .usd_per_h = 12.34,
            .billed_s = 2346,
            .cost_usd = 8.0416};
}

dnnplan::spot_result result_with_plan() {
    dnnplan::spot_result r;
    r.status = dnnplan::solve_status::optimal;
    r.plan = dnnplan::spot_plan{
        .counts = {{.name = "p3.2xlarge", .count = 3}, {.name = "g4dn.4xlarge", .count = 0}, {.name = "a1", .count = 7}},
        .prediction = sample_prediction()};
    r.objective_value = r.plan->prediction.cost_usd;
    r.bound = r.plan->prediction.cost_usd;
    r.counters = {.nodes = 123, .evaluations = 45, .pruned_by_bound = 6, .pruned_by_constraint = 7, .elapsed_s = 0.5};
    return r;
}

dnnplan::spot_result result_without_plan() {
    dnnplan::spot_result r;
    r.status = dnnplan::solve_status::infeasible;
    r.reason = "no plan meets the deadline; the fastest plan reaches target_loss 0.8 in 3000 s";
    r.details.fastest_training_time_s = 3000.5;
    r.counters = {.nodes = 9, .evaluations = 0, .pruned_by_bound = 0, .pruned_by_constraint = 9, .elapsed_s = 0};
    return r;
}

}  // namespace

// ---- the problem file ---------------------------------------------------------------------------

TEST_CASE("the documented problem file is read with the right values", "[io][json][spot]") {
    const auto request = dnnplan::parse_spot_request(example_text);
    const auto& p = request.problem;
    REQUIRE(p.catalog.instances.size() == 1);
    const auto& t = p.catalog.instances[0];
    CHECK(t.name == "p3.2xlarge");
    CHECK(t.gpus == 1);
    CHECK(t.quota == 10);
    CHECK(t.spot_usd_per_h == 1.25);
    CHECK(t.on_demand_usd_per_h == 3.06);
    CHECK_FALSE(t.gpu_memory_bytes.has_value());
    CHECK(p.catalog.parameter_server_usd_per_h == 0.0);
    CHECK(p.profile.parameter_bytes == 11.5e6);
    CHECK(p.profile.required_bandwidth_bytes_per_s == 142e6);
    CHECK(p.profile.ps_bandwidth_bytes_per_s == 1.2e9);
    CHECK(p.profile.pcie_bandwidth_bytes_per_s == 1e10);
    REQUIRE(p.profile.per_instance.size() == 1);
    CHECK(p.profile.per_instance.at("p3.2xlarge").per_gpu_batch == 1024);
    CHECK(p.profile.per_instance.at("p3.2xlarge").samples_per_s == 1885.0);
    CHECK(p.profile.contention.alpha1 == 0.8);
    CHECK(p.profile.contention.beta1 == -1.92);
    CHECK(p.profile.loss.gamma1 == 876.5);
    CHECK(p.profile.loss.gamma2 == -0.2);
    CHECK(p.profile.loss.gamma3 == 2507.6);
    CHECK_FALSE(p.profile.loss.gamma4.has_value());
    CHECK(p.profile.loss.gamma5 == 0.5);
    CHECK(p.goals.target_loss == 0.8);
    CHECK(p.goals.deadline_s == 2400.0);
    CHECK(p.existing == std::map<std::string, std::int32_t, std::less<>>{{"p3.2xlarge", 1}});
    CHECK(request.options.pricing == dnnplan::price_kind::spot);
    dnnplan::spot_options defaults;
    defaults.pricing = dnnplan::price_kind::spot;
    CHECK(same(request.options, defaults));

    std::istringstream stream{std::string(example_text)};
    CHECK(same(dnnplan::parse_spot_request(stream), request));
    CHECK(same(dnnplan::parse_json<dnnplan::spot_request>(example_text), request));
}

TEST_CASE("optional members take their defaults when absent", "[io][json][spot]") {
    auto doc = example_document();
    doc.erase("existing");
    doc.erase("options");
    const auto request = dnnplan::parse_spot_request(doc.dump());
    CHECK(request.problem.existing.empty());
    CHECK(same(request.options, dnnplan::spot_options{}));

    // Every option, and optional numbers given as null (= absent).
    doc["options"] = {{"pricing", "on_demand"},
                      {"billing_increment_s", 3600},
                      {"objective", "min_time"},
                      {"method", "exhaustive"},
                      {"cap_at_n_upper", true},
                      {"sliding_window", {{"paper_bounds", false}, {"wrap_around", true}}},
                      {"budget", {{"max_nodes", 1000}, {"max_evaluations", 2000}, {"max_time_s", 0.5}}},
                      {"relative_gap", 0.01}};
    doc["profile"]["loss"]["gamma4"] = nullptr;
    doc["catalog"]["instances"][0]["gpu_memory_bytes"] = nullptr;
    doc["catalog"]["parameter_server_usd_per_h"] = 0.25;
    const auto full = dnnplan::parse_spot_request(doc.dump());
    CHECK(full.options.pricing == dnnplan::price_kind::on_demand);
    CHECK(full.options.billing_increment_s == 3600.0);
    CHECK(full.options.objective == dnnplan::objective_kind::min_time);
    CHECK(full.options.method == dnnplan::search_method::exhaustive);
    CHECK(full.options.cap_at_n_upper);
    CHECK_FALSE(full.options.sliding_window.paper_bounds);
    CHECK(full.options.sliding_window.wrap_around);
    CHECK(full.options.budget.max_nodes == 1000);
    CHECK(full.options.budget.max_evaluations == 2000);
    CHECK(full.options.budget.max_time_s == 0.5);
    CHECK(full.options.relative_gap == 0.01);
    CHECK_FALSE(full.problem.profile.loss.gamma4.has_value());
    CHECK_FALSE(full.problem.catalog.instances[0].gpu_memory_bytes.has_value());
    CHECK(full.problem.catalog.parameter_server_usd_per_h == 0.25);

    // Nested option objects may be partial: their other keys keep the defaults.
    doc["options"] = {{"budget", {{"max_time_s", 2}}}, {"sliding_window", {{"wrap_around", true}}}};
    const auto partial = dnnplan::parse_spot_request(doc.dump());
    CHECK(partial.options.budget.max_time_s == 2.0);
    CHECK(partial.options.budget.max_nodes == dnnplan::search_budget{}.max_nodes);
    CHECK(partial.options.sliding_window.paper_bounds);
    CHECK(partial.options.sliding_window.wrap_around);

    // Integral fields accept an integral float (10.0) and the extremes of their type.
    doc["catalog"]["instances"][0]["quota"] = 10.0;
    CHECK(dnnplan::parse_spot_request(doc.dump()).problem.catalog.instances[0].quota == 10);
    doc["catalog"]["instances"][0]["quota"] = 2147483647;
    CHECK(dnnplan::parse_spot_request(doc.dump()).problem.catalog.instances[0].quota == 2147483647);
    doc["options"]["budget"]["max_nodes"] = std::numeric_limits<std::int64_t>::max();
    CHECK(dnnplan::parse_spot_request(doc.dump()).options.budget.max_nodes == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("deprecated option spellings of 0.1 are still read", "[io][json][spot][deprecated]") {
    auto doc = example_document();
    doc["options"] = {{"objective", "minimize_time"},
                      {"method", "sliding_window"},
                      {"node_budget", 1000},
                      {"time_budget_s", 0.5},
                      {"sliding_window_paper_bounds", false},
                      {"sliding_window_wrap_around", true}};
    const auto old = dnnplan::parse_spot_request(doc.dump());
    CHECK(old.options.objective == dnnplan::objective_kind::min_time);
    CHECK(old.options.budget.max_nodes == 1000);
    CHECK(old.options.budget.max_time_s == 0.5);
    CHECK(old.options.budget.max_evaluations == dnnplan::search_budget{}.max_evaluations);  // not given: the default
    CHECK_FALSE(old.options.sliding_window.paper_bounds);
    CHECK(old.options.sliding_window.wrap_around);
    doc["options"]["objective"] = "minimize_cost";
    CHECK(dnnplan::parse_spot_request(doc.dump()).options.objective == dnnplan::objective_kind::min_cost);
    CHECK(doc.get<dnnplan::spot_request>().options.objective == dnnplan::objective_kind::min_cost);

    // Each alone, through spot_options on its own too.
    CHECK(ordered_json{{"node_budget", 7}}.get<dnnplan::spot_options>().budget.max_nodes == 7);
    CHECK(ordered_json{{"time_budget_s", 1.5}}.get<dnnplan::spot_options>().budget.max_time_s == 1.5);
    CHECK_FALSE(ordered_json{{"sliding_window_paper_bounds", false}}.get<dnnplan::spot_options>().sliding_window.paper_bounds);
    CHECK(ordered_json{{"sliding_window_wrap_around", true}}.get<dnnplan::spot_options>().sliding_window.wrap_around);
    CHECK(ordered_json{{"objective", "minimize_cost"}}.get<dnnplan::spot_options>().objective == dnnplan::objective_kind::min_cost);

    // Written with the current spellings only: the new layout reads back the same.
    const ordered_json written = old.options;
    CHECK(written["objective"] == "min_time");
    CHECK(written["budget"]["max_nodes"] == 1000);
    CHECK(written["budget"]["max_time_s"] == 0.5);
    CHECK(written["sliding_window"] == ordered_json{{"paper_bounds", false}, {"wrap_around", true}});
    for (const char* key : {"node_budget", "time_budget_s", "sliding_window_paper_bounds", "sliding_window_wrap_around"})
        CHECK_FALSE(written.contains(key));
    CHECK(same(written.get<dnnplan::spot_options>(), old.options));

    // Deprecated values are checked as the current ones.
    auto bad = example_document();
    bad["options"] = {{"node_budget", -1}};
    expect_rejected(bad, "options.node_budget");
    bad["options"] = {{"sliding_window_wrap_around", 1}};
    CHECK(expect_rejected(bad, "options.sliding_window_wrap_around").expected() == "true or false");
    bad["options"] = {{"objective", "minimise_cost"}};
    CHECK(expect_rejected(bad, "options.objective").expected() ==
          R"(one of "min_cost", "min_time", "max_throughput", "max_samples_per_usd")");
}

// A value under a deprecated option key that breaks a semantic rule is named as written in the
// document, with the field it is read as.
TEST_CASE("a semantic fault under a deprecated option key names the key as written", "[io][json][spot][deprecated]") {
    auto doc = example_document();
    doc["options"] = {{"time_budget_s", -1}};
    CHECK(expect_rejected(doc, "options.time_budget_s").expected() ==
          "a finite number >= 0 (time_budget_s is read as budget.max_time_s)");
}

TEST_CASE("a deprecated option key given with its replacement is rejected naming the deprecated key",
          "[io][json][spot][deprecated]") {
    struct both {
        ordered_json options;
        std::string field;
        std::string replacement;
    };
    const std::vector<both> cases = {
        {{{"budget", {{"max_nodes", 5}}}, {"node_budget", 5}}, "options.node_budget", "options.budget"},
        {{{"time_budget_s", 1}, {"budget", ordered_json::object()}}, "options.time_budget_s", "options.budget"},
        {{{"sliding_window", {{"paper_bounds", false}}}, {"sliding_window_paper_bounds", false}},
         "options.sliding_window_paper_bounds", "options.sliding_window"},
        {{{"sliding_window_wrap_around", true}, {"sliding_window", ordered_json::object()}},
         "options.sliding_window_wrap_around", "options.sliding_window"},
    };
    for (const auto& c : cases) {
        auto doc = example_document();
        doc["options"] = c.options;
        const auto e = expect_rejected(doc, c.field);
        CHECK(e.expected() == "no value here when " + c.replacement + " is given (" + c.field.substr(8) +
                                  " is its deprecated spelling)");
        // The same from spot_options read on its own: the fields are named from its root.
        check_rejected<dnnplan::spot_options>(c.options, c.field.substr(8));
    }
    // Two deprecated keys of one replacement together are fine (0.1 had both).
    auto doc = example_document();
    doc["options"] = {{"node_budget", 5}, {"time_budget_s", 1}};
    CHECK(dnnplan::parse_spot_request(doc.dump()).options.budget.max_nodes == 5);
    // Deprecated keys are not listed among the allowed ones.
    doc["options"] = {{"verbose", true}};
    const auto e = expect_rejected(doc, "options.verbose");
    CHECK(e.expected() ==
          "one of the keys pricing, billing_increment_s, objective, method, cap_at_n_upper, sliding_window, budget, relative_gap");
}

TEST_CASE("unknown keys are rejected at every level of a request, naming the key and the allowed keys", "[io][json][spot]") {
    auto top = example_document();
    top["colour"] = "blue";
    const auto e = expect_rejected(top, "colour");
    CHECK(e.value() == "\"blue\"");
    CHECK(e.expected() == "one of the keys catalog, profile, goals, existing, options");

    auto nested = example_document();
    nested["catalog"]["instances"][0]["colour"] = {{"r", 1}};
    const auto n = expect_rejected(nested, "catalog.instances[0].colour");
    CHECK(n.value() == "{...}");
    CHECK(n.expected().find("quota") != std::string::npos);
    CHECK(n.expected().find("gpu_memory_bytes") != std::string::npos);

    auto in_catalog = example_document();
    in_catalog["catalog"]["currency"] = "EUR";
    expect_rejected(in_catalog, "catalog.currency");
    auto in_measurement = example_document();
    in_measurement["profile"]["per_instance"]["p3.2xlarge"]["batch"] = 1;
    expect_rejected(in_measurement, "profile.per_instance.p3.2xlarge.batch");
    auto in_loss = example_document();
    in_loss["profile"]["loss"]["gamma6"] = 1;
    expect_rejected(in_loss, "profile.loss.gamma6");
    auto in_contention = example_document();
    in_contention["profile"]["contention"]["gamma"] = 1;
    expect_rejected(in_contention, "profile.contention.gamma");
    auto in_options = example_document();
    in_options["options"]["verbose"] = true;
    expect_rejected(in_options, "options.verbose");
    auto in_budget = example_document();
    in_budget["options"]["budget"] = {{"max_nodes", 5}, {"nodes", 5}};
    expect_rejected(in_budget, "options.budget.nodes");
    auto in_window = example_document();
    in_window["options"]["sliding_window"] = {{"n_upper", 5}};  // sliding_window_options', not the planner's
    expect_rejected(in_window, "options.sliding_window.n_upper");
    auto in_goals = example_document();
    in_goals["goals"]["budget_usd"] = 10;
    expect_rejected(in_goals, "goals.budget_usd");
}

TEST_CASE("missing required keys of a request are named, with the value \"missing\"", "[io][json][spot]") {
    auto doc = example_document();
    doc["profile"]["loss"].erase("gamma3");
    const auto e = expect_rejected(doc, "profile.loss.gamma3");
    CHECK(e.value() == "missing");
    CHECK(e.expected() == "a number");

    const std::vector<std::pair<std::string, std::string>> required = {
        {"/catalog", "catalog"},
        {"/profile", "profile"},
        {"/goals", "goals"},
        {"/catalog/instances", "catalog.instances"},
        {"/catalog/instances/0/name", "catalog.instances[0].name"},
        {"/catalog/instances/0/gpus", "catalog.instances[0].gpus"},
        {"/catalog/instances/0/quota", "catalog.instances[0].quota"},
        {"/catalog/instances/0/spot_usd_per_h", "catalog.instances[0].spot_usd_per_h"},
        {"/catalog/instances/0/on_demand_usd_per_h", "catalog.instances[0].on_demand_usd_per_h"},
        {"/profile/parameter_bytes", "profile.parameter_bytes"},
        {"/profile/required_bandwidth_bytes_per_s", "profile.required_bandwidth_bytes_per_s"},
        {"/profile/ps_bandwidth_bytes_per_s", "profile.ps_bandwidth_bytes_per_s"},
        {"/profile/pcie_bandwidth_bytes_per_s", "profile.pcie_bandwidth_bytes_per_s"},
        {"/profile/per_instance", "profile.per_instance"},
        {"/profile/per_instance/p3.2xlarge/per_gpu_batch", "profile.per_instance.p3.2xlarge.per_gpu_batch"},
        {"/profile/per_instance/p3.2xlarge/samples_per_s", "profile.per_instance.p3.2xlarge.samples_per_s"},
        {"/profile/contention", "profile.contention"},
        {"/profile/contention/alpha1", "profile.contention.alpha1"},
        {"/profile/contention/beta1", "profile.contention.beta1"},
        {"/profile/loss", "profile.loss"},
        {"/profile/loss/gamma1", "profile.loss.gamma1"},
        {"/profile/loss/gamma2", "profile.loss.gamma2"},
        {"/profile/loss/gamma5", "profile.loss.gamma5"},
        {"/goals/target_loss", "goals.target_loss"},
        {"/goals/deadline_s", "goals.deadline_s"},
    };
    for (const auto& [pointer, field] : required) {
        const ordered_json::json_pointer at(pointer);
        auto d = example_document();
        d[at.parent_pointer()].erase(at.back());
        CHECK(expect_rejected(d, field).value() == "missing");
    }
}

TEST_CASE("wrong JSON types in a request name the field and the expected type", "[io][json][spot]") {
    struct wrong {
        std::string pointer;
        ordered_json value;
        std::string field;
        std::string expected;
    };
    const std::vector<wrong> cases = {
        {"/catalog", ordered_json::array(), "catalog", "an object"},
        {"/catalog/instances", ordered_json::object(), "catalog.instances", "an array"},
        {"/catalog/instances/0", "p3.2xlarge", "catalog.instances[0]", "an object"},
        {"/catalog/instances/0/name", 3, "catalog.instances[0].name", "a string"},
        {"/catalog/instances/0/spot_usd_per_h", "1.25", "catalog.instances[0].spot_usd_per_h", "a number"},
        {"/catalog/instances/0/gpu_memory_bytes", true, "catalog.instances[0].gpu_memory_bytes", "a number or null"},
        {"/profile/per_instance", ordered_json::array(), "profile.per_instance", "an object"},
        {"/profile/loss/gamma4", "0", "profile.loss.gamma4", "a number or null"},
        {"/goals/deadline_s", nullptr, "goals.deadline_s", "a number"},
        {"/existing", ordered_json::array({1}), "existing", "an object"},
        {"/existing/p3.2xlarge", "1", "existing.p3.2xlarge", "an integer in [0, 2147483647]"},
        {"/options", nullptr, "options", "an object"},
        {"/options/cap_at_n_upper", 1, "options.cap_at_n_upper", "true or false"},
        {"/options/pricing", 0, "options.pricing", R"(one of "spot", "on_demand")"},
        {"/options/budget", 5, "options.budget", "an object"},
        {"/options/sliding_window", true, "options.sliding_window", "an object"},
    };
    for (const auto& c : cases) {
        auto doc = example_document();
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        CHECK(expect_rejected(doc, c.field).expected() == c.expected);
    }
    // A document that is not an object at all.
    const auto root = rejection_of_text("[1, 2]");
    REQUIRE(root.has_value());
    CHECK(root->field() == "(root)");
    CHECK(root->expected() == "an object");
}

TEST_CASE("integral fields of a request take non-negative integers that fit their type", "[io][json][spot]") {
    const std::string quota = "catalog.instances[0].quota";
    for (const ordered_json& bad : {ordered_json(2.5), ordered_json(-1), ordered_json(1e20), ordered_json(2147483648LL),
                                    ordered_json(-0.5), ordered_json("10")}) {
        auto doc = example_document();
        doc["catalog"]["instances"][0]["quota"] = bad;
        const auto e = expect_rejected(doc, quota);
        CHECK(e.expected() == "an integer in [0, 2147483647]");
        CHECK(e.value() == bad.dump());
    }
    for (const ordered_json& bad : {ordered_json(1024.5), ordered_json(-1024)}) {
        auto doc = example_document();
        doc["profile"]["per_instance"]["p3.2xlarge"]["per_gpu_batch"] = bad;
        expect_rejected(doc, "profile.per_instance.p3.2xlarge.per_gpu_batch");
    }
    for (const ordered_json& bad : {ordered_json(-1), ordered_json(1.5), ordered_json(4294967296LL)}) {
        auto doc = example_document();
        doc["catalog"]["instances"][0]["gpus"] = bad;
        expect_rejected(doc, "catalog.instances[0].gpus");
        doc = example_document();
        doc["existing"]["p3.2xlarge"] = bad;
        expect_rejected(doc, "existing.p3.2xlarge");
    }
    for (const ordered_json& bad :
         {ordered_json(9223372036854775808ULL), ordered_json(1e19), ordered_json(-1), ordered_json(0.5)}) {
        auto doc = example_document();
        doc["options"]["budget"] = {{"max_nodes", bad}};
        CHECK(expect_rejected(doc, "options.budget.max_nodes").expected() == "an integer in [0, 9223372036854775807]");
        doc["options"] = {{"node_budget", bad}};  // the deprecated spelling: the same rule
        CHECK(expect_rejected(doc, "options.node_budget").expected() == "an integer in [0, 9223372036854775807]");
    }
    // From text too, where 1e20 and 2.5 are floats and -1 a signed integer.
    for (const std::string_view bad : {"2.5", "-1", "1e20", "18446744073709551616", "1E2.0"}) {
        std::string text(example_text);
        text.replace(text.find("\"quota\": 10"), std::string_view("\"quota\": 10").size(), "\"quota\": " + std::string(bad));
        INFO(bad);
        try {
            static_cast<void>(dnnplan::parse_spot_request(text));
            FAIL("accepted");
        } catch (const dnnplan::invalid_input& e) {
            CHECK(e.field() == quota);
        } catch (const dnnplan::parse_error&) {
            CHECK(bad == "1E2.0");  // not a JSON number
        }
    }
}

TEST_CASE("numbers of a request must be finite numbers: strings such as \"nan\" are not numbers", "[io][json][spot]") {
    for (const char* text : {"nan", "NaN", "inf", "Infinity", "1e3"}) {
        auto doc = example_document();
        doc["profile"]["parameter_bytes"] = text;
        CHECK(expect_rejected(doc, "profile.parameter_bytes").expected() == "a number");
    }
    // A nlohmann value built in code can hold NaN and infinity; the reader rejects them too.
    nlohmann::json doc = nlohmann::json::parse(example_text);
    doc["goals"]["deadline_s"] = std::numeric_limits<double>::quiet_NaN();
    auto e = rejection_of<dnnplan::spot_request>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "goals.deadline_s");
    CHECK(e->value() == "nan");
    CHECK(e->expected() == "a finite number");
    doc["goals"]["deadline_s"] = 2400;
    doc["profile"]["contention"]["beta1"] = -std::numeric_limits<double>::infinity();
    e = rejection_of<dnnplan::spot_request>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "profile.contention.beta1");
    doc["profile"]["contention"]["beta1"] = -1.92;
    doc["catalog"]["instances"][0]["quota"] = std::numeric_limits<double>::quiet_NaN();
    e = rejection_of<dnnplan::spot_request>(doc);
    REQUIRE(e.has_value());
    CHECK(e->field() == "catalog.instances[0].quota");
    CHECK(e->value() == "nan");
    // A number too large for a double is malformed text.
    std::string text(example_text);
    text.replace(text.find("2400"), 4, "1e400");
    CHECK_THROWS_AS(dnnplan::parse_spot_request(text), dnnplan::parse_error);
}

TEST_CASE("a request's -0 reads as zero: rejected where > 0 is needed, kept with its sign elsewhere", "[io][json][spot]") {
    // Hand-made cases: "-0", "-0.0" and "-0e0" are all zero.
    for (const std::string zero : {"-0", "-0.0", "-0e0"}) {
        INFO(zero);
        const auto with = [&](const std::string& key, const std::string& was) {
            std::string text(example_text);
            const auto at = text.find(key + "\": " + was);
            REQUIRE(at != std::string::npos);
            text.replace(at + key.size() + 3, was.size(), zero);
            return text;
        };
        const auto e = dnnplan_test::text_rejection_of<dnnplan::spot_request>(with("deadline_s", "2400"));
        REQUIRE(e.has_value());
        CHECK(e->field() == "goals.deadline_s");
        CHECK(e->expected() == "a finite number > 0");
        // An integer field takes it as 0; a signed coefficient keeps the sign through a round trip.
        CHECK(dnnplan::parse_spot_request(with("p3.2xlarge", "1")).problem.existing.at("p3.2xlarge") == 0);
        const auto request = dnnplan::parse_spot_request(with("alpha1", "0.8"));
        CHECK(request.problem.profile.contention.alpha1 == 0.0);
        // "-0.0" and "-0e0" are the double -0 and keep their sign; "-0" has integer syntax and reads
        // as the integer 0 (nlohmann/json), so +0.
        CHECK(std::signbit(request.problem.profile.contention.alpha1) == (zero != "-0"));
        const auto back = dnnplan::parse_spot_request(dnnplan::to_json_text(request));
        CHECK(std::signbit(back.problem.profile.contention.alpha1) == std::signbit(request.problem.profile.contention.alpha1));
    }
}

TEST_CASE("semantic rules of a request run after the structure, with the same field paths", "[io][json][spot]") {
    auto unknown_measurement = example_document();
    unknown_measurement["profile"]["per_instance"]["p9.huge"] = {{"per_gpu_batch", 1}, {"samples_per_s", 1}};
    expect_rejected(unknown_measurement, "profile.per_instance.p9.huge");

    auto duplicate = example_document();
    duplicate["catalog"]["instances"].push_back(duplicate["catalog"]["instances"][0]);
    const auto d = expect_rejected(duplicate, "catalog.instances[1].name");
    CHECK(d.value() == "\"p3.2xlarge\"");

    auto unknown_existing = example_document();
    unknown_existing["existing"]["p9.huge"] = 1;
    expect_rejected(unknown_existing, "existing.p9.huge");

    auto above_quota = example_document();
    above_quota["existing"]["p3.2xlarge"] = 11;
    const auto q = expect_rejected(above_quota, "existing.p3.2xlarge");
    CHECK(q.value() == "11");
    CHECK(q.expected().find("quota") != std::string::npos);

    auto reserved = example_document();
    reserved["options"]["pricing"] = "reserved";
    const auto r = expect_rejected(reserved, "options.pricing");
    CHECK(r.value() == "\"reserved\"");
    CHECK(r.expected() == R"(one of "spot", "on_demand")");

    auto method = example_document();
    method["options"]["method"] = "greedy";
    CHECK(expect_rejected(method, "options.method").expected() == R"(one of "exact", "exhaustive", "sliding_window")");
    auto objective = example_document();
    objective["options"]["objective"] = "minimise_cost";
    expect_rejected(objective, "options.objective");
    // An objective the spot planner does not have (a name of objective_kind): from validate().
    objective["options"]["objective"] = "max_throughput";
    CHECK(expect_rejected(objective, "options.objective").expected() == "\"min_cost\" or \"min_time\"");

    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/catalog/instances", ordered_json::array(), "catalog.instances"},
        {"/catalog/instances/0/name", "", "catalog.instances[0].name"},
        {"/catalog/instances/0/gpus", 0, "catalog.instances[0].gpus"},
        {"/catalog/instances/0/spot_usd_per_h", 0, "catalog.instances[0].spot_usd_per_h"},
        {"/catalog/instances/0/on_demand_usd_per_h", -3.06, "catalog.instances[0].on_demand_usd_per_h"},
        {"/catalog/instances/0/gpu_memory_bytes", 0, "catalog.instances[0].gpu_memory_bytes"},
        {"/catalog/parameter_server_usd_per_h", -1, "catalog.parameter_server_usd_per_h"},
        {"/profile/parameter_bytes", 0, "profile.parameter_bytes"},
        {"/profile/per_instance", ordered_json::object(), "profile.per_instance"},
        {"/profile/per_instance/p3.2xlarge/per_gpu_batch", 0, "profile.per_instance.p3.2xlarge.per_gpu_batch"},
        {"/profile/per_instance/p3.2xlarge/samples_per_s", 0, "profile.per_instance.p3.2xlarge.samples_per_s"},
        {"/profile/loss/gamma1", -1, "profile.loss.gamma1"},
        {"/profile/loss/gamma4", -0.5, "profile.loss.gamma4"},
        {"/goals/deadline_s", 0, "goals.deadline_s"},
        {"/options/billing_increment_s", -1, "options.billing_increment_s"},
        {"/options/budget", {{"max_time_s", -1}}, "options.budget.max_time_s"},
        {"/options/relative_gap", 1, "options.relative_gap"},
    };
    for (const auto& c : cases) {
        auto doc = example_document();
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        expect_rejected(doc, c.field);
    }
}

TEST_CASE("a key given twice in one object of a request is rejected with its path", "[io][json][spot][errors]") {
    const auto field_of = [](std::string_view text) -> std::string {
        const auto e = rejection_of_text(text);
        return e ? e->field() : "(accepted)";
    };
    CHECK(field_of(R"({"goals": {"target_loss": 0.8, "deadline_s": 1, "deadline_s": 2}})") == "goals.deadline_s");
    CHECK(field_of(R"({"catalog": {"instances": [{"name": "a"}, {"name": "b", "gpus": 1, "gpus": 2}]}})") ==
          "catalog.instances[1].gpus");
    CHECK(field_of(R"({"goals": {}, "goals": {}})") == "goals");
    CHECK(field_of(R"({"profile": {"per_instance": {"p3": {}, "p3": {}}}})") == "profile.per_instance.p3");
    CHECK(field_of(R"({"options": {"budget": {"max_nodes": 1, "max_nodes": 1}}})") == "options.budget.max_nodes");
}

TEST_CASE("malformed request text is a parse_error with the byte position", "[io][json][spot][errors]") {
    const auto where_of = [](std::string_view text) -> std::string {
        try {
            static_cast<void>(dnnplan::parse_spot_request(text));
        } catch (const dnnplan::parse_error& e) {
            return e.where();
        }
        return "no parse_error";
    };
    CHECK(where_of(R"({"catalog": })") == "byte 13");  // the '}' is the 13th byte read
    std::istringstream stream(R"({"goals": [1, 2})");
    CHECK_THROWS_AS(dnnplan::parse_spot_request(stream), dnnplan::parse_error);
    // Every proper prefix of the documented file is malformed, never an invalid_input or worse.
    for (std::size_t n = 0; n < example_text.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        CHECK(where_of(example_text.substr(0, n)).starts_with("byte "));
    }
}

TEST_CASE("no edit of a request lets anything but dnnplan::error escape", "[io][json][spot][property]") {
    // Every value of the example replaced by values of every JSON type, and every key removed.
    const ordered_json flat = example_document().flatten();
    const std::vector<ordered_json> replacements = {
        nullptr, true, 0, -1, 2.5, 1e300, 4294967296LL, 18446744073709551615ULL, "", "x", ordered_json::array(),
        ordered_json::array({1, "a"}), ordered_json::object(), ordered_json{{"k", nullptr}}};
    std::size_t accepted = 0;
    std::size_t rejected = 0;
    const auto attempt = [&](const ordered_json& doc) {
        try {
            static_cast<void>(dnnplan::parse_spot_request(doc.dump()));
            static_cast<void>(doc.get<dnnplan::spot_request>());
            static_cast<void>(nlohmann::json(doc).get<dnnplan::spot_request>());
            ++accepted;
        } catch (const dnnplan::invalid_input& e) {
            CHECK_FALSE(e.field().empty());
            ++rejected;
        } catch (const std::exception& e) {
            FAIL("escaped: " << e.what() << " for " << doc.dump());
        }
    };
    for (auto it = flat.begin(); it != flat.end(); ++it) {
        const ordered_json::json_pointer at(it.key());
        for (const auto& value : replacements) {
            auto doc = example_document();
            doc[at] = value;
            attempt(doc);
            auto up = example_document();  // the same value one level up (replacing the containing object)
            up[at.parent_pointer()] = value;
            attempt(up);
        }
        auto removed = example_document();
        removed[at.parent_pointer()].erase(at.back());
        attempt(removed);
    }
    CHECK(accepted > 0);
    CHECK(rejected > accepted);
}

TEST_CASE("each spot type read on its own names fields from its own root", "[io][json][spot]") {
    const auto doc = nlohmann::json::parse(example_text);

    // Inside a request a catalog fault is named from the request's root.
    auto request = doc;
    request["catalog"]["instances"][0]["gpus"] = 0;
    auto e = rejection_of<dnnplan::spot_request>(request);
    REQUIRE(e.has_value());
    CHECK(e->field() == "catalog.instances[0].gpus");

    auto profile = doc["profile"];
    profile["per_instance"]["p3.2xlarge"]["samples_per_s"] = 0;
    e = rejection_of<dnnplan::workload_profile>(profile);
    REQUIRE(e.has_value());
    CHECK(e->field() == "per_instance.p3.2xlarge.samples_per_s");
    // Alone, a profile has no catalog: any per_instance name is accepted.
    profile["per_instance"]["p3.2xlarge"]["samples_per_s"] = 1885;
    profile["per_instance"]["anything"] = {{"per_gpu_batch", 8}, {"samples_per_s", 10}};
    CHECK(profile.get<dnnplan::workload_profile>().per_instance.size() == 2);

    auto goals = doc["goals"];
    goals["deadline_s"] = -1;
    e = rejection_of<dnnplan::training_goals>(goals);
    REQUIRE(e.has_value());
    CHECK(e->field() == "deadline_s");

    e = rejection_of<dnnplan::spot_options>(nlohmann::json{{"relative_gap", 2}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "relative_gap");
    e = rejection_of<dnnplan::spot_options>(nlohmann::json{{"pricing", "reserved"}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "pricing");
    e = rejection_of<dnnplan::spot_options>(nlohmann::json{{"budget", {{"max_time_s", -1}}}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "budget.max_time_s");

    auto problem = doc;
    problem.erase("options");
    problem["existing"]["p3.2xlarge"] = 11;
    e = rejection_of<dnnplan::spot_problem>(problem);
    REQUIRE(e.has_value());
    CHECK(e->field() == "existing.p3.2xlarge");
    problem["options"] = nlohmann::json::object();  // a request's key, not a problem's
    e = rejection_of<dnnplan::spot_problem>(problem);
    REQUIRE(e.has_value());
    CHECK(e->field() == "options");

    e = rejection_of<dnnplan::instance_type>(nlohmann::json{{"name", "x"}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "gpus");
    e = rejection_of<dnnplan::loss_coefficients>(nlohmann::json{{"gamma1", 1}, {"gamma2", 1}, {"gamma3", 1}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "gamma5");
    e = rejection_of<dnnplan::instance_profile>(nlohmann::json{{"per_gpu_batch", 1.5}, {"samples_per_s", 1}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "per_gpu_batch");
    e = rejection_of<dnnplan::contention_coefficients>(nlohmann::json{{"alpha1", 1}, {"beta1", "x"}});
    REQUIRE(e.has_value());
    CHECK(e->field() == "beta1");

    // On failure the target is left as it was.
    dnnplan::spot_request kept;
    kept.options.relative_gap = 0.5;
    CHECK_THROWS_AS(dnnplan::from_json(request, kept), dnnplan::invalid_input);
    CHECK(kept.problem.catalog.instances.empty());
    CHECK(kept.options.relative_gap == 0.5);
}

// ---- round trips and layouts -------------------------------------------------------------------------

TEST_CASE("every spot input type round-trips field by field", "[io][json][spot][round_trip]") {
    const auto request = rich_request();
    const auto& problem = request.problem;
    REQUIRE_NOTHROW(problem.validate());
    REQUIRE_NOTHROW(request.options.validate());

    check_same_round_trip(request);
    check_same_round_trip(problem);
    check_same_round_trip(problem.catalog);
    for (const auto& t : problem.catalog.instances) check_same_round_trip(t);
    check_same_round_trip(problem.profile);
    for (const auto& [name, measured] : problem.profile.per_instance) check_same_round_trip(measured);
    check_same_round_trip(problem.profile.contention);
    check_same_round_trip(problem.profile.loss);
    check_same_round_trip(problem.goals);
    check_same_round_trip(request.options);
    check_same_round_trip(dnnplan::spot_options{});
    check_same_round_trip(request.options.budget);

    // The example document, and the request's own text.
    const auto example = dnnplan::parse_spot_request(example_text);
    check_same_round_trip(example);
    CHECK(same(dnnplan::parse_spot_request(dnnplan::to_json_text(request)), request));
    CHECK(same(dnnplan::parse_spot_request(dnnplan::to_json_text(example, -1)), example));

    // Every optional field is written; absent optionals as null.
    const nlohmann::json j = example;
    CHECK(j["catalog"]["instances"][0]["gpu_memory_bytes"].is_null());
    CHECK(j["profile"]["loss"]["gamma4"].is_null());
    CHECK(j["catalog"]["parameter_server_usd_per_h"] == 0.0);
    // The options' layout: budgets and the sliding window nested.
    const ordered_json options = request.options;
    CHECK(options.dump() ==
          R"({"pricing":"on_demand","billing_increment_s":60.0,"objective":"min_time","method":"sliding_window",)"
          R"("cap_at_n_upper":true,"sliding_window":{"paper_bounds":false,"wrap_around":true},)"
          R"("budget":{"max_nodes":9223372036854775807,"max_evaluations":0,"max_time_s":2.5},"relative_gap":0.001})");

    // The text keeps declaration order: catalog, profile, goals, existing, options.
    const std::string text = dnnplan::to_json_text(request);
    CHECK(text.find("\"catalog\"") < text.find("\"profile\""));
    CHECK(text.find("\"profile\"") < text.find("\"goals\""));
    CHECK(text.find("\"goals\"") < text.find("\"existing\""));
    CHECK(text.find("\"existing\"") < text.find("\"options\""));
}

TEST_CASE("spot results round-trip with and without a plan, in the result layout", "[io][json][spot][round_trip]") {
    const auto with_plan = result_with_plan();
    const auto without_plan = result_without_plan();
    for (const auto& r : {with_plan, without_plan}) {
        // Counts are an array of {"name", "count"}: catalog order survives every document type.
        const nlohmann::json sorted = r;
        CHECK(same(sorted.get<dnnplan::spot_result>(), r));
        const ordered_json ordered = r;
        CHECK(same(ordered.get<dnnplan::spot_result>(), r));
        CHECK(same(dnnplan::parse_spot_result(dnnplan::to_json_text(r)), r));
        CHECK(same(dnnplan::parse_spot_result(dnnplan::to_json_text(r, -1)), r));
        std::istringstream stream(dnnplan::to_json_text(r, 4));
        CHECK(same(dnnplan::parse_spot_result(stream), r));
        check_round_trip(r);
    }
    check_round_trip(with_plan.plan->prediction);
    check_round_trip(*with_plan.plan);
    check_round_trip(with_plan.counters);
    check_round_trip(with_plan.plan->counts[0]);
    check_round_trip(dnnplan::spot_result{});

    // The layout: the result shape, the plan's counts by name, details last.
    const ordered_json a = with_plan;
    CHECK(a["status"] == "optimal");
    CHECK(a["reason"] == "");
    CHECK(a["plan"]["counts"].dump() ==
          R"([{"name":"p3.2xlarge","count":3},{"name":"g4dn.4xlarge","count":0},{"name":"a1","count":7}])");
    CHECK(a["plan"]["prediction"]["workers"] == 10);
    CHECK(a["plan"]["prediction"]["cost_usd"] == 8.0416);
    CHECK(a["objective_value"] == 8.0416);
    CHECK(a["bound"] == 8.0416);
    CHECK(a["counters"] == ordered_json{{"nodes", 123}, {"evaluations", 45}, {"pruned_by_bound", 6},
                                        {"pruned_by_constraint", 7}, {"elapsed_s", 0.5}});
    CHECK(a["details"] == ordered_json{{"fastest_training_time_s", nullptr}});
    const ordered_json b = without_plan;
    CHECK(b["plan"].is_null());
    CHECK(b["objective_value"].is_null());
    CHECK(b["bound"].is_null());  // nothing proven: infeasible
    CHECK(b["details"]["fastest_training_time_s"] == 3000.5);

    // The text's key order: status, reason, plan (counts, prediction), objective_value, bound,
    // counters, details.
    const std::string text = dnnplan::to_json_text(with_plan);
    std::size_t last = 0;
    for (const char* key : {"\"status\"", "\"reason\"", "\"plan\"", "\"counts\"", "\"p3.2xlarge\"", "\"g4dn.4xlarge\"",
                            "\"a1\"", "\"prediction\"", "\"workers\"", "\"training_time_s\"", "\"cost_usd\"", "\"billed_s\"",
                            "\"objective_value\"", "\"bound\"", "\"counters\"", "\"nodes\"", "\"details\"",
                            "\"fastest_training_time_s\""}) {
        INFO(key);
        const auto at = text.find(key);
        REQUIRE(at != std::string::npos);
        CHECK(at > last);
        last = at;
    }

    // A heuristic's result: feasible, no proven bound.
    auto heuristic = with_plan;
    heuristic.status = dnnplan::solve_status::feasible;
    heuristic.reason = "sliding window: \"optimality\" not proven\n";
    heuristic.bound.reset();
    CHECK(same(dnnplan::parse_spot_result(dnnplan::to_json_text(heuristic)), heuristic));
    CHECK(ordered_json(heuristic)["bound"].is_null());
}

TEST_CASE("writing a spot result whose plan holds a non-finite number throws dnnplan::error", "[io][json][spot][errors]") {
    auto r = result_with_plan();
    r.plan->prediction.training_time_s = std::numeric_limits<double>::infinity();
    try {
        static_cast<void>(dnnplan::to_json_text(r));
        FAIL("written");
    } catch (const dnnplan::invalid_input& e) {
        FAIL("an invalid_input (the caller's fault), not a library error: " << e.what());
    } catch (const dnnplan::error& e) {
        CHECK_THAT(e.what(), Catch::Matchers::Contains("plan.prediction.training_time_s = inf"));
    }
    CHECK_THROWS_AS(nlohmann::json(r), dnnplan::error);
    r = result_with_plan();
    r.plan->prediction.cost_usd = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(dnnplan::to_json_text(r), Catch::Matchers::Contains("plan.prediction.cost_usd = nan"));
    r = result_without_plan();
    r.details.fastest_training_time_s = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH(dnnplan::to_json_text(r), Catch::Matchers::Contains("details.fastest_training_time_s = inf"));
}

TEST_CASE("a solver's spot result round-trips through text", "[io][json][spot][round_trip]") {
    const auto request = dnnplan::parse_spot_request(example_text);
    const auto result = dnnplan::solve(request);
    CHECK(result.status == dnnplan::solve_status::optimal);
    REQUIRE(result.plan.has_value());
    CHECK(same(dnnplan::parse_spot_result(dnnplan::to_json_text(result)), result));
    CHECK(ordered_json(result)["plan"]["counts"][0]["name"] == "p3.2xlarge");

    auto impossible = request;
    impossible.problem.goals.deadline_s = 1;
    const auto infeasible = dnnplan::solve(impossible);
    CHECK(infeasible.status == dnnplan::solve_status::infeasible);
    CHECK(same(dnnplan::parse_spot_result(dnnplan::to_json_text(infeasible)), infeasible));
    CHECK(ordered_json(infeasible)["plan"].is_null());
}

TEST_CASE("malformed spot results are rejected naming the field", "[io][json][spot][errors]") {
    const ordered_json good = result_with_plan();
    struct bad {
        std::string pointer;
        ordered_json value;
        std::string field;
    };
    const std::vector<bad> cases = {
        {"/status", "great", "status"},
        {"/reason", nullptr, "reason"},
        {"/plan/counts", ordered_json::object(), "plan.counts"},
        {"/plan/counts/2/count", -7, "plan.counts[2].count"},
        {"/plan/counts/2/name", 7, "plan.counts[2].name"},
        {"/plan/counts/2/extra", 7, "plan.counts[2].extra"},
        {"/plan/prediction/cost_usd", nullptr, "plan.prediction.cost_usd"},  // a plan without its cost
        {"/plan/prediction/workers", -1, "plan.prediction.workers"},
        {"/plan/workers", 10, "plan.workers"},  // the prediction is no longer flattened
        {"/objective_value", nullptr, "objective_value"},
        {"/bound", "inf", "bound"},
        {"/details/fastest_training_time_s", "x", "details.fastest_training_time_s"},
        {"/counters/nodes", 1.5, "counters.nodes"},
        {"/counters/clusters_evaluated", 1, "counters.clusters_evaluated"},  // 0.1's name
        {"/lower_bound", 1, "lower_bound"},                                  // 0.1's name
        {"/extra", 1, "extra"},
    };
    for (const auto& c : cases) {
        auto doc = good;
        doc[ordered_json::json_pointer(c.pointer)] = c.value;
        check_rejected<dnnplan::spot_result>(doc, c.field);
    }
    auto no_plan = good;  // no plan, but a value
    no_plan["plan"] = nullptr;
    check_rejected<dnnplan::spot_result>(no_plan, "plan", "status optimal needs a plan");
    auto missing = good;
    missing["plan"]["prediction"].erase("billed_s");
    CHECK(check_rejected<dnnplan::spot_result>(missing, "plan.prediction.billed_s").value() == "missing");
    missing = good;
    missing.erase("details");
    CHECK(check_rejected<dnnplan::spot_result>(missing, "details").value() == "missing");
    CHECK_THROWS_AS(dnnplan::parse_spot_result("{\"status\": "), dnnplan::parse_error);
}

// ---- the generic search and model layers ------------------------------------------------------

namespace {

bool same(const dnnplan::cluster_space& a, const dnnplan::cluster_space& b) {
    return std::tie(a.lower, a.upper, a.min_workers, a.max_workers) == std::tie(b.lower, b.upper, b.min_workers, b.max_workers);
}

bool same(const dnnplan::cluster_goals& a, const dnnplan::cluster_goals& b) {
    return std::tie(a.target_loss, a.deadline_s, a.objective) == std::tie(b.target_loss, b.deadline_s, b.objective);
}

bool same(const dnnplan::exact_options& a, const dnnplan::exact_options& b) {
    return same(a.budget, b.budget) && a.relative_gap == b.relative_gap;
}

bool same(const dnnplan::sliding_window_options& a, const dnnplan::sliding_window_options& b) {
    return std::tie(a.paper_bounds, a.n_upper, a.wrap_around) == std::tie(b.paper_bounds, b.n_upper, b.wrap_around);
}

bool same(const dnnplan::search_outcome& a, const dnnplan::search_outcome& b) {
    return a.status == b.status && a.reason == b.reason && a.plan == b.plan && a.objective_value == b.objective_value &&
           a.bound == b.bound && a.counters == b.counters && a.details == b.details;
}

bool same(const dnnplan::affine_in_batch& a, const dnnplan::affine_in_batch& b) {
    return a.intercept == b.intercept && a.slope == b.slope;
}

bool same(const dnnplan::ps_network& a, const dnnplan::ps_network& b) {
    return std::tie(a.parameter_bytes, a.required_bandwidth_bytes_per_s, a.ps_bandwidth_bytes_per_s,
                    a.pcie_bandwidth_bytes_per_s) == std::tie(b.parameter_bytes, b.required_bandwidth_bytes_per_s,
                                                              b.ps_bandwidth_bytes_per_s, b.pcie_bandwidth_bytes_per_s) &&
           same(a.contention, b.contention);
}

bool same(const dnnplan::ps_worker_type& a, const dnnplan::ps_worker_type& b) {
    return std::tie(a.gpus, a.worker_batch, a.compute_s) == std::tie(b.gpus, b.worker_batch, b.compute_s);
}

bool same(const dnnplan::measured_worker_type& a, const dnnplan::measured_worker_type& b) {
    return std::tie(a.name, a.gpus, a.worker_batch, a.samples_per_s) == std::tie(b.name, b.gpus, b.worker_batch, b.samples_per_s);
}

bool same(const dnnplan::batch_memory_fit& a, const dnnplan::batch_memory_fit& b) {
    return a.alpha2_samples_per_byte == b.alpha2_samples_per_byte && a.beta2_samples == b.beta2_samples;
}

// check_same_round_trip() above, seeing the overloads of same() just declared.
template <class T>
void check_layer_round_trip(const T& value) {
    const nlohmann::json sorted = value;
    CHECK(same(sorted.get<T>(), value));
    CHECK(same(nlohmann::json::parse(sorted.dump()).get<T>(), value));
    const ordered_json ordered = value;
    CHECK(same(ordered.get<T>(), value));
    CHECK(same(ordered_json::parse(ordered.dump(2)).get<T>(), value));
    CHECK(same(dnnplan::parse_json<T>(dnnplan::to_json_text(value)), value));
    check_round_trip(value);
}

// The field named by the invalid_input that reading `j` as a T throws, or "(accepted)".
template <class T, class Json>
std::string rejected_field(const Json& j) {
    const auto e = rejection_of<T>(j);
    if (!e) return "(accepted)";
    CHECK_FALSE(e->expected().empty());
    return e->field();
}

// Reading `j` as a T throws invalid_input for `field` with value "missing".
template <class T>
void check_missing(const nlohmann::json& j, const std::string& field) {
    INFO(j.dump());
    const auto e = rejection_of<T>(j);
    REQUIRE(e.has_value());
    CHECK(e->field() == field);
    CHECK(e->value() == "missing");
}

dnnplan::search_outcome outcome_with_plan() {
    dnnplan::search_outcome o;
    o.status = dnnplan::solve_status::optimal;
    o.plan = dnnplan::cluster_plan{.counts = {3, 0, 7}, .prediction = sample_prediction()};
    o.objective_value = o.plan->prediction.cost_usd;
    o.bound = o.plan->prediction.cost_usd;
    o.counters = {.nodes = 1, .evaluations = 2, .pruned_by_bound = 3, .pruned_by_constraint = 4, .elapsed_s = 0.125};
    return o;
}

dnnplan::search_outcome outcome_without_plan() {
    dnnplan::search_outcome o;
    o.status = dnnplan::solve_status::infeasible;
    o.reason = "no cluster in the search space meets the goals";
    o.details.fastest_training_time_s = 1.0 / 3.0;
    o.counters = {.nodes = 9, .evaluations = 0, .pruned_by_bound = 0, .pruned_by_constraint = 9, .elapsed_s = 0};
    return o;
}

// One valid document of each reader, every key written.
nlohmann::json space_document() { return {{"lower", {0, 2}}, {"upper", {4, 5}}, {"min_workers", 2}, {"max_workers", 6}}; }
nlohmann::json network_document() {
    return {{"parameter_bytes", 11.5e6},
            {"required_bandwidth_bytes_per_s", 142e6},
            {"ps_bandwidth_bytes_per_s", 1.2e9},
            {"pcie_bandwidth_bytes_per_s", 1e10},
            {"contention", {{"alpha1", 0.8}, {"beta1", -1.92}}}};
}

}  // namespace

TEST_CASE("the search and model layers' types round-trip field by field", "[io][json][spot][round_trip]") {
    constexpr auto no_cap = std::numeric_limits<std::int64_t>::max();
    constexpr auto infinity = std::numeric_limits<double>::infinity();

    const dnnplan::cluster_space capped{.lower = {0, 2, 1}, .upper = {10, 2, 2147483647}, .min_workers = 3, .max_workers = 40};
    const dnnplan::cluster_space uncapped{.lower = {1}, .upper = {5}, .min_workers = 1, .max_workers = no_cap};
    check_layer_round_trip(capped);
    check_layer_round_trip(uncapped);
    check_layer_round_trip(dnnplan::cluster_space{});
    const ordered_json space = uncapped;
    CHECK(space.dump() == R"({"lower":[1],"upper":[5],"min_workers":1,"max_workers":null})");  // unbounded: null
    // Absent optionals take the struct's defaults: no cap, at least one worker.
    const auto defaults = nlohmann::json{{"lower", {0}}, {"upper", {3}}}.get<dnnplan::cluster_space>();
    CHECK(defaults.min_workers == 1);
    CHECK(defaults.max_workers == no_cap);
    CHECK(nlohmann::json{{"lower", {0}}, {"upper", {3}}, {"max_workers", nullptr}}.get<dnnplan::cluster_space>().max_workers ==
          no_cap);

    const dnnplan::cluster_goals timed{.target_loss = 0.8, .deadline_s = 2400.5, .objective = dnnplan::objective_kind::min_time};
    const dnnplan::cluster_goals open{.target_loss = 1.0 / 3.0, .deadline_s = infinity, .objective = dnnplan::objective_kind::min_cost};
    check_layer_round_trip(timed);
    check_layer_round_trip(open);
    const ordered_json goals = open;
    CHECK(goals.dump() == R"({"target_loss":0.3333333333333333,"deadline_s":null,"objective":"min_cost"})");
    const auto bare = nlohmann::json{{"target_loss", 0.5}}.get<dnnplan::cluster_goals>();
    CHECK(bare.deadline_s == infinity);
    CHECK(bare.objective == dnnplan::objective_kind::min_cost);
    CHECK(nlohmann::json{{"target_loss", 0.5}, {"objective", "minimize_time"}}.get<dnnplan::cluster_goals>().objective ==
          dnnplan::objective_kind::min_time);

    check_layer_round_trip(dnnplan::exact_options{});
    check_layer_round_trip(
        dnnplan::exact_options{.budget = {.max_nodes = no_cap, .max_evaluations = 0, .max_time_s = 2.5}, .relative_gap = 0});
    CHECK(same(nlohmann::json::object().get<dnnplan::exact_options>(), dnnplan::exact_options{}));
    CHECK(ordered_json(dnnplan::exact_options{}).dump() ==
          R"({"budget":{"max_nodes":10000000,"max_evaluations":10000000,"max_time_s":0.0},"relative_gap":1e-09})");

    check_layer_round_trip(dnnplan::sliding_window_options{});
    check_layer_round_trip(dnnplan::sliding_window_options{.paper_bounds = false, .n_upper = 0, .wrap_around = true});
    check_layer_round_trip(dnnplan::sliding_window_options{.paper_bounds = true, .n_upper = no_cap, .wrap_around = false});
    const ordered_json window = dnnplan::sliding_window_options{};
    CHECK(window.dump() == R"({"paper_bounds":true,"n_upper":null,"wrap_around":false})");
    const auto no_n_upper = nlohmann::json{{"paper_bounds", false}, {"wrap_around", false}}.get<dnnplan::sliding_window_options>();
    CHECK_FALSE(no_n_upper.n_upper.has_value());

    const auto with_plan = outcome_with_plan();
    const auto without_plan = outcome_without_plan();
    check_layer_round_trip(with_plan);
    check_layer_round_trip(without_plan);
    check_layer_round_trip(dnnplan::search_outcome{});
    const ordered_json a = with_plan;
    CHECK(a["plan"]["counts"] == ordered_json::array({3, 0, 7}));
    CHECK(a["plan"]["prediction"] == ordered_json(with_plan.plan->prediction));
    CHECK(a["plan"]["prediction"]["workers"] == 10);
    CHECK(a["details"]["fastest_training_time_s"].is_null());
    CHECK(a["bound"] == with_plan.bound.value());
    const ordered_json b = without_plan;
    CHECK(b["plan"].is_null());
    CHECK(b["objective_value"].is_null());
    CHECK(b["bound"].is_null());
    CHECK(b["details"]["fastest_training_time_s"] == 1.0 / 3.0);
    // Key order: the result shape.
    std::vector<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound",
                                           "best_effort", "counters", "details"});
    // details.fastest_training_time_s is required (null: none).
    auto absent_fastest = nlohmann::json(without_plan);
    absent_fastest["details"].erase("fastest_training_time_s");
    check_missing<dnnplan::search_outcome>(absent_fastest, "details.fastest_training_time_s");
    absent_fastest["details"]["fastest_training_time_s"] = nullptr;
    CHECK_FALSE(absent_fastest.get<dnnplan::search_outcome>().details.fastest_training_time_s.has_value());

    check_layer_round_trip(dnnplan::affine_in_batch{.intercept = 1.0 / 3.0, .slope = -2.5e-4});
    const auto network = network_document().get<dnnplan::ps_network>();
    CHECK(network.contention.beta1 == -1.92);
    check_layer_round_trip(network);
    check_layer_round_trip(dnnplan::ps_worker_type{.gpus = 8, .worker_batch = 8192, .compute_s = 0.1 + 0.2});
    check_layer_round_trip(
        dnnplan::measured_worker_type{.name = "g4dn.4xlarge \xC3\xA9", .gpus = 2, .worker_batch = 1024, .samples_per_s = 750.125});
    check_layer_round_trip(dnnplan::batch_memory_fit{.alpha2_samples_per_byte = 1.0 / 7.0e6, .beta2_samples = -12.5});
    const nlohmann::json fit = dnnplan::batch_memory_fit{.alpha2_samples_per_byte = 2, .beta2_samples = 3};
    CHECK(fit == nlohmann::json{{"alpha2_samples_per_byte", 2.0}, {"beta2_samples", 3.0}});
}

TEST_CASE("the search and model layers' readers reject unknown keys naming them", "[io][json][spot][errors]") {
    const auto with_extra = [](nlohmann::json j) {
        j["extra"] = 1;
        return j;
    };
    CHECK(rejected_field<dnnplan::cluster_space>(with_extra(space_document())) == "extra");
    CHECK(rejected_field<dnnplan::cluster_goals>(with_extra({{"target_loss", 1}})) == "extra");
    CHECK(rejected_field<dnnplan::exact_options>(with_extra(nlohmann::json::object())) == "extra");
    CHECK(rejected_field<dnnplan::sliding_window_options>(with_extra(nlohmann::json(dnnplan::sliding_window_options{}))) ==
          "extra");
    CHECK(rejected_field<dnnplan::search_outcome>(with_extra(nlohmann::json(outcome_with_plan()))) == "extra");
    CHECK(rejected_field<dnnplan::affine_in_batch>(with_extra({{"intercept", 1}, {"slope", 2}})) == "extra");
    CHECK(rejected_field<dnnplan::ps_network>(with_extra(network_document())) == "extra");
    CHECK(rejected_field<dnnplan::ps_worker_type>(with_extra({{"gpus", 1}, {"worker_batch", 8}, {"compute_s", 0.5}})) == "extra");
    CHECK(rejected_field<dnnplan::measured_worker_type>(
              with_extra({{"name", "a"}, {"gpus", 1}, {"worker_batch", 8}, {"samples_per_s", 10}})) == "extra");
    CHECK(rejected_field<dnnplan::batch_memory_fit>(with_extra({{"alpha2_samples_per_byte", 1}, {"beta2_samples", 2}})) ==
          "extra");
    // exact_options has no deprecated spellings: 0.1's keys are unknown.
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"node_budget", 5}}) == "node_budget");

    // Nested objects name the full path; the expected text lists the allowed keys.
    auto network = network_document();
    network["contention"]["gamma"] = 1;
    CHECK(rejected_field<dnnplan::ps_network>(network) == "contention.gamma");
    auto outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"]["prediction"]["extra"] = true;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "plan.prediction.extra");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["counters"]["extra"] = 0;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "counters.extra");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["details"]["extra"] = 0;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "details.extra");
    const auto e = rejection_of<dnnplan::cluster_goals>(with_extra({{"target_loss", 1}}));
    REQUIRE(e.has_value());
    CHECK(e->expected() == "one of the keys target_loss, deadline_s, objective");
    // The same through ordered_json.
    CHECK(rejected_field<dnnplan::cluster_space>(ordered_json{{"lower", {0}}, {"upper", {1}}, {"cap", 2}}) == "cap");
}

TEST_CASE("the search and model layers' readers name missing keys", "[io][json][spot][errors]") {
    check_missing<dnnplan::cluster_space>({{"upper", {1}}}, "lower");
    check_missing<dnnplan::cluster_space>({{"lower", {1}}}, "upper");
    check_missing<dnnplan::cluster_goals>({{"deadline_s", 10}}, "target_loss");
    // Every sliding_window_options key is optional, as for the other options types.
    const auto defaults = nlohmann::json::object().get<dnnplan::sliding_window_options>();
    CHECK(same(defaults, dnnplan::sliding_window_options{}));
    const auto partial = nlohmann::json{{"wrap_around", true}}.get<dnnplan::sliding_window_options>();
    CHECK(partial.paper_bounds);
    CHECK(partial.wrap_around);
    for (const char* key : {"status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound", "best_effort", "counters", "details"}) {
        auto outcome = nlohmann::json(outcome_with_plan());
        outcome.erase(key);
        check_missing<dnnplan::search_outcome>(outcome, key);
    }
    auto outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"]["prediction"].erase("billed_s");
    check_missing<dnnplan::search_outcome>(outcome, "plan.prediction.billed_s");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"].erase("counts");
    check_missing<dnnplan::search_outcome>(outcome, "plan.counts");
    check_missing<dnnplan::affine_in_batch>({{"intercept", 1}}, "slope");
    auto network = network_document();
    network.erase("contention");
    check_missing<dnnplan::ps_network>(network, "contention");
    network = network_document();
    network["contention"].erase("beta1");
    check_missing<dnnplan::ps_network>(network, "contention.beta1");
    check_missing<dnnplan::ps_worker_type>({{"gpus", 1}, {"worker_batch", 8}}, "compute_s");
    check_missing<dnnplan::measured_worker_type>({{"gpus", 1}, {"worker_batch", 8}, {"samples_per_s", 10}}, "name");
    check_missing<dnnplan::batch_memory_fit>({{"alpha2_samples_per_byte", 1}}, "beta2_samples");
    // exact_options has no required key (see the round-trip test: {} reads as the defaults).
}

TEST_CASE("the search and model layers' readers check integers, numbers and ranges", "[io][json][spot][errors]") {
    // Counts are non-negative int32.
    auto space = space_document();
    space["lower"][1] = 1.5;
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "lower[1]");
    space = space_document();
    space["upper"][0] = -1;
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "upper[0]");
    space = space_document();
    space["upper"][0] = 2147483648LL;
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "upper[0]");
    space = space_document();
    space["lower"] = 3;
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "lower");
    space = space_document();
    space["max_workers"] = "none";
    const auto max_error = rejection_of<dnnplan::cluster_space>(space);
    REQUIRE(max_error.has_value());
    CHECK(max_error->field() == "max_workers");
    CHECK(max_error->expected() == "an integer in [0, 9223372036854775807] or null");

    // Then cluster_space::validate, naming fields from the document's root.
    space = space_document();
    space["lower"][1] = 6;  // > upper[1] = 5
    const auto bounds_error = rejection_of<dnnplan::cluster_space>(space);
    REQUIRE(bounds_error.has_value());
    CHECK(bounds_error->field() == "upper[1]");
    CHECK(bounds_error->value() == "5");
    CHECK(bounds_error->expected() == "an integer >= 6");
    space = space_document();
    space["upper"] = {4};
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "lower");
    space = space_document();
    space["min_workers"] = 0;
    CHECK(rejected_field<dnnplan::cluster_space>(space) == "min_workers");

    // Numbers are finite JSON numbers; null means +infinity only where the layout says so.
    CHECK(rejected_field<dnnplan::cluster_goals>(nlohmann::json{{"target_loss", "0.8"}}) == "target_loss");
    CHECK(rejected_field<dnnplan::cluster_goals>(nlohmann::json{{"target_loss", std::numeric_limits<double>::infinity()}}) ==
          "target_loss");
    CHECK(rejected_field<dnnplan::cluster_goals>(nlohmann::json{{"target_loss", nullptr}}) == "target_loss");
    CHECK(rejected_field<dnnplan::cluster_goals>(nlohmann::json{{"target_loss", 1}, {"deadline_s", "inf"}}) == "deadline_s");
    CHECK(rejected_field<dnnplan::cluster_goals>(nlohmann::json{{"target_loss", 1}, {"objective", "fastest"}}) == "objective");
    CHECK(rejected_field<dnnplan::affine_in_batch>(nlohmann::json{{"intercept", std::nan("")}, {"slope", 1}}) == "intercept");
    CHECK(rejected_field<dnnplan::batch_memory_fit>(nlohmann::json{{"alpha2_samples_per_byte", 1}, {"beta2_samples", true}}) ==
          "beta2_samples");
    CHECK(rejected_field<dnnplan::ps_worker_type>(nlohmann::json{{"gpus", 1.5}, {"worker_batch", 8}, {"compute_s", 0.5}}) ==
          "gpus");
    CHECK(rejected_field<dnnplan::measured_worker_type>(
              nlohmann::json{{"name", 7}, {"gpus", 1}, {"worker_batch", 8}, {"samples_per_s", 10}}) == "name");
    CHECK(rejected_field<dnnplan::sliding_window_options>(
              nlohmann::json{{"paper_bounds", true}, {"n_upper", -1}, {"wrap_around", false}}) == "n_upper");
    CHECK(rejected_field<dnnplan::sliding_window_options>(nlohmann::json{{"paper_bounds", 1}, {"wrap_around", false}}) ==
          "paper_bounds");

    // exact_options: the ranges of spot_options::validate for the same fields.
    const auto gap_error = rejection_of<dnnplan::exact_options>(nlohmann::json{{"relative_gap", 1}});
    REQUIRE(gap_error.has_value());
    CHECK(gap_error->field() == "relative_gap");
    CHECK(gap_error->value() == "1");
    CHECK(gap_error->expected() == "a number in [0, 1)");
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"relative_gap", -0.5}}) == "relative_gap");
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"relative_gap", 0.999}}) == "(accepted)");
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"budget", {{"max_time_s", -1}}}}) == "budget.max_time_s");
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"budget", {{"max_nodes", -1}}}}) == "budget.max_nodes");
    CHECK(rejected_field<dnnplan::exact_options>(nlohmann::json{{"budget", {{"max_nodes", 2.5}}}}) == "budget.max_nodes");

    // ps_network: its validate() runs after reading.
    auto network = network_document();
    network["parameter_bytes"] = 0;
    const auto network_error = rejection_of<dnnplan::ps_network>(network);
    REQUIRE(network_error.has_value());
    CHECK(network_error->field() == "parameter_bytes");
    CHECK(network_error->expected() == "a finite number > 0");
    network = network_document();
    network["pcie_bandwidth_bytes_per_s"] = -1e10;
    CHECK(rejected_field<dnnplan::ps_network>(network) == "pcie_bandwidth_bytes_per_s");

    // search_outcome: counts are int32, the plan an object or null, no value without a plan.
    auto outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"]["counts"][2] = 2.5;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "plan.counts[2]");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"] = 5;
    const auto plan_error = rejection_of<dnnplan::search_outcome>(outcome);
    REQUIRE(plan_error.has_value());
    CHECK(plan_error->field() == "plan");
    CHECK(plan_error->expected() == "an object or null");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"]["prediction"]["workers"] = nullptr;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "plan.prediction.workers");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["plan"] = nullptr;  // optimal, a value, but no plan
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "plan");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["bound"] = "inf";
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "bound");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["status"] = "done";
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "status");
    outcome = nlohmann::json(outcome_with_plan());
    outcome["counters"]["nodes"] = -1;
    CHECK(rejected_field<dnnplan::search_outcome>(outcome) == "counters.nodes");

    // Not objects at all: the root is named; on failure the target is unchanged.
    CHECK(rejected_field<dnnplan::search_outcome>(nlohmann::json::array()) == "(root)");
    dnnplan::cluster_space kept{.lower = {1}, .upper = {2}, .min_workers = 1, .max_workers = 2};
    space = space_document();
    space["lower"][1] = 6;
    CHECK_THROWS_AS(dnnplan::from_json(space, kept), dnnplan::invalid_input);
    CHECK(kept.lower == std::vector<std::int32_t>{1});
    CHECK(kept.max_workers == 2);
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (spot)", "[io][json][fuzz]") {
    // A seed its reader rejects would seed only the error paths (scripts/fuzz).
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_0_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::spot_result>(text));
    }
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_1_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::search_outcome>(text));
    }
}
