// JSON of the runtime deadline policy (io/deadline_policy_json.hpp): Can't Be Late's trace form in
// both polarities, the price side file, the fixture slice read as CSV and as JSON giving the same
// trace, round trips of the types with a reader, the written-only decision and outcome, the
// `decide` input (deadline_observation), and every rejection naming its field.

#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"
#include "../support/json_checks.hpp"

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace dnnplan;
using dnnplan_test::contains;

namespace {

/// The field the invalid_input of `f()` names, or "(no exception)".
template <class F>
std::string field(F&& f) {
    return dnnplan_test::field_of(std::forward<F>(f));
}

std::string trace_field(const std::string& text, availability_polarity polarity = availability_polarity::available) {
    return field([&] { (void)parse_spot_market_json(text, "z", polarity); });
}

std::string observation_field(const std::string& text) {
    return field([&] { (void)parse_deadline_observation(text); });
}

std::string with(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

std::string read_file(const char* path) {
    std::ifstream in(path);
    REQUIRE(in);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// Two regions at 600 s, 6 ticks observed; the job started 2 ticks ago (elapsed 1200 s), so at trace
// tick 3, and runs on spot in region 1.
constexpr std::string_view observation_text = R"({
  "job": {"work_s": 7200, "deadline_s": 14400, "changeover_s": 300, "instances": 1, "egress_usd": 0.5},
  "regions": [
    {"name": "us-east-1a", "gap_s": 600, "available": [0, 0, 1, 1, 0, 0],
     "spot_usd_per_h": [1.2, 1.2, 1.1, 1.1, 1.3, 1.3], "on_demand_usd_per_h": 3.06},
    {"name": "us-west-2a", "gap_s": 600, "available": [1, 1, 1, 1, 1, 1],
     "spot_usd_per_h": [0.918, 0.918, 0.918, 0.918, 0.918, 0.918], "on_demand_usd_per_h": 3.06}
  ],
  "elapsed_s": 1200,
  "work_done_s": 600,
  "state": {"mode": "spot", "region": 1, "changeover_left_s": 0}
})";

}  // namespace

TEST_CASE("a Can't Be Late trace reads its gap, counts, prices and on-demand price", "[io][json][deadline]") {
    const auto t = parse_spot_market_json(
        R"({"metadata": {"gap_seconds": 600, "on_demand_usd_per_h": 3.06}, "data": [1, 0, 16], "prices": [0.9, 0.95, 1.0]})", "us-east-1f");
    CHECK(t.name == "us-east-1f");
    CHECK(t.gap_s == 600.0);
    CHECK(t.available == std::vector<std::int32_t>{1, 0, 16});
    CHECK(t.spot_usd_per_h == std::vector<double>{0.9, 0.95, 1.0});
    REQUIRE(t.on_demand_usd_per_h);
    CHECK(*t.on_demand_usd_per_h == 3.06);
    CHECK(t.has_prices());
    CHECK_NOTHROW(t.validate());

    const auto bare = parse_spot_market_json(R"({"metadata": {"gap_seconds": 195}, "data": [1, 1, 0]})", "z");
    CHECK(bare.spot_usd_per_h.empty());
    CHECK_FALSE(bare.on_demand_usd_per_h);
    const auto null_price = parse_spot_market_json(R"({"metadata": {"gap_seconds": 195, "on_demand_usd_per_h": null}, "data": [1]})", "z");
    CHECK_FALSE(null_price.on_demand_usd_per_h);

    std::istringstream in(R"({"metadata": {"gap_seconds": 32}, "data": [0]})");
    CHECK(parse_spot_market_json(in, "z").gap_s == 32.0);
}

