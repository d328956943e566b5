#pragma once
// The options, plan and result of PipeDream-compatible partitioning (partition/pipedream.hpp),
// shared by its exact path over PipeDream's states and its wide path over the ideal lattice
// (partition/pipedream_wide.hpp).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/pipedream_row.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// PipeDream's optimizer flags (reference note, section 5), with its defaults.
struct pipedream_options {
    std::vector<std::int32_t> machines{};           ///< -n m1 m2 ...: machines per level (level 1 first)
    std::vector<double> bandwidths_bytes_per_s{};   ///< -b B1 B2 ...; empty: 1e9 for every level
    std::optional<double> activation_compression_ratio{};  ///< absent: activation transfer ignored
    bool straight_pipeline = false;                 ///< no replication
    bool use_memory_constraint = false;
    double memory_bytes = 16e9;                     ///< -s
    bool use_fewer_machines = false;
    /// max_nodes is checked before the recurrence runs against its memory: nodes = the cells of its
    /// tables (states x machines per level, and (states + 1) x states between levels; for a chain
    /// on one level, the chain solver's rows of machine-count bits, 64 to a cell, and its three
    /// arrays over the machine counts). max_evaluations stops the recurrence once it has computed
    /// that many stage times (state pairs). Over either: no_plan_found, limit nodes or evaluations.
    /// (The states themselves are limited by max_states below.) The default evaluations, 10^9
    /// stage times, take about 15 s (docs/solvers/pipeline_plan.md); the largest of PipeDream's own
    /// runs, gnmt_large on two levels, needs 138 million.
    /// On the wide path (a graph over max_states states) max_nodes caps its greedy fills (and a
    /// run whose M^2, the window bound's DP over machines, exceeds it is not started),
    /// max_evaluations the state pairs of its restricted family's row solver, and max_time_s its
    /// time: a stop there is a status (limit nodes, evaluations or time), with the best plan and
    /// bound found so far.
    search_budget budget{.max_nodes = 10'000'000, .max_evaluations = 1'000'000'000, .max_time_s = 0.0};
    /// A branching graph with more antichain states takes the wide path (one level, a single
    /// source: partition/pipedream_wide.hpp), which enumerates none; 0 sends every branching
    /// graph there. A chain is always solved exactly. At most max_antichain_states_limit: the
    /// exact path's predecessor table takes max_states^2 bits (100,000 states: 1.25 GB).
    std::size_t max_states = default_max_antichain_states;
    static constexpr std::size_t max_antichain_states_limit = 100'000;

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        budget.validate(p + "budget");
        if (machines.empty()) throw invalid_input(p + "machines", "[]", "at least one level (-n)");
        for (std::size_t l = 0; l < machines.size(); ++l)
            detail::require_at_least(p + "machines[" + std::to_string(l) + "]", machines[l], 1);
        if (!bandwidths_bytes_per_s.empty() && bandwidths_bytes_per_s.size() != machines.size())
            throw invalid_input(p + "bandwidths_bytes_per_s", std::to_string(bandwidths_bytes_per_s.size()) + " values",
                                "one bandwidth per level (" + std::to_string(machines.size()) + ")");
        for (std::size_t l = 0; l < bandwidths_bytes_per_s.size(); ++l)
            detail::require_positive(p + "bandwidths_bytes_per_s[" + std::to_string(l) + "]", bandwidths_bytes_per_s[l]);
        if (activation_compression_ratio)
            detail::require_positive(p + "activation_compression_ratio", *activation_compression_ratio);
        detail::require_positive(p + "memory_bytes", memory_bytes);
        if (max_states > max_antichain_states_limit)
            throw invalid_input(p + "max_states", std::to_string(max_states),
                                "at most " + std::to_string(max_antichain_states_limit) + " (the exact path's predecessor table takes max_states^2 bits)");
    }
};

/// A stage of the final level: states [first_state, end_state) on `replicas` machines. A plan of
/// the wide path (details.states_enumerated false) has no state numbers: there first_state and
/// end_state are cut ordinals, stage i running from cut i to cut i + 1 (cut 0: nothing done), and
/// `layers` says what the stage holds.
struct pipedream_stage {
    std::size_t first_state = 0;
    std::size_t end_state = 0;      ///< exclusive
    std::int32_t replicas = 1;
    double compute_s = 0.0;         ///< the stage's compute time on one machine (PipeDream's printout)
    std::vector<std::size_t> layers{};  ///< layer indices of the stage
};

/// A partition of the final level: the time per minibatch (A[0][S-1][M-1]) and its stages.
struct pipedream_plan {
    double time_per_minibatch_s = 0.0;
    std::vector<pipedream_stage> stages{};
};

/// What the wide path (partition/pipedream_wide.hpp) proved and did; zeros on the exact path.
/// The bounds are lower bounds on PipeDream's A[0][S-1][M-1] (docs/design/pipedream-wide-graphs.md,
/// section 3.1), each already rounded down by 1e-12 relative.
struct pipedream_lattice_details {
    std::size_t kept_layers = 0;       ///< the layers partitioned (Input and __getitem__ layers removed)
    double lower_bound_s = 0.0;        ///< the largest of the bounds below (result.bound)
    double gap_ratio = 0.0;            ///< (objective_value - lower_bound_s) / lower_bound_s
    double compute_bound_s = 0.0;      ///< LB0: C / M and each layer's least time on its own
    double machine_bound_s = 0.0;      ///< LB1: machine counting; with transfers also LB1x (the stages' sync in aggregate)
    double window_bound_s = 0.0;       ///< cuts outside the layers' forbidden windows, r T per stage
    double memory_bound_s = 0.0;       ///< LBm: the stages before each cut within their memory together (memory limit only)
    std::int64_t threshold_tests = 0;  ///< thresholds tried by the packing (UB1) and by the bounds' bisections
    std::int64_t fills = 0;            ///< greedy stage fills (counted against budget.max_nodes)
    std::size_t family_states = 0;     ///< UB3: the ideals of the restricted family solved exactly
    std::int64_t state_pairs = 0;      ///< UB3: the row solver's state pairs (against budget.max_evaluations)
    friend bool operator==(const pipedream_lattice_details&, const pipedream_lattice_details&) = default;
};

struct pipedream_details {
    /// PipeDream's antichain states of the graph; on the wide path the nonempty ideals its window
    /// bound counted (PipeDream's states, for one source), 0 when over 300,000 (not counted).
    std::size_t num_states = 0;
    pipedream_counters work{};      ///< what the exact solver did (0 for the generic recurrence)
    bool states_enumerated = true;  ///< false: the wide path, over more than options.max_states states
    pipedream_lattice_details lattice{};
};

/// status optimal (objective_value = bound = the time per minibatch: the recurrence is exact) or
/// infeasible (no partition: every one breaks the memory constraint); on the wide path also
/// feasible (a real partition, PipeDream's price of it, and bound = a proven lower bound); counters.evaluations = the
/// stage times computed (state pairs; 0 on the chain solver's path, which computes stage times
/// in its feasibility tests instead), counters.nodes = the recurrence's cells filled plus the
/// chain solver's feasibility tests (details.work has each; 0 when the chain solver's first
/// candidate, one stage on every machine, is already at the lower bound).
using pipedream_result = solve_result<pipedream_plan, pipedream_details>;

}  // namespace dnnplan
