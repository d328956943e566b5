#pragma once
// The vocabulary every planner shares (the model of OR-tools' math_opt: a termination reason, the
// limit that stopped a search, and whether a figure is proven, bounded or estimated are separate
// fields): how a solve ended (solve_status), which limit stopped it (search_limit), how its figures
// were obtained (figure_kind, figure_estimate), what it optimises (objective_kind), how
// (search_method), how much work it may do (search_budget) and what it did (search_counters).
// Expected outcomes are statuses, not errors; misuse is an exception.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace dnnplan {

/// How a solve ended. The same meaning in every planner (docs/architecture.md, "Statuses"):
enum class solve_status {
    optimal,        ///< proven best (within the options' relative gap): bound == objective_value, figures exact
    feasible,       ///< the plan meets every constraint; that it is the best is not proven
    infeasible,     ///< proven: no plan meets the constraints (no plan; a best_effort one may be named)
    no_plan_found,  ///< no plan, and nothing proven either way: a limit, a heuristic that gave up, an estimate short of the goal
};

template <>
struct enum_text<solve_status> {
    static constexpr std::array<enum_name<solve_status>, 4> names{{
        {solve_status::optimal, "optimal"},
        {solve_status::feasible, "feasible"},
        {solve_status::infeasible, "infeasible"},
        {solve_status::no_plan_found, "no_plan_found"},
    }};
};

/// Which limit stopped a search before it could prove its answer; none when it ran to its end.
enum class search_limit {
    none,         ///< the search ran to its end
    time,         ///< budget.max_time_s
    nodes,        ///< budget.max_nodes (search-tree nodes, partial plans, states)
    evaluations,  ///< budget.max_evaluations (complete plans evaluated)
    samples,      ///< a budget of simulated runs
};

template <>
struct enum_text<search_limit> {
    static constexpr std::array<enum_name<search_limit>, 5> names{{
        {search_limit::none, "none"},
        {search_limit::time, "time"},
        {search_limit::nodes, "nodes"},
        {search_limit::evaluations, "evaluations"},
        {search_limit::samples, "samples"},
    }};
};

/// How a result's figures (the objective value and the bound) were obtained.
enum class figure_kind {
    exact,      ///< computed from the models without sampling (a model's prediction, exact under the model)
    estimated,  ///< estimated from samples (simulated runs, measured trials): figure_estimate says how well
};

template <>
struct enum_text<figure_kind> {
    static constexpr std::array<enum_name<figure_kind>, 2> names{{
        {figure_kind::exact, "exact"},
        {figure_kind::estimated, "estimated"},
    }};
};

/// An estimated objective value: a two-sided interval at `confidence_prob` and the samples it rests
/// on (simulated runs; for a fitted model, the measurements).
struct figure_estimate {
    double lower = 0.0;
    double upper = 0.0;
    double confidence_prob = 0.95;
    std::int64_t samples = 0;
    friend bool operator==(const figure_estimate&, const figure_estimate&) = default;
};

/// What a planner optimises. One naming rule for every planner: min_ or max_ and the figure.
/// Each planner accepts the kinds that make sense for it (its options' validate() says which).
enum class objective_kind {
    min_cost,             ///< USD to finish the work (USD/h when the problem has no amount of work)
    min_time,             ///< seconds to finish the work
    max_throughput,       ///< samples (or steps) per second
    max_samples_per_usd,  ///< samples per USD
};

template <>
struct enum_text<objective_kind> {
    static constexpr std::array<enum_name<objective_kind>, 4> names{{
        {objective_kind::min_cost, "min_cost"},
        {objective_kind::min_time, "min_time"},
        {objective_kind::max_throughput, "max_throughput"},
        {objective_kind::max_samples_per_usd, "max_samples_per_usd"},
    }};
    /// Spellings of dnnplan 0.1, read until 0.3 (docs/problem-format.md, "Deprecated spellings").
    static constexpr std::array<enum_name<objective_kind>, 4> deprecated{{
        {objective_kind::min_cost, "minimize_cost"},  // spot planner
        {objective_kind::min_time, "minimize_time"},  // spot planner
        {objective_kind::max_throughput, "max_samples_per_s"},  // hybrid planner
        {objective_kind::min_cost, "min_usd_per_h"},  // hybrid planner
    }};
};

/// Whether the objective is maximised (its bound is then an upper bound).
[[nodiscard]] constexpr bool maximises(objective_kind o) noexcept {
    return o == objective_kind::max_throughput || o == objective_kind::max_samples_per_usd;
}

/// How a planner searches. Each planner accepts the methods it has.
enum class search_method {
    exact,           ///< proves its answer (branch and bound, dynamic programming)
    exhaustive,      ///< evaluates every plan of the space: the oracle
    sliding_window,  ///< spotDNN's heuristic (Algorithm 1): no proof
};

template <>
struct enum_text<search_method> {
    static constexpr std::array<enum_name<search_method>, 3> names{{
        {search_method::exact, "exact"},
        {search_method::exhaustive, "exhaustive"},
        {search_method::sliding_window, "sliding_window"},
    }};
    static constexpr std::array<enum_name<search_method>, 1> deprecated{{
        {search_method::exact, "branch_and_bound"},  // VM recommender, dnnplan 0.1
    }};
};

/// How much work a search may do before a limit stops it (result.limit says which; the status is
/// feasible with the best plan so far, or no_plan_found, and a proven bound when the search has one). Every method of every planner honours the limits that apply to it
/// (nodes: search-tree nodes, i.e. bound evaluations; evaluations: complete plans whose figures are
/// computed, windows or configurations included). The defaults bound every search's time and
/// memory (about 10 s and tens of MB on the inputs of docs/performance.md); 0 means no limit, which
/// a caller must ask for.
struct search_budget {
    std::int64_t max_nodes = 10'000'000;
    std::int64_t max_evaluations = 10'000'000;
    /// Wall-clock limit; 0: none. With a time limit the result can depend on the machine.
    double max_time_s = 0.0;

    void validate(std::string_view path = "budget") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "max_nodes", max_nodes, 0);
        detail::require_at_least(p + "max_evaluations", max_evaluations, 0);
        detail::require_non_negative(p + "max_time_s", max_time_s);
    }

    [[nodiscard]] bool nodes_exhausted(std::int64_t nodes) const noexcept { return max_nodes > 0 && nodes >= max_nodes; }
    [[nodiscard]] bool evaluations_exhausted(std::int64_t evaluations) const noexcept {
        return max_evaluations > 0 && evaluations >= max_evaluations;
    }
};

/// Work a search did; the same for every solver so that solvers can be compared side by side.
struct search_counters {
    std::int64_t nodes = 0;                 ///< search-tree nodes opened (bound evaluations); 0 without a tree
    std::int64_t evaluations = 0;           ///< complete plans whose figures were computed
    std::int64_t pruned_by_bound = 0;       ///< subtrees cut because their bound cannot beat the best plan
    std::int64_t pruned_by_constraint = 0;  ///< subtrees cut because no plan in them meets a constraint
    double elapsed_s = 0.0;                 ///< wall time (the only figure of a result that depends on the machine)

    friend bool operator==(const search_counters&, const search_counters&) = default;
};

}  // namespace dnnplan