TEST_CASE("the other keys of the public files' metadata are ignored, unknown keys elsewhere rejected", "[io][json][deadline]") {
    // SkyNomad's converted traces (data/README.md of its artifact): preempted convention.
    const std::string skynomad = R"({"metadata": {"gap_seconds": 600, "start_time": "2025-10-04T00:10:00+00:00",
        "zone": "us-central1-a", "price_info": {"price": 18.98, "on_demand_price": 82.53},
        "source_file": "x.json", "note": "capacity>=1 -> available", "gang_threshold": 16},
        "data": [0, 0, 1, 1, 0], "prices": [18.98, 18.98, 18.98, 18.98, 18.98]})";
    const auto t = parse_spot_market_json(skynomad, "us-central1-a", availability_polarity::preempted);
    CHECK(t.available == std::vector<std::int32_t>{1, 1, 0, 0, 1});
    CHECK_FALSE(t.on_demand_usd_per_h);  // price_info is not read
    CHECK(parse_spot_market_json(skynomad, "z").available == std::vector<std::int32_t>{0, 0, 1, 1, 0});
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 600}, "data": [1], "zone": "a"})") == "zone");
}

TEST_CASE("a Can't Be Late trace's rejections name the field", "[io][json][deadline]") {
    CHECK(trace_field(R"({"data": [1]})") == "metadata");
    CHECK(trace_field(R"({"metadata": 600, "data": [1]})") == "metadata");
    CHECK(trace_field(R"({"metadata": {}, "data": [1]})") == "metadata.gap_seconds");
    for (const std::string gap : {"0", "-195", "\"195\"", "null", "1e-320"}) {
        INFO(gap);
        CHECK(trace_field(R"({"metadata": {"gap_seconds": )" + gap + R"(}, "data": [1]})") == "metadata.gap_seconds");
    }
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195, "on_demand_usd_per_h": 0}, "data": [1]})") == "metadata.on_demand_usd_per_h");
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}})") == "data");
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": []})") == "data");
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": {"0": 1}})") == "data");
    const std::string seventeen = "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ";
    for (const std::string count : {"-1", "1.5", "\"1\"", "true", "null", "2147483648"}) {
        INFO(count);
        CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [)" + seventeen + count + "]}") == "data[17]");
    }
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [0, 1, 2]})", availability_polarity::preempted) == "data[2]");
    // A negative flag is no flag either (it read as 2 available instances; INT32_MIN overflowed).
    for (const std::string flag : {"-1", "-2147483648"}) {
        INFO(flag);
        CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [0, )" + flag + "]}", availability_polarity::preempted) == "data[1]");
    }
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [0, 1, 2]})") == "(no exception)");
    for (const std::string price : {"0", "-0.9", "\"0.9\"", "null", "1e-310"}) {
        INFO(price);
        CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [1, 1, 1, 1], "prices": [0.9, 0.9, 0.9, )" + price + "]}") ==
              "prices[3]");
    }
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [1, 1], "prices": [0.9]})") == "prices");
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [1], "prices": [0.9, 0.9]})") == "prices");
    CHECK(trace_field(R"({"metadata": {"gap_seconds": 195}, "data": [1], "prices": 0.9})") == "prices");
    CHECK(trace_field(R"([1, 0])") == "(root)");
    CHECK(field([] { (void)parse_spot_market_json(R"({"metadata": {"gap_seconds": 195}, "data": [1]})", "\xff"); }) == "name");
    try {
        (void)parse_spot_market_json(R"({"metadata": {"gap_seconds": 195}, "data": [1,]})", "z");
        FAIL("accepted");
    } catch (const parse_error& e) {
        CHECK(e.where().starts_with("byte "));
    }
}

TEST_CASE("a price side file reads each series; a bad price is named <name>[i]", "[io][json][deadline]") {
    const auto table = parse_spot_price_table(R"({"us-east-1a_v100_1": [1.6703, 1.6703], "us-west-2a_v100_1": [0.918]})");
    REQUIRE(table.size() == 2);
    CHECK(table.at("us-east-1a_v100_1") == std::vector<double>{1.6703, 1.6703});
    CHECK(table.at("us-west-2a_v100_1") == std::vector<double>{0.918});
    const auto table_field = [](const std::string& text) { return field([&] { (void)parse_spot_price_table(text); }); };
    CHECK(table_field(R"({"a": [1.0, 0]})") == "a[1]");
    CHECK(table_field(R"({"a": [1.0], "b": [1.0, -2, 1.0]})") == "b[1]");
    CHECK(table_field(R"({"a": [1.0, "x"]})") == "a[1]");
    CHECK(table_field(R"({"a": []})") == "a");
    CHECK(table_field(R"({"a": 1.0})") == "a");
    CHECK(table_field(R"([1.0])") == "(root)");
    CHECK(table_field(R"({"a": [1.0], "a": [2.0]})") == "a");  // given twice
}

