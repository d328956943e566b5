// DLRover's Brain algorithms (solve/elastic_advisor/dlrover_brain.hpp, solve/elastic_advisor/dlrover_brain_worker.hpp). The
// first cases restate every test of DLRover's Go unit tests,
// dlrover/go/brain/pkg/optimizer/implementation/optalgorithm/*_test.go, with their inputs and
// numbers; each names the upstream file (and the commit read) and test function. Where a Go test
// puts a key into CustomizedConfig, the same field of brain_options is set; keys it leaves out
// keep DLRover's defaults. The Go tests' fake datastore becomes the job's ps_nodes / worker_nodes.
// Then two of the optimizer-level tests (implementation/optimizer/*_test.go) that hit Go's
// division by zero, the majority-cluster table, the other quirks, and bad input by field.

#include <dnnplan/solve/elastic_advisor/dlrover_brain.hpp>
#include <dnnplan/solve/elastic_advisor/dlrover_brain_worker.hpp>

#include "../../support/checks.hpp"

#include <dnnplan/core/error.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace dnnplan::dlrover;
using dnnplan_test::field_of;

namespace {

/// The worker group's memory of optimize_job_worker_create_oom_resource.
double oom_memory(const brain_job& job, const std::vector<brain_job>& history, const brain_options& options) {
    return optimize_job_worker_create_oom_resource(job, history, options).groups.at(node_type::worker).resource.memory_bytes;
}

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// Named, not a bare braced list: assigning {{.member = ...}} to the std::optional picks another
// constructor (GCC 12).
using records = std::vector<brain_runtime_record>;

std::vector<brain_runtime_record> repeat(const brain_runtime_record& first, const brain_runtime_record& second, int times) {
    std::vector<brain_runtime_record> out;
    for (int i = 0; i < times; ++i) out.push_back(first);
    for (int i = 0; i < times; ++i) out.push_back(second);
    return out;
}

brain_job_node node(std::string name, double cpu_cores, double memory_bytes = 0.0) {
    return {.name = std::move(name), .status = "", .is_oom = false, .resource = {.cpu_cores = cpu_cores, .memory_bytes = memory_bytes}};
}

/// optimize_job_ps_create_resource_test.go's two history jobs (both "Completed").
std::vector<brain_job> ps_history() {
    brain_job one, two;
    one.exit_reason = two.exit_reason = "Completed";
    one.runtime = records{{.ps_memory_bytes = {{0, 1000}, {1, 1200}}, .ps_cpu_cores = {{0, 12}, {1, 10}}},
                   {.ps_memory_bytes = {{0, 1200}, {1, 1400}}, .ps_cpu_cores = {{0, 10}, {1, 14}}}};
    two.runtime = records{{.ps_memory_bytes = {{0, 500}, {1, 600}}, .ps_cpu_cores = {{0, 6}, {1, 16}}},
                   {.ps_memory_bytes = {{0, 600}, {1, 700}}, .ps_cpu_cores = {{0, 5}, {1, 16}}}};
    return {one, two};
}

/// optimize_job_ps_init_adjust_resource_test.go: 5 + 5 records, batch 10, 100,000 samples, 249
/// receive ops; conf: step count 5, target workers 32, margin 4 cores (PSCPUOverload and
/// WorkerMemoryMarginPercent are set there but not read).
brain_job init_adjust_job(const brain_runtime_record& first, const brain_runtime_record& second) {
    brain_job job;
    job.runtime = repeat(first, second, 5);
    job.hyper_params = training_hyper_params{.batch_size = 10};
    job.dataset_size = 100000;
    job.recv_op_count = 249;
    return job;
}

brain_options init_adjust_options() {
    brain_options o;
    o.step_count_threshold = 5;
    o.ps_init_adjust_target_worker_count = 32;
    o.ps_margin_cpu_cores = 4;
    return o;
}

/// optimize_job_worker_create_oom_resource_test.go's history: one job with three worker nodes,
/// worker-0 out of memory.
std::vector<brain_job> oom_history() {
    brain_job past;
    past.exit_reason = "Completed";
    past.runtime = records{{.worker_memory_bytes = {{0, 13}, {1, 10}, {2, 14}}}, {.worker_memory_bytes = {{1, 10}, {2, 14}}}};
    past.worker_nodes = {node("job-1-worker-0", 0), node("job-1-worker-1", 0), node("job-1-worker-2", 0)};
    past.worker_nodes[0].is_oom = true;
    return {past};
}

brain_options oom_options(double min_increase_bytes) {
    brain_options o;
    o.worker_oom_memory_min_increase_bytes = min_increase_bytes;
    o.worker_oom_memory_margin_ratio = 0.2;
    return o;
}

/// optimize_job_worker_resource_test.go's conf (the phase varies) and its PS node "task-ps-0"
/// requesting 10 cores.
brain_options worker_options(worker_optimize_phase phase) {
    brain_options o;
    o.worker_max_replica_count = 10;
    o.step_count_threshold = 5;
    o.ps_cpu_exhausted_threshold_ratio = 0.95;
    o.ps_cpu_overload_ratio = 0.8;
    o.training_speed_less_ratio = 0.1;
    o.worker_replica_decrease_count = 1;
    o.worker_max_init_count_per_step = 32;
    o.worker_max_count_per_step = 4;
    o.worker_memory_margin_ratio = 0.2;
    o.worker_cpu_margin_cores = 1.0;
    o.worker_cpu_util_comp_count = 2;
    o.worker_cpu_util_less_ratio = 0.15;
    o.worker_phase = phase;
    return o;
}

brain_job worker_job(const brain_runtime_record& first, const brain_runtime_record& second) {
    brain_job job;
    job.runtime = repeat(first, second, 5);
    job.ps_nodes = {node("task-ps-0", 10)};
    return job;
}

}  // namespace

