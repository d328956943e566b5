// JSON of the layer graph, the chain types, the pipeline models and the partitioning planners
// (io/pipeline_plan_json.hpp): the layer graph by id (every PipeDream fixture round-trips; every
// rejection names its field, the graph's own rules included), the layer chain and its options,
// the 1F1B model's configuration and stage figures, PipeDream's request and result, and the
// pipeline DP's request and result (null where a device budget has no plan).

#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>

#include <catch2/catch.hpp>

#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"
#include "../support/pipedream_fixtures.hpp"

#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using nlohmann::ordered_json;
using Catch::Matchers::Contains;
using dnnplan_test::check_rejected;
using dnnplan_test::check_round_trip;
using dnnplan_test::same;
using dnnplan_test::pipedream_fixture_text;
using dnnplan_test::pipedream_node;

ordered_json small_graph_document() {
    return ordered_json::parse(R"({"layers": [
        {"id": "a", "description": "Input", "forward_s": 0, "backward_s": 0, "activation_bytes": 8, "parameter_bytes": 0},
        {"id": "b", "description": "Linear", "forward_s": 0.5, "backward_s": 1, "activation_bytes": 4, "parameter_bytes": 16},
        {"id": "c", "description": "Softmax", "forward_s": 0.1, "backward_s": 0.1, "activation_bytes": 4, "parameter_bytes": 0}],
      "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]})");
}

// A four-layer chain profiled at batch 8, written as JSON (a batch_profile).
constexpr const char* partition_profile_text = R"({"batch_size": 8, "graph": {"layers": [
    {"id": "in", "description": "Input0", "forward_s": 0, "backward_s": 0, "activation_bytes": 1e5, "parameter_bytes": 0},
    {"id": "c1", "description": "Conv2d", "forward_s": 0.01, "backward_s": 0.02, "activation_bytes": 8e6, "parameter_bytes": 2e6},
    {"id": "c2", "description": "Conv2d", "forward_s": 0.02, "backward_s": 0.04, "activation_bytes": 4e6, "parameter_bytes": 8e6},
    {"id": "fc", "description": "Linear", "forward_s": 0.004, "backward_s": 0.008, "activation_bytes": 1e3, "parameter_bytes": 8e8,
     "optimizer_state_bytes": 8e8}],
  "edges": [{"from": "in", "to": "c1"}, {"from": "c1", "to": "c2"}, {"from": "c2", "to": "fc"}]}})";

// The 1F1B configuration under which the one-device pipeline does not fit (the fc layer's 1.6e9
// bytes of parameters and state and the convolutions' 3e7 exceed 1.62e9 together).
const dnnplan::pipeline_config tight_config{.micro_batch_size = 4, .micro_batches = 2, .bandwidth_bytes_per_s = 2e9,
                                            .sync_overlap_ratio = 0.5, .device_memory_bytes = 1.62e9, .speed_ratio = 1.5};

}  // namespace

// ---- the layer graph ------------------------------------------------------------------------------

TEST_CASE("layer_graph JSON: every fixture round-trips", "[io][json][partition]") {
    for (const char* model : {"vgg16", "resnet50", "alexnet", "gnmt"}) {
        INFO(model);
        const auto g = dnnplan::parse_pipedream_graph(pipedream_fixture_text(model));
        const nlohmann::json j = g;
        CHECK(same(j.get<dnnplan::layer_graph>(), g));
        const ordered_json o = g;
        CHECK(same(o.get<dnnplan::layer_graph>(), g));
        CHECK(same(nlohmann::json::parse(j.dump()).get<dnnplan::layer_graph>(), g));  // doubles survive text
        CHECK(same(dnnplan::parse_json<dnnplan::layer_graph>(dnnplan::to_json_text(g)), g));
    }
    check_round_trip(dnnplan::parse_pipedream_graph(pipedream_fixture_text("alexnet")));
}