TEST_CASE("the fixture slice reads the same as CSV and as Can't Be Late's JSON, with its prices", "[io][json][deadline]") {
    std::ifstream csv(DNNPLAN_TEST_FIXTURES_DIR "/spot_availability/us-west-2a_v100_1.csv");
    REQUIRE(csv);
    const spot_market_csv from_csv = parse_spot_market_csv(csv, "us-west-2a");
    CHECK(from_csv.trace.gap_s == 195.0);
    const spot_market_trace from_json =
        parse_spot_market_json(read_file(DNNPLAN_TEST_FIXTURES_DIR "/spot_availability/us-west-2a_v100_1.json"), "us-west-2a");
    CHECK(from_json.gap_s == from_csv.trace.gap_s);
    CHECK(from_json.available == from_csv.trace.available);
    CHECK(from_json.name == from_csv.trace.name);
    CHECK(to_json_text(from_json) == to_json_text(from_csv.trace));

    std::ifstream prices(DNNPLAN_TEST_FIXTURES_DIR "/spot_availability/v100_spot_prices.json");
    REQUIRE(prices);
    const auto table = parse_spot_price_table(prices);
    REQUIRE(table.contains("us-west-2a_v100_1"));
    spot_market_trace priced = from_csv.trace;
    priced.spot_usd_per_h = table.at("us-west-2a_v100_1");
    priced.on_demand_usd_per_h = 3.06;  // p3.2xlarge on demand (the data's README)
    CHECK(priced.spot_usd_per_h.size() == priced.size());
    CHECK(priced.spot_usd_per_h.front() == 0.918);
    CHECK_NOTHROW(deadline_market{.regions = {priced}}.validate());
}

TEST_CASE("the deadline policy's inputs and summaries round-trip", "[io][json][deadline]") {
    const spot_market_trace trace{.name = "us-west-2a", .gap_s = 195, .available = {1, 0, 2},
                                  .spot_usd_per_h = {0.918, 0.918, 1.01}, .on_demand_usd_per_h = 3.06};
    dnnplan_test::check_round_trip(trace);
    dnnplan_test::check_round_trip(spot_market_trace{.name = "bare", .gap_s = 600, .available = {0}});
    dnnplan_test::check_round_trip(deadline_market{.regions = {trace, trace}});
    dnnplan_test::check_round_trip(deadline_job{.work_s = 36000, .deadline_s = 72000, .changeover_s = 600, .instances = 4, .egress_usd = 2.5});
    dnnplan_test::check_round_trip(deadline_state{.mode = deadline_action::on_demand, .region = 2, .changeover_left_s = 30, .work_left_s = 100});
    dnnplan_test::check_round_trip(deadline_state{});  // region -1: null
    CHECK(to_json_text(deadline_state{}, -1) == R"({"mode":"wait","region":null,"changeover_left_s":0.0,"work_left_s":0.0})");
    for (const auto kind : {deadline_policy_kind::standard, deadline_policy_kind::on_demand, deadline_policy_kind::greedy,
                            deadline_policy_kind::uniform_progress, deadline_policy_kind::optimal})
        dnnplan_test::check_round_trip(kind);
    CHECK(to_json_text(deadline_policy_kind::standard) == "\"default\"");
    const deadline_policy_summary summary{.policy = deadline_policy_kind::greedy, .mean_cost_usd = 12.5, .mean_ratio = 1.2,
                                          .p90_ratio = 1.5, .missed = 1, .mean_spot_h = 7.25, .ratios = {1.0, 1.2, 1.4}};
    dnnplan_test::check_round_trip(summary);
    dnnplan_test::check_round_trip(deadline_comparison{.policies = {summary, summary}, .windows = 3, .infeasible_windows = 1});
}