// ---- optalgorithm/*_test.go ---------------------------------------------------------------------

TEST_CASE("DLRover Brain: PS from history (optimize_job_ps_create_resource_test.go @dad320ad, TestOptimizeJobPSCreateResource)",
          "[elastic][dlrover_brain]") {
    // The test's only key, OptimizerPSMinCPUCore "12", is never read: every margin is its default.
    const auto plan = optimize_job_ps_create_resource(ps_history());
    REQUIRE(plan);
    const brain_group ps = plan->groups.at(node_type::ps);
    // The test's formulas: cores ceil(16) + 4 = 20; count ceil((12 + 14) / 20) = 2 (the algorithm's
    // own total is 24 x 1.5 = 36: ceil(36 / 20) is 2 as well); memory 1400 x (1 + 0.2).
    CHECK(ps.count == 2);
    CHECK(static_cast<int>(ps.resource.memory_bytes) == 1680);  // upstream compares int(Memory)
    CHECK(ps.resource.memory_bytes == 1680.0);                   // exact in double
    CHECK(ps.resource.cpu_cores == 20.0);
}

TEST_CASE("DLRover Brain: cold PS (optimize_job_ps_cold_create_resource_test.go @c7de2ea0, TestOptimizeJobPSColdCreateResource)",
          "[elastic][dlrover_brain]") {
    brain_options o;
    o.ps_cold_replica = 4;
    o.ps_cold_cpu_cores = 12;
    o.ps_cold_memory_bytes = 1000;
    const brain_group ps = optimize_job_ps_cold_create_resource(o).groups.at(node_type::ps);
    CHECK(ps.count == 4);
    CHECK(ps.resource.memory_bytes == 1000.0);
    CHECK(ps.resource.cpu_cores == 12.0);
}

TEST_CASE("DLRover Brain: PS from the receive-op count (optimize_job_ps_init_adjust_resource_test.go @e426cd5e, "
          "TestOptimizeJobPSInitialResource)",
          "[elastic][dlrover_brain]") {
    const brain_runtime_record first{.speed_steps_per_s = 8, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 0.3}},
                                     .ps_memory_bytes = {{0, 4000}, {1, 10000}}, .ps_cpu_cores = {{0, 2}, {1, 2}}};
    brain_runtime_record second = first;
    second.speed_steps_per_s = 10;
    second.ps_cpu_cores = {{0, 3}, {1, 3}};
    const brain_group ps =
        optimize_job_ps_init_adjust_resource(init_adjust_job(first, second), init_adjust_options()).groups.at(node_type::ps);
    CHECK(ps.resource.cpu_cores == std::ceil(0.08 * 249 / 2 + 4));  // 14
    CHECK(ps.resource.cpu_cores == 14.0);
    // 10,000 steps at 10 steps/s: 1000 s <= 1800 s, so 10 target workers; 10 x 6 cores / 14 -> 5.
    CHECK(ps.count == 5);
    CHECK(ps.resource.memory_bytes == 12000.0);  // 10000 x (1 + 0.2)
}

