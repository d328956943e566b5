// Fuzzes the VM recommender's problem reader, then the recommender with a small budget
// (io/vm_recommend_json.hpp, solve/vm_recommend/solve.hpp): every property of fuzz_support.hpp.
#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dnnplan::vm_request request;
    if (!dnnplan_fuzz::accepted([&] { request = dnnplan::parse_vm_request(dnnplan_fuzz::text_of(data, size)); })) return 0;
    dnnplan_fuzz::check_round_trip(request);
    auto& budget = request.options.budget;
    const auto cap = [](std::int64_t asked, std::int64_t small) { return asked > 0 && asked < small ? asked : small; };
    budget.max_nodes = cap(budget.max_nodes, dnnplan_fuzz::small_budget.max_nodes);
    budget.max_evaluations = cap(budget.max_evaluations, dnnplan_fuzz::small_budget.max_evaluations);
    budget.max_time_s = 0.0;
    dnnplan::vm_result result;
    if (!dnnplan_fuzz::accepted([&] { result = dnnplan::solve(request); })) return 0;
    dnnplan_fuzz::check_result(result, budget);
    if (request.options.pareto && !result.details.frontier_status) dnnplan_fuzz::violated("a frontier asked for has a status", "");
    return 0;
}
