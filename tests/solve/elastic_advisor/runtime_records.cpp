// Runtime records and the two advisors on them (solve/elastic_advisor/runtime_records.hpp):
// `advise` is solve() on the records' configurations and speeds, the deadline left from the latest
// record's time (past it: infeasible, the fastest as best_effort); `dlrover_advise` is DLRover's
// running plan; bad records by field; the fuzz finding of tests/fixtures/fuzz_findings on records.
// Every model result the tests produce keeps the one result shape (core/result.hpp).

#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/solve/elastic_advisor/runtime_records.hpp>

#include "../../support/checks.hpp"
#include "../../support/json_checks.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::field_of;

TEST_CASE("runtime records: advise reads configurations and speeds; time order", "[elastic][records]") {
    advise_setup setup{.job = {.remaining_steps = 64'000.0, .deadline_s = 2000.0, .worker_usd_per_h = 0.861,
                               .ps_usd_per_h = 0.1429, .configurations = {}}};
    for (std::int32_t p = 1; p <= 2; ++p)
        for (std::int32_t w = 1; w <= 8; ++w) setup.job.configurations.push_back({p, w});
    std::vector<elastic_record> records{{.time_s = 0, .global_step = 0, .speed = 26.96, .ps = 1, .workers = 2},
                                        {.time_s = 120, .global_step = 3235, .speed = 38.94, .ps = 1, .workers = 4}};
    const elastic_result a = advise(records, setup);
    CHECK(!result_shape_violation(a));
    elastic_request direct{.job = setup.job, .observations = {{1, 2, 26.96}, {1, 4, 38.94}}, .current = ps_configuration{1, 4}};
    direct.job.remaining_steps = 64'000.0 - 3235.0;
    direct.job.deadline_s = 2000.0 - 120.0;
    const elastic_result b = solve(direct);
    CHECK(!result_shape_violation(b));
    CHECK(a.status == b.status);
    CHECK(a.plan == b.plan);
    CHECK(a.estimate == b.estimate);

    // Past the deadline the deadline left is negative: infeasible, the fastest as best_effort.
    const std::vector<elastic_record> late{{.time_s = 0, .global_step = 0, .speed = 26.96, .ps = 1, .workers = 2},
                                           {.time_s = 2100, .global_step = 50'000, .speed = 38.94, .ps = 1, .workers = 4}};
    const elastic_result past = advise(late, setup);
    CHECK(!result_shape_violation(past));
    CHECK(past.status == solve_status::infeasible);
    CHECK_FALSE(past.plan);
    REQUIRE(past.best_effort);
    CHECK(past.best_effort->action == elastic_action::commit);
    CHECK(past.reason.find("passed") != std::string::npos);

    records.push_back({.time_s = 100, .global_step = 4000, .speed = 38.9, .ps = 1, .workers = 4});
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].time_s");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = 38.9, .ps = 3, .workers = 4};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2]");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = -1.0, .ps = 1, .workers = 4};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].speed");
    records.back() = {.time_s = 240, .global_step = 4000, .speed = 38.9, .ps = 1, .workers = 4,
                      .nodes = {{.type = dlrover::node_type::ps, .cpu_used = 1, .cpu_requested = 8}}};
    CHECK(field_of([&] { (void)advise(records, setup); }) == "records[2].nodes");  // 0 worker nodes for 4 workers
}

TEST_CASE("dlrover_advise: DLRover's running plan on records with nodes", "[elastic][records]") {
    std::vector<elastic_record> records;
    for (int i = 0; i < 5; ++i) {
        elastic_record r{.time_s = 30.0 * i, .global_step = 300 * i, .speed = 10.0, .ps = 1, .workers = 2};
        r.nodes.push_back({.type = dlrover::node_type::ps, .id = 0, .cpu_used = 2.0, .cpu_requested = 8.0,
                           .memory_used_mb = 1000, .memory_requested_mb = 4096});
        for (std::int32_t w = 0; w < 2; ++w)
            r.nodes.push_back({.type = dlrover::node_type::worker, .id = w, .cpu_used = 4.0, .cpu_requested = 8.0,
                               .memory_used_mb = 2000, .memory_requested_mb = 8192});
        records.push_back(r);
    }
    const auto plan = dlrover_advise(records, {.cpu = 8.0 + 8 * 8.0, .memory_mb = 1e6});
    // PS at 0.25 of its request: workers x 0.9 / 0.25 = 7.2 -> 7 (DLRover's worker plan).
    REQUIRE(plan.groups.contains(dlrover::node_type::worker));
    CHECK(plan.groups.at(dlrover::node_type::worker).count == 7);
}