TEST_CASE("layer_graph JSON: layout, by id; optimizer_state_bytes always written", "[io][json][partition]") {
    auto layers = dnnplan::parse_pipedream_graph(pipedream_node("node1") + pipedream_node("node2") + "\tnode1 -- node2\n").layers();
    layers[1].optimizer_state_bytes = 80.0;
    const dnnplan::layer_graph g(layers, {{0, 1}});
    const ordered_json j = g;
    CHECK(j.dump() ==
          R"j({"layers":[{"id":"node1","description":"Linear(in_features=4, out_features=4)","forward_s":0.001,)j"
          R"j("backward_s":0.002,"activation_bytes":100.0,"parameter_bytes":10.0,"optimizer_state_bytes":null},)j"
          R"j({"id":"node2","description":"Linear(in_features=4, out_features=4)","forward_s":0.001,)j"
          R"j("backward_s":0.002,"activation_bytes":100.0,"parameter_bytes":10.0,"optimizer_state_bytes":80.0}],)j"
          R"j("edges":[{"from":"node1","to":"node2"}]})j");
    const auto back = j.get<dnnplan::layer_graph>();
    CHECK(same(back, g));
    CHECK(back.at(1).optimizer_state_bytes == 80.0);
    CHECK_FALSE(back.at(0).optimizer_state_bytes.has_value());

    // A layer on its own; optimizer_state_bytes may be null or absent.
    auto one = ordered_json(g.at(0));
    CHECK(one["optimizer_state_bytes"].is_null());
    CHECK(same(one.get<dnnplan::layer>(), g.at(0)));
    one.erase("optimizer_state_bytes");
    CHECK_FALSE(one.get<dnnplan::layer>().optimizer_state_bytes.has_value());
    CHECK(same(one.get<dnnplan::layer>(), g.at(0)));
    check_round_trip(dnnplan::layer_graph{});
    CHECK(ordered_json(dnnplan::layer_graph{}).dump() == R"({"layers":[],"edges":[]})");
}

TEST_CASE("layer_graph JSON: rejections name the field", "[io][json][partition][errors]") {
    using dnnplan::layer_graph;
    const auto ok = small_graph_document().get<layer_graph>();
    CHECK(ok.size() == 3);
    CHECK(ok.edges() == std::vector<dnnplan::layer_edge>{{0, 1}, {1, 2}});

    auto d = small_graph_document();
    d["edges"][1]["from"] = "z";
    auto e = check_rejected<layer_graph>(d, "edges[1].from");
    CHECK(e.value() == "\"z\"");
    CHECK(e.expected() == "the id of a layer in layers");

    d = small_graph_document();
    d["edges"][0]["to"] = "nope";
    check_rejected<layer_graph>(d, "edges[0].to");

    d = small_graph_document();
    d["edges"][0]["to"] = 1;  // an index is not an id
    CHECK(check_rejected<layer_graph>(d, "edges[0].to").expected() == "a string");

    d = small_graph_document();
    d["edges"][0]["weight"] = 1;
    check_rejected<layer_graph>(d, "edges[0].weight");

    d = small_graph_document();
    d["edges"][0].erase("from");
    CHECK(check_rejected<layer_graph>(d, "edges[0].from").value() == "missing");

    d = small_graph_document();
    d["layers"][1]["flops"] = 1;
    check_rejected<layer_graph>(d, "layers[1].flops");

    d = small_graph_document();
    d["layers"][2].erase("backward_s");
    CHECK(check_rejected<layer_graph>(d, "layers[2].backward_s").value() == "missing");

    d = small_graph_document();
    d.erase("edges");
    check_rejected<layer_graph>(d, "edges");

    d = small_graph_document();
    d["edges"] = ordered_json::object();
    check_rejected<layer_graph>(d, "edges");

    d = small_graph_document();
    d["colour"] = "red";
    check_rejected<layer_graph>(d, "colour");

    CHECK(check_rejected<layer_graph>(ordered_json::array(), "(root)").expected() == "an object");

    // The constructor's rules, with its field names.
    d = small_graph_document();
    d["layers"][1]["forward_s"] = -1;
    check_rejected<layer_graph>(d, "layers[1].forward_s");

    d = small_graph_document();
    d["layers"][2]["id"] = "a";
    check_rejected<layer_graph>(d, "layers[2].id");

    d = small_graph_document();
    d["layers"][0]["id"] = "";
    check_rejected<layer_graph>(d, "layers[0].id");

    d = small_graph_document();
    d["edges"][1]["to"] = "b";
    e = check_rejected<layer_graph>(d, "edges[1].to");
    CHECK(e.value() == "\"b\"");
    CHECK(e.expected() == "a layer other than its source b (no self-loops)");

    d = small_graph_document();
    d["edges"].push_back({{"from", "a"}, {"to", "b"}});
    CHECK(check_rejected<layer_graph>(d, "edges").value() == "a -> b");

    d = small_graph_document();
    d["edges"].push_back({{"from", "c"}, {"to", "a"}});
    e = check_rejected<layer_graph>(d, "edges");
    CHECK(e.expected() == "an acyclic graph");
    CHECK(e.value().starts_with("a cycle through "));

    // Inside a document the graph's own rules are named from the document's root.
    auto profile = ordered_json{{"batch_size", 8}, {"graph", small_graph_document()}};
    profile["graph"]["layers"][1]["forward_s"] = -1;
    check_rejected<dnnplan::batch_profile>(profile, "graph.layers[1].forward_s");
    profile = ordered_json{{"batch_size", 8}, {"graph", small_graph_document()}};
    profile["graph"]["edges"].push_back({{"from", "c"}, {"to", "a"}});
    check_rejected<dnnplan::batch_profile>(profile, "graph.edges", "an acyclic graph");

    // The target is unchanged on failure.
    auto target = ok;
    d = small_graph_document();
    d["layers"][1]["forward_s"] = "fast";
    CHECK_THROWS_AS(from_json(d, target), dnnplan::invalid_input);
    CHECK(same(target, ok));
}

