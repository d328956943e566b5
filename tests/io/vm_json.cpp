// JSON conversion of the VM recommender (the section of io/json.hpp for solve/vm_recommend.hpp and
// solve/vm_request.hpp): round trips of every input and result type (infinities and NaN
// included), the request file read from a fixture and solved, and every rejection naming its field.

#include <dnnplan/io/json.hpp>
#include <dnnplan/solve/vm_recommend.hpp>
#include <dnnplan/solve/vm_request.hpp>

#include <catch2/catch.hpp>

#include "../support/json_checks.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using nlohmann::ordered_json;
using Catch::Matchers::Contains;

// Two T4 instance types (spotDNN Table III prices) and the Pollux-form T4 fit of the bundled problem.
constexpr const char* request_text = R"({
  "catalog": {"instances": [
    {"name": "g4dn.12xlarge", "gpus": 4, "quota": 3, "spot_usd_per_h": 1.22, "on_demand_usd_per_h": 3.91},
    {"name": "g4dn.4xlarge", "gpus": 1, "quota": 3, "spot_usd_per_h": 0.36, "on_demand_usd_per_h": 1.20}]},
  "work": {"epochs": 2, "dataset_samples": 1000000},
  "constraints": {"deadline_s": 3600},
  "objective": "min_cost",
  "workload": {
    "gpu_types": {"T4": {"alpha_c_s": 0.05069, "beta_c_s": 0.00449}},
    "instance_gpu_types": {"g4dn.12xlarge": "T4", "g4dn.4xlarge": "T4"},
    "network": {"alpha_n_s": 0.3004, "beta_n_s": 0.005444, "alpha_r_s": 0.1038, "beta_r_s": 0.001932, "gamma": 2.339},
    "batch": 128},
  "options": {"pareto": true}
})";

ordered_json request_document() { return ordered_json::parse(request_text); }

using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;

}  // namespace

TEST_CASE("a VM request is read with its defaults and solves as the model and problem it describes",
          "[io][json][vm_recommend]") {
    const auto request = request_document().get<dnnplan::vm_request>();
    CHECK(request.problem.work.total_samples() == 2e6);
    CHECK(request.problem.constraints.deadline_s == 3600);
    CHECK(std::isinf(request.problem.constraints.max_usd_per_h));  // absent: no budget
    CHECK(request.problem.constraints.allowed_price_kinds.size() == 2);
    CHECK(request.workload.policy == dnnplan::batch_policy::equal);       // absent: the default
    CHECK(request.workload.basis == dnnplan::batch_basis::per_replica);  // absent: the default
    CHECK(request.workload.network.alpha_c_s == 0.0);
    CHECK(request.workload.network.gamma == 2.339);
    CHECK_FALSE(request.workload.ring);
    CHECK(request.options.pareto);

    const auto model = request.workload.model(request.problem.catalog);
    CHECK(model.spec().types[0].gpus == 4);
    CHECK(model.spec().types[1].compute.beta_c_s == 0.00449);
    const dnnplan::vm_result direct = dnnplan::recommend_vms(model, request.problem, request.options);
    const dnnplan::vm_result via_request = dnnplan::recommend_vms(request);
    REQUIRE(via_request.status == dnnplan::solve_status::optimal);
    REQUIRE(via_request.best);
    CHECK(nlohmann::json(via_request) == nlohmann::json(direct));
    CHECK(via_request.best->figures.time_s.value() <= 3600.0);
    CHECK_FALSE(via_request.frontier.empty());
}