TEST_CASE("fuzz finding elastic_records-15-infeasible-with-plan: infeasible has no plan, best_effort the fastest",
          "[elastic][records][fuzz]") {
    // tests/fixtures/fuzz_findings/elastic_records-15-infeasible-with-plan.jsonl, replayed as the
    // finding ran it: `elastic_advisor advise --work-steps 64000 --deadline-s 1600 --max-ps 2
    // --max-workers 8 --worker-usd-per-h 0.861 --ps-usd-per-h 0.1429` with the file on stdin (the CLI
    // test, examples/elastic_advisor_cli_test.cmake, runs the program on it too). One record, (2, 2) at
    // 5 steps/s; 64,000 steps by 1,600 s need 40. It returned status infeasible with a plan.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/elastic_records-15-infeasible-with-plan.jsonl");
    REQUIRE(in);
    std::vector<elastic_record> records;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) records.push_back(parse_elastic_record(line));
    REQUIRE(records.size() == 1);
    advise_setup setup{.job = {.remaining_steps = 64'000.0, .deadline_s = 1600.0, .worker_usd_per_h = 0.861,
                               .ps_usd_per_h = 0.1429}};
    for (std::int32_t p = 1; p <= 2; ++p)
        for (std::int32_t w = 1; w <= 8; ++w) setup.job.configurations.push_back({p, w});
    const elastic_result r = advise(records, setup);
    const result_violation broken = result_shape_violation(r);
    INFO(broken.field << ": " << broken.rule);
    CHECK(!broken);
    // Every configuration is bounded by (2, 2): at most 8 x 2.5 + 5% = 21 steps/s. Infeasible, at
    // once: no plan, no objective value; best_effort the fastest it can count on, (2, 8) (at least
    // 5 steps/s: a PS and workers more than (2, 2)), to commit to.
    CHECK(r.status == solve_status::infeasible);
    CHECK_FALSE(r.plan);
    CHECK_FALSE(r.objective_value);
    CHECK_FALSE(r.bound);
    REQUIRE(r.best_effort);
    CHECK(r.best_effort->configuration() == ps_configuration{2, 8});
    CHECK(r.best_effort->action == elastic_action::commit);
    CHECK(r.plan_to_run() == r.best_effort);
    CHECK(r.reason.find("1600 s") != std::string::npos);
    // It writes and reads back (the JSON reader rejects a result that breaks the shape).
    dnnplan_test::check_round_trip(r);
}

TEST_CASE("fuzz finding elastic_records-17-time-beyond-int64: dlrover_advise rejects the time by field",
          "[elastic][records][fuzz]") {
    // tests/fixtures/fuzz_findings/elastic_records-17-time-beyond-int64.jsonl: found by
    // fuzz_elastic_inputs in a clean-clone CI run (2026-11-27). A record at 8.9e115 s is a valid
    // record (a time >= 0), but DLRover keeps timestamps as int64 seconds: the conversion was
    // undefined behaviour (UBSan: "outside the range of representable values of type 'long'").
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/elastic_records-17-time-beyond-int64.jsonl");
    REQUIRE(in);
    std::vector<elastic_record> records;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) records.push_back(parse_elastic_record(line));
    REQUIRE(records.size() == 1);
    const invalid_input e = dnnplan_test::error_of([&] { (void)dlrover_advise(records, {.cpu = 64.0, .memory_mb = 1.0e6}); });
    CHECK(e.field() == "records[0].time_s");
    CHECK(dnnplan_test::contains(e.what(), "2^63"));
    // Just below 2^63 s DLRover takes it.
    records[0].time_s = 9.2e18;
    CHECK_NOTHROW(dlrover_advise(records, {.cpu = 64.0, .memory_mb = 1.0e6}));
}
