// DLRover's local optimizer (solve/elastic_advisor/dlrover_local.hpp). The first seven cases restate DLRover's
// own unit tests, dlrover/python/tests/test_local_optimizer.py (commit 4d11f35a), with their
// fixture and numbers; each names the upstream test it comes from. The upstream tests share one
// process-wide record store across tests; here every case has its own, which the upstream
// assertions do not depend on (each looks at its own last five records).

#include <dnnplan/solve/elastic_advisor/dlrover_local.hpp>

#include "../../support/checks.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using namespace dnnplan::dlrover;
using dnnplan_test::field_of;

namespace {

/// Two PS (request 4 cores, 4096 MB) using `ps0` and `ps1` cores and 2048 MB, and `workers`
/// workers (request 6 cores, 4096 MB; using 1 core, 2048 MB), at `speed` steps/s.
runtime_record record(double ps0, double ps1, std::int32_t workers, double speed) {
    runtime_record r{.speed = speed};
    r.nodes.push_back({.type = node_type::ps, .id = 0, .name = "ps-0", .config = {4, 4096}, .used = {ps0, 2048}});
    r.nodes.push_back({.type = node_type::ps, .id = 1, .name = "ps-1", .config = {4, 4096}, .used = {ps1, 2048}});
    for (std::int32_t i = 0; i < workers; ++i)
        r.nodes.push_back({.type = node_type::worker, .id = i, .name = "", .config = {6, 4096}, .used = {1, 2048}});
    return r;
}

/// test_local_optimizer.py setUp: ten records of 2 PS (using 1.4 and 1.0 cores) and 3 workers at
/// speed 10, limits 10 cores and 8192 MB.
record_store fixture() {
    record_store store;
    for (int i = 0; i < 10; ++i) store.add(record(1.4, 1.0, 3, 10.0));
    return store;
}

void add(record_store& store, int times, const runtime_record& r) {
    for (int i = 0; i < times; ++i) store.add(r);
}

const resource_limits limits{.cpu = 10, .memory_mb = 8192};

}  // namespace

TEST_CASE("DLRover: the out-of-memory plan doubles the memory request (test_generate_oom_recovery_plan)",
          "[elastic][dlrover]") {
    const runtime_node node{.type = node_type::worker, .id = 0, .name = "", .config = {4, 4096}, .used = {2.4, 2048}};
    const resource_plan plan = oom_recovery_plan({node});
    CHECK(plan.nodes.at("").memory_mb == 8192);
    CHECK(plan.nodes.at("").cpu == 4);
}

TEST_CASE("DLRover: cold start is a fifth of the limits, rounded up (test_generate_job_create_resource)", "[elastic][dlrover]") {
    const resource_plan plan = cold_start_plan(limits);
    CHECK(plan.groups.at(node_type::worker) == group_resource{.count = 1, .resource = {2, 1639}});  // ceil(8192 / 5)
    CHECK(plan.groups.at(node_type::ps) == group_resource{.count = 1, .resource = {2, 1639}});
    // The caps: 16 cores and 8192 MB.
    CHECK(cold_start_plan({.cpu = 1000, .memory_mb = 1e6}).groups.at(node_type::ps).resource == node_resource{16, 8192});
}

TEST_CASE("DLRover: the samples are the last five records with the latest PS set and worker count (test_extract_node_resource)",
          "[elastic][dlrover]") {
    const record_store store = fixture();
    CHECK(store.records().size() == 5);  // the store keeps five records of one node count
    const node_samples s = extract_samples(store.records());
    CHECK(s.workers.size() == 5);
    CHECK(s.workers[0].size() == 3);
    CHECK(s.ps[0].size() == 2);
}

TEST_CASE("DLRover: PS sizing takes the PS share of the CPU limit (test_generate_ps_initial_resource)", "[elastic][dlrover]") {
    const record_store store = fixture();
    // PS CPU per worker (1.4 + 1.0) / 3 = 0.8, worker CPU 1: the PS share of 10 cores is
    // 10 - 10 / 1.8 = 4.44, over requests of 4 cores: 2 PS; memory 2048 x 1.2, truncated.
    CHECK(ps_initial_plan(store.records(), limits).groups.at(node_type::ps) ==
          group_resource{.count = 2, .resource = {4, 2457}});
    // 100 cores: 44.4 / 4 -> 12 PS.
    CHECK(ps_initial_plan(store.records(), {.cpu = 100, .memory_mb = 8192}).groups.at(node_type::ps) ==
          group_resource{.count = 12, .resource = {4, 2457}});
}

TEST_CASE("DLRover: a hot PS is scaled towards the workers the CPU limit allows, at most 32 cores (test_optimize_hot_ps_cpu)",
          "[elastic][dlrover]") {
    record_store store = fixture();
    add(store, 5, record(3.6, 0.3, 3, 10.0));  // ps-0 at exactly 0.9 of its request: hot
    const auto plan = hot_ps_plan(store.records(), {.cpu = 100, .memory_mb = 8192});
    REQUIRE(plan);
    // floor(100 / 2.3) = 43 workers' worth / 3 workers = 14.3, capped by 32 / 3.6: ps-0 to 32.0;
    // ps-1 (0.3 x 8.89 = 2.7 < its 4) unchanged.
    CHECK(plan->nodes.size() == 1);
    CHECK(plan->nodes.at("ps-0").cpu == 32);
    CHECK(plan->nodes.at("ps-0").memory_mb == 0);  // unchanged
}

