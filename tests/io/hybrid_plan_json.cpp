// JSON of the hybrid-parallel planner on serverless containers (io/hybrid_plan_json.hpp): round trips
// of every input and result type (the request, the result shape, the re-plan), null for an
// unbounded budget and for a layer in no stage, 0.1's objective spellings, and every rejection
// naming its field. (The layer graph, the chain and the pipeline model's types are in
// tests/io/pipeline_plan_json.cpp.)

#include <dnnplan/io/hybrid_plan_json.hpp>

#include <catch2/catch.hpp>

#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::ordered_json;
using Catch::Matchers::Contains;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;

// A four-layer chain profiled at batch 8, written as JSON (a batch_profile).
constexpr const char* hybrid_profile_text = R"({"batch_size": 8, "graph": {"layers": [
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
    j["profiles"] = ordered_json::array({ordered_json::parse(hybrid_profile_text)});
    j["catalog"] = {{"containers", ordered_json::array({ordered_json::parse(container_text)})}};
    j["max_workers"] = 4;
    j["global_batch_sizes"] = {8, 16};
    return j;
}

const dnnplan::hybrid_options throughput_options{.objective = dnnplan::objective_kind::max_throughput,
                                                 .budget_usd_per_h = 9.5,
                                                 .max_micro_batches = 4,
                                                 .sync_overlap_ratio = 0.25};

}  // namespace

TEST_CASE("every input and result type of the hybrid planner round-trips", "[io][json][hybrid][round_trip]") {
    const auto problem = problem_document().get<dnnplan::hybrid_problem>();
    REQUIRE(problem.profiles.size() == 1);
    CHECK(problem.profiles[0].graph.size() == 4);
    CHECK(problem.catalog.containers[0].gpu_memory_bytes == 16e9);  // absent: the default
    check_round_trip(problem);
    check_round_trip(problem.profiles[0]);
    check_round_trip(problem.catalog);
    check_round_trip(problem.catalog.containers[0]);

    check_round_trip(throughput_options);
    check_round_trip(dnnplan::hybrid_options{});  // budget +inf <-> null
    CHECK(nlohmann::json(dnnplan::hybrid_options{})["budget_usd_per_h"].is_null());
    CHECK(ordered_json::parse(R"({"budget_usd_per_h": null})").get<dnnplan::hybrid_options>().budget_usd_per_h ==
          std::numeric_limits<double>::infinity());
    CHECK(ordered_json(throughput_options)["objective"] == "max_throughput");

    const dnnplan::hybrid_request request{.problem = problem, .options = throughput_options};
    check_round_trip(request);
    const ordered_json request_json = request;
    // The problem's members side by side with the options.
    ordered_json problem_part = request_json;
    problem_part.erase("options");
    CHECK(problem_part == ordered_json(problem));
    CHECK(request_json["options"] == ordered_json(throughput_options));
    // Options may be left out: the defaults.
    const auto bare = problem_document().get<dnnplan::hybrid_request>();
    CHECK(bare.options.objective == dnnplan::objective_kind::max_samples_per_usd);

    const auto result = dnnplan::solve(request);
    REQUIRE(result.status == dnnplan::solve_status::optimal);
    REQUIRE(result.plan);
    check_round_trip(result);
    check_round_trip(*result.plan);
    check_round_trip(result.plan->stages[0]);
    check_round_trip(dnnplan::hybrid_result{});  // no plan: null
    const ordered_json j = result;
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound", "best_effort", "counters"});  // no details
    CHECK(j["objective_value"] == result.plan->samples_per_s);
    CHECK(j["plan"]["container"] == "v100x1");
    CHECK(j["plan"]["stages"][0]["figures"]["stage_time_s"] == result.plan->stages[0].figures.stage_time_s);
    CHECK(j["counters"]["nodes"] == result.counters.nodes);
    CHECK(j.get<dnnplan::hybrid_result>().plan == result.plan);
    CHECK(ordered_json(dnnplan::hybrid_result{})["plan"].is_null());

    const auto replanned = dnnplan::replan(request, *result.plan, 1);
    check_round_trip(replanned);
    const dnnplan::layer_move move{.layer = 2, .id = "c2", .from_stage = std::nullopt, .to_stage = 1, .bytes = 2.4e7};
    check_round_trip(move);
    const nlohmann::json move_json = move;
    CHECK(move_json["from_stage"].is_null());
    CHECK(move_json["to_stage"] == 1);
    CHECK_FALSE(move_json.get<dnnplan::layer_move>().from_stage.has_value());
    check_round_trip(dnnplan::layer_move{.layer = 0, .id = "in", .from_stage = 0, .to_stage = std::nullopt, .bytes = 0});
}

