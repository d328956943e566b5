#pragma once
// What every cluster search returns, in the model's type indexing (see solve/ for the mapping
// back to catalog names).

#include <dnnplan/core/prediction.hpp>
#include <dnnplan/core/status.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

namespace dnnplan {

/// The goals of a cluster search.
struct cluster_goals {
    double target_loss = 0.0;
    double deadline_s = std::numeric_limits<double>::infinity();
    search_objective objective = search_objective::minimize_cost;
};

struct search_outcome {
    solve_status status = solve_status::infeasible;
    std::string reason{};
    cluster_counts counts{};                         ///< the plan (empty when none)
    std::optional<cluster_prediction> prediction{};  ///< its figures
    double lower_bound = 0.0;                      ///< proven bound on the objective
    /// Set when no plan was found: the shortest training time of any plan (see spot_result).
    std::optional<double> fastest_training_time_s{};
    search_counters counters{};
};

[[nodiscard]] constexpr double objective_value(const cluster_prediction& p, search_objective o) noexcept {
    return o == search_objective::minimize_cost ? p.cost_usd : p.training_time_s;
}

/// The best plan offered so far among those that meet the deadline (ties keep the first).
class incumbent {
public:
    explicit incumbent(const cluster_goals& goals) noexcept : goals_(goals) {}

    /// Keeps `counts` if its prediction meets the deadline and beats the plan held; says whether.
    bool offer(std::span<const std::int32_t> counts, const cluster_prediction& p) {
        if (!(p.training_time_s <= goals_.deadline_s)) return false;
        const double v = objective_value(p, goals_.objective);
        if (prediction_ && !(v < value_)) return false;
        value_ = v;
        prediction_ = p;
        counts_.assign(counts.begin(), counts.end());
        return true;
    }

    [[nodiscard]] bool has_plan() const noexcept { return prediction_.has_value(); }
    /// The objective of the plan held; +inf without one.
    [[nodiscard]] double value() const noexcept { return value_; }

    /// Moves the plan (if any) into `out`.
    void move_plan_to(search_outcome& out) {
        out.counts = std::move(counts_);
        out.prediction = prediction_;
    }

private:
    cluster_goals goals_;
    double value_ = std::numeric_limits<double>::infinity();
    std::optional<cluster_prediction> prediction_;
    cluster_counts counts_;
};

}  // namespace dnnplan