// ---- the layer chain and the 1F1B model ----------------------------------------------------------

TEST_CASE("the chain types and the pipeline configuration round-trip", "[io][json][partition][round_trip]") {
    const auto profile = ordered_json::parse(partition_profile_text).get<dnnplan::batch_profile>();
    CHECK(profile.batch_size == 8);
    CHECK(profile.graph.size() == 4);
    check_round_trip(profile);
    const std::vector<dnnplan::batch_profile> profiles{profile};
    const auto chain = dnnplan::build_layer_chain(profiles);
    check_round_trip(chain);
    check_round_trip(chain.layers[2]);
    const ordered_json layer = chain.layers[2];
    CHECK(layer["forward"].contains("fixed_s"));  // an affine_time
    CHECK(layer["forward"]["per_sample_s"] == chain.layers[2].forward.per_sample_s);
    check_round_trip(dnnplan::layer_chain_options{.optimizer_state_ratio = 3});
    check_round_trip(dnnplan::layer_chain_options{});
    check_round_trip(dnnplan::batch_time_sample{.batch = 32, .time_s = 0.1});
    check_round_trip(tight_config);
    check_round_trip(dnnplan::pipeline_config{});
    CHECK(ordered_json(dnnplan::pipeline_config{}).dump() ==
          R"({"micro_batch_size":1,"micro_batches":1,"bandwidth_bytes_per_s":1000000000.0,"sync_overlap_ratio":0.0,)"
          R"("device_memory_bytes":16000000000.0,"speed_ratio":1.0})");
    // Absent keys keep the defaults.
    const auto partial = ordered_json{{"micro_batches", 4}}.get<dnnplan::pipeline_config>();
    CHECK(partial.micro_batches == 4);
    CHECK(partial.device_memory_bytes == 16e9);

    // A stage's figures; a stage that does not fit has time +inf, written as null.
    REQUIRE(chain.size() == 3);  // the Input layer is removed
    CHECK(chain.removed_layers == std::vector<std::size_t>{0});
    const dnnplan::pipeline_1f1b_model model(chain, tight_config);
    const auto whole = model.breakdown({.first_state = 0, .end_state = 3, .replicas = 1, .stage_index = 0, .stage_count = 1});
    REQUIRE_FALSE(whole.fits);
    CHECK(std::isinf(whole.stage_time_s));
    check_round_trip(whole);
    CHECK(ordered_json(whole)["stage_time_s"].is_null());
    CHECK(std::isinf(ordered_json(whole).get<dnnplan::stage_breakdown>().stage_time_s));
    const auto head = model.breakdown({.first_state = 0, .end_state = 2, .replicas = 1, .stage_index = 0, .stage_count = 2});
    REQUIRE(head.fits);
    check_round_trip(head);
    CHECK(ordered_json(head)["stage_time_s"] == head.stage_time_s);
}