TEST_CASE("the deadline policy's inputs are rejected naming the field", "[io][json][deadline]") {
    using nlohmann::ordered_json;
    dnnplan_test::check_rejected<deadline_job>(ordered_json{{"work_s", 100}}, "deadline_s");
    dnnplan_test::check_rejected<deadline_job>(ordered_json{{"work_s", 100}, {"deadline_s", 0}}, "deadline_s");
    dnnplan_test::check_rejected<deadline_job>(ordered_json{{"work_s", 100}, {"deadline_s", 10}, {"instances", 0}}, "instances");
    dnnplan_test::check_rejected<deadline_job>(ordered_json{{"work_s", 100}, {"deadline_s", 10}, {"egress", 1}}, "egress");
    const ordered_json state{{"mode", "spot"}, {"region", 0}, {"changeover_left_s", 0}, {"work_left_s", 10}};
    CHECK(state.get<deadline_state>().mode == deadline_action::spot);
    auto bad = state;
    bad["region"] = -1;
    dnnplan_test::check_rejected<deadline_state>(bad, "region");
    bad = state;
    bad["mode"] = "run";
    dnnplan_test::check_rejected<deadline_state>(bad, "mode");
    bad = state;
    bad.erase("work_left_s");
    dnnplan_test::check_rejected<deadline_state>(bad, "work_left_s");
    const ordered_json trace{{"name", "a"}, {"gap_s", 600}, {"available", {1, -1}}};
    dnnplan_test::check_rejected<spot_market_trace>(trace, "available[1]");
    dnnplan_test::check_rejected<spot_market_trace>(ordered_json{{"name", "a"}, {"gap_s", 0}, {"available", {1}}}, "gap_s");
    dnnplan_test::check_rejected<deadline_market>(
        ordered_json{{"regions", {{{"name", "a"}, {"gap_s", 600}, {"available", {1}}}}}}, "regions[0].spot_usd_per_h");
}

TEST_CASE("a decision and an outcome are written as the command line prints them", "[io][json][deadline]") {
    CHECK(to_json_text(deadline_decision{deadline_action::spot, 1, "spot is available"}, -1) ==
          R"({"action":"spot","region":1,"reason":"spot is available"})");
    const deadline_outcome done{.start_tick = 7, .cost_usd = 4.5, .finish_s = 5400, .finished = true, .met = true,
                                .work_left_s = 0, .spot_s = 3600, .on_demand_s = 1800, .changeovers = 2, .region_moves = 1};
    CHECK(to_json_text(done, -1) == R"({"start_tick":7,"cost_usd":4.5,"finish_h":1.5,"met":true,"spot_h":1.0,"on_demand_h":0.5,)"
                                    R"("changeovers":2,"region_moves":1})");
    deadline_outcome cut = done;
    cut.finished = false;
    cut.met = false;
    cut.work_left_s = 900;
    CHECK(to_json_text(cut, -1) == R"({"start_tick":7,"cost_usd":4.5,"finish_h":1.5,"met":false,"spot_h":1.0,"on_demand_h":0.5,)"
                                   R"("changeovers":2,"region_moves":1,"finished":false,"work_left_h":0.25})");
    const nlohmann::ordered_json list = std::vector<deadline_outcome>{done, cut};
    CHECK(list.size() == 2);
    cut.cost_usd = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(to_json_text(cut), dnnplan::error);
}