TEST_CASE("every VM recommender type round-trips", "[io][json][vm_recommend][round_trip]") {
    const auto request = request_document().get<dnnplan::vm_request>();
    check_round_trip(request);
    check_round_trip(request.problem);
    check_round_trip(request.problem.work);
    check_round_trip(request.problem.constraints);
    check_round_trip(request.workload);
    check_round_trip(request.options);
    check_round_trip(dnnplan::vm_work{.samples = 5e6});
    check_round_trip(dnnplan::vm_constraints{});  // +inf budget and deadline <-> null
    CHECK(nlohmann::json(dnnplan::vm_constraints{})["max_usd_per_h"].is_null());
    CHECK(nlohmann::json(dnnplan::vm_constraints{})["deadline_s"].is_null());
    const dnnplan::vm_constraints every{.max_usd_per_h = 9.5, .min_samples_per_s = 100, .deadline_s = 7200,
                                        .max_instances = 4, .max_distinct_types = 1, .allowed_types = {"g4dn.4xlarge"},
                                        .allowed_price_kinds = {dnnplan::price_kind::on_demand}};
    check_round_trip(every);
    CHECK(nlohmann::json(every)["allowed_price_kinds"] == nlohmann::json::array({"on_demand"}));
    check_round_trip(dnnplan::vm_options{.method = dnnplan::vm_method::exhaustive, .pareto = true, .node_budget = 7,
                                         .evaluation_budget = 9, .relative_gap = 0.01});
    check_round_trip(dnnplan::gpu_compute{.alpha_c_s = 0.1, .beta_c_s = 0.002});
    check_round_trip(dnnplan::ring_allreduce{.parameter_bytes = 1e8, .intra_node_bytes_per_s = 1e10,
                                             .inter_node_bytes_per_s = 1e9, .latency_s = 1e-3});
    auto with_ring = request.workload;
    with_ring.ring = dnnplan::ring_allreduce{.parameter_bytes = 1e8, .intra_node_bytes_per_s = 1e10, .inter_node_bytes_per_s = 1e9};
    with_ring.policy = dnnplan::batch_policy::balanced;
    with_ring.basis = dnnplan::batch_basis::global;
    with_ring.accumulation_steps = 2;
    check_round_trip(with_ring);
    CHECK(nlohmann::json(request.workload)["ring"].is_null());
    for (const auto o : {dnnplan::vm_objective::min_cost, dnnplan::vm_objective::max_throughput,
                         dnnplan::vm_objective::max_samples_per_usd}) {
        check_round_trip(o);
        CHECK(nlohmann::json(o) == std::string(to_string(o)));
    }
    check_round_trip(dnnplan::vm_method::branch_and_bound);
    check_round_trip(dnnplan::batch_basis::global);
    check_round_trip(dnnplan::batch_policy::balanced);

    // Results: a plan with a frontier, an infeasible one (bound +inf, value NaN), a budget-exhausted
    // max_throughput search, and the empty result (NaN bound).
    const auto result = dnnplan::recommend_vms(request);
    REQUIRE(result.best);
    check_round_trip(result);
    check_round_trip(*result.best);
    check_round_trip(result.best->offers.at(0));
    check_round_trip(result.best->figures);
    const nlohmann::json figures = result.best->figures;
    CHECK(figures["time_s"].get<double>() == result.best->figures.time_s.value());

    auto infeasible = request;
    infeasible.problem.constraints.deadline_s = 1;
    const auto none = dnnplan::recommend_vms(infeasible);
    REQUIRE(none.status == dnnplan::solve_status::infeasible);
    check_round_trip(none);
    const nlohmann::json none_json = none;
    CHECK(none_json["best"].is_null());
    CHECK(none_json["objective_value"].is_null());
    CHECK(none_json["objective_bound"] == "inf");
    const auto none_back = none_json.get<dnnplan::vm_result>();
    CHECK(std::isnan(none_back.objective_value));
    CHECK(none_back.objective_bound == std::numeric_limits<double>::infinity());

    auto fastest = request;
    fastest.problem.objective = dnnplan::vm_objective::max_throughput;
    fastest.problem.constraints.deadline_s = std::numeric_limits<double>::infinity();
    fastest.options = {.method = dnnplan::vm_method::exhaustive, .evaluation_budget = 3};
    const auto stopped = dnnplan::recommend_vms(fastest);
    REQUIRE(stopped.status == dnnplan::solve_status::budget_exhausted);
    check_round_trip(stopped);
    const auto stopped_back = nlohmann::json(stopped).get<dnnplan::vm_result>();
    CHECK(stopped_back.objective_bound == stopped.objective_bound);  // the exhaustive method: +-inf
    CHECK(stopped_back.method == dnnplan::vm_method::exhaustive);

    check_round_trip(dnnplan::vm_result{});
    CHECK(nlohmann::json(dnnplan::vm_result{})["objective_bound"].is_null());
    dnnplan::vm_result minus;
    minus.objective_bound = -std::numeric_limits<double>::infinity();
    CHECK(nlohmann::json(minus)["objective_bound"] == "-inf");
    CHECK(nlohmann::json(minus).get<dnnplan::vm_result>().objective_bound == -std::numeric_limits<double>::infinity());

    // The text writer keeps the documented key order.
    const auto text = dnnplan::to_json_text(result);
    CHECK(text.find("\"status\"") < text.find("\"best\""));
    CHECK(text.find("\"best\"") < text.find("\"frontier\""));
    CHECK(nlohmann::json(dnnplan::parse_vm_result(text)) == nlohmann::json(result));
}