TEST_CASE("the chain readers reject what they must, naming the field", "[io][json][partition][errors]") {
    check_rejected<dnnplan::layer_chain>(
        ordered_json::parse(R"({"layers": [], "cut_bytes_per_sample": [1], "removed_layers": []})"), "cut_bytes_per_sample",
        "one value per layer (0)");
    check_rejected<dnnplan::layer_chain>(ordered_json::parse(R"({"layers": [], "cut_bytes_per_sample": []})"), "removed_layers",
                                         "= missing");
    const auto chain = dnnplan::build_layer_chain(ordered_json::parse(partition_profile_text)["graph"].get<dnnplan::layer_graph>(), 8.0);
    auto j = ordered_json(chain);
    j["layers"][1]["forward"]["alpha"] = 1;
    check_rejected<dnnplan::layer_chain>(j, "layers[1].forward.alpha", "one of the keys fixed_s, per_sample_s");
    j = ordered_json(chain);
    j["layers"][1]["layer"] = -1;
    check_rejected<dnnplan::layer_chain>(j, "layers[1].layer", "an integer in [0, ");
    // A chain layer's affine times read 0.1's spellings too (alpha_c_s, beta_c_s).
    j = ordered_json(chain);
    j["layers"][1]["backward"] = {{"alpha_c_s", 0.5}, {"beta_c_s", 0.25}};
    CHECK(j.get<dnnplan::layer_chain>().layers[1].backward == dnnplan::affine_time{.fixed_s = 0.5, .per_sample_s = 0.25});

    check_rejected<dnnplan::stage_breakdown>(ordered_json::parse(R"({"fits": true})"), "samples_per_replica", "missing");
    auto figures = ordered_json(dnnplan::stage_breakdown{});
    figures["stage_time_s"] = "inf";
    check_rejected<dnnplan::stage_breakdown>(figures, "stage_time_s", "a number or null");
    check_rejected<dnnplan::layer_chain_options>(ordered_json::parse(R"({"optimizer_state_ratio": -2})"), "optimizer_state_ratio");
    check_rejected<dnnplan::batch_profile>(ordered_json{{"batch_size", 0}, {"graph", small_graph_document()}}, "batch_size",
                                           "a finite number > 0");
    check_rejected<dnnplan::batch_profile>(ordered_json{{"batch_size", 8}}, "graph", "= missing");
    check_rejected<dnnplan::batch_time_sample>(ordered_json{{"batch", 8}, {"time_s", nullptr}}, "time_s", "a number");
    check_rejected<dnnplan::pipeline_config>(ordered_json::parse(R"({"micro_batches": 0})"), "micro_batches");
    check_rejected<dnnplan::pipeline_config>(ordered_json::parse(R"({"micro_batch_size": 2.5})"), "micro_batch_size",
                                             "an integer in [0, 2147483647]");
    check_rejected<dnnplan::pipeline_config>(ordered_json::parse(R"({"sync_overlap_ratio": 1.5})"), "sync_overlap_ratio",
                                             "a number in [0, 1]");
    check_rejected<dnnplan::pipeline_config>(ordered_json::parse(R"({"speed_ratio": 0})"), "speed_ratio");
    check_rejected<dnnplan::pipeline_config>(ordered_json::parse(R"({"micro_batch": 2})"), "micro_batch");
}

// ---- PipeDream ----------------------------------------------------------------------------------------