TEST_CASE("the hybrid objectives are written by their names; 0.1's spellings are still read", "[io][json][hybrid][deprecated]") {
    using dnnplan::objective_kind;
    for (const auto o : {objective_kind::max_samples_per_usd, objective_kind::max_throughput, objective_kind::min_cost}) {
        dnnplan::hybrid_options options;
        options.objective = o;
        options.target_samples_per_s = 100;
        check_round_trip(options);
        CHECK(ordered_json(options)["objective"] == std::string(to_string(o)));
    }
    CHECK(ordered_json::parse(R"({"objective": "max_samples_per_s"})").get<dnnplan::hybrid_options>().objective ==
          objective_kind::max_throughput);
    CHECK(ordered_json::parse(R"({"objective": "min_usd_per_h", "target_samples_per_s": 10})")
              .get<dnnplan::hybrid_options>()
              .objective == objective_kind::min_cost);
    const auto old = ordered_json::parse(R"({"objective": "max_samples_per_s"})").get<dnnplan::hybrid_options>();
    CHECK(ordered_json(old)["objective"] == "max_throughput");  // written with the current name
}

TEST_CASE("the hybrid readers reject unknown and missing keys and wrong types, naming them", "[io][json][hybrid][errors]") {
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
                                            R"(one of "min_cost", "min_time", "max_throughput", "max_samples_per_usd")");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"budget": 3})"), "budget");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"budget_usd_per_h": "none"})"), "budget_usd_per_h",
                                            "a number or null");
    check_rejected<dnnplan::hybrid_result>(
        ordered_json::parse(R"({"status": "optimal", "limit": "none", "figures": "exact", "estimate": null, "reason": ""})"), "plan",
        "missing");
    check_rejected<dnnplan::layer_move>(ordered_json::parse(R"({"layer": 1, "id": "x", "from_stage": -1, "to_stage": 0, "bytes": 1})"),
                                        "from_stage", "or null");
    check_rejected<dnnplan::layer_move>(ordered_json::parse(R"({"layer": 1, "id": "x", "from_stage": 0, "bytes": 1})"), "to_stage",
                                        "= missing");
    check_rejected<dnnplan::container_catalog>(ordered_json::parse("[]"), "(root)", "an object");

    // The request: the problem's members and the options, each named from the root.
    ordered_json request = problem_document();
    request["options"] = {{"max_stages", -1}};
    check_rejected<dnnplan::hybrid_request>(request, "options.max_stages");
    request = problem_document();
    request["colour"] = 1;
    check_rejected<dnnplan::hybrid_request>(request, "colour",
                                            "one of the keys profiles, catalog, max_workers, global_batch_sizes, options");
    request = {{"options", ordered_json::object()}};
    check_rejected<dnnplan::hybrid_request>(request, "profiles", "= missing");

    // A result: its plan's figures and stages.
    const auto result = dnnplan::solve(dnnplan::hybrid_request{.problem = problem_document().get<dnnplan::hybrid_problem>(),
                                                               .options = throughput_options});
    REQUIRE(result.plan);
    ordered_json r = result;
    r["plan"]["stages"][0]["figures"]["fits"] = "yes";
    check_rejected<dnnplan::hybrid_result>(r, "plan.stages[0].figures.fits", "true or false");
    r = result;
    r["plan"]["containers"] = 1.5;
    check_rejected<dnnplan::hybrid_result>(r, "plan.containers");
    r = result;
    r["plan"] = nullptr;
    check_rejected<dnnplan::hybrid_result>(r, "plan", "status optimal needs a plan");
    r = result;
    r["details"] = ordered_json::object();  // the hybrid planner has none
    check_rejected<dnnplan::hybrid_result>(r, "details");
}

