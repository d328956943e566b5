#pragma once
// What every cluster search of the spot planner returns, in the model's type indexing (the
// planner maps counts back to catalog names: solve/spot_provision/solve.hpp).

#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/search/search_core.hpp>

#include <limits>
#include <optional>
#include <span>
#include <string>

namespace dnnplan {

/// The goals of a cluster search.
struct cluster_goals {
    double target_loss = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();
    objective_kind objective = objective_kind::min_cost;  ///< min_cost or min_time
};

/// A cluster and its figures.
struct cluster_plan {
    cluster_counts counts{};
    cluster_prediction prediction{};
    friend bool operator==(const cluster_plan&, const cluster_plan&) = default;
};

struct cluster_search_details {
    /// When no plan meets the goals (infeasible, or a heuristic's no_plan_found) and the deadline is
    /// finite, the planner's report of the shortest training time any plan reaches, proven by an
    /// exact search (above the deadline for infeasible). The searches themselves leave it empty.
    std::optional<double> fastest_training_time_s{};
    friend bool operator==(const cluster_search_details&, const cluster_search_details&) = default;
};

/// objective_value: cost_usd (min_cost) or training_time_s (min_time) of the plan; bound: a proven
/// lower bound on it (none from the sliding window, or when infeasible).
using search_outcome = solve_result<cluster_plan, cluster_search_details>;

[[nodiscard]] constexpr double objective_value(const cluster_prediction& p, objective_kind o) noexcept {
    return o == objective_kind::min_cost ? p.cost_usd : p.training_time_s;
}

/// The spot searches' incumbent: a cluster is a plan when its training time meets the deadline
/// and its figures are finite.
class cluster_incumbent {
public:
    explicit cluster_incumbent(const cluster_goals& goals) noexcept : goals_(goals) {}

    /// Keeps `counts` if its prediction meets the deadline and beats the plan held; says whether.
    bool offer(std::span<const std::int32_t> counts, const cluster_prediction& p) {
        if (!(p.training_time_s <= goals_.deadline_s)) return false;
        return best_.offer(objective_value(p, goals_.objective), [&](cluster_plan& plan) {
            plan.counts.assign(counts.begin(), counts.end());
            plan.prediction = p;
        });
    }

    [[nodiscard]] bool has_plan() const noexcept { return best_.has_plan(); }
    /// The objective of the plan held; +inf without one.
    [[nodiscard]] double value() const noexcept { return best_.key(); }
    [[nodiscard]] std::int64_t rejected_non_finite() const noexcept { return best_.rejected_non_finite(); }

    /// Moves the plan (if any) into `out`.
    void move_plan_to(search_outcome& out) { out.plan = std::move(best_.payload()); }

private:
    cluster_goals goals_;
    incumbent<cluster_plan> best_;
};

/// The reason of an infeasible cluster search, mentioning plans whose figures overflowed.
[[nodiscard]] inline std::string no_cluster_reason(std::int64_t rejected_non_finite) {
    std::string reason = "no cluster in the search space meets the goals";
    if (rejected_non_finite > 0)
        reason += " (" + std::to_string(rejected_non_finite) +
                  " clusters meet the deadline but their cost is too large for a double)";
    return reason;
}

}  // namespace dnnplan