TEST_CASE("a PipeDream request and its result round-trip; the result has the result shape", "[io][json][partition][round_trip]") {
    const dnnplan::pipedream_request request{.graph = dnnplan::parse_pipedream_graph(pipedream_fixture_text("vgg16")),
                                             .options = {.machines = {4}, .activation_compression_ratio = 1.0}};
    check_round_trip(request.options);
    const ordered_json request_json = request;
    CHECK(same(request_json.get<dnnplan::pipedream_request>().graph, request.graph));
    CHECK(request_json["options"] == ordered_json(request.options));
    CHECK(dnnplan::to_json_text(dnnplan::parse_json<dnnplan::pipedream_request>(dnnplan::to_json_text(request))) ==
          dnnplan::to_json_text(request));
    CHECK(ordered_json(dnnplan::pipedream_options{.machines = {2, 4}}).dump() ==
          R"({"machines":[2,4],"bandwidths_bytes_per_s":[],"activation_compression_ratio":null,"straight_pipeline":false,)"
          R"("use_memory_constraint":false,"memory_bytes":16000000000.0,"use_fewer_machines":false,)"
          R"("budget":{"max_nodes":10000000,"max_evaluations":1000000000,"max_time_s":0.0},"max_states":20000})");

    const auto r = dnnplan::solve(request);
    REQUIRE(r.status == dnnplan::solve_status::optimal);
    REQUIRE(r.plan);
    check_round_trip(r);
    check_round_trip(*r.plan);
    check_round_trip(r.plan->stages[0]);
    check_round_trip(r.details);
    const ordered_json j = r;
    CHECK(j["details"]["num_states"] == 40);
    CHECK(j["plan"]["stages"][0]["replicas"] == 3);
    CHECK(j["plan"]["time_per_minibatch_s"] == r.plan->time_per_minibatch_s);
    CHECK(j["objective_value"] == r.plan->time_per_minibatch_s);
    CHECK(j["bound"] == r.plan->time_per_minibatch_s);
    CHECK(j["details"]["work"]["cells"] == r.details.work.cells);
    const auto back = j.get<dnnplan::pipedream_result>();
    REQUIRE(back.plan);
    CHECK(back.plan->time_per_minibatch_s == r.plan->time_per_minibatch_s);
    REQUIRE(back.plan->stages.size() == r.plan->stages.size());
    CHECK(back.plan->stages[1].layers == r.plan->stages[1].layers);
    CHECK(back.details.work == r.details.work);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"status", "limit", "figures", "estimate", "reason", "plan", "objective_value", "bound", "best_effort", "counters", "details"});

    // No partition (a straight pipeline whose first stage breaks the memory constraint): no
    // plan, written as null.
    auto tight = request;
    tight.options.use_memory_constraint = true;
    tight.options.memory_bytes = 1.0;
    tight.options.straight_pipeline = true;
    const auto none = dnnplan::solve(tight);
    REQUIRE(none.status == dnnplan::solve_status::infeasible);
    check_round_trip(none);
    const ordered_json n = none;
    CHECK(n["plan"].is_null());
    CHECK(n["objective_value"].is_null());
    CHECK(n["bound"].is_null());
    CHECK_FALSE(n.get<dnnplan::pipedream_result>().plan.has_value());

    // A result of the wide path (max_states = 0 sends vgg16 there): cut ordinals for states,
    // states_enumerated false and the lattice's bounds, all read back.
    auto wide_request = request;
    wide_request.options.max_states = 0;
    const auto wide = dnnplan::solve(wide_request);
    REQUIRE(wide.plan);
    check_round_trip(wide);
    const ordered_json w = wide;
    CHECK(w["details"]["states_enumerated"] == false);
    CHECK(w["details"]["lattice"]["lower_bound_s"] == wide.details.lattice.lower_bound_s);
    CHECK(w["details"]["lattice"]["kept_layers"] == 40);
    CHECK(w["plan"]["stages"][0]["first_state"] == 0);
    CHECK(w["plan"]["stages"][0]["end_state"] == 1);
    const auto wide_back = w.get<dnnplan::pipedream_result>();
    CHECK(wide_back.details.lattice == wide.details.lattice);
    CHECK_FALSE(wide_back.details.states_enumerated);
    // A result written before the wide path (no states_enumerated, no lattice) reads as the exact path's.
    ordered_json old = r;
    old["details"].erase("states_enumerated");
    old["details"].erase("lattice");
    CHECK(old.get<dnnplan::pipedream_result>().details.states_enumerated);
}