TEST_CASE("the hybrid readers run validate() with the same field paths", "[io][json][hybrid][errors]") {
    auto j = problem_document();
    j["catalog"]["containers"][0]["gpus"] = 0;
    check_rejected<dnnplan::hybrid_problem>(j, "catalog.containers[0].gpus", "an integer >= 1");
    check_rejected<dnnplan::container_catalog>(j["catalog"], "containers[0].gpus");
    check_rejected<dnnplan::container_type>(j["catalog"]["containers"][0], "gpus");
    // A request holds the problem's members side by side with "options" (as the spot and VM requests
    // do), so they are named from the root too.
    check_rejected<dnnplan::hybrid_request>(j, "catalog.containers[0].gpus", "an integer >= 1");
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
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"objective": "min_cost"})"), "target_samples_per_s",
                                            "with the objective min_cost");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"objective": "min_time"})"), "objective",
                                            R"("max_samples_per_usd", "max_throughput" or "min_cost")");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"budget_usd_per_h": 0})"), "budget_usd_per_h");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"optimizer_state_ratio": -2})"), "optimizer_state_ratio");
    check_rejected<dnnplan::hybrid_options>(ordered_json::parse(R"({"max_micro_batches": 0})"), "max_micro_batches");
}

TEST_CASE("writing a hybrid result whose plan holds a non-finite number throws dnnplan::error", "[io][json][hybrid][errors]") {
    const auto result = dnnplan::solve(dnnplan::hybrid_request{.problem = problem_document().get<dnnplan::hybrid_problem>(),
                                                               .options = throughput_options});
    REQUIRE(result.plan);
    auto broken = result;
    broken.plan->samples_per_usd = std::numeric_limits<double>::infinity();
    try {
        static_cast<void>(dnnplan::to_json_text(broken));
        FAIL("written");
    } catch (const dnnplan::invalid_input& e) {
        FAIL("an invalid_input (the caller's fault), not a library error: " << e.what());
    } catch (const dnnplan::error& e) {
        CHECK_THAT(e.what(), Contains("plan.samples_per_usd = inf"));
    }
    // A stage's time +inf is written as null (a stage that does not fit), not an error.
    broken = result;
    broken.plan->stages[0].figures.stage_time_s = std::numeric_limits<double>::infinity();
    CHECK(ordered_json(broken)["plan"]["stages"][0]["figures"]["stage_time_s"].is_null());
    broken.plan->stages[0].figures.compute_s = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(dnnplan::to_json_text(broken), Contains("plan.stages[0].figures.compute_s = nan"));
}

TEST_CASE("a container catalog is read from text; malformed text is a parse_error", "[io][json][hybrid]") {
    const std::string text = std::string(R"({"containers": [)") + container_text + "]}";
    const auto catalog = dnnplan::parse_container_catalog(std::string_view(text));
    REQUIRE(catalog.containers.size() == 1);
    CHECK(catalog.containers[0].usd_per_s() == Approx(0.00085));
    CHECK(dnnplan::parse_json<dnnplan::container_catalog>(text).containers[0].name == "v100x1");
    CHECK_THROWS_AS(dnnplan::parse_container_catalog(std::string_view(R"({"containers": [)")), dnnplan::parse_error);
    CHECK_THROWS_WITH(dnnplan::parse_container_catalog(std::string_view(R"({"containers": [], "containers": []})")),
                      Contains("containers = given twice"));
    CHECK_THROWS_WITH(dnnplan::parse_container_catalog(std::string_view(R"({"containers": []})")),
                      Contains("containers = []: expected at least one container type"));
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (hybrid)", "[io][json][fuzz]") {
    // A seed its reader rejects would seed only the error paths (scripts/fuzz).
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_5_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::hybrid_result>(text));
    }
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_6_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::replan_result>(text));
    }
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "hybrid_request")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::hybrid_request>(text));
    }
}