TEST_CASE("DLRover Brain: PS from the receive-op count, hot PS (optimize_job_ps_init_adjust_resource_test.go @e426cd5e, "
          "TestOptimizeJobPSInitialResourceWithHotPS)",
          "[elastic][dlrover_brain]") {
    const brain_runtime_record first{.speed_steps_per_s = 8, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 0.3}},
                                     .ps_cpu_cores = {{0, 2}, {1, 24}}};
    brain_runtime_record second = first;
    second.speed_steps_per_s = 10;
    const brain_group ps =
        optimize_job_ps_init_adjust_resource(init_adjust_job(first, second), init_adjust_options()).groups.at(node_type::ps);
    // 24 + 4 cores; the busiest PS's excess 22 caps the free rate at 28 / 22: ceil(1.27) = 2
    // workers, 2 x 26 cores / 28 -> 2 PS. (Memory is not asserted upstream: no PS memory, 0.)
    CHECK(ps.resource.cpu_cores == 28.0);
    CHECK(ps.count == 2);
    CHECK(ps.resource.memory_bytes == 0.0);
}

TEST_CASE("DLRover Brain: PS out of memory (optimize_job_ps_oom_resource_test.go @733ebf5b, TestOptimizeJobPSOomResource1/2/3)",
          "[elastic][dlrover_brain]") {
    brain_options o;
    o.ps_memory_workload_unbalance_ratio = 0.2;
    SECTION("TestOptimizeJobPSOomResource1: no runtime collected, twice the largest request") {
        brain_job job;  // JobRuntime "": no runtime
        job.ps_nodes = {{.name = "", .status = "Running", .is_oom = false, .resource = {.cpu_cores = 0, .memory_bytes = 110}},
                        {.name = "", .status = "Error", .is_oom = true, .resource = {.cpu_cores = 0, .memory_bytes = 100}}};
        const auto plan = optimize_job_ps_oom_resource(job, o);
        REQUIRE(plan);
        CHECK(plan->groups.at(node_type::ps).resource.memory_bytes == 220.0);
        CHECK(plan->groups.at(node_type::ps).count == 0);
    }
    SECTION("TestOptimizeJobPSOomResource2: balanced PS memory, twice the PS") {
        brain_job job;
        job.runtime = records{{.ps_memory_bytes = {{0, 100}, {1, 100}}}};
        const auto plan = optimize_job_ps_oom_resource(job, o);
        REQUIRE(plan);
        CHECK(plan->groups.at(node_type::ps).resource.memory_bytes == 0.0);
        CHECK(plan->groups.at(node_type::ps).count == 4);
    }
    SECTION("TestOptimizeJobPSOomResource3: unbalanced ((200 - 150) / 200 > 0.2), twice the memory") {
        brain_job job;
        job.runtime = records{{.ps_memory_bytes = {{0, 100}, {1, 200}}}};
        const auto plan = optimize_job_ps_oom_resource(job, o);
        REQUIRE(plan);
        CHECK(plan->groups.at(node_type::ps).resource.memory_bytes == 400.0);
        CHECK(plan->groups.at(node_type::ps).count == 0);
    }
}

