// JSON of the elastic advisor (io/elastic_advisor_json.hpp): measurement tables, runtime records,
// replay reports and the advisor's results of every status, written and read back; malformed input
// names its field; the fuzz seeds of the records' reader.

#include <dnnplan/io/elastic_advisor_json.hpp>

#include "../support/checks.hpp"
#include "../support/fixture_files.hpp"
#include "../support/json_checks.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::field_of;

namespace {

measurement_table elastic_fixture_table(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/elastic/" + name);
    REQUIRE(in);
    return parse_measurement_table(in);
}

}  // namespace

TEST_CASE("elastic JSON: tables, records, reports; malformed input names its field", "[elastic][io]") {
    const measurement_table t = elastic_fixture_table("icac19_k80.json");
    CHECK(t.gpu == "K80");
    CHECK(t.measured.size() == 15);
    const std::string good = R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": 38.9}]})";
    CHECK(parse_measurement_table(good).measured.front().steps_per_s == 38.9);
    const auto field = [](const std::string& text) { return field_of([&] { (void)parse_measurement_table(text); }); };
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [], "extra": 1})") == "extra");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": -2}]})") ==
          "measured[0].steps_per_s");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": [{"ps": 1, "workers": 4, "steps_per_s": 2},
                   {"ps": 1, "workers": 4, "steps_per_s": 3}]})") == "measured[1]");
    CHECK(field(R"({"gpu": "g", "worker_usd_per_h": 1, "ps_usd_per_h": 0.1, "measured": []})") == "measured");

    const elastic_record rec = parse_elastic_record(
        R"({"time_s": 30, "global_step": 300, "speed": 10, "ps": 1, "workers": 1, "nodes": [{"type": "ps", "id": 0, "cpu_used": 1,
            "cpu_requested": 8, "memory_used_mb": 100, "memory_requested_mb": 200}, {"type": "worker", "cpu_used": 1,
            "cpu_requested": 8, "memory_used_mb": 100, "memory_requested_mb": 200}]})");
    CHECK(rec.nodes.size() == 2);
    CHECK(field_of([] { (void)parse_elastic_record(R"({"time_s": 0, "global_step": 0, "speed": 1, "ps": 1, "workers": 1, "gpu": 1})"); }) ==
          "gpu");
    CHECK(field_of([] { (void)parse_elastic_record(R"({"time_s": 0, "global_step": 0, "speed": -1, "ps": 1, "workers": 1})"); }) ==
          "speed");

    const auto commit_1_1 = [](const policy_view&) { return policy_decision{.configuration = {1, 1}, .final = true}; };
    const replay_report r = replay(t, {.work_steps = 1000.0}, commit_1_1);
    const std::string text = to_json_text(r, -1);
    CHECK(text.find(R"("final":{"ps":1,"workers":1})") != std::string::npos);
    CHECK(text.find(R"("met_deadline":true)") != std::string::npos);
    dnnplan_test::check_round_trip(r);
    elastic_request nothing{.job = {.remaining_steps = 10.0, .worker_usd_per_h = 1.0, .configurations = {{1, 1}}}};
    CHECK(to_json_text(solve(nothing), -1).find(R"("upper":null)") != std::string::npos);  // unbounded, written as null
}

TEST_CASE("elastic results of every status write and read back", "[elastic][io]") {
    elastic_request r{.job = {.remaining_steps = 100'000.0, .worker_usd_per_h = 0.9, .ps_usd_per_h = 0.15,
                              .configurations = {{1, 1}, {1, 2}, {1, 4}, {2, 4}}}};
    const auto written = [](const elastic_request& request) {
        const elastic_result res = solve(request);
        CHECK(!result_shape_violation(res));
        dnnplan_test::check_round_trip(res);
        return res;
    };
    // feasible, exact: the first trial.
    CHECK(written(r).figures == figure_kind::exact);
    // feasible, estimated: a trial and a commitment.
    r.observations = {{1, 1, 10.0}, {1, 2, 19.0}, {1, 4, 30.0}};
    CHECK(written(r).plan->action == elastic_action::trial);
    r.observations.push_back({2, 4, 37.0});
    const elastic_result commit = written(r);
    CHECK(commit.plan->action == elastic_action::commit);
    CHECK(to_json_text(commit, -1).find(R"("figures":"estimated","estimate":{"lower":)") != std::string::npos);
    // infeasible with a best effort.
    r.job.deadline_s = 100.0;
    const elastic_result infeasible = written(r);
    CHECK(infeasible.status == solve_status::infeasible);
    CHECK(to_json_text(infeasible, -1).find(R"("plan":null)") != std::string::npos);
    CHECK(to_json_text(infeasible, -1).find(R"("best_effort":{"ps":2,"workers":4,"action":"commit")") != std::string::npos);
}

TEST_CASE("the fuzz seeds of tests/fixtures/fuzz_seeds are read by their readers (elastic)", "[elastic][io][fuzz]") {
    // scripts/fuzz seeds fuzz_elastic_inputs with it: every line is a record the reader accepts.
    const auto files = dnnplan_test::fixture_files("fuzz_seeds", "elastic_records");
    REQUIRE(files.size() == 1);
    std::istringstream lines(files.front().second);
    std::vector<elastic_record> records;
    for (std::string line; std::getline(lines, line);) records.push_back(parse_elastic_record(line));
    CHECK(records.size() == 4);
    CHECK_NOTHROW(validate_records(records));
}


TEST_CASE("fuzz finding measurement_table-19-price-sum-overflow: a configuration's price must be finite", "[elastic][io][fuzz]") {
    // tests/fixtures/fuzz_findings/measurement_table-19-price-sum-overflow.json: found by
    // fuzz_elastic_inputs in a clean-clone .ci/run (2026-11-28; the harness's input without its
    // selector byte). worker_usd_per_h 1e308 is a finite price, but 2 workers cost 2e308 USD/h: the
    // model policy's replay cost inf USD. The table is now rejected, naming the configuration.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/measurement_table-19-price-sum-overflow.json");
    REQUIRE(in);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(field_of([&] { (void)parse_measurement_table(text); }) == "measured[1]");
    // The job the advisor answers is checked the same way.
    elastic_job job{.remaining_steps = 1000.0, .worker_usd_per_h = 1e308, .ps_usd_per_h = 0.1, .configurations = {{1, 1}, {1, 2}}};
    CHECK(field_of([&] { job.validate(); }) == "job.configurations[1]");
    job.configurations = {{1, 1}};
    CHECK_NOTHROW(job.validate());
}