TEST_CASE("the VM readers reject unknown and missing keys and wrong types, naming them", "[io][json][vm_recommend][errors]") {
    auto j = request_document();
    j["colour"] = "blue";
    check_rejected<dnnplan::vm_request>(j, "colour", "one of the keys catalog, work, constraints, objective, workload, options");
    j = request_document();
    j.erase("workload");
    check_rejected<dnnplan::vm_request>(j, "workload", "= missing");
    j = request_document();
    j.erase("catalog");
    check_rejected<dnnplan::vm_request>(j, "catalog", "= missing");
    j = request_document();
    j["workload"].erase("batch");
    check_rejected<dnnplan::vm_request>(j, "workload.batch", "= missing");
    j = request_document();
    j["workload"]["network"]["alpha_c_s"] = 0.1;  // the network holds the sync parameters only
    check_rejected<dnnplan::vm_request>(j, "workload.network.alpha_c_s", "one of the keys alpha_n_s");
    j = request_document();
    j["workload"]["network"].erase("gamma");
    check_rejected<dnnplan::vm_request>(j, "workload.network.gamma", "= missing");
    j = request_document();
    j["workload"]["gpu_types"]["T4"]["beta_c_s"] = "slow";
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.beta_c_s", "a number");
    j = request_document();
    j["workload"]["policy"] = "fastest";
    check_rejected<dnnplan::vm_request>(j, "workload.policy", "one of \"equal\", \"balanced\"");
    j = request_document();
    j["workload"]["basis"] = 1;
    check_rejected<dnnplan::vm_request>(j, "workload.basis", "one of \"per_replica\", \"global\"");
    j = request_document();
    j["workload"]["accumulation_steps"] = 1.5;
    check_rejected<dnnplan::vm_request>(j, "workload.accumulation_steps", "an integer in [0, 2147483647]");
    j = request_document();
    j["workload"]["instance_gpu_types"]["g4dn.4xlarge"] = 4;
    check_rejected<dnnplan::vm_request>(j, "workload.instance_gpu_types.g4dn.4xlarge", "a string");
    j = request_document();
    j["objective"] = "cheapest";
    check_rejected<dnnplan::vm_request>(j, "objective", "one of \"min_cost\", \"max_throughput\", \"max_samples_per_usd\"");
    j = request_document();
    j["constraints"]["allowed_price_kinds"] = {"spot", "reserved"};
    check_rejected<dnnplan::vm_request>(j, "constraints.allowed_price_kinds[1]", "one of \"spot\", \"on_demand\"");
    j = request_document();
    j["constraints"]["max_instances"] = -1;
    check_rejected<dnnplan::vm_request>(j, "constraints.max_instances", "an integer in [0, 2147483647]");
    j = request_document();
    j["constraints"]["deadline_s"] = "soon";
    check_rejected<dnnplan::vm_request>(j, "constraints.deadline_s", "a number or null");
    j = request_document();
    j["work"]["epochs"] = nullptr;
    check_rejected<dnnplan::vm_request>(j, "work.epochs", "a number");
    j = request_document();
    j["options"]["method"] = "greedy";
    check_rejected<dnnplan::vm_request>(j, "options.method", "one of \"branch_and_bound\", \"exhaustive\"");
    j = request_document();
    j["options"]["pareto"] = 1;
    check_rejected<dnnplan::vm_request>(j, "options.pareto", "true or false");
    j = request_document();
    j["catalog"]["instances"][1]["quota"] = 2.5;
    check_rejected<dnnplan::vm_request>(j, "catalog.instances[1].quota", "an integer");

    check_rejected<dnnplan::vm_result>(ordered_json::parse(R"({"status": "optimal", "reason": ""})"), "method", "missing");
    auto result = ordered_json(dnnplan::vm_result{});
    result["objective_bound"] = "infinity";
    check_rejected<dnnplan::vm_result>(result, "objective_bound", "a number, \"inf\", \"-inf\" or null");
    result = ordered_json(dnnplan::vm_result{});
    result["frontier_status"] = "done";
    check_rejected<dnnplan::vm_result>(result, "frontier_status", "or null");
    check_rejected<dnnplan::vm_offer_count>(ordered_json::parse(R"({"type": "a", "kind": "spot", "count": -1})"), "count");
    check_rejected<dnnplan::vm_figures>(ordered_json::parse(R"({"instances": 1})"), "gpus", "missing");
    check_rejected<dnnplan::vm_configuration>(ordered_json::parse(R"({"offers": {}, "figures": {}})"), "offers", "an array");
    check_rejected<dnnplan::vm_problem>(ordered_json::parse("[]"), "(root)", "an object");
}

