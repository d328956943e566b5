#pragma once
// What every planner's search shares: the clock (stopwatch), the budget and which of its limits
// stopped the search (budget_guard), the best plan offered so far (incumbent), and how a search's
// end becomes the result's status, limit, objective value and proven bound (conclude_search).

#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/format.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace dnnplan {

/// Wall time since construction: what every planner reports as counters.elapsed_s (the only
/// figure of a result that depends on the machine).
class stopwatch {
public:
    stopwatch() noexcept : start_(std::chrono::steady_clock::now()) {}
    [[nodiscard]] double elapsed_s() const noexcept {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_;
};

/// The best plan offered so far by a key to minimise (a maximised objective offers its negation).
/// Strictly smaller keys replace the plan; ties keep the first; a key that is not finite is never
/// a plan (its figures overflowed: see offer()).
template <class Payload>
class incumbent {
public:
    /// Offers a plan of `key`; `fill(Payload&)` writes it in place (reusing the held one's storage)
    /// and is called only when the plan is kept. Returns whether it was kept.
    template <class Fill>
    bool offer(double key, Fill&& fill) {
        if (!std::isfinite(key)) {
            ++rejected_non_finite_;
            return false;
        }
        if (payload_ && !(key < key_)) return false;
        if (!payload_) payload_.emplace();
        fill(*payload_);
        key_ = key;
        return true;
    }

    [[nodiscard]] bool has_plan() const noexcept { return payload_.has_value(); }
    /// The key of the plan held; +inf without one.
    [[nodiscard]] double key() const noexcept { return key_; }
    [[nodiscard]] const std::optional<Payload>& payload() const noexcept { return payload_; }
    [[nodiscard]] std::optional<Payload>& payload() noexcept { return payload_; }
    /// Plans offered with a non-finite key (figures too large for a double): not plans.
    [[nodiscard]] std::int64_t rejected_non_finite() const noexcept { return rejected_non_finite_; }

private:
    double key_ = std::numeric_limits<double>::infinity();
    std::optional<Payload> payload_;
    std::int64_t rejected_non_finite_ = 0;
};

/// Stops a search when its budget runs out: nodes, evaluations, or the wall clock (read every
/// 256 checks), and says which (limit()). Sticky: once stopped, stays stopped.
class budget_guard {
public:
    explicit budget_guard(const search_budget& budget) noexcept : budget_(budget) {}

    [[nodiscard]] bool exhausted(const search_counters& c) noexcept {
        if (limit_ != search_limit::none) return true;
        if (budget_.nodes_exhausted(c.nodes)) limit_ = search_limit::nodes;
        else if (budget_.evaluations_exhausted(c.evaluations)) limit_ = search_limit::evaluations;
        else if (budget_.max_time_s > 0.0 && (++checks_ & 255U) == 0U && clock_.elapsed_s() >= budget_.max_time_s)
            limit_ = search_limit::time;
        return limit_ != search_limit::none;
    }
    [[nodiscard]] bool stopped() const noexcept { return limit_ != search_limit::none; }
    /// The limit that stopped the search; none while it runs.
    [[nodiscard]] search_limit limit() const noexcept { return limit_; }
    [[nodiscard]] double elapsed_s() const noexcept { return clock_.elapsed_s(); }
    /// "the node budget (max_nodes = 10) ran out after 10 nodes and 3 evaluations": the reason of
    /// a budget stop.
    [[nodiscard]] std::string describe(const search_counters& c) const {
        return describe_limit(limit_, budget_) + " after " + std::to_string(c.nodes) + " nodes and " +
               std::to_string(c.evaluations) + " evaluations";
    }
    /// "the node budget (max_nodes = 10) ran out", for any planner that reports a limit.
    [[nodiscard]] static std::string describe_limit(search_limit limit, const search_budget& budget) {
        switch (limit) {
            case search_limit::nodes: return "the node budget (max_nodes = " + std::to_string(budget.max_nodes) + ") ran out";
            case search_limit::evaluations:
                return "the evaluation budget (max_evaluations = " + std::to_string(budget.max_evaluations) + ") ran out";
            case search_limit::time: return "the time budget (max_time_s = " + detail::format_number(budget.max_time_s) + ") ran out";
            case search_limit::samples: return "the sample budget ran out";
            case search_limit::none: break;
        }
        return "the search ran to its end";
    }

private:
    search_budget budget_;
    stopwatch clock_;
    std::uint32_t checks_ = 0;
    search_limit limit_ = search_limit::none;
};

/// How a search ended, in the keys it minimised.
struct search_end {
    search_limit limit = search_limit::none;  ///< the budget that stopped it; none: it ran to its end
    /// A lower bound on the key of every plan the search did not rule out (-inf: none proven; +inf:
    /// nothing left). Only read when a limit stopped it.
    double unexplored_key_lb = std::numeric_limits<double>::infinity();
};

/// Status, limit, objective value and bound of a search from its end and its incumbent's key, for
/// an objective that is `maximised` (keys are then negated values):
///   - ran to its end with a plan: optimal, bound = the value (proven within the search's cut
///     tolerance, its options' relative gap);
///   - ran to its end without one: infeasible, `infeasible_reason`;
///   - stopped by a limit: feasible with the plan so far, or no_plan_found; the proven bound
///     min(incumbent, unexplored) when finite; `budget_reason`.
template <class Plan, class Details>
void conclude_search(solve_result<Plan, Details>& r, const search_end& end, bool has_plan, double best_key, bool maximised,
                     std::string infeasible_reason, std::string budget_reason) {
    const auto value_of = [&](double key) { return maximised ? -key : key; };
    if (has_plan) r.objective_value = value_of(best_key);
    r.limit = end.limit;
    if (end.limit != search_limit::none) {
        r.status = has_plan ? solve_status::feasible : solve_status::no_plan_found;
        const double lb = std::min(best_key, end.unexplored_key_lb);
        if (std::isfinite(lb)) r.bound = value_of(lb);
        r.reason = std::move(budget_reason);
    } else if (has_plan) {
        r.status = solve_status::optimal;
        r.bound = r.objective_value;
    } else {
        r.status = solve_status::infeasible;
        r.reason = std::move(infeasible_reason);
    }
}

}  // namespace dnnplan
