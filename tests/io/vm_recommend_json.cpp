// JSON of the VM recommender (io/vm_recommend_json.hpp for solve/vm_recommend/problem.hpp and solve/vm_recommend/request.hpp):
// round trips of every input and result type (unbounded limits and absent values as null), the
// request file read from a fixture and solved, 0.1's spellings (method "branch_and_bound",
// "node_budget", "evaluation_budget", a GPU's "alpha_c_s"/"beta_c_s") still read, and every
// rejection naming its field.

#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <catch2/catch.hpp>

#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::ordered_json;
using Catch::Matchers::Contains;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;

// Two T4 instance types (spotDNN Table III prices) and the Pollux-form T4 fit of the bundled problem.
constexpr const char* vm_request_text = R"({
  "catalog": {"instances": [
    {"name": "g4dn.12xlarge", "gpus": 4, "quota": 3, "spot_usd_per_h": 1.22, "on_demand_usd_per_h": 3.91},
    {"name": "g4dn.4xlarge", "gpus": 1, "quota": 3, "spot_usd_per_h": 0.36, "on_demand_usd_per_h": 1.20}]},
  "work": {"epochs": 2, "dataset_samples": 1000000},
  "constraints": {"deadline_s": 3600},
  "objective": "min_cost",
  "workload": {
    "gpu_types": {"T4": {"fixed_s": 0.05069, "per_sample_s": 0.00449}},
    "instance_gpu_types": {"g4dn.12xlarge": "T4", "g4dn.4xlarge": "T4"},
    "network": {"alpha_n_s": 0.3004, "beta_n_s": 0.005444, "alpha_r_s": 0.1038, "beta_r_s": 0.001932, "gamma": 2.339},
    "batch": 128},
  "options": {"pareto": true}
})";

ordered_json request_document() { return ordered_json::parse(vm_request_text); }

}  // namespace

TEST_CASE("a VM request is read with its defaults and solves as the model and problem it describes",
          "[io][json][vm_recommend]") {
    const auto request = request_document().get<dnnplan::vm_request>();
    CHECK(request.problem.work.total_samples() == 2e6);
    CHECK(request.problem.constraints.deadline_s == 3600);
    CHECK(std::isinf(request.problem.constraints.max_usd_per_h));  // absent: no budget
    CHECK(request.problem.constraints.allowed_price_kinds.size() == 2);
    CHECK(request.problem.objective == dnnplan::objective_kind::min_cost);
    CHECK(request.workload.policy == dnnplan::batch_policy::equal);       // absent: the default
    CHECK(request.workload.basis == dnnplan::batch_basis::per_replica);  // absent: the default
    CHECK(request.workload.network.delta_n_s == 0.0);
    CHECK(request.workload.network.gamma == 2.339);
    CHECK(request.workload.gpu_types.at("T4") == dnnplan::affine_time{.fixed_s = 0.05069, .per_sample_s = 0.00449});
    CHECK_FALSE(request.workload.ring);
    CHECK(request.options.pareto);
    CHECK(request.options.method == dnnplan::search_method::exact);

    const auto model = request.workload.model(request.problem.catalog);
    CHECK(model.spec().types[0].gpus == 4);
    CHECK(model.spec().types[1].compute.per_sample_s == 0.00449);
    const dnnplan::vm_result direct = dnnplan::solve(request, model);
    const dnnplan::vm_result via_request = dnnplan::solve(request);
    REQUIRE(via_request.status == dnnplan::solve_status::optimal);
    REQUIRE(via_request.plan);
    auto without_time = [](dnnplan::vm_result r) {  // elapsed_s depends on the machine
        r.counters.elapsed_s = 0;
        r.details.frontier_counters.elapsed_s = 0;
        return nlohmann::json(r);
    };
    CHECK(without_time(via_request) == without_time(direct));
    CHECK(via_request.plan->figures.time_s.value() <= 3600.0);
    CHECK_FALSE(via_request.details.frontier.empty());
}