TEST_CASE("DLRover Brain: hot PS (optimize_job_hot_ps_resource_test.go @e426cd5e, TestOptimizeJobHotPSResource)",
          "[elastic][dlrover_brain]") {
    brain_options o;
    o.hot_ps_cpu_threshold_ratio = 0.8;
    o.hot_ps_memory_threshold_ratio = 0.9;
    o.hot_ps_cpu_target_worker_count = 20;
    o.hot_ps_memory_adjust_bytes = 4000000000;
    brain_job job;
    const brain_runtime_record r{.ps_memory_bytes = {{0, 4 * gib}, {1, 4 * gib}}, .ps_cpu_cores = {{0, 6}, {1, 9}}};
    job.runtime = records{r, r, r};
    job.ps_nodes = {node("task-ps-0", 10, 5 * gib), node("task-ps-1", 10, 5 * gib)};
    const auto plan = optimize_job_hot_ps_resource(job, o);
    REQUIRE(plan);
    CHECK(plan->pods.at("task-ps-1").cpu_cores == 32.0);
    // Not asserted upstream: no worker, so 20 / 0 = +Inf, lowered to 32 / 9 by ps-1; ps-0 gets
    // ceil(6 x 32 / 9) = 22; memory at 0.8 of the request is not hot.
    CHECK(plan->pods.at("task-ps-0") == pod_resource{.cpu_cores = 22, .memory_bytes = 0});
    CHECK(plan->pods.at("task-ps-1").memory_bytes == 0.0);
}

TEST_CASE("DLRover Brain: shrink a cold PS (optimize_job_ps_resource_util_test.go @e426cd5e, TestOptimizeJobPSResourceUtil)",
          "[elastic][dlrover_brain]") {
    brain_options o;
    o.hot_ps_cpu_target_worker_count = 3;
    o.low_ps_cpu_threshold_ratio = 0.4;
    o.ps_memory_margin_ratio = 0.5;
    o.ps_margin_cpu_cores = 4;
    o.ps_cpu_overload_ratio = 0.1;
    const node_values workers{{0, 2}, {1, 2}, {2, 2}};
    brain_job job;
    const node_values memory{{0, 4 * gib}};
    job.runtime = records{
        {.global_step = 1, .speed_steps_per_s = 2, .worker_cpu_cores = workers, .ps_memory_bytes = memory, .ps_cpu_cores = {{0, 2}}},
        {.global_step = 10, .speed_steps_per_s = 2, .worker_cpu_cores = workers, .ps_memory_bytes = memory, .ps_cpu_cores = {{0, 4}}},
        {.global_step = 20, .speed_steps_per_s = 2, .worker_cpu_cores = workers, .ps_memory_bytes = {{0, 4 * gib}, {1, 4 * gib}},
         .ps_cpu_cores = {{0, 2}}}};
    job.hyper_params = training_hyper_params{.batch_size = 10};
    job.dataset_size = 200000;
    job.ps_nodes = {node("task-ps-0", 20, 5 * gib)};
    const auto plan = optimize_job_ps_resource_util(job, o);
    REQUIRE(plan);
    // 9990 s left; mean 8/3 of 20 cores (0.133 > 0.1) with 3 workers: enabled; largest 4 of 20 < 0.4.
    CHECK(plan->pods.at("task-ps-0").cpu_cores == 8.0);  // ceil(4) + 4
    CHECK(plan->pods.at("task-ps-0").memory_bytes == 6442450944.0);  // not asserted upstream: 4 GiB x 1.5
}

TEST_CASE("DLRover Brain: the first worker (optimize_job_worker_create_resource_test.go @13d79d18, TestOptimizeJobWorkerCreateResource)",
          "[elastic][dlrover_brain]") {
    brain_job one, two;
    one.exit_reason = two.exit_reason = "Completed";
    one.runtime = records{{.worker_memory_bytes = {{0, 14 * gib}, {1, 2 * gib}}, .worker_cpu_cores = {{0, 11}, {1, 12}}}};
    two.runtime = records{{.worker_memory_bytes = {{0, 1 * gib}, {1, 2 * gib}}, .worker_cpu_cores = {{0, 14}, {1, 11}}}};
    brain_options o;
    o.job_node_memory_margin_ratio = 0.4;
    const brain_group worker = optimize_job_worker_create_resource({one, two}, o).groups.at(node_type::worker);
    CHECK(worker.resource.memory_bytes == 14.0 * 1024 * 1024 * 1024 * (1 + 0.4));
    CHECK(worker.resource.memory_bytes == 21045339750.399998);
    CHECK(worker.resource.cpu_cores == 14.0);
    CHECK(worker.count == 1);
}

