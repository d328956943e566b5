#pragma once
// The one result shape of every planner (the model of OR-tools' math_opt SolveResult: one
// termination status and its bounds for every solver): how the search ended and why, the plan
// when there is one, the value of its objective, a proven bound on the best value (or none, said
// so), the search counters, and what is particular to the planner (`details`).

#include <dnnplan/core/status.hpp>

#include <optional>
#include <string>

namespace dnnplan {

/// A planner with nothing to report beyond the common fields.
struct no_details {
    friend bool operator==(const no_details&, const no_details&) = default;
};

template <class Plan, class Details = no_details>
struct solve_result {
    solve_status status = solve_status::infeasible;
    /// Why, for every status but optimal (and, for optimal, anything a reader should know).
    std::string reason{};
    std::optional<Plan> plan{};
    /// The plan's objective in its unit (the objective's: USD, s, samples/s, samples/USD); none
    /// without a plan.
    std::optional<double> objective_value{};
    /// A proven bound on the best objective value over the whole space: a lower bound when the
    /// objective is minimised, an upper bound when it is maximised. Equal to objective_value (up to
    /// the search's relative gap) when optimal; none when nothing is proven (a heuristic, or no
    /// plan exists: infeasible).
    std::optional<double> bound{};
    search_counters counters{};
    Details details{};

    [[nodiscard]] bool has_plan() const noexcept { return plan.has_value(); }
};

}  // namespace dnnplan
