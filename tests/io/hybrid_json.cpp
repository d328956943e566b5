// JSON conversion of the pipeline models, the pipeline partitioner and the hybrid-parallel
// planner (the section of io/json.hpp that holds them): round trips of every input and result
// type, null for infinite figures, and every rejection naming its field.

#include <dnnplan/io/json.hpp>

#include <catch2/catch.hpp>

#include "../support/json_checks.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using nlohmann::ordered_json;
using Catch::Matchers::Contains;

// A four-layer chain profiled at batch 8, written as JSON (a batch_profile).
constexpr const char* profile_text = R"({"batch_size": 8, "graph": {"layers": [
    {"id": "in", "description": "Input0", "forward_s": 0, "backward_s": 0, "activation_bytes": 1e5, "parameter_bytes": 0},
    {"id": "c1", "description": "Conv2d", "forward_s": 0.01, "backward_s": 0.02, "activation_bytes": 8e6, "parameter_bytes": 2e6},
    {"id": "c2", "description": "Conv2d", "forward_s": 0.02, "backward_s": 0.04, "activation_bytes": 4e6, "parameter_bytes": 8e6},
    {"id": "fc", "description": "Linear", "forward_s": 0.004, "backward_s": 0.008, "activation_bytes": 1e3, "parameter_bytes": 8e8,
     "optimizer_state_bytes": 8e8}],
  "edges": [{"from": "in", "to": "c1"}, {"from": "c1", "to": "c2"}, {"from": "c2", "to": "fc"}]}})";

constexpr const char* container_text = R"({"name": "v100x1", "gpu_type": "V100", "gpus": 1, "vcpus": 0, "memory_gib": 0,
    "gpu_usd_per_s": 0.00085, "vcpu_usd_per_s": 0, "gib_usd_per_s": 0, "max_containers": 8})";

ordered_json problem_document() {
    ordered_json j;
    j["profiles"] = ordered_json::array({ordered_json::parse(profile_text)});
    j["catalog"] = {{"containers", ordered_json::array({ordered_json::parse(container_text)})}};
    j["max_workers"] = 4;
    j["global_batch_sizes"] = {8, 16};
    return j;
}

using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;

}  // namespace

