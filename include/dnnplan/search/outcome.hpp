#pragma once
// What every cluster search returns, in the model's type indexing (see solve/ for the mapping
// back to catalog names).

#include <dnnplan/core/prediction.hpp>
#include <dnnplan/core/status.hpp>

#include <cstdint>
#include <limits>
#include <optional>
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

}  // namespace dnnplan