TEST_CASE("the VM readers run validate() with the same field paths", "[io][json][vm_recommend][errors]") {
    auto j = request_document();
    j["catalog"]["instances"][0]["quota"] = 0;
    static_cast<void>(j.get<dnnplan::vm_request>());  // a zero quota is allowed
    j["catalog"]["instances"][0]["spot_usd_per_h"] = 0;
    check_rejected<dnnplan::vm_request>(j, "catalog.instances[0].spot_usd_per_h", "a finite number > 0");
    j = request_document();
    j["work"]["samples"] = 5;
    check_rejected<dnnplan::vm_request>(j, "work.epochs", "0 when work.samples is given");
    check_rejected<dnnplan::vm_work>(j["work"], "epochs");
    j = request_document();
    j.erase("work");
    check_rejected<dnnplan::vm_request>(j, "constraints.deadline_s", "unless work is given");
    j = request_document();
    j["constraints"]["allowed_types"] = {"p3.2xlarge"};
    check_rejected<dnnplan::vm_request>(j, "constraints.allowed_types[0]", "the name of an instance type in the catalog");
    check_rejected<dnnplan::vm_constraints>(ordered_json::parse(R"({"allowed_types": ["a", "a"]})"), "allowed_types[1]",
                                            "a name not listed twice");
    check_rejected<dnnplan::vm_constraints>(ordered_json::parse(R"({"max_usd_per_h": 0})"), "max_usd_per_h", "a number > 0");
    static_cast<void>(ordered_json::parse(R"({"allowed_types": ["a"], "deadline_s": 10})").get<dnnplan::vm_constraints>());
    j = request_document();
    j["workload"]["instance_gpu_types"]["g4dn.4xlarge"] = "A100";
    check_rejected<dnnplan::vm_request>(j, "workload.instance_gpu_types.g4dn.4xlarge", "a GPU type listed in workload.gpu_types");
    j = request_document();
    j["workload"]["instance_gpu_types"].erase("g4dn.4xlarge");
    check_rejected<dnnplan::vm_request>(j, "workload.instance_gpu_types.g4dn.4xlarge", "= missing");
    j = request_document();
    j["workload"]["instance_gpu_types"]["p3.2xlarge"] = "T4";
    check_rejected<dnnplan::vm_request>(j, "workload.instance_gpu_types.p3.2xlarge", "an instance type of the catalog");
    j = request_document();
    j["workload"]["gpu_types"]["T4"]["beta_c_s"] = 0;
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.beta_c_s", "a finite number > 0");
    check_rejected<dnnplan::sync_vm_workload>(j["workload"], "gpu_types.T4.beta_c_s");
    check_rejected<dnnplan::gpu_compute>(j["workload"]["gpu_types"]["T4"], "beta_c_s");
    j = request_document();
    j["workload"]["gpu_types"] = ordered_json::object();
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types", "at least one GPU type");
    j = request_document();
    j["workload"]["network"]["gamma"] = 0.5;
    check_rejected<dnnplan::vm_request>(j, "workload.network.gamma", "a number in [1, 10]");
    j = request_document();
    j["workload"]["batch"] = 0;
    check_rejected<dnnplan::vm_request>(j, "workload.batch", "a finite number > 0");
    j = request_document();
    j["workload"]["ring"] = {{"parameter_bytes", 0}, {"intra_node_bytes_per_s", 1e10}, {"inter_node_bytes_per_s", 1e9}};
    check_rejected<dnnplan::vm_request>(j, "workload.ring.parameter_bytes", "a finite number > 0");
    j = request_document();
    j["options"]["relative_gap"] = 1;
    check_rejected<dnnplan::vm_request>(j, "options.relative_gap", "a number in [0, 1)");
    check_rejected<dnnplan::vm_options>(j["options"], "relative_gap");
}

TEST_CASE("a VM request file is read from a stream; malformed text is a parse_error", "[io][json][vm_recommend]") {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/vm_recommend/small.json");
    REQUIRE(in);
    const auto request = dnnplan::parse_vm_request(in);
    CHECK(request.problem.catalog.instances.size() == 2);
    const auto result = dnnplan::recommend_vms(request);
    REQUIRE(result.best);
    REQUIRE(result.best->offers.size() == 1);
    CHECK(result.best->offers[0] == dnnplan::vm_offer_count{.type = "g4dn.12xlarge", .kind = dnnplan::price_kind::on_demand,
                                                            .count = 2});
    CHECK_THROWS_AS(dnnplan::parse_vm_request(std::string_view(R"({"catalog": )")), dnnplan::parse_error);
    CHECK_THROWS_WITH(dnnplan::parse_vm_request(std::string_view(R"({"objective": "min_cost", "objective": "min_cost"})")),
                      Contains("objective = given twice"));
    CHECK_THROWS_WITH(dnnplan::parse_vm_request(std::string_view(R"({"catalog": {"instances": []}})")),
                      Contains("workload = missing"));
}
