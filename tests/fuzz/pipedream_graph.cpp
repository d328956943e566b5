// Fuzzes PipeDream's graph.txt reader (io/pipedream_graph.hpp), then the partitioner on the graph it
// accepts (solve/pipeline_plan/solve.hpp; the first byte picks the machines): the graph round-trips
// as JSON (every name valid UTF-8), and the partition's result is complete and writable.
#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    dnnplan::pipedream_request request;
    if (!dnnplan_fuzz::accepted([&] { request.graph = dnnplan::parse_pipedream_graph(dnnplan_fuzz::text_of(data + 1, size - 1)); }))
        return 0;
    dnnplan_fuzz::check_round_trip(request.graph);
    request.options.machines = {1 + data[0] % 8};
    request.options.straight_pipeline = (data[0] & 0x10U) != 0;
    request.options.use_fewer_machines = (data[0] & 0x20U) != 0;
    if ((data[0] & 0x40U) != 0) request.options.activation_compression_ratio = 1.0;
    request.options.budget = dnnplan_fuzz::small_budget;
    dnnplan::pipedream_result result;
    if (!dnnplan_fuzz::accepted([&] { result = dnnplan::solve(request); })) return 0;  // e.g. nothing left to partition
    dnnplan_fuzz::check_result(result, request.options.budget);
    return 0;
}