TEST_CASE("DLRover Brain: the first worker after an OOM (optimize_job_worker_create_oom_resource_test.go @5c4f181e, "
          "TestOptimizeJobWorkerCreateOomResource1/2/3)",
          "[elastic][dlrover_brain]") {
    // History: worker-0 (OOM) last seen at 13 -> 13 x 1.2 = 15.6; the others 10 and 14.
    SECTION("TestOptimizeJobWorkerCreateOomResource1: no earlier plan or record, the history's") {
        const brain_job job;  // empty metrics
        CHECK(oom_memory(job, oom_history(), oom_options(40)) == 13 * (1 + 0.2));
    }
    SECTION("TestOptimizeJobWorkerCreateOomResource2: the last plan's 12 + 4") {
        brain_job job;
        brain_plan earlier;
        earlier.groups[node_type::worker] = {.count = 0, .resource = {.cpu_cores = 0, .memory_bytes = 12}};
        job.optimizations = {earlier};
        CHECK(oom_memory(job, oom_history(), oom_options(4)) == 16.0);
    }
    SECTION("TestOptimizeJobWorkerCreateOomResource3: the latest record's 12 + 4") {
        brain_job job;
        job.runtime = records{{.worker_memory_bytes = {{1, 10}, {0, 12}}}};
        CHECK(oom_memory(job, oom_history(), oom_options(4)) == 16.0);
    }
}

TEST_CASE("DLRover Brain: running workers (optimize_job_worker_resource_test.go @e426cd5e, TestOptimizeJobWorkerResource_AddReplica)",
          "[elastic][dlrover_brain]") {
    const brain_runtime_record first{.speed_steps_per_s = 8, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 0.3}},
                                     .ps_cpu_cores = {{0, 4}}};
    brain_runtime_record second{.speed_steps_per_s = 10, .ps_cpu_cores = {{0, 6}}};
    for (std::uint64_t i = 0; i < 5; ++i) {
        second.worker_cpu_cores[i] = 0.35;
        second.worker_memory_bytes[i] = 20;
    }
    brain_job job = worker_job(first, second);
    job.hyper_params = training_hyper_params{.batch_size = 10};
    job.dataset_size = 200000;
    const auto plan = optimize_job_worker_resource(job, worker_options(worker_optimize_phase::stable));
    REQUIRE(plan);
    const brain_group w = plan->groups.at(node_type::worker);
    CHECK(w.count == static_cast<std::int32_t>(std::ceil(0.8 / (6.0 / 10.0) * 5)));  // ceil(6.666666666666668) = 7
    CHECK(w.count == 7);
    CHECK(w.resource.memory_bytes == 20.0 * 1.2);
    CHECK(w.resource.cpu_cores == std::ceil(0.35 + 1.0));  // 2
}

TEST_CASE("DLRover Brain: running workers (optimize_job_worker_resource_test.go @e426cd5e, TestOptimizeJobWorkerResource_AddReplica2)",
          "[elastic][dlrover_brain]") {
    const brain_runtime_record first{.speed_steps_per_s = 8, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 0.3}},
                                     .ps_cpu_cores = {{0, 1}}};
    brain_runtime_record second = first;
    second.speed_steps_per_s = 10;
    second.ps_cpu_cores = {{0, 2}};
    brain_job job = worker_job(first, second);
    job.hyper_params = training_hyper_params{.batch_size = 10};
    job.dataset_size = 100000;
    const auto plan = optimize_job_worker_resource(job, worker_options(worker_optimize_phase::sample));
    REQUIRE(plan);
    // Sample phase: 10,000 steps at 10 steps/s per worker take 1000 s <= 1800 s: defaultInitWorker.
    CHECK(plan->groups.at(node_type::worker).count == 10);
}

TEST_CASE("DLRover Brain: running workers (optimize_job_worker_resource_test.go @e426cd5e, TestOptimizeJobWorkerResource_DecreaseReplica)",
          "[elastic][dlrover_brain]") {
    const brain_runtime_record first{.speed_steps_per_s = 10, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 0.3}},
                                     .ps_cpu_cores = {{0, 8}}};
    const brain_runtime_record second{.speed_steps_per_s = 8, .worker_memory_bytes = {{0, 10}, {1, 10}},
                                      .worker_cpu_cores = {{0, 0.3}, {1, 0.35}}, .ps_cpu_cores = {{0, 9.6}}};
    // No phase key and no hyper-parameters or dataset in the metrics.
    const auto plan = optimize_job_worker_resource(worker_job(first, second), worker_options(worker_optimize_phase::unset));
    REQUIRE(plan);
    // The PS at 9.6 / 10 = 0.96 > 0.95 is exhausted: 2 - 1 workers.
    CHECK(plan->groups.at(node_type::worker).count == 1);
}