TEST_CASE("DLRover: workers grow until the busiest PS would reach 0.9 of its request (test_generate_worker_resoruce)",
          "[elastic][dlrover]") {
    record_store store = fixture();
    add(store, 5, record(1.0, 0.3, 3, 10.0));
    // Busiest PS at 0.25: 3 x 0.9 / 0.25 = 10.8 -> 10 workers of 1 core and 1.5 x 2048 MB; the
    // 92 cores and 94,208 MB left after the PS hold more.
    const resource_plan plan = worker_plan(store.records(), {.cpu = 100, .memory_mb = 102400});
    CHECK(plan.groups.at(node_type::worker) == group_resource{.count = 10, .resource = {1.0, 3072}});
}

TEST_CASE("DLRover: the speed ratio of the last worker change (test_compute_worker_speed_ratio)", "[elastic][dlrover]") {
    record_store store = fixture();
    add(store, 5, record(1.0, 0.3, 3, 12.0));
    CHECK(worker_speed_ratio(store.records()) == 1.0);  // one run of records: no change to judge
    add(store, 5, record(1.0, 0.3, 4, 15.0));
    // (15 - 12) / (4 - 3) over 12 / 3: a new worker adds 0.75 of an old one's speed.
    CHECK(worker_speed_ratio(store.records()) == 0.75);
}

// ---- beyond DLRover's own tests ------------------------------------------------------------------

TEST_CASE("DLRover: the record store keeps five records from the first with the latest node count", "[elastic][dlrover]") {
    // The speed ratio above is 0.75 only because of this trimming: with every record kept, the
    // earlier run would average speeds 10 and 12 and the ratio would be 1.21875.
    record_store store;
    add(store, 3, record(1, 1, 3, 1.0));
    add(store, 2, record(1, 1, 4, 2.0));  // another node count: the earlier records are kept
    CHECK(store.records().size() == 5);
    add(store, 4, record(1, 1, 4, 3.0));
    CHECK(store.records().size() == 8);  // 3 of the first count, then the last 5 of the second
    add(store, 1, record(1, 1, 3, 4.0));  // the first count again: from its first record, five at most
    CHECK(store.records().size() == 5);
    CHECK(store.records().front().speed == 3.0);
}

TEST_CASE("DLRover: the stop rules", "[elastic][dlrover]") {
    record_store store = fixture();
    add(store, 5, record(3.9, 0.3, 3, 10.0));  // a PS at 0.975 of its request: no worker plan
    CHECK(worker_plan(store.records(), {.cpu = 100, .memory_mb = 102400}).empty());
    store = fixture();
    add(store, 5, record(1.0, 0.3, 3, 12.0));
    add(store, 5, record(1.0, 0.3, 4, 12.5));  // the 4th worker adds 0.125 of an old one's speed
    CHECK(worker_speed_ratio(store.records()) == Approx(0.125));
    CHECK(worker_plan(store.records(), {.cpu = 100, .memory_mb = 102400}).empty());
    // A hot PS's plan, even empty, comes before worker scaling in the running stage.
    store = fixture();
    add(store, 5, record(3.6, 0.3, 3, 10.0));
    CHECK(running_plan(store.records(), {.cpu = 100, .memory_mb = 8192}).nodes.contains("ps-0"));
    store = fixture();
    add(store, 5, record(1.0, 0.3, 3, 10.0));
    CHECK(running_plan(store.records(), {.cpu = 100, .memory_mb = 102400}).groups.at(node_type::worker).count == 10);
}

TEST_CASE("DLRover: python_round_1 rounds as Python's round(x, 1)", "[elastic][dlrover]") {
    using dnnplan::dlrover::detail::python_round_1;
    CHECK(python_round_1(32.00000000000001) == 32.0);
    CHECK(python_round_1(2.6666666666666665) == 2.7);
    CHECK(python_round_1(0.25) == 0.2);   // an exact tie: to even, as Python
    CHECK(python_round_1(0.35) == 0.3);   // 0.35 is 0.34999... in binary: down, as Python
    CHECK(python_round_1(2.675) == 2.7);  // 2.67499... -> 2.7 at one decimal
}

TEST_CASE("DLRover: bad records name the field", "[elastic][dlrover][errors]") {
    runtime_record r = record(1, 1, 3, 10.0);
    r.nodes[1].config.cpu = 0;  // a PS without a CPU request: its utilisation is undefined
    record_store store;
    CHECK(field_of([&] { store.add(r); }) == "record.nodes[1].config.cpu");
    CHECK(field_of([&] { (void)worker_plan({r}, limits); }) == "records[0].nodes[1].config.cpu");
    r = record(1, 1, 3, -1.0);
    CHECK(field_of([&] { (void)worker_speed_ratio({r}); }) == "records[0].speed");
    CHECK(field_of([&] { (void)cold_start_plan({.cpu = -1, .memory_mb = 1}); }) == "limits.cpu");
    CHECK(field_of([&] { (void)estimate_process_requirement({}); }) == "records");
}