TEST_CASE("every VM recommender type round-trips", "[io][json][vm_recommend][round_trip]") {
    const auto request = request_document().get<dnnplan::vm_request>();
    check_round_trip(request);
    check_round_trip(request.problem);
    check_round_trip(request.problem.work);
    check_round_trip(request.problem.constraints);
    check_round_trip(request.workload);
    check_round_trip(request.workload.network);
    check_round_trip(request.options);
    check_round_trip(dnnplan::vm_work{.samples = 5e6});
    check_round_trip(dnnplan::vm_constraints{});  // +inf budget and deadline <-> null
    CHECK(nlohmann::json(dnnplan::vm_constraints{})["max_usd_per_h"].is_null());
    CHECK(nlohmann::json(dnnplan::vm_constraints{})["deadline_s"].is_null());
    CHECK(std::isinf(ordered_json{{"deadline_s", nullptr}}.get<dnnplan::vm_constraints>().deadline_s));
    const dnnplan::vm_constraints every{.max_usd_per_h = 9.5, .min_samples_per_s = 100, .deadline_s = 7200, .max_instances = 4,
                                        .max_distinct_types = 1, .allowed_types = {"g4dn.4xlarge"},
                                        .allowed_price_kinds = {dnnplan::price_kind::on_demand}};
    check_round_trip(every);
    CHECK(nlohmann::json(every)["allowed_price_kinds"] == nlohmann::json::array({"on_demand"}));
    const dnnplan::vm_options options{.method = dnnplan::search_method::exhaustive, .pareto = true,
                                      .budget = {.max_nodes = 7, .max_evaluations = 9, .max_time_s = 0}, .relative_gap = 0.01};
    check_round_trip(options);
    CHECK(ordered_json(options).dump() ==
          R"({"method":"exhaustive","pareto":true,"budget":{"max_nodes":7,"max_evaluations":9,"max_time_s":0.0},"relative_gap":0.01})");
    check_round_trip(dnnplan::affine_time{.fixed_s = 0.1, .per_sample_s = 0.002});
    check_round_trip(dnnplan::ring_allreduce{.parameter_bytes = 1e8, .intra_node_bytes_per_s = 1e10,
                                             .inter_node_bytes_per_s = 1e9, .latency_s = 1e-3});
    auto with_ring = request.workload;
    with_ring.ring = dnnplan::ring_allreduce{.parameter_bytes = 1e8, .intra_node_bytes_per_s = 1e10, .inter_node_bytes_per_s = 1e9};
    with_ring.policy = dnnplan::batch_policy::balanced;
    with_ring.basis = dnnplan::batch_basis::global;
    with_ring.accumulation_steps = 2;
    with_ring.network.delta_n_s = 0.01;
    check_round_trip(with_ring);
    CHECK(nlohmann::json(request.workload)["ring"].is_null());
    CHECK(nlohmann::json(with_ring)["policy"] == "balanced");
    CHECK(nlohmann::json(with_ring)["basis"] == "global");
    CHECK(nlohmann::json(request.workload)["gpu_types"]["T4"] == nlohmann::json{{"fixed_s", 0.05069}, {"per_sample_s", 0.00449}});
    for (const auto o : {dnnplan::objective_kind::min_cost, dnnplan::objective_kind::max_throughput,
                         dnnplan::objective_kind::max_samples_per_usd}) {
        auto problem = request.problem;
        problem.objective = o;
        check_round_trip(problem);
        CHECK(nlohmann::json(problem)["objective"] == std::string(to_string(o)));
    }
    check_round_trip(dnnplan::search_method::exact);
    check_round_trip(dnnplan::batch_basis::global);
    check_round_trip(dnnplan::batch_policy::balanced);

    // Results: a plan with a frontier, an infeasible one (no plan, value or bound), a
    // budget-exhausted max_throughput search, and the empty result.
    const auto result = dnnplan::solve(request);
    REQUIRE(result.plan);
    check_round_trip(result);
    check_round_trip(*result.plan);
    check_round_trip(result.plan->offers.at(0));
    check_round_trip(result.plan->figures);
    check_round_trip(result.details);
    const nlohmann::json figures = result.plan->figures;
    CHECK(figures["time_s"].get<double>() == result.plan->figures.time_s.value());
    const ordered_json result_json = result;
    CHECK(result_json["objective_value"] == result.objective_value.value());
    CHECK(result_json["bound"] == result.bound.value());
    CHECK(result_json["details"]["method"] == "exact");
    CHECK(result_json["details"]["frontier_status"] == "optimal");
    CHECK(result_json["details"]["frontier"].size() == result.details.frontier.size());

    auto infeasible = request;
    infeasible.problem.constraints.deadline_s = 1;
    const auto none = dnnplan::solve(infeasible);
    REQUIRE(none.status == dnnplan::solve_status::infeasible);
    check_round_trip(none);
    const nlohmann::json none_json = none;
    CHECK(none_json["plan"].is_null());
    CHECK(none_json["objective_value"].is_null());
    CHECK(none_json["bound"].is_null());  // nothing proven when infeasible (0.1 wrote "inf")
    const auto none_back = none_json.get<dnnplan::vm_result>();
    CHECK_FALSE(none_back.objective_value.has_value());
    CHECK_FALSE(none_back.bound.has_value());

    auto fastest = request;
    fastest.problem.objective = dnnplan::objective_kind::max_throughput;
    fastest.problem.constraints.deadline_s = std::numeric_limits<double>::infinity();
    fastest.options = {.method = dnnplan::search_method::exhaustive, .budget = {.max_evaluations = 3}};
    const auto stopped = dnnplan::solve(fastest);
    REQUIRE(stopped.limit == dnnplan::search_limit::evaluations);
    check_round_trip(stopped);
    const auto stopped_back = nlohmann::json(stopped).get<dnnplan::vm_result>();
    CHECK(stopped_back.bound == stopped.bound);
    CHECK(stopped_back.objective_value == stopped.objective_value);
    CHECK(stopped_back.details.method == dnnplan::search_method::exhaustive);
    CHECK(stopped_back.plan == stopped.plan);

    check_round_trip(dnnplan::vm_result{});
    CHECK(nlohmann::json(dnnplan::vm_result{})["bound"].is_null());
    CHECK(nlohmann::json(dnnplan::vm_result{})["details"]["frontier_status"].is_null());

    // The text writer keeps the documented key order.
    const auto text = dnnplan::to_json_text(result);
    CHECK(text.find("\"status\"") < text.find("\"plan\""));
    CHECK(text.find("\"plan\"") < text.find("\"objective_value\""));
    CHECK(text.find("\"counters\"") < text.find("\"details\""));
    CHECK(text.find("\"details\"") < text.find("\"frontier\""));
    CHECK(nlohmann::json(dnnplan::parse_vm_result(text)) == nlohmann::json(result));
}