TEST_CASE("the PipeDream readers name the field of every rejection", "[io][json][partition][errors]") {
    const dnnplan::pipedream_request request{.graph = small_graph_document().get<dnnplan::layer_graph>(),
                                             .options = {.machines = {2}}};
    const auto r = dnnplan::solve(request);
    REQUIRE(r.plan);
    ordered_json bad = r;
    bad["plan"]["stages"][0]["colour"] = 1;
    check_rejected<dnnplan::pipedream_result>(bad, "plan.stages[0].colour");
    bad = r;
    bad["plan"]["stages"][0]["layers"][0] = -1;
    check_rejected<dnnplan::pipedream_result>(bad, "plan.stages[0].layers[0]");
    bad = r;
    bad["details"]["work"].erase("cells");
    check_rejected<dnnplan::pipedream_result>(bad, "details.work.cells", "= missing");
    bad = r;
    bad["num_states"] = 3;  // 0.1's flat layout
    check_rejected<dnnplan::pipedream_result>(bad, "num_states");
    bad = r;
    bad["plan"]["time_per_minibatch_s"] = nullptr;  // +inf is no plan, not a number
    check_rejected<dnnplan::pipedream_result>(bad, "plan.time_per_minibatch_s", "a number");

    ordered_json req = request;
    req["options"]["machines"] = ordered_json::array();
    check_rejected<dnnplan::pipedream_request>(req, "options.machines", "at least one level");
    req = request;
    req["options"]["bandwidths_bytes_per_s"] = {1e9, 1e9};
    check_rejected<dnnplan::pipedream_request>(req, "options.bandwidths_bytes_per_s", "one bandwidth per level (1)");
    req = request;
    req["options"]["activation_compression_ratio"] = 0;
    check_rejected<dnnplan::pipedream_request>(req, "options.activation_compression_ratio", "a finite number > 0");
    req = request;
    req["options"].erase("machines");
    check_rejected<dnnplan::pipedream_request>(req, "options.machines", "= missing");
    req = request;
    req.erase("options");
    check_rejected<dnnplan::pipedream_request>(req, "options", "= missing");
    req = request;
    req["graph"]["edges"][0]["to"] = "z";
    check_rejected<dnnplan::pipedream_request>(req, "graph.edges[0].to", "the id of a layer in layers");
    req = request;
    req["options"]["budget"] = {{"max_time_s", -1}};
    check_rejected<dnnplan::pipedream_request>(req, "options.budget.max_time_s", "a finite number >= 0");
    req = request;
    req["options"]["budget"] = {{"max_nodes", 5}};
    CHECK(req.get<dnnplan::pipedream_request>().options.budget.max_nodes == 5);
    // The options alone: fields from their own root.
    check_rejected<dnnplan::pipedream_options>(ordered_json{{"machines", {0}}}, "machines[0]", "an integer >= 1");
}

// ---- the pipeline DP ------------------------------------------------------------------------------------