TEST_CASE("the decide input reads as an observation of the job at the last observed tick", "[io][json][deadline]") {
    const deadline_observation o = parse_deadline_observation(observation_text);
    REQUIRE(o.market.regions.size() == 2);
    CHECK(o.market.ticks() == 6);
    CHECK(o.start_tick == 3);  // the last tick (5) minus 1200 / 600
    CHECK(o.tick() == 2);
    CHECK(o.elapsed_s() == 1200.0);
    CHECK(o.job.work_s == 7200.0);
    CHECK(o.job.egress_usd == 0.5);
    CHECK(o.state.mode == deadline_action::spot);
    CHECK(o.state.region == 1);
    CHECK(o.state.work_left_s == 6600.0);
    CHECK(o.policy == deadline_policy_kind::standard);
    CHECK_NOTHROW(o.validate());
    std::istringstream in{std::string(observation_text)};
    CHECK(parse_deadline_observation(in).start_tick == 3);

    // At the start of the job (elapsed 0): now is its start tick; before the first run, region null.
    std::string fresh = with(std::string(observation_text), R"("elapsed_s": 1200)", R"("elapsed_s": 0)");
    fresh = with(fresh, R"("work_done_s": 600)", R"("work_done_s": 0)");
    fresh = with(fresh, R"({"mode": "spot", "region": 1, "changeover_left_s": 0})", R"({"mode": "wait", "region": null})");
    fresh = with(fresh, "\n}", R"(, "policy": "uniform_progress"})");
    const deadline_observation start = parse_deadline_observation(fresh);
    CHECK(start.start_tick == 5);
    CHECK(start.state.region == -1);
    CHECK(start.state.work_left_s == 7200.0);
    CHECK(start.policy == deadline_policy_kind::uniform_progress);
    // From the first tick observed: elapsed (ticks - 1) x gap.
    CHECK(parse_deadline_observation(with(std::string(observation_text), R"("elapsed_s": 1200)", R"("elapsed_s": 3000.0)")).start_tick == 0);
}

TEST_CASE("the decide input's rejections name the field", "[io][json][deadline]") {
    const std::string text(observation_text);
    for (const std::string elapsed : {"1000", "3600", "-600", "1e300", "\"1200\"", "null"}) {
        INFO(elapsed);
        CHECK(observation_field(with(text, R"("elapsed_s": 1200)", R"("elapsed_s": )" + elapsed)) == "elapsed_s");
    }
    CHECK(observation_field(with(text, R"("work_done_s": 600)", R"("work_done_s": 7200.5)")) == "work_done_s");
    CHECK(observation_field(with(text, R"("work_done_s": 600)", R"("work_done_s": -1)")) == "work_done_s");
    CHECK(observation_field(with(text, R"("changeover_left_s": 0)", R"("changeover_left_s": 301)")) == "state.changeover_left_s");
    CHECK(observation_field(with(text, R"("region": 1,)", R"("region": 2,)")) == "state.region");
    CHECK(observation_field(with(text, R"("region": 1,)", R"("region": -1,)")) == "state.region");
    CHECK(observation_field(with(text, R"("region": 1,)", R"("region": null,)")) == "state.region");  // spot runs somewhere
    CHECK(observation_field(with(text, R"("mode": "spot")", R"("mode": "preempted")")) == "state.mode");
    CHECK(observation_field(with(text, R"("changeover_left_s": 0})", R"("changeover_left_s": 0, "work_left_s": 1})")) ==
          "state.work_left_s");
    CHECK(observation_field(with(text, "\n}", R"(, "policy": "optimal"})")) == "policy");
    CHECK(observation_field(with(text, "\n}", R"(, "policy": "best"})")) == "policy");
    CHECK(observation_field(with(text, "\n}", R"(, "start_tick": 3})")) == "start_tick");
    CHECK(observation_field(with(text, R"("gap_s": 600, "available": [1, 1)", R"("gap_s": 300, "available": [1, 1)")) ==
          "regions[1].gap_s");
    CHECK(observation_field(with(text, R"("available": [1, 1, 1, 1, 1, 1],
     "spot_usd_per_h": [0.918, 0.918, 0.918, 0.918, 0.918, 0.918])",
                                 R"("available": [1, 1, 1, 1, 1], "spot_usd_per_h": [0.918, 0.918, 0.918, 0.918, 0.918])")) ==
          "regions[1].available");
    CHECK(observation_field(with(text, R"(, "on_demand_usd_per_h": 3.06},)", "},")) == "regions[0].on_demand_usd_per_h");
    CHECK(observation_field(with(text, R"("spot_usd_per_h": [1.2, 1.2, 1.1, 1.1, 1.3, 1.3], )", "")) == "regions[0].spot_usd_per_h");
    CHECK(observation_field(with(text, R"("spot_usd_per_h": [1.2, 1.2)", R"("spot_usd_per_h": [1.2, 0)")) ==
          "regions[0].spot_usd_per_h[1]");
    CHECK(observation_field(with(text, R"("work_s": 7200)", R"("work_s": 0)")) == "job.work_s");
    CHECK(observation_field(with(text, R"("egress_usd": 0.5)", R"("egress_usd": -0.5)")) == "job.egress_usd");
    CHECK(observation_field(with(text, R"("regions": [)", R"("regions": [], "x": [)")) == "x");
    CHECK(observation_field(R"({"job": {"work_s": 1, "deadline_s": 1}, "regions": [], "elapsed_s": 0, "work_done_s": 0,
                                "state": {"mode": "wait", "region": null}})") == "regions");
    CHECK(observation_field(with(text, R"("elapsed_s": 1200,)", "")) == "elapsed_s");
    CHECK(observation_field(with(text, R"(, "changeover_left_s": 0})", "}")) == "(no exception)");  // optional, 0
}