TEST_CASE("every input and result type of the planner round-trips", "[io][json][hybrid][round_trip]") {
    const auto problem = problem_document().get<dnnplan::hybrid_problem>();
    REQUIRE(problem.profiles.size() == 1);
    CHECK(problem.profiles[0].graph.size() == 4);
    CHECK(problem.catalog.containers[0].gpu_memory_bytes == 16e9);  // absent: the default
    check_round_trip(problem);
    check_round_trip(problem.profiles[0]);
    check_round_trip(problem.catalog);
    check_round_trip(problem.catalog.containers[0]);

    const dnnplan::hybrid_options options{.objective = dnnplan::hybrid_objective::max_samples_per_s, .budget_usd_per_h = 9.5,
                                          .max_micro_batches = 4, .sync_overlap_ratio = 0.25};
    check_round_trip(options);
    check_round_trip(dnnplan::hybrid_options{});  // budget +inf <-> null
    CHECK(nlohmann::json(dnnplan::hybrid_options{})["budget_usd_per_h"].is_null());

    const auto chain = dnnplan::build_layer_chain(problem.profiles);
    check_round_trip(chain);
    check_round_trip(chain.layers[2]);
    check_round_trip(dnnplan::layer_chain_options{.optimizer_state_ratio = 3});
    check_round_trip(dnnplan::linear_time_model{.fixed_s = 0.5, .per_sample_s = 0.25});
    check_round_trip(dnnplan::batch_time_sample{.batch = 32, .time_s = 0.1});
    const dnnplan::pipeline_1f1b_options model_options{.micro_batch_size = 4, .micro_batches = 2, .bandwidth_bytes_per_s = 2e9,
                                                      .sync_overlap_ratio = 0.5, .device_memory_bytes = 1.62e9, .speed_ratio = 1.5};
    check_round_trip(model_options);
    check_round_trip(dnnplan::pipeline_dp_options{.max_devices = 3, .max_stages = 2});

    // A partition whose one-device entry has no plan (the fc layer's 1.6e9 bytes of parameters
    // and state and the convolutions' 3e7 do not fit together in 1.62e9): infinite times are
    // written as null.
    const dnnplan::pipeline_1f1b_model model(chain, model_options);
    const auto dp = dnnplan::pipeline_dp_partition(model, {.max_devices = 3});
    check_round_trip(dp);
    check_round_trip(dp.best);
    check_round_trip(model.breakdown({.first_state = 0, .end_state = 3, .replicas = 1, .stage_index = 0, .stage_count = 1}));
    const nlohmann::json dp_json = dp;
    CHECK(dp_json["by_devices"][0]["time_s"].is_null());
    CHECK(std::isinf(dp_json.get<dnnplan::pipeline_dp_result>().by_devices[0].time_s));

    const auto result = dnnplan::solve(problem, options);
    REQUIRE(result.plan);
    check_round_trip(result);
    check_round_trip(*result.plan);
    check_round_trip(result.plan->stages[0]);
    check_round_trip(dnnplan::hybrid_result{});  // no plan: null
    const auto replanned = dnnplan::replan(problem, options, *result.plan, 1);
    check_round_trip(replanned);
    check_round_trip(dnnplan::layer_move{.layer = 2, .id = "c2", .from_stage = -1, .to_stage = 1, .bytes = 2.4e7});
    const nlohmann::json move = dnnplan::layer_move{.layer = 2, .id = "c2", .from_stage = -1, .to_stage = 1, .bytes = 2.4e7};
    CHECK(move["from_stage"].is_null());
    CHECK(move.get<dnnplan::layer_move>().from_stage == -1);
    check_round_trip(dnnplan::hybrid_objective::min_usd_per_h);
    CHECK(nlohmann::json(dnnplan::hybrid_objective::max_samples_per_usd) == "max_samples_per_usd");
}

TEST_CASE("the planner's readers reject unknown and missing keys and wrong types, naming them", "[io][json][hybrid][errors]") {
    auto j = problem_document();
    j["catalog"]["containers"][0]["colour"] = "blue";
    check_rejected<dnnplan::hybrid_problem>(j, "catalog.containers[0].colour", "one of the keys name, gpu_type");
    j = problem_document();
    j["catalog"]["containers"][0].erase("gpus");
    check_rejected<dnnplan::hybrid_problem>(j, "catalog.containers[0].gpus", "= missing");
    j = problem_document();
    j.erase("global_batch_sizes");
    check_rejected<dnnplan::hybrid_problem>(j, "global_batch_sizes", "= missing");
    j = problem_document();
    j["max_workers"] = -1;
    check_rejected<dnnplan::hybrid_problem>(j, "max_workers", "an integer in [0, 2147483647]");
    j = problem_document();
    j["profiles"][0]["graph"]["layers"][1]["forward_s"] = "fast";
    check_rejected<dnnplan::hybrid_problem>(j, "profiles[0].graph.layers[1].forward_s", "a number");
    j = problem_document();
    j["profiles"][0]["graph"]["edges"][0]["to"] = "nowhere";
    check_rejected<dnnplan::hybrid_problem>(j, "profiles[0].graph.edges[0].to");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"objective": "fastest"})"), "objective",
                                            "one of \"max_samples_per_usd\", \"max_samples_per_s\", \"min_usd_per_h\"");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"budget": 3})"), "budget");
    check_rejected<dnnplan::hybrid_result>(ordered_json::parse(R"({"status": "optimal", "reason": ""})"), "plan", "missing");
    check_rejected<dnnplan::layer_chain>(
        ordered_json::parse(R"({"layers": [], "cut_bytes_per_sample": [1], "removed_layers": []})"), "cut_bytes_per_sample",
        "one value per layer (0)");
    check_rejected<dnnplan::stage_breakdown>(ordered_json::parse(R"({"fits": true})"), "samples_per_replica", "missing");
    check_rejected<dnnplan::layer_move>(
        ordered_json::parse(R"({"layer": 1, "id": "x", "from_stage": -1, "to_stage": 0, "bytes": 1})"), "from_stage",
        "or null");
    check_rejected<dnnplan::pipeline_dp_options>(ordered_json::parse(R"({"max_devices": 2.5})"), "max_devices");
    check_rejected<dnnplan::container_catalog>(ordered_json::parse("[]"), "(root)", "an object");
}

