#pragma once
// PipeDream-compatible pipeline partitioning: the dynamic program of PipeDream's optimizer
// (Narayanan et al., SOSP 2019; optimizer_graph_hierarchical.py), reproduced as the reference
// note describes it (sections 3-5), over the states of partition/antichain.hpp.
//
// PipeDream's cost of a stage is a stage-cost model (pipedream_stage_cost, a stage_cost_model of
// model/concepts.hpp; partition/pipedream_cost.hpp), and its recurrence is solved exactly without
// PipeDream's O(S^2 M^2) inner loops, one start row at a time (partition/pipedream_row.hpp): for
// every pair of states (k, j) the stage's time is computed once for every replica count, and the
// (min, max) convolution of the left part's row with it is taken by a two-pointer sweep wherever
// the stage's time does not increase with replicas (an exchange argument makes this exact; see
// docs/solvers/pipeline_plan.md), with bound-pruned loops elsewhere. On one level the search runs
// below growing upper bounds (partition/pipedream_bounds.hpp); chains with many machines go to
// the threshold solver (partition/pipedream_chain.hpp). The plain transcription of PipeDream's
// loops stays in the tests as the oracle.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_bounds.hpp>
#include <dnnplan/partition/pipedream_chain.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_row.hpp>
#include <dnnplan/partition/pipedream_types.hpp>
#include <dnnplan/partition/pipedream_wide.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {


