// Fuzzes the hybrid-parallel planner's request reader, then the planner on at most 8 workers with a
// small budget (io/hybrid_plan_json.hpp, solve/hybrid_plan/solve.hpp): every property of fuzz_support.hpp.
#include <dnnplan/io/hybrid_plan_json.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>

#include "fuzz_support.hpp"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dnnplan::hybrid_request request;
    if (!dnnplan_fuzz::accepted([&] { request = dnnplan::parse_json<dnnplan::hybrid_request>(dnnplan_fuzz::text_of(data, size)); }))
        return 0;
    dnnplan_fuzz::check_round_trip(request);
    request.problem.max_workers = std::min(request.problem.max_workers, 8);
    if (request.problem.global_batch_sizes.size() > 4) request.problem.global_batch_sizes.resize(4);
    request.options.max_micro_batches = std::min(request.options.max_micro_batches, 8);
    request.options.budget = dnnplan_fuzz::small_budget;
    dnnplan::hybrid_result result;
    if (!dnnplan_fuzz::accepted([&] { result = dnnplan::solve(request); })) return 0;
    if (result.plan.has_value() != result.objective_value.has_value())
        dnnplan_fuzz::violated("a plan comes with its objective value", result.reason);
    dnnplan_fuzz::check_round_trip(result);
    return 0;
}