TEST_CASE("an observation's validate() names the fields of the struct", "[io][json][deadline]") {
    deadline_observation o = parse_deadline_observation(observation_text);
    o.start_tick = 6;
    CHECK(field([&] { o.validate(); }) == "start_tick");
    o.start_tick = 3;
    o.state.work_left_s = 7201;
    CHECK(field([&] { o.validate(); }) == "state.work_left_s");
    o.state.work_left_s = 10;
    o.policy = deadline_policy_kind::optimal;
    CHECK(field([&] { o.validate("decide"); }) == "decide.policy");
    o.policy = deadline_policy_kind::greedy;
    CHECK_NOTHROW(o.validate());
}

TEST_CASE("the fixture's decide input reads, and the decision on it is written with the result shape", "[io][json][deadline]") {
    const deadline_observation o =
        parse_deadline_observation(read_file(DNNPLAN_TEST_FIXTURES_DIR "/spot_availability/observation.json"));
    REQUIRE(o.market.regions.size() == 1);
    CHECK(o.market.ticks() == 250);
    CHECK(o.market.gap_s() == 195.0);
    CHECK(o.start_tick == 150);
    CHECK(o.state.work_left_s == 14400.0 - 5460.0);
    const deadline_result r = solve(o);
    dnnplan_test::check_result_shape(r);
    const auto j = nlohmann::ordered_json::parse(to_json_text(r));
    CHECK(j.at("status") == to_string(r.status));
    REQUIRE(r.plan);
    CHECK(j.at("plan").at("action") == to_string(r.plan->action));
    CHECK(j.at("plan").at("reason") == std::string(r.plan->why));
    CHECK(j.at("details").at("on_demand_finish_s") == r.details.on_demand_finish_s);
    CHECK(j.at("details").at("on_demand_cost_usd") == r.details.on_demand_cost_usd);
}