// ---- optimizer/*_test.go: the defaults the optimizers put in, and Go's division by zero --------

TEST_CASE("DLRover Brain: no worker, so Go's PS count is int32(NaN): 0 here (job_ps_init_adjust_resource_optimizer_test.go "
          "@38624258, TestJobPSInitialResourceOptimizer)",
          "[elastic][dlrover_brain][quirks]") {
    brain_job job;
    job.runtime = records{{.ps_cpu_cores = {{0, 6}, {1, 10}}}, {.ps_cpu_cores = {{0, 10}, {1, 8}}}};
    job.recv_op_count = 249;
    const brain_group ps = optimize_job_ps_init_adjust_resource(job).groups.at(node_type::ps);  // the optimizer's defaults
    CHECK(ps.resource.cpu_cores == std::ceil(0.08 * 249 / 2 + 4));  // 14: the one upstream assertion
    // Speed 0 over 0 workers is NaN: no target; 0 / 0 workers x 18 cores is NaN.
    CHECK(ps.count == 0);
    CHECK(ps.resource.memory_bytes == 0.0);
}

TEST_CASE("DLRover Brain: a PS memory request of 0 is always hot (job_ps_running_resource_optimizer_test.go @e426cd5e, "
          "TestJobPSRunningResourceOptimizer)",
          "[elastic][dlrover_brain][quirks]") {
    brain_job job;
    const brain_runtime_record r{.ps_memory_bytes = {{0, 4 * gib}, {1, 4 * gib}}, .ps_cpu_cores = {{0, 6}, {1, 9}}};
    job.runtime = records{r, r, r};
    job.ps_nodes = {node("task-ps-0", 10), node("task-ps-1", 10)};  // no memory request
    const auto plan = optimize_job_hot_ps_resource(job);  // the optimizer's defaults: 0.8, 0.9, 32 workers, 8 GiB
    REQUIRE(plan);
    CHECK(plan->pods.at("task-ps-1").cpu_cores == 32.0);  // the upstream assertion
    // 4 GiB / 0 is +Inf > 0.9: both PS get 0 + 8 GiB.
    CHECK(plan->pods.at("task-ps-1").memory_bytes == 8 * gib);
    CHECK(plan->pods.at("task-ps-0") == pod_resource{.cpu_cores = 22, .memory_bytes = 8 * gib});
}

// ---- beyond DLRover's tests ----------------------------------------------------------------------

TEST_CASE("DLRover Brain: the majority cluster stops when a side runs out, ties go right", "[elastic][dlrover_brain][quirks]") {
    using v = std::vector<double>;
    const std::vector<std::pair<v, v>> table{
        {{22, 24}, {24}},          {{21, 22}, {22}},         {{1, 2, 3}, {2, 3}},       {{1, 2, 4}, {1, 2}},
        {{1, 3, 4}, {3, 4}},       {{1, 2, 3, 4}, {3, 4}},   {{1, 1, 5, 9}, {5, 9}},    {{1, 2, 3, 10}, {1, 2, 3}},
        {{1, 9, 10, 11}, {10, 11}}, {{5}, {5}},               {{1, 2, 3, 4, 5}, {3, 4, 5}}, {{1, 5, 6, 7, 100}, {5, 6, 7}},
        {{10, 10, 10, 1, 1}, {10, 10, 10}}, {{}, {}}};
    for (const auto& [input, cluster] : table) {
        CAPTURE(input);
        CHECK(compute_major_cluster(input) == cluster);
    }
}

