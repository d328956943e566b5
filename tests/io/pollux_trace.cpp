// The Pollux trace reader (petuum/adaptdl osdi21-artifact sched/traces): rows, and every parse
// error path naming the line and the field.

#include <dnnplan/io/pollux_trace.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <fstream>
#include <sstream>
#include <string>

using namespace dnnplan;

namespace {

using dnnplan_test::contains;
std::string parse_failure_placements(const std::string& text, std::int32_t gpus_per_node = 4) {
    std::istringstream in(text);
    try {
        (void)read_pollux_placements(in, gpus_per_node);
    } catch (const parse_error& e) {
        return e.what();
    }
    return "(no exception)";
}

std::string parse_failure_scalability(const std::string& text) {
    std::istringstream in(text);
    try {
        (void)read_pollux_scalability(in);
    } catch (const parse_error& e) {
        return e.what();
    }
    return "(no exception)";
}

const std::string header = "placement,local_bsz,step_time,sync_time\n";
}  // namespace

TEST_CASE("placements rows are read in order", "[io][pollux]") {
    std::istringstream in(header + "1,32,0.0427,0.0005\r\n\n1124,64,0.25,0.1\n");
    const auto rows = read_pollux_placements(in, 4);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].where.gpus_per_node == std::vector<std::int32_t>{1});
    CHECK(rows[0].local_batch == 32.0);
    CHECK(rows[0].step_time_s == 0.0427);
    CHECK(rows[0].sync_time_s == 0.0005);
    CHECK(rows[0].line == 2);
    CHECK(rows[1].where.gpus_per_node == std::vector<std::int32_t>{1, 1, 2, 4});
    CHECK(rows[1].line == 4);
    const auto sample = rows[1].sample();
    CHECK(sample.shape.replicas == 8);
    CHECK(sample.shape.nodes == 4);
    CHECK(sample.shape.local_batch == 64.0);
    CHECK(sample.shape.accumulation_steps == 0);
    CHECK(sample.step_time_s == 0.25);
    REQUIRE(sample.sync_time_s);
    CHECK(*sample.sync_time_s == 0.1);
}

TEST_CASE("a header with no rows is an empty trace", "[io][pollux]") {
    std::istringstream in(header);
    CHECK(read_pollux_placements(in).empty());
}

TEST_CASE("the fixture slices read", "[io][pollux]") {
    std::ifstream train(DNNPLAN_TEST_FIXTURES_DIR "/pollux/cifar10-train.csv");
    REQUIRE(train);
    const auto rows = read_pollux_placements(train, 4);
    CHECK(rows.size() > 50);
    std::ifstream scal(DNNPLAN_TEST_FIXTURES_DIR "/pollux/cifar10-scalability.csv");
    REQUIRE(scal);
    const auto srows = read_pollux_scalability(scal);
    CHECK(srows.size() > 5);
}

TEST_CASE("placements parse errors name the line and the field", "[io][pollux]") {
    // missing header
    auto e = parse_failure_placements("1,32,0.04,0.0005\n");
    CHECK(contains(e, "line 1"));
    CHECK(contains(e, "field placement"));
    CHECK(contains(e, "header column placement"));
    // empty input
    e = parse_failure_placements("");
    CHECK(contains(e, "line 1"));
    CHECK(contains(e, "header line placement,local_bsz,step_time,sync_time"));
    // wrong header column
    e = parse_failure_placements("placement,local_bsz,step,sync_time\n");
    CHECK(contains(e, "field step_time"));
    // truncated line
    e = parse_failure_placements(header + "1,32,0.04,0.0005\n12,64\n");
    CHECK(contains(e, "line 3"));
    CHECK(contains(e, "truncated"));
    CHECK(contains(e, "step_time"));
    // extra field
    e = parse_failure_placements(header + "1,32,0.04,0.0005,7\n");
    CHECK(contains(e, "line 2"));
    CHECK(contains(e, "extra fields"));
    // bad number
    e = parse_failure_placements(header + "1,32,0.04x,0.0005\n");
    CHECK(contains(e, "line 2"));
    CHECK(contains(e, "field step_time"));
    CHECK(contains(e, "\"0.04x\""));
    e = parse_failure_placements(header + "1,,0.04,0.0005\n");
    CHECK(contains(e, "field local_bsz"));
    e = parse_failure_placements(header + "1,32,nan,0.0005\n");
    CHECK(contains(e, "field step_time"));
    // bad placement digit: above the GPUs per node, zero, non-digit, empty
    e = parse_failure_placements(header + "15,32,0.04,0.0005\n", 4);
    CHECK(contains(e, "line 2"));
    CHECK(contains(e, "field placement"));
    CHECK(contains(e, "digits 1-4"));
    CHECK(contains(parse_failure_placements(header + "10,32,0.04,0.0005\n"), "field placement"));
    CHECK(contains(parse_failure_placements(header + "1a,32,0.04,0.0005\n"), "field placement"));
    CHECK(contains(parse_failure_placements(header + ",32,0.04,0.0005\n"), "field placement"));
    CHECK(parse_failure_placements(header + "15,32,0.04,0.0005\n", 8) == "(no exception)");
    // negative and zero times
    e = parse_failure_placements(header + "1,32,-0.04,0.0005\n");
    CHECK(contains(e, "field step_time"));
    e = parse_failure_placements(header + "1,32,0.04,-1e-3\n");
    CHECK(contains(e, "field sync_time"));
    CHECK(contains(e, ">= 0"));
    e = parse_failure_placements(header + "1,32,0,0\n");
    CHECK(contains(e, "field step_time"));
    CHECK(parse_failure_placements(header + "1,32,0.04,0\n") == "(no exception)");
    e = parse_failure_placements(header + "1,-32,0.04,0\n");
    CHECK(contains(e, "field local_bsz"));
}

TEST_CASE("gpus_per_node outside 1..9 is invalid input", "[io][pollux]") {
    std::istringstream in(header);
    CHECK_THROWS_AS(read_pollux_placements(in, 0), invalid_input);
    CHECK_THROWS_AS(read_pollux_placements(in, 10), invalid_input);
}

TEST_CASE("scalability rows and errors", "[io][pollux]") {
    const std::string head = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
    std::istringstream in(head + "6,6,32,0.14,0.099\n2,8,64,0.2,0.05\n");
    const auto rows = read_pollux_scalability(in);
    REQUIRE(rows.size() == 2);
    CHECK(rows[1].nodes == 2);
    CHECK(rows[1].replicas == 8);
    CHECK(rows[1].sample().shape.replicas == 8);
    CHECK(rows[1].sample().shape.nodes == 2);

    CHECK(contains(parse_failure_scalability("6,6,32,0.14,0.099\n"), "field num_nodes"));
    CHECK(contains(parse_failure_scalability(head + "6,6,32,0.14\n"), "truncated"));
    CHECK(contains(parse_failure_scalability(head + "0,6,32,0.14,0.1\n"), "field num_nodes"));
    CHECK(contains(parse_failure_scalability(head + "6,2.5,32,0.14,0.1\n"), "field num_replicas"));
    const auto e = parse_failure_scalability(head + "6,6,32,0.14,0.1\n6,3,32,0.14,0.1\n");
    CHECK(contains(e, "line 3"));
    CHECK(contains(e, "num_replicas"));
    CHECK(contains(e, ">= num_nodes"));
    CHECK(contains(parse_failure_scalability(head + "6,6,32,-0.14,0.1\n"), "field step_time"));
}