TEST_CASE("decide: a spot state without spot is preempted first; infeasible only when the best case misses",
          "[io][json][deadline]") {
    // One region at gap 60 s, spot 1 USD/h, on-demand 3 USD/h; the job started at tick 0, now tick 3
    // (180 s); R = 1200 s, d = 60 s.
    deadline_observation o;
    o.market.regions.push_back({.name = "z", .gap_s = 60.0, .available = {1, 1, 1, 0}, .spot_usd_per_h = {1, 1, 1, 1},
                                .on_demand_usd_per_h = 3.0});
    o.job = {.work_s = 1120.0, .deadline_s = 1200.0, .changeover_s = 60.0};
    o.state = {.mode = deadline_action::spot, .region = 0, .changeover_left_s = 0.0, .work_left_s = 960.0};
    // No spot at tick 3: the run is preempted (step 3), as the simulator would hand it over. 960 s
    // of work and a changeover fill the 1020 s left: on-demand now (the safety net's keep-spot rule
    // answered spot on the unpreempted state, a policy error).
    const deadline_result preempted = solve(o);
    dnnplan_test::check_result_shape(preempted);
    CHECK(preempted.status == solve_status::feasible);
    REQUIRE(preempted.plan);
    CHECK(preempted.plan->action == deadline_action::on_demand);
    o.state.work_left_s = 1000.0;
    // With spot at tick 3 the run goes on: 1000 s of work end at 180 + 17 x 60 = 1200 s, in time,
    // although on-demand from now (another changeover) would end at 1260 s.
    o.market.regions[0].available.back() = 1;
    const deadline_result running = solve(o);
    dnnplan_test::check_result_shape(running);
    CHECK(running.status == solve_status::feasible);
    REQUIRE(running.plan);
    CHECK(running.plan->action == deadline_action::spot);
    CHECK(running.details.on_demand_finish_s == 1260.0);
    // 40 s more work: even the run going on ends at 180 + 18 x 60 = 1260 s: infeasible, the run as
    // best effort.
    o.state.work_left_s = 1040.0;
    const deadline_result late = solve(o);
    dnnplan_test::check_result_shape(late);
    CHECK(late.status == solve_status::infeasible);
    CHECK_FALSE(late.plan);
    REQUIRE(late.best_effort);
    CHECK(late.best_effort->action == deadline_action::spot);
}

TEST_CASE("the simulate document reads as a simulation; its output documents are the command line's", "[io][json][deadline]") {
    const std::string text = R"({"job": {"work_s": 1200, "deadline_s": 2400, "changeover_s": 0},
        "regions": [{"name": "r0", "gap_s": 600, "available": [1, 1, 0, 1, 1, 1, 1, 1], "spot_usd_per_h": [1, 1, 1, 1, 1, 1, 1, 1],
                     "on_demand_usd_per_h": 3}],
        "start_ticks": [0, 2], "policy": "greedy", "threads": 2})";
    const deadline_simulation s = parse_deadline_simulation(text);
    CHECK(s.start_ticks == std::vector<std::size_t>{0, 2});
    CHECK(s.policy == deadline_policy_kind::greedy);
    CHECK(s.threads == 2);
    CHECK(s.job.deadline_s == 2400.0);
    const nlohmann::ordered_json out = simulation_json(s, simulate(s));
    CHECK(out["policy"] == "greedy");
    REQUIRE(out["windows"].size() == 2);
    CHECK(out["windows"][1]["start_tick"] == 2);
    CHECK(out["windows"][0]["cost_usd"] == 2.0 / 6.0);  // two ticks of spot at 1 USD/h, 600 s each

    const auto simulation_field = [](const std::string& t) { return field([&] { (void)parse_deadline_simulation(t); }); };
    CHECK(simulation_field(with(text, R"("threads": 2)", R"("threads": 0)")) == "threads");
    CHECK(simulation_field(with(text, R"("start_ticks": [0, 2])", R"("start_ticks": [])")) == "start_ticks");
    CHECK(simulation_field(with(text, R"("start_ticks": [0, 2])", R"("start_ticks": [0, 7])")) == "start_ticks[1]");
    CHECK(simulation_field(with(text, R"("policy": "greedy")", R"("policy": "greedy", "colour": 1)")) == "colour");
    CHECK(simulation_field(with(text, R"("available": [1, 1, 0)", R"("available": [1, 1.5, 0)")) == "regions[0].available[1]");

    const deadline_observation o = parse_deadline_observation(observation_text);
    const nlohmann::ordered_json d = decision_json(o, solve(o));
    CHECK(d["status"] == "feasible");
    CHECK(d["action"] == "spot");
    CHECK(d["region"] == "us-west-2a");
    CHECK(d["reason"].get<std::string>().size() > 0);
}