TEST_CASE("the planner's readers run validate() with the same field paths", "[io][json][hybrid][errors]") {
    auto j = problem_document();
    j["catalog"]["containers"][0]["gpus"] = 0;
    check_rejected<dnnplan::hybrid_problem>(j, "catalog.containers[0].gpus", "an integer >= 1");
    check_rejected<dnnplan::container_catalog>(j["catalog"], "containers[0].gpus");
    check_rejected<dnnplan::container_type>(j["catalog"]["containers"][0], "gpus");
    j = problem_document();
    j["catalog"]["containers"].push_back(j["catalog"]["containers"][0]);
    check_rejected<dnnplan::hybrid_problem>(j, "catalog.containers[1].name", "a name no other container type has");
    j = problem_document();
    j["global_batch_sizes"] = {8, 0};
    check_rejected<dnnplan::hybrid_problem>(j, "global_batch_sizes[1]");
    j = problem_document();
    j["profiles"][0]["batch_size"] = 0;
    check_rejected<dnnplan::hybrid_problem>(j, "profiles[0].batch_size", "a finite number > 0");
    check_rejected<dnnplan::batch_profile>(j["profiles"][0], "batch_size");
    j = problem_document();
    j["profiles"] = ordered_json::array();
    check_rejected<dnnplan::hybrid_problem>(j, "profiles", "at least one profile");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"sync_overlap_ratio": 1.5})"), "sync_overlap_ratio", "[0, 1]");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"objective": "min_usd_per_h"})"), "target_samples_per_s");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"budget_usd_per_h": 0})"), "budget_usd_per_h");
    check_rejected<dnnplan::pipeline_1f1b_options>(ordered_json::parse(R"({"micro_batches": 0})"), "micro_batches");
    check_rejected<dnnplan::pipeline_dp_options>(ordered_json::parse(R"({"max_devices": 0})"), "max_devices");
    check_rejected<dnnplan::linear_time_model>(ordered_json::parse(R"({"fixed_s": -1, "per_sample_s": 0})"), "fixed_s");
    check_rejected<dnnplan::layer_chain_options>(ordered_json::parse(R"({"optimizer_state_ratio": -2})"), "optimizer_state_ratio");
}

TEST_CASE("a container catalog is read from text; malformed text is a parse_error", "[io][json][hybrid]") {
    const std::string text = std::string(R"({"containers": [)") + container_text + "]}";
    const auto catalog = dnnplan::parse_container_catalog(std::string_view(text));
    REQUIRE(catalog.containers.size() == 1);
    CHECK(catalog.containers[0].usd_per_s() == Approx(0.00085));
    CHECK_THROWS_AS(dnnplan::parse_container_catalog(std::string_view(R"({"containers": [)")), dnnplan::parse_error);
    CHECK_THROWS_WITH(dnnplan::parse_container_catalog(std::string_view(R"({"containers": [], "containers": []})")),
                      Contains("containers = given twice"));
    CHECK_THROWS_WITH(dnnplan::parse_container_catalog(std::string_view(R"({"containers": []})")),
                      Contains("containers = []: expected at least one container type"));
}