TEST_CASE("0.1's VM spellings are still read; given with their replacement they are rejected",
          "[io][json][vm_recommend][deprecated]") {
    auto j = request_document();
    j["options"] = {{"method", "branch_and_bound"}, {"node_budget", 100}, {"evaluation_budget", 200}};
    j["workload"]["gpu_types"]["T4"] = {{"alpha_c_s", 0.05069}, {"beta_c_s", 0.00449}};
    const auto old = j.get<dnnplan::vm_request>();
    CHECK(old.options.method == dnnplan::search_method::exact);
    CHECK(old.options.budget.max_nodes == 100);
    CHECK(old.options.budget.max_evaluations == 200);
    CHECK(old.options.budget.max_time_s == 0.0);
    CHECK(old.workload.gpu_types.at("T4") == dnnplan::affine_time{.fixed_s = 0.05069, .per_sample_s = 0.00449});
    CHECK(dnnplan::parse_vm_request(j.dump()).options.budget.max_nodes == 100);
    // Written with the current spellings: the request reads back the same.
    const ordered_json written = old;
    CHECK(written["options"] ==
          ordered_json::parse(R"({"method": "exact", "pareto": false,
                                  "budget": {"max_nodes": 100, "max_evaluations": 200, "max_time_s": 0.0},
                                  "relative_gap": 1e-9})"));
    CHECK(written["workload"]["gpu_types"]["T4"] == ordered_json{{"fixed_s", 0.05069}, {"per_sample_s", 0.00449}});
    check_round_trip(old);
    // Each alone, in vm_options read on its own.
    CHECK(ordered_json{{"method", "branch_and_bound"}}.get<dnnplan::vm_options>().method == dnnplan::search_method::exact);
    CHECK(ordered_json{{"node_budget", 5}}.get<dnnplan::vm_options>().budget.max_nodes == 5);
    CHECK(ordered_json{{"evaluation_budget", 6}}.get<dnnplan::vm_options>().budget.max_evaluations == 6);
    // The bundled 0.1 file (tests/fixtures/vm_recommend/small.json) says alpha_c_s and beta_c_s.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/vm_recommend/small.json");
    REQUIRE(in);
    CHECK(dnnplan::parse_vm_request(in).workload.gpu_types.at("T4").per_sample_s == 0.00449);

    // An old key with its replacement: rejected naming the old key.
    j = request_document();
    j["options"] = {{"budget", {{"max_nodes", 5}}}, {"node_budget", 5}};
    auto e = check_rejected<dnnplan::vm_request>(j, "options.node_budget");
    CHECK(e.expected() == "no value here when options.budget is given (node_budget is its deprecated spelling)");
    j["options"] = {{"evaluation_budget", 5}, {"budget", ordered_json::object()}};
    check_rejected<dnnplan::vm_request>(j, "options.evaluation_budget", "options.budget is given");
    j = request_document();
    j["workload"]["gpu_types"]["T4"] = {{"fixed_s", 0.05}, {"alpha_c_s", 0.05}, {"per_sample_s", 0.004}};
    e = check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.alpha_c_s");
    CHECK(e.expected() ==
          "no value here when workload.gpu_types.T4.fixed_s is given (alpha_c_s is its deprecated spelling)");
    j["workload"]["gpu_types"]["T4"] = {{"fixed_s", 0.05}, {"per_sample_s", 0.004}, {"beta_c_s", 0.004}};
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.beta_c_s", "workload.gpu_types.T4.per_sample_s is given");
    // Old keys are not listed as allowed.
    j = request_document();
    j["options"] = {{"verbose", true}};
    check_rejected<dnnplan::vm_request>(j, "options.verbose", "one of the keys method, pareto, budget, relative_gap");
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
    j["workload"]["gpu_types"]["T4"]["per_sample_s"] = "slow";
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.per_sample_s", "a number");
    j = request_document();
    j["workload"]["gpu_types"]["T4"] = {{"alpha_c_s", 0.05}, {"beta_c_s", "slow"}};  // named as written
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.beta_c_s", "a number");
    j = request_document();
    j["workload"]["gpu_types"]["T4"].erase("per_sample_s");
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.per_sample_s", "= missing");
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
    check_rejected<dnnplan::vm_request>(j, "objective",
                                        R"(one of "min_cost", "min_time", "max_throughput", "max_samples_per_usd")");
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
    check_rejected<dnnplan::vm_request>(j, "options.method", R"(one of "exact", "exhaustive", "sliding_window")");
    j = request_document();
    j["options"]["pareto"] = 1;
    check_rejected<dnnplan::vm_request>(j, "options.pareto", "true or false");
    j = request_document();
    j["options"]["budget"] = {{"max_nodes", -1}};
    check_rejected<dnnplan::vm_request>(j, "options.budget.max_nodes", "an integer in [0, 9223372036854775807]");
    j = request_document();
    j["catalog"]["instances"][1]["quota"] = 2.5;
    check_rejected<dnnplan::vm_request>(j, "catalog.instances[1].quota", "an integer");

    check_rejected<dnnplan::vm_result>(
        ordered_json::parse(R"({"status": "optimal", "limit": "none", "figures": "exact", "estimate": null, "reason": ""})"), "plan",
        "missing");
    auto result = ordered_json(dnnplan::vm_result{});
    result["bound"] = "infinity";
    check_rejected<dnnplan::vm_result>(result, "bound", "a number or null");
    result = ordered_json(dnnplan::vm_result{});
    result["details"]["frontier_status"] = "done";
    check_rejected<dnnplan::vm_result>(result, "details.frontier_status", "or null");
    result = ordered_json(dnnplan::vm_result{});
    result["details"]["method"] = "branch_and_bound";  // a deprecated spelling reads in results too
    CHECK(result.get<dnnplan::vm_result>().details.method == dnnplan::search_method::exact);
    result = ordered_json(dnnplan::vm_result{});
    result["objective_bound"] = 1;  // 0.1's name
    check_rejected<dnnplan::vm_result>(result, "objective_bound");
    result = ordered_json(dnnplan::vm_result{});
    result.erase("details");
    check_rejected<dnnplan::vm_result>(result, "details", "= missing");
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
    // The constraints' rules need the catalog: they are checked inside a problem (and a request).
    j = request_document();
    j["constraints"]["allowed_types"] = {"g4dn.4xlarge", "g4dn.4xlarge"};
    check_rejected<dnnplan::vm_request>(j, "constraints.allowed_types[1]", "a name not listed twice");
    auto problem = j;
    problem.erase("workload");
    problem.erase("options");
    check_rejected<dnnplan::vm_problem>(problem, "constraints.allowed_types[1]", "a name not listed twice");
    j = request_document();
    j["constraints"]["max_usd_per_h"] = 0;
    check_rejected<dnnplan::vm_request>(j, "constraints.max_usd_per_h", "a number > 0");
    static_cast<void>(ordered_json::parse(R"({"allowed_types": ["a"], "deadline_s": 10})").get<dnnplan::vm_constraints>());
    j = request_document();
    j["objective"] = "min_time";  // an objective_kind the recommender does not have
    check_rejected<dnnplan::vm_request>(j, "objective", R"("min_cost", "max_throughput" or "max_samples_per_usd")");
    j = request_document();
    j["options"]["method"] = "sliding_window";  // a search_method the recommender does not have
    check_rejected<dnnplan::vm_request>(j, "options.method", R"("exact" or "exhaustive")");
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
    j["workload"]["gpu_types"]["T4"]["per_sample_s"] = 0;
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types.T4.per_sample_s", "a finite number > 0");
    check_rejected<dnnplan::affine_time>(ordered_json{{"fixed_s", 0.05}, {"per_sample_s", -1}}, "per_sample_s",
                                         "a finite number >= 0");
    j = request_document();
    j["workload"]["gpu_types"] = ordered_json::object();
    check_rejected<dnnplan::vm_request>(j, "workload.gpu_types", "at least one GPU type");
    j = request_document();
    j["workload"]["network"]["gamma"] = 0.5;
    check_rejected<dnnplan::vm_request>(j, "workload.network.gamma", "a number in [1, 10]");
    check_rejected<dnnplan::sync_network>(j["workload"]["network"], "gamma", "a number in [1, 10]");
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
    j = request_document();
    j["options"]["budget"] = {{"max_time_s", -1}};
    check_rejected<dnnplan::vm_request>(j, "options.budget.max_time_s", "a finite number >= 0");
}