TEST_CASE("a pipeline DP request and its result round-trip; null where a budget has no plan", "[io][json][partition][round_trip]") {
    const dnnplan::pipeline_dp_request request{.options = {.max_devices = 3, .max_stages = 2}};
    check_round_trip(request.options);
    CHECK(ordered_json(request).dump() ==
          R"({"options":{"max_devices":3,"max_stages":2,"budget":{"max_nodes":10000000,"max_evaluations":10000000,)"
          R"("max_time_s":0.0}}})");
    CHECK(dnnplan::parse_json<dnnplan::pipeline_dp_request>(R"({"options": {}})").options.max_devices == 1);
    check_round_trip(ordered_json(request).get<dnnplan::pipeline_dp_request>().options);

    const auto profile = ordered_json::parse(partition_profile_text).get<dnnplan::batch_profile>();
    const auto chain = dnnplan::build_layer_chain(std::vector<dnnplan::batch_profile>{profile});
    const dnnplan::pipeline_1f1b_model model(chain, tight_config);
    const auto dp = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 3}}, model);
    REQUIRE(dp.status == dnnplan::solve_status::optimal);
    REQUIRE(dp.plan);
    check_round_trip(dp);
    check_round_trip(*dp.plan);
    check_round_trip(dp.plan->stages[0]);
    const ordered_json j = dp;
    REQUIRE(dp.details.by_devices.size() == 3);
    CHECK_FALSE(dp.details.by_devices[0].has_value());
    CHECK(j["details"]["by_devices"][0].is_null());
    CHECK(j["details"]["by_devices"][2]["time_s"] == dp.plan->time_s);
    CHECK(j["plan"]["time_s"] == dp.plan->time_s);
    CHECK(j["objective_value"] == dp.plan->time_s);
    CHECK(j["counters"]["evaluations"] == dp.counters.evaluations);
    const auto back = j.get<dnnplan::pipeline_dp_result>();
    CHECK_FALSE(back.details.by_devices[0].has_value());
    REQUIRE(back.plan);
    CHECK(back.plan->devices == dp.plan->devices);

    // One device only: infeasible, no plan.
    const auto none = dnnplan::solve(dnnplan::pipeline_dp_request{.options = {.max_devices = 1}}, model);
    REQUIRE(none.status == dnnplan::solve_status::infeasible);
    check_round_trip(none);
    CHECK(ordered_json(none)["plan"].is_null());
    CHECK(ordered_json(none)["details"]["by_devices"] == ordered_json::array({nullptr}));

    // A plan under construction (+inf times) is written with nulls and reads back as +inf.
    const dnnplan::pipeline_dp_plan unfinished;
    check_round_trip(unfinished);
    CHECK(ordered_json(unfinished).dump() == R"({"time_s":null,"slowest_stage_s":null,"devices":0,"stages":[]})");
    CHECK(std::isinf(ordered_json(unfinished).get<dnnplan::pipeline_dp_plan>().time_s));
}

TEST_CASE("the pipeline DP readers name the field of every rejection", "[io][json][partition][errors]") {
    check_rejected<dnnplan::pipeline_dp_options>(ordered_json::parse(R"({"max_devices": 2.5})"), "max_devices");
    check_rejected<dnnplan::pipeline_dp_options>(ordered_json::parse(R"({"max_devices": 0})"), "max_devices", "an integer >= 1");
    check_rejected<dnnplan::pipeline_dp_request>(ordered_json::parse(R"({"options": {"max_devices": 0}})"), "options.max_devices",
                                                 "an integer >= 1");
    check_rejected<dnnplan::pipeline_dp_request>(ordered_json::parse(R"({})"), "options", "= missing");
    check_rejected<dnnplan::pipeline_dp_request>(ordered_json::parse(R"({"options": {"budget": {"max_evaluations": -1}}})"),
                                                 "options.budget.max_evaluations", "an integer in [0, 9223372036854775807]");
    check_rejected<dnnplan::pipeline_dp_request>(ordered_json::parse(R"({"options": {}, "model": {}})"), "model");
    dnnplan::pipeline_dp_result r;
    r.details.by_devices = {std::nullopt, dnnplan::pipeline_dp_plan{.time_s = 2, .slowest_stage_s = 1, .devices = 2, .stages = {}}};
    ordered_json j = r;
    j["details"]["by_devices"][1]["stages"] = {{{"first_state", 0}, {"end_state", 1}, {"replicas", 1}, {"stage_time_s", "x"}}};
    check_rejected<dnnplan::pipeline_dp_result>(j, "details.by_devices[1].stages[0].stage_time_s", "a number or null");
    j = r;
    j["details"]["by_devices"][1]["devices"] = -2;
    check_rejected<dnnplan::pipeline_dp_result>(j, "details.by_devices[1].devices");
    j = r;
    j["best"] = nullptr;  // 0.1's layout
    check_rejected<dnnplan::pipeline_dp_result>(j, "best");
    CHECK_THROWS_WITH(dnnplan::parse_json<dnnplan::pipeline_dp_result>(std::string_view(R"({"status": "optimal", "status": 1})")),
                      Contains("status = given twice"));
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (partition)", "[io][json][fuzz]") {
    // A seed its reader rejects would seed only the error paths (scripts/fuzz).
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_3_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::pipedream_result>(text));
    }
    for (const auto& [name, text] : dnnplan_test::fixture_files("fuzz_seeds", "result_4_")) {
        INFO(name);
        CHECK_NOTHROW((void)dnnplan::parse_json<dnnplan::pipeline_dp_result>(text));
    }
}
