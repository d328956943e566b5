#pragma once
// What every search of the library shares: the best plan offered so far, and how a search's end
// becomes a status and a proven bound.

#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace dnnplan {

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

/// How a search ended, in the keys it minimised.
struct search_end {
    bool stopped = false;  ///< a budget ran out
    /// A lower bound on the key of every plan the search did not rule out (-inf: none proven; +inf:
    /// nothing left). Only read when stopped.
    double unexplored_key_lb = std::numeric_limits<double>::infinity();
    double relative_gap = 0.0;  ///< the cut tolerance: an optimal plan is proven within it
};

/// Status, objective value and bound of a search from its end and its incumbent's key, for an
/// objective that `maximised` (keys are then negated values). `infeasible_reason` and
/// `budget_reason` become the reason. With no plan and no budget stop: infeasible, no bound.
template <class Plan, class Details>
void conclude_search(solve_result<Plan, Details>& r, const search_end& end, bool has_plan, double best_key, bool maximised,
                     std::string infeasible_reason, std::string budget_reason) {
    const auto value_of = [&](double key) { return maximised ? -key : key; };
    if (has_plan) r.objective_value = value_of(best_key);
    if (end.stopped) {
        r.status = solve_status::budget_exhausted;
        const double lb = std::min(best_key, end.unexplored_key_lb);
        if (std::isfinite(lb)) r.bound = value_of(lb);
        r.reason = std::move(budget_reason);
    } else if (has_plan) {
        r.status = solve_status::optimal;
        // Subtrees within the relative gap of the incumbent were cut: that is the proof's slack.
        r.bound = value_of(best_key - end.relative_gap * std::abs(best_key));
    } else {
        r.status = solve_status::infeasible;
        r.reason = std::move(infeasible_reason);
    }
}

/// Stops a search when its budget runs out: nodes, evaluations, or the wall clock (read every
/// 256 checks). Sticky: once stopped, stays stopped.
class budget_guard {
public:
    explicit budget_guard(const search_budget& budget) noexcept
        : budget_(budget), start_(std::chrono::steady_clock::now()) {}

    [[nodiscard]] bool exhausted(const search_counters& c) noexcept {
        if (stopped_) return true;
        if (budget_.nodes_exhausted(c.nodes) || budget_.evaluations_exhausted(c.evaluations)) stopped_ = true;
        if (budget_.max_time_s > 0.0 && (++checks_ & 255U) == 0U && elapsed_s() >= budget_.max_time_s) stopped_ = true;
        return stopped_;
    }
    [[nodiscard]] bool stopped() const noexcept { return stopped_; }
    [[nodiscard]] double elapsed_s() const noexcept {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }
    /// "after N nodes and M evaluations" for the reason of a budget stop.
    [[nodiscard]] static std::string describe(const search_counters& c) {
        return "search budget exhausted after " + std::to_string(c.nodes) + " nodes and " +
               std::to_string(c.evaluations) + " evaluations";
    }

private:
    search_budget budget_;
    std::chrono::steady_clock::time_point start_;
    std::uint32_t checks_ = 0;
    bool stopped_ = false;
};

}  // namespace dnnplan