TEST_CASE("DLRover Brain: the PS-count cap, and its fallback bug", "[elastic][dlrover_brain][quirks]") {
    brain_options o;
    o.ps_max_count = 1;  // capped: cores = ceil(36 / 1), no margin re-added; memory raised to 2600
    CHECK(optimize_job_ps_create_resource(ps_history(), o)->groups.at(node_type::ps) ==
          brain_group{.count = 1, .resource = {.cpu_cores = 36, .memory_bytes = 2600 * 1.2}});
    // DLRover falls back to 15 only when the key is missing (it tests the CPU margin, not the count,
    // for 0): 0 is kept and gives 0 PS with ceil(36 / 0) = +Inf cores and memory.
    o.ps_max_count = 0;
    const brain_group zero = optimize_job_ps_create_resource(ps_history(), o)->groups.at(node_type::ps);
    CHECK(zero.count == 0);
    CHECK(zero.resource.cpu_cores == std::numeric_limits<double>::infinity());
    CHECK(zero.resource.memory_bytes == std::numeric_limits<double>::infinity());
    // The other keys' 0 reads as their default.
    o = {};
    o.ps_memory_margin_ratio = o.ps_cpu_margin_ratio = o.job_node_cpu_margin_cores = 0;
    CHECK(optimize_job_ps_create_resource(ps_history(), o) == optimize_job_ps_create_resource(ps_history()));
    // No history job with records: no plan.
    CHECK_FALSE(optimize_job_ps_create_resource({brain_job{}}));
}

TEST_CASE("DLRover Brain: the speed state and the phases", "[elastic][dlrover_brain][quirks]") {
    // One worker at 10 steps/s, then two at 9: a 10% drop, decelerated with the 0.1 DLRover's
    // optimizer always passes: the count stays. PS at 1 of 10 cores.
    const brain_runtime_record one{.speed_steps_per_s = 10, .worker_memory_bytes = {{0, 10}}, .worker_cpu_cores = {{0, 1}},
                                   .ps_cpu_cores = {{0, 1}}};
    const brain_runtime_record two{.speed_steps_per_s = 9, .worker_memory_bytes = {{0, 10}, {1, 10}},
                                   .worker_cpu_cores = {{0, 1}, {1, 1}}, .ps_cpu_cores = {{0, 1}}};
    const brain_job job = worker_job(one, two);
    brain_options o;  // the defaults: at most 60 workers
    o.worker_phase = worker_optimize_phase::stable;
    CHECK(optimize_job_worker_resource(job, o)->groups.at(node_type::worker).count == 2);
    // At 0.2 the drop is "stable"; phase stable without "increased" is DLRover's "invalid optimize
    // phase": the idle-PS count ceil(0.8 / 0.1 x 2) = 16 is kept, not capped at 2 + 4 per step.
    o.training_speed_less_ratio = 0.2;
    CHECK(optimize_job_worker_resource(job, o)->groups.at(node_type::worker).count == 16);
    o.worker_phase = worker_optimize_phase::unset;
    CHECK(optimize_job_worker_resource(job, o)->groups.at(node_type::worker).count == 16);
    // Sample phase without the training's features: the count is not capped by the init step either.
    o.worker_phase = worker_optimize_phase::sample;
    CHECK(optimize_job_worker_resource(job, o)->groups.at(node_type::worker).count == 16);
}

TEST_CASE("DLRover Brain: a lone PS CPU peak is a singular record, dropped", "[elastic][dlrover_brain]") {
    using dnnplan::dlrover::detail::without_singular_records;
    const auto at = [](double ps_cpu) { return brain_runtime_record{.ps_cpu_cores = {{0, ps_cpu}}}; };
    const node_values request{{0, 10}};
    // 0.9 > 0.8 and more than 15% above every record within 2: dropped.
    CHECK(without_singular_records({at(1), at(1), at(9), at(1), at(1)}, request, 0.8, 2, 0.15).size() == 4);
    // A neighbour at 0.85 is within 15%: kept. The first and the last are always kept.
    CHECK(without_singular_records({at(1), at(8.5), at(9), at(1), at(1)}, request, 0.8, 2, 0.15).size() == 5);
    CHECK(without_singular_records({at(9), at(1), at(1), at(9)}, request, 0.8, 2, 0.15).size() == 4);
}