TEST_CASE("writing a VM result holding a non-finite number throws dnnplan::error", "[io][json][vm_recommend][errors]") {
    const auto result = dnnplan::solve(request_document().get<dnnplan::vm_request>());
    REQUIRE(result.plan);
    auto broken = result;
    broken.plan->figures.samples_per_usd = std::numeric_limits<double>::infinity();
    try {
        static_cast<void>(dnnplan::to_json_text(broken));
        FAIL("written");
    } catch (const dnnplan::invalid_input& e) {
        FAIL("an invalid_input (the caller's fault), not a library error: " << e.what());
    } catch (const dnnplan::error& e) {
        CHECK_THAT(e.what(), Contains("plan.figures.samples_per_usd = inf"));
    }
    broken = result;
    broken.bound = -std::numeric_limits<double>::infinity();  // none is an empty optional, never -inf
    CHECK_THROWS_WITH(dnnplan::to_json_text(broken), Contains("bound = -inf"));
    broken = result;
    REQUIRE_FALSE(broken.details.frontier.empty());
    broken.details.frontier[0].figures.time_s = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(dnnplan::to_json_text(broken), Contains("details.frontier[0].figures.time_s = nan"));
}

TEST_CASE("a VM request file is read from a stream; malformed text is a parse_error", "[io][json][vm_recommend]") {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/vm_recommend/small.json");
    REQUIRE(in);
    const auto request = dnnplan::parse_vm_request(in);
    CHECK(request.problem.catalog.instances.size() == 2);
    const auto result = dnnplan::solve(request);
    REQUIRE(result.plan);
    REQUIRE(result.plan->offers.size() == 1);
    CHECK(result.plan->offers[0] ==
          dnnplan::vm_offer_count{.type = "g4dn.12xlarge", .kind = dnnplan::price_kind::on_demand, .count = 2});
    CHECK_THROWS_AS(dnnplan::parse_vm_request(std::string_view(R"({"catalog": )")), dnnplan::parse_error);
    CHECK_THROWS_WITH(dnnplan::parse_vm_request(std::string_view(R"({"objective": "min_cost", "objective": "min_cost"})")),
                      Contains("objective = given twice"));
    CHECK_THROWS_WITH(dnnplan::parse_vm_request(std::string_view(R"({"catalog": {"instances": []}})")),
                      Contains("workload = missing"));
    CHECK(dnnplan::parse_vm_result(dnnplan::to_json_text(result)).plan == result.plan);
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (vm)", "[io][json][fuzz]") {
    // A seed its reader rejects would seed only the error paths (scripts/fuzz).
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_2_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::vm_result>(text));
    }
}