namespace detail {

// The stages of a partition with their layers and PipeDream's printed compute.
inline pipedream_stage describe_stage(const layer_graph& graph, const antichain_states& built, std::size_t first,
                                      std::size_t end, std::int32_t replicas) {
    const auto& states = built.states;
    pipedream_stage stage{.first_state = first, .end_state = end, .replicas = replicas};
    stage.compute_s = states[end - 1].compute_s - (first > 0 ? states[first - 1].compute_s : 0.0);
    std::vector<bool> before(graph.size(), false);
    if (first > 0)
        for (const std::size_t l : state_layers(built, first - 1)) before[l] = true;
    for (const std::size_t l : state_layers(built, end - 1))
        if (!before[l]) stage.layers.push_back(l);
    return stage;
}

// ---- The results: every status, reason and bound pipedream_partition() reports is set here.

/// The tables the recurrence needs (pipedream_table_cells) are over the node budget: nothing run.
[[nodiscard]] inline pipedream_result pipedream_tables_over_budget(std::size_t num_states, double cells,
                                                                   const search_budget& budget) {
    pipedream_result over;
    over.status = solve_status::no_plan_found;
    over.limit = search_limit::nodes;
    over.details.num_states = num_states;
    over.reason = "the partition of " + std::to_string(num_states) + " states needs tables of " +
                  detail::format_number(cells) + " cells, over the budget of " +
                  std::to_string(budget.max_nodes) + " nodes";
    return over;
}

/// The recurrence stopped at a budget (the counters say which): no plan, nothing proven.
[[nodiscard]] inline pipedream_result pipedream_over_budget(std::size_t num_states, const pipedream_counters& work,
                                                            const search_budget& budget) {
    pipedream_result result;
    result.status = solve_status::no_plan_found;
    result.limit = budget.evaluations_exhausted(work.state_pairs) ? search_limit::evaluations : search_limit::nodes;
    result.details = {.num_states = num_states, .work = work};
    result.counters.evaluations = work.state_pairs;
    result.counters.nodes = work.cells + work.threshold_decisions;
    result.reason = result.limit == search_limit::evaluations
                        ? "the recurrence stopped at the evaluation budget of " + std::to_string(budget.max_evaluations) +
                              " stage times (options.budget.max_evaluations)"
                        : "the recurrence stopped at the node budget of " + std::to_string(budget.max_nodes) +
                              " cells (options.budget.max_nodes)";
    result.reason += ", before a partition was proven";
    return result;
}

/// The result of a partition found (optimal) or of none (infeasible: +inf time).
[[nodiscard]] inline pipedream_result pipedream_finish(std::optional<pipedream_plan> plan, std::size_t num_states,
                                                       const pipedream_counters& work) {
    pipedream_result result;
    result.details = {.num_states = num_states, .work = work};
    result.counters.evaluations = work.state_pairs;
    result.counters.nodes = work.cells + work.threshold_decisions;
    if (plan && std::isfinite(plan->time_per_minibatch_s)) {
        result.status = solve_status::optimal;
        result.objective_value = result.bound = plan->time_per_minibatch_s;
        result.plan = std::move(plan);
    } else {
        result.status = solve_status::infeasible;
        result.reason = "no partition fits: every stage assignment breaks the memory constraint (memory_bytes)";
    }
    return result;
}

// A chain on one level without memory, transfers or a straight pipeline: the threshold search
// of partition/pipedream_chain.hpp, its partition timed with PipeDream's formulas. Its answer is
// within chain_tolerance (relative) of the optimum; PipeDream compatibility asks for 1e-6.
inline constexpr double chain_tolerance = 1e-10;

[[nodiscard]] inline pipedream_result pipedream_chain_partition(const layer_graph& graph, const antichain_states& built,
                                                                const pipedream_options& options, pipedream_counters& work) {
    const pipedream_stage_cost cost(
        built, {.bandwidth_bytes_per_s = options.bandwidths_bytes_per_s.empty() ? 1e9 : options.bandwidths_bytes_per_s[0]});
    std::vector<double> compute, parameter;
    compute.reserve(built.states.size());
    parameter.reserve(built.states.size());
    for (const auto& st : built.states) {
        compute.push_back(st.compute_s);
        parameter.push_back(st.parameter_bytes);
    }
    pipedream_chain_solver solver(compute, parameter, cost.level().bandwidth_bytes_per_s, options.machines[0],
                                  options.use_fewer_machines);
    const auto time_of = [&](const std::vector<chain_stage>& stages) {
        double slowest = 0.0;
        std::int32_t before = 0;
        for (const chain_stage& s : stages) {
            slowest = std::max(slowest, cost.stage_time_s({.first_state = s.first_state, .end_state = s.end_state,
                                                           .replicas = s.replicas, .devices_before = before,
                                                           .devices_total = options.machines[0]}));
            before += s.replicas;
        }
        return slowest;
    };
    const std::vector<chain_stage> stages = solver.solve(time_of, chain_tolerance, work.threshold_decisions);
    pipedream_plan plan;
    plan.time_per_minibatch_s = time_of(stages);
    for (const chain_stage& s : stages)
        plan.stages.push_back(describe_stage(graph, built, s.first_state, s.end_state, s.replicas));
    return pipedream_finish(std::move(plan), built.states.size(), work);
}

// ---- The steps of pipedream_partition().

/// Whether the chain solver answers: a chain on one level with at least two states and machines,
/// without the memory constraint, transfers or a straight pipeline.
[[nodiscard]] inline bool pipedream_uses_chain_solver(const antichain_states& built, const pipedream_options& options) {
    return built.chain && options.machines.size() == 1 && built.states.size() >= 2 && options.machines[0] >= 2 &&
           !options.use_memory_constraint && !options.activation_compression_ratio && !options.straight_pipeline;
}

/// The tables' cells: the chain solver keeps a row of machine-count bits per state (64 to a
/// cell) and three arrays over the machine counts, the recurrence a cell per state and
/// machine count, and (states + 1) x states between levels. In doubles: M + 1 overflows
/// an int32 at M = 2^31 - 1.
[[nodiscard]] inline double pipedream_table_cells(std::size_t s_count, const pipedream_options& options, bool chain_solver) {
    double cells = 0.0;
    if (chain_solver) {
        const double machine_counts = static_cast<double>(options.machines[0]) + 1.0;
        cells = static_cast<double>(s_count + 1) * std::ceil(machine_counts / 64.0) + 3.0 * machine_counts;
    } else {
        for (const std::int32_t m : options.machines) cells = std::max(cells, static_cast<double>(s_count) * m);
        if (options.machines.size() > 1) cells = std::max(cells, static_cast<double>(s_count + 1) * static_cast<double>(s_count));
    }
    return cells;
}

/// PipeDream's dynamic program level by level (-n m1 m2 ... with -b B1 B2 ...), each level's
/// A[i][j][M-1] becoming the next level's compute times; the final level's row 0 and its cost
/// are kept for the plan.
class pipedream_levels {
public:
    pipedream_levels(const layer_graph& graph, const antichain_states& built, const pipedream_options& options,
                     pipedream_counters& work)
        : graph_(graph), built_(built), options_(options), work_(work), s_count_(built.states.size()) {
        // Predecessor sets as membership rows, for the "k in P(i - 1)" test of the non-final levels.
        if (options.machines.size() > 1 && !built.chain) {
            is_pred_.assign(s_count_, std::vector<bool>(s_count_, false));
            for (std::size_t j = 0; j < s_count_; ++j)
                for_each_state_predecessor(built, j, [&](std::size_t k) { is_pred_[j][k] = true; });
        }
    }