TEST_CASE("DLRover Brain: Go's division and int32 conversion, spelled out", "[elastic][dlrover_brain][quirks]") {
    using dnnplan::dlrover::detail::go_count;
    using dnnplan::dlrover::detail::go_div;
    constexpr double inf = std::numeric_limits<double>::infinity();
    CHECK(go_div(6, 3) == 2.0);
    CHECK(go_div(1, 0) == inf);
    CHECK(go_div(-1, 0) == -inf);
    CHECK(go_div(1, -0.0) == -inf);
    CHECK(std::isnan(go_div(0, 0)));
    CHECK(go_count(6.9) == 6);
    CHECK(go_count(-2147483648.0) == std::numeric_limits<std::int32_t>::min());
    CHECK(go_count(2147483648.0) == 0);
    CHECK(go_count(inf) == 0);
    CHECK(go_count(std::nan("")) == 0);
}

TEST_CASE("DLRover Brain: node indices from pod names, as DLRover's two parsers read them", "[elastic][dlrover_brain]") {
    using dnnplan::dlrover::detail::index_after_last_dash;
    using dnnplan::dlrover::detail::pod_index;
    CHECK(pod_index("task-ps-1") == 1U);
    CHECK(pod_index("job-1-worker-2") == 2U);
    CHECK(pod_index("a-ps-b-worker-3") == 3U);  // "-worker-" first
    CHECK(pod_index("x-ps-ps-1") == std::nullopt);  // Go's Split: "-ps-" at 1, then "ps-1" is not a number
    CHECK(pod_index("ps-1") == std::nullopt);
    CHECK(pod_index("a-worker-+3") == 3U);  // Atoi takes a sign
    CHECK(pod_index("a-worker--3") == std::nullopt);  // negative: skipped
    CHECK(index_after_last_dash("x-ps-ps-1") == 1U);
    CHECK(index_after_last_dash("task-ps-") == std::nullopt);
}

TEST_CASE("DLRover Brain: bad input names the field", "[elastic][dlrover_brain][errors]") {
    brain_options o;
    o.step_count_threshold = 0;
    CHECK(field_of([&] { (void)optimize_job_ps_cold_create_resource(o); }) == "options.step_count_threshold");
    o = {};
    o.ps_cpu_overload_ratio = -0.1;
    CHECK(field_of([&] { (void)optimize_job_ps_cold_create_resource(o); }) == "options.ps_cpu_overload_ratio");
    o = {};
    o.worker_max_replica_count = std::int64_t{1} << 40;
    CHECK(field_of([&] { (void)optimize_job_ps_cold_create_resource(o); }) == "options.worker_max_replica_count");

    brain_job job = init_adjust_job({.ps_cpu_cores = {{0, 1}}}, {.ps_cpu_cores = {{0, 1}}});
    job.recv_op_count.reset();
    CHECK(field_of([&] { (void)optimize_job_ps_init_adjust_resource(job); }) == "job.recv_op_count");
    job.recv_op_count = 1;
    (*job.runtime)[1].ps_cpu_cores[0] = -1;
    CHECK(field_of([&] { (void)optimize_job_ps_init_adjust_resource(job); }) == "job.runtime[1].ps_cpu_cores[0]");
    job.runtime->clear();
    CHECK(field_of([&] { (void)optimize_job_ps_init_adjust_resource(job); }) == "job.runtime");
    job.runtime.reset();  // the JSON did not parse: DLRover returns an error
    CHECK(field_of([&] { (void)optimize_job_ps_init_adjust_resource(job); }) == "job.runtime");
    CHECK(field_of([&] { (void)optimize_job_hot_ps_resource(job); }) == "job.runtime");
    CHECK(field_of([&] { (void)optimize_job_ps_resource_util(job); }) == "job.runtime");
    CHECK(field_of([&] { (void)optimize_job_worker_resource(job); }) == "job.runtime");
    job.ps_nodes = {node("task-ps-0", -1)};
    CHECK(field_of([&] { (void)optimize_job_ps_oom_resource(job); }) == "job.ps_nodes[0].resource.cpu_cores");

    std::vector<brain_job> history = ps_history();
    (*history[1].runtime)[0].speed_steps_per_s = std::nan("");
    CHECK(field_of([&] { (void)optimize_job_ps_create_resource(history); }) == "history[1].runtime[0].speed_steps_per_s");
    CHECK(field_of([&] { (void)optimize_job_worker_create_resource(history); }) == "history[1].runtime[0].speed_steps_per_s");
    CHECK(field_of([&] { (void)compute_major_cluster({1, std::nan("")}); }) == "nums[1]");
}
