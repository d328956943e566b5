#pragma once
// Outcomes of a search. These are results, not errors.

#include <cstdint>
#include <string_view>

namespace dnnplan {

enum class solve_status {
    optimal,           ///< the plan is proven optimal (within the relative gap tolerance)
    feasible,          ///< a heuristic's plan: it meets the goals, optimality is not proven
    infeasible,        ///< proven: no plan meets the goals
    not_found,         ///< a heuristic found no plan; that does not prove none exists
    budget_exhausted,  ///< the node or time budget ran out; best plan so far and a lower bound
};

[[nodiscard]] constexpr std::string_view to_string(solve_status status) noexcept {
    switch (status) {
        case solve_status::optimal: return "optimal";
        case solve_status::feasible: return "feasible";
        case solve_status::infeasible: return "infeasible";
        case solve_status::not_found: return "not_found";
        case solve_status::budget_exhausted: return "budget_exhausted";
    }
    return "unknown";
}

/// What a search minimises (subject to the goals).
enum class search_objective { minimize_cost, minimize_time };

[[nodiscard]] constexpr std::string_view to_string(search_objective o) noexcept {
    return o == search_objective::minimize_cost ? "minimize_cost" : "minimize_time";
}

/// Work a search did; the same for every solver so they can be compared side by side.
struct search_counters {
    std::int64_t nodes = 0;               ///< search-tree nodes opened (0 for non-tree searches)
    std::int64_t clusters_evaluated = 0;  ///< complete clusters whose time and cost were computed
    std::int64_t pruned_by_bound = 0;     ///< subtrees cut because their cost bound >= incumbent
    std::int64_t pruned_by_deadline = 0;  ///< subtrees cut because their time bound > deadline
};

}  // namespace dnnplan
