// Fuzzes the spot planner's problem reader, then the planner itself with a small budget
// (io/spot_provision_json.hpp, solve/spot_provision/solve.hpp): every property of fuzz_support.hpp.
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    dnnplan::spot_request request;
    if (!dnnplan_fuzz::accepted([&] { request = dnnplan::parse_spot_request(dnnplan_fuzz::text_of(data, size)); })) return 0;
    dnnplan_fuzz::check_round_trip(request);
    // The budget the input asks for, if smaller; 0 (no limit) becomes the small budget.
    auto& budget = request.options.budget;
    const auto cap = [](std::int64_t asked, std::int64_t small) { return asked > 0 && asked < small ? asked : small; };
    budget.max_nodes = cap(budget.max_nodes, dnnplan_fuzz::small_budget.max_nodes);
    budget.max_evaluations = cap(budget.max_evaluations, dnnplan_fuzz::small_budget.max_evaluations);
    budget.max_time_s = 0.0;
    dnnplan::spot_result result;
    if (!dnnplan_fuzz::accepted([&] { result = dnnplan::solve(request); })) return 0;  // a model-level rejection
    dnnplan_fuzz::check_result(result, budget);
    return 0;
}
