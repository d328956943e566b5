#pragma once
// The one result shape of every planner (the model of OR-tools' math_opt SolveResult): how the
// solve ended (status), the limit that stopped it, how the figures were obtained (exact or
// estimated, with the estimate's interval and samples), why, the plan when one meets the
// constraints, the value of its objective, a proven bound on the best value (or none, said so),
// the plan a planner would run although it misses the goals (best_effort), the search counters,
// and what is particular to the planner (`details`). result_shape_violation() states the rules
// every planner keeps; the JSON reader rejects a result that breaks one.

#include <dnnplan/core/status.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <utility>

namespace dnnplan {

/// A planner with nothing to report beyond the common fields.
struct no_details {
    friend bool operator==(const no_details&, const no_details&) = default;
};

template <class Plan, class Details = no_details>
struct solve_result {
    solve_status status = solve_status::no_plan_found;
    /// The limit that stopped the search before it proved its answer; none when it ran to its end.
    search_limit limit = search_limit::none;
    /// How objective_value and bound were obtained. exact: from the models; estimated: from
    /// samples, and `estimate` holds the objective's interval and the sample count (only with a plan).
    figure_kind figures = figure_kind::exact;
    std::optional<figure_estimate> estimate{};
    /// Why, for every status but optimal (empty when optimal).
    std::string reason{};
    /// A plan that meets every constraint: present iff the status is optimal or feasible.
    std::optional<Plan> plan{};
    /// The plan's objective in its unit (the objective's: USD, s, samples/s, samples/USD); none
    /// without a plan.
    std::optional<double> objective_value{};
    /// A proven bound on the best objective value over the whole space: a lower bound when the
    /// objective is minimised, an upper bound when it is maximised. Equal to objective_value when
    /// optimal (proven within the options' relative gap); none when nothing is proven.
    std::optional<double> bound{};
    /// The best a planner could do when no plan meets the goals (status infeasible or
    /// no_plan_found): the plan it would run anyway, which misses them (the reason says how). A
    /// runtime advisor runs it; a scheduler may. Never set with a plan.
    std::optional<Plan> best_effort{};
    search_counters counters{};
    Details details{};

    [[nodiscard]] bool has_plan() const noexcept { return plan.has_value(); }
    /// What a scheduler that must run something acts on: the plan when one meets the goals, else
    /// best_effort (which misses them); none when the planner has neither.
    [[nodiscard]] const std::optional<Plan>& plan_to_run() const noexcept { return plan ? plan : best_effort; }
};

/// The same result with its plans (plan and best_effort) mapped by `f` (Plan -> NewPlan): how a
/// planner turns its search's plans into the ones it reports.
template <class NewPlan, class Plan, class Details, class F>
[[nodiscard]] solve_result<NewPlan, Details> map_plans(solve_result<Plan, Details>&& r, F&& f) {
    solve_result<NewPlan, Details> out;
    out.status = r.status;
    out.limit = r.limit;
    out.figures = r.figures;
    out.estimate = r.estimate;
    out.reason = std::move(r.reason);
    if (r.plan) out.plan = f(std::move(*r.plan));
    out.objective_value = r.objective_value;
    out.bound = r.bound;
    if (r.best_effort) out.best_effort = f(std::move(*r.best_effort));
    out.counters = r.counters;
    out.details = std::move(r.details);
    return out;
}

/// A rule of the one result shape that a result breaks: the field it shows in and the rule.
struct result_violation {
    std::string field{};
    std::string rule{};  ///< empty: no rule broken
    [[nodiscard]] explicit operator bool() const noexcept { return !rule.empty(); }
};

/// The first rule of the one result shape that `r` breaks (none: it keeps them all;
/// docs/architecture.md, "Statuses"): a plan and its objective value iff optimal or feasible;
/// optimal -> a bound equal to the value, exact figures, no limit and no reason; infeasible -> no
/// limit and no bound (a no_plan_found result may carry a proven bound); estimated figures -> a
/// plan and its estimate (lower <= upper, samples > 0), exact ones -> no estimate; best_effort
/// only without a plan. (That every status but optimal says why is checked by the planners'
/// tests, not here: a default result has no reason.)
template <class Plan, class Details>
[[nodiscard]] result_violation result_shape_violation(const solve_result<Plan, Details>& r) {
    const bool with_plan = r.status == solve_status::optimal || r.status == solve_status::feasible;
    const std::string status(to_string(r.status));
    if (r.plan.has_value() != with_plan)
        return {"plan", with_plan ? "status " + status + " needs a plan" : "status " + status + " has no plan"};
    if (r.objective_value.has_value() != with_plan)
        return {"objective_value", with_plan ? "a plan needs its objective_value" : "no plan, so no objective_value"};
    if (r.best_effort && with_plan) return {"best_effort", "a best_effort plan only when no plan meets the goals"};
    if (r.status == solve_status::optimal) {
        if (!r.bound || *r.bound != *r.objective_value) return {"bound", "optimal: the bound equals objective_value"};
        if (r.figures != figure_kind::exact) return {"figures", "optimal: the figures are exact"};
        if (!r.reason.empty()) return {"reason", "optimal: no reason"};
        if (r.limit != search_limit::none) return {"limit", "optimal: no limit stopped the search"};
    }
    if (r.status == solve_status::infeasible) {
        if (r.limit != search_limit::none) return {"limit", "infeasible is a proof: no limit stopped it"};
        if (r.bound) return {"bound", "infeasible: nothing to bound"};
    }
    if (r.figures == figure_kind::estimated) {
        if (!with_plan) return {"figures", "estimated figures describe a plan's objective value: no plan, exact"};
        if (!r.estimate) return {"estimate", "estimated figures carry their estimate"};
        if (!(r.estimate->lower <= r.estimate->upper) || r.estimate->samples <= 0)
            return {"estimate", "an estimate with lower <= upper and samples > 0"};
    } else if (r.estimate) {
        return {"estimate", "exact figures have no estimate"};
    }
    return {};
}

}  // namespace dnnplan