    /// Every level; false when a budget stopped the recurrence.
    [[nodiscard]] bool solve() {
        const std::size_t levels = options_.machines.size();
        std::vector<double> table;  // the previous level's A[i][j][M-1], (S + 1) x S; empty at level 1
        double within = 1.0;
        for (std::size_t level = 0; level + 1 < levels; ++level) {
            const pipedream_stage_cost cost = level_cost(level, within, std::move(table));
            if (!solve_lower_level(cost, options_.machines[level], table)) return false;
            within = static_cast<double>(options_.machines[level]);
        }
        final_cost_.emplace(level_cost(levels - 1, within, std::move(table)));
        return solve_final_level(*final_cost_);
    }

    /// The final level's partition (none: every one breaks the memory constraint). Stages, last
    /// first, following the choices (PipeDream's analyze_partitioning). The time is the slowest
    /// stage evaluated with PipeDream's own operation order, each stage in the place the
    /// recurrence priced it (its cell's machine count decides the memory check).
    [[nodiscard]] std::optional<pipedream_plan> trace_plan() const {
        const std::int32_t machines = options_.machines.back();
        const auto m_last = static_cast<std::size_t>(machines) - 1;
        if (std::isinf(row_.at(s_count_ - 1, m_last))) return std::nullopt;
        pipedream_plan plan;
        std::size_t end = s_count_, j = s_count_ - 1, m = m_last;
        while (true) {
            const pipedream_choice& ch = row_.choice[j * row_.machines + m];
            const std::size_t first = ch.split_state < 0 ? 0 : static_cast<std::size_t>(ch.split_state) + 1;
            const stage_candidate priced{.first_state = first, .end_state = end, .replicas = ch.replicas,
                                         .devices_before = ch.split_state < 0 ? 0 : ch.left_machines + 1, .devices_total = machines};
            plan.time_per_minibatch_s = std::max(plan.time_per_minibatch_s, final_cost_->stage_time_s(priced));
            plan.stages.push_back(describe_stage(graph_, built_, first, end, ch.replicas));
            if (ch.split_state < 0) break;
            end = first;
            j = static_cast<std::size_t>(ch.split_state);
            m = static_cast<std::size_t>(ch.left_machines);
        }
        std::reverse(plan.stages.begin(), plan.stages.end());
        return plan;
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();

    [[nodiscard]] pipedream_stage_cost level_cost(std::size_t level, double within, std::vector<double> table) const {
        return pipedream_stage_cost(
            built_,
            {.bandwidth_bytes_per_s = options_.bandwidths_bytes_per_s.empty() ? 1e9 : options_.bandwidths_bytes_per_s[level],
             .activation_compression_ratio = options_.activation_compression_ratio,
             .memory_bytes = options_.use_memory_constraint ? std::optional<double>(options_.memory_bytes) : std::nullopt,
             .machines_within = within},
            std::move(table));
    }

    [[nodiscard]] bool solve_row(const pipedream_stage_cost& cost, const std::vector<std::vector<bool>>* is_pred,
                                 std::size_t first, std::int32_t machines, double upper_bound) {
        return solve_pipedream_row(cost, built_, is_pred, first, machines, options_.straight_pipeline,
                                   options_.use_fewer_machines, row_, scratch_, work_, upper_bound,
                                   options_.budget.max_evaluations, options_.budget.max_nodes);
    }

    // A lower level: every start row i (PipeDream's rows 0..S; row S is all None); `table`
    // becomes the rows' entries on all of the level's machines.
    [[nodiscard]] bool solve_lower_level(const pipedream_stage_cost& cost, std::int32_t machines, std::vector<double>& table) {
        const auto m_last = static_cast<std::size_t>(machines) - 1;
        std::vector<double> next((s_count_ + 1) * s_count_, inf);
        for (std::size_t i = 0; i < s_count_; ++i) {
            if (!solve_row(cost, &is_pred_, i, machines, inf)) return false;
            for (std::size_t j = i; j < s_count_; ++j) next[i * s_count_ + j] = row_.at(j, m_last);
        }
        table = std::move(next);
        return true;
    }

    // The final level's row 0. A single level: search below growing upper bounds, from 1.1
    // times the lower bound C_total / M, 1.5 times more each time, none past 16 times (each
    // search is exact for answers below its bound).
    [[nodiscard]] bool solve_final_level(const pipedream_stage_cost& cost) {
        const std::int32_t machines = options_.machines.back();
        double bound = first_search_bound(cost, machines);
        const double cap = search_cap(cost, machines);
        // A cap within 3 times the first bound: one search below the cap, sure to succeed,
        // costs less than searches that fail first (measured on PipeDream's profiles: a
        // failed search costs a good part of a successful one; see docs/solvers/pipeline_plan.md).
        if (cap <= 3.0 * bound) bound = cap;
        while (true) {
            bound = std::min(bound, cap);
            if (!solve_row(cost, nullptr, 0, machines, bound)) return false;
            if (row_.at(s_count_ - 1, static_cast<std::size_t>(machines) - 1) < bound || std::isinf(bound)) return true;
            ++work_.searches_retried;
            bound = bound < cap && bound < 16.0 * cost.compute_s(0, s_count_) / static_cast<double>(machines) ? 1.5 * bound : inf;
        }
    }

    // 1.1 times the lower bound on one level (the larger of C_total / M and a layer's own least
    // time); +inf (a single search) on several.
    [[nodiscard]] double first_search_bound(const pipedream_stage_cost& cost, std::int32_t machines) const {
        if (options_.machines.size() != 1) return inf;
        const double lower = std::max(cost.compute_s(0, s_count_) / static_cast<double>(machines),
                                      pipedream_layer_lower_bound(graph_, built_, cost.level().bandwidth_bytes_per_s,
                                                                  options_.straight_pipeline ? 1 : machines));
        return lower > 0.0 && std::isfinite(lower) ? 1.1 * lower : inf;
    }

    // No search past the time of a partition in hand (just above it, so that the partition
    // itself is below the bound); +inf on several levels.
    [[nodiscard]] double search_cap(const pipedream_stage_cost& cost, std::int32_t machines) {
        if (options_.machines.size() != 1) return inf;
        return pipedream_path_upper_bound(built_, cost, machines, options_.straight_pipeline, options_.use_fewer_machines,
                                          work_) *
               (1.0 + 1e-9);
    }

    const layer_graph& graph_;
    const antichain_states& built_;
    const pipedream_options& options_;
    pipedream_counters& work_;
    std::size_t s_count_;
    std::vector<std::vector<bool>> is_pred_;
    pipedream_row row_;
    pipedream_scratch scratch_;
    std::optional<pipedream_stage_cost> final_cost_;
};

}  // namespace detail

/// PipeDream's partitioning of prebuilt states (build_antichain_states), so that one graph can
/// be partitioned for many machine counts and flags without rebuilding its states: its dynamic
/// program level by level (-n m1 m2 ... with -b B1 B2 ...), each level's A[i][j][M-1] becoming
/// the next level's compute times. The answer equals PipeDream's A[0][S-1][M-1] exactly (the
/// same floating-point operations on the same terms); among equal-time partitions the one
/// returned may differ from PipeDream's, whose own choice depends on Python's set order.
/// Throws invalid_input for bad options or empty states.
[[nodiscard]] inline pipedream_result pipedream_partition(const layer_graph& graph, const antichain_states& built,
                                                          const pipedream_options& options, pipedream_counters* counters = nullptr) {
    options.validate();
    const std::size_t s_count = built.states.size();
    if (s_count == 0) throw invalid_input("states", "[]", "at least one state (build_antichain_states)");
    pipedream_counters local;
    pipedream_counters& work = counters ? *counters : local;
    const bool chain_solver = detail::pipedream_uses_chain_solver(built, options);
    const double cells = detail::pipedream_table_cells(s_count, options, chain_solver);
    if (options.budget.max_nodes > 0 && cells > static_cast<double>(options.budget.max_nodes))
        return detail::pipedream_tables_over_budget(s_count, cells, options.budget);
    if (chain_solver) return detail::pipedream_chain_partition(graph, built, options, work);
    detail::pipedream_levels levels(graph, built, options, work);
    if (!levels.solve()) return detail::pipedream_over_budget(s_count, work, options.budget);
    return detail::pipedream_finish(levels.trace_plan(), s_count, work);
}

namespace detail {

/// A graph over options.max_states states (docs/design/pipedream-wide-graphs.md, section 5,
/// "Routing"): one level of a single-source graph takes the wide path; several levels are
/// no_plan_found (the lower levels' rows depend on PipeDream's state numbering, section 1.1);
/// several sources keep the refusal (section 1.3 holds for one source only).
[[nodiscard]] inline pipedream_result pipedream_partition_beyond_states(const layer_graph& graph, const pipedream_options& options) {
    if (ideal_lattice(graph).source_count() != 1) throw too_many_antichain_states(options.max_states);
    if (options.machines.size() > 1) {
        pipedream_result none;
        none.status = solve_status::no_plan_found;
        none.details.states_enumerated = false;
        none.reason = "the graph has more than options.max_states = " + std::to_string(options.max_states) +
                      " antichain states, and a hierarchy of " + std::to_string(options.machines.size()) +
                      " levels (options.machines) needs them all: only one level is answered without them";
        return none;
    }
    return pipedream_partition_wide(graph, options);
}

/// What is left of `budget` after `used`, -1 when nothing is (0, no limit, stays 0).
[[nodiscard]] inline std::int64_t budget_left(std::int64_t budget, std::int64_t used) noexcept {
    if (budget == 0) return 0;
    return budget > used ? budget - used : -1;
}

/// The exact recurrence stopped by a budget (no_plan_found with a limit) on one level of a
/// single-source graph: the wide path's plan and bound within what is left of the budget, so that
/// a budget that runs out ends in the best answer found, with its gap ("an anytime answer with its
/// gap when a budget runs out": issue 21; docs/design/pipedream-wide-graphs.md, section 3.3).
/// Proven optimal there: optimal. Else the exact run's limit stays, and the reason says both. With
/// no nodes (fills) or time left, the exact run's result as it is; with no evaluations left, no UB3.
[[nodiscard]] inline pipedream_result pipedream_after_budget(const layer_graph& graph, const pipedream_options& options,
                                                             pipedream_result exact, double elapsed_s) {
    const bool stopped = exact.status == solve_status::no_plan_found && exact.limit != search_limit::none;
    if (!stopped || options.machines.size() != 1 || ideal_lattice(graph).source_count() != 1) return exact;
    if (options.budget.max_time_s > 0.0 && elapsed_s >= options.budget.max_time_s) return exact;
    pipedream_options rest = options;
    rest.budget.max_nodes = budget_left(options.budget.max_nodes, exact.counters.nodes);
    rest.budget.max_evaluations = budget_left(options.budget.max_evaluations, exact.counters.evaluations);
    if (rest.budget.max_nodes < 0) return exact;
    const bool local_search = rest.budget.max_evaluations >= 0;
    if (!local_search) rest.budget.max_evaluations = 1;  // unused without UB3
    if (options.budget.max_time_s > 0.0) rest.budget.max_time_s = options.budget.max_time_s - elapsed_s;
    pipedream_result wide = pipedream_partition_wide(graph, rest, local_search);
    wide.details.num_states = exact.details.num_states;
    wide.counters.nodes += exact.counters.nodes;
    wide.counters.evaluations += exact.counters.evaluations;
    if (wide.status == solve_status::optimal) return wide;
    if (wide.limit == search_limit::none) wide.limit = exact.limit;
    wide.reason = exact.reason + "; the wide path (partition/pipedream_wide.hpp), within what was left of the budget, " +
                  (wide.plan ? "found a partition within " + format_number(100.0 * wide.details.lattice.gap_ratio) +
                                   " % of its proven lower bound"
                             : "found none: " + wide.reason);
    return wide;
}

}  // namespace detail

/// PipeDream's partitioning of `graph`: its states (try_build_antichain_states with
/// options.max_states), then pipedream_partition(graph, states, options); over max_states, the
/// wide path (partition/pipedream_wide.hpp: one level of a single-source graph; a hierarchy is
/// no_plan_found, and a graph with several sources throws invalid_input naming "graph"). When a
/// budget stops the recurrence on one level of a single-source graph, the wide path answers within
/// what is left of it (detail::pipedream_after_budget).
[[nodiscard]] inline pipedream_result pipedream_partition(const layer_graph& graph, const pipedream_options& options) {
    options.validate();
    const auto start = std::chrono::steady_clock::now();
    std::optional<antichain_states> built = try_build_antichain_states(graph, options.max_states);
    if (!built) return detail::pipedream_partition_beyond_states(graph, options);
    pipedream_result exact = pipedream_partition(graph, *built, options);
    return detail::pipedream_after_budget(graph, options, std::move(exact),
                                          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace dnnplan
