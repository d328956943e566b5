#pragma once
// PipeDream-compatible pipeline partitioning: the dynamic program of PipeDream's optimizer
// (Narayanan et al., SOSP 2019; optimizer_graph_hierarchical.py), reproduced as the reference
// note describes it (sections 3-5), over the states of partition/antichain.hpp.
//
// PipeDream's cost of a stage is a stage-cost model (pipedream_stage_cost, a stage_cost_model of
// model/concepts.hpp), and its recurrence is solved exactly without PipeDream's O(S^2 M^2) inner
// loops: for every pair of states (k, j) the stage's time is computed once for every replica
// count, and the (min, max) convolution of the left part's row with it is taken by a two-pointer
// sweep wherever the stage's time does not increase with replicas (an exchange argument makes
// this exact; see docs/solvers/pipeline_plan.md), with bound-pruned loops elsewhere. The
// plain transcription of PipeDream's loops stays in the tests as the oracle.

#include <dnnplan/core/error.hpp>
#include <dnnplan/workload/layer_graph.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/pipedream_chain.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
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
    /// that many stage times (state pairs). Over either: status budget_exhausted, no plan.
    /// (build_antichain_states has its own limit on the states.) The default evaluations, 10^9
    /// stage times, take about 15 s (docs/solvers/pipeline_plan.md); the largest of PipeDream's own
    /// runs, gnmt_large on two levels, needs 138 million.
    search_budget budget{.max_nodes = 10'000'000, .max_evaluations = 1'000'000'000, .max_time_s = 0.0};

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
    }
};

/// A stage of the final level: states [first_state, end_state) on `replicas` machines.
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

/// One level of PipeDream's optimizer as a stage-cost model: its bandwidth, its activation
/// compression ratio (absent: transfers ignored), its memory limit (absent: no constraint), and
/// G, the machines in each machine of this level (1 at the lowest level).
struct pipedream_level_options {
    double bandwidth_bytes_per_s = 1e9;
    std::optional<double> activation_compression_ratio{};
    std::optional<double> memory_bytes{};
    double machines_within = 1.0;
};

/// PipeDream's time of one stage (reference note, section 3), as a stage_cost_model. The stage
/// holds states [first_state, end_state); its figures are PipeDream's "range" figures, the
/// differences of the prefix figures of states end_state - 1 and first_state - 1 (compute may
/// instead come from the previous level of a hierarchical run: `compute_table`, PipeDream's
/// (S + 1) x S compute_times, row first_state, column end_state - 1, +inf for None).
///
/// The first stage (devices_before == 0) is PipeDream's initialisation,
///     (C + 4 (r - 1) W / (B r) / G) / r,
/// allowed when ceil((M - r) / r) (Act + W) <= memory; every later stage is the recurrence's last
/// stage,
///     max((C + 4 (r - 1) W / (B r)) / r, 2 out(first - 1) / (B r) / R, 2 out(end - 1) / (B r) / R),
/// (transfer terms only with a ratio R; the output term not for the last stage), allowed when
/// (Act + W) ceil((M - devices_before - r) / r) <= memory. A stage that is not allowed costs +inf.
class pipedream_stage_cost {
public:
    static constexpr bool needs_stage_count = false;

    pipedream_stage_cost(const antichain_states& states, pipedream_level_options level, std::vector<double> compute_table = {})
        : level_(std::move(level)), compute_table_(std::move(compute_table)) {
        const std::size_t s = states.states.size();
        if (!compute_table_.empty() && compute_table_.size() != (s + 1) * s)
            throw invalid_input("compute_table", std::to_string(compute_table_.size()) + " values",
                                "(S + 1) x S = " + std::to_string((s + 1) * s) + " values, or none");
        detail::require_positive("bandwidth_bytes_per_s", level_.bandwidth_bytes_per_s);
        if (level_.activation_compression_ratio)
            detail::require_positive("activation_compression_ratio", *level_.activation_compression_ratio);
        if (level_.memory_bytes) detail::require_positive("memory_bytes", *level_.memory_bytes);
        detail::require_positive("machines_within", level_.machines_within);
        compute_.reserve(s);
        activation_.reserve(s);
        parameter_.reserve(s);
        output_.reserve(s);
        for (const auto& st : states.states) {
            compute_.push_back(st.compute_s);
            activation_.push_back(st.activation_bytes);
            parameter_.push_back(st.parameter_bytes);
            output_.push_back(st.output_activation_bytes);
        }
    }

    [[nodiscard]] std::size_t num_states() const noexcept { return compute_.size(); }
    [[nodiscard]] const pipedream_level_options& level() const noexcept { return level_; }

    /// PipeDream's range figures of states [first, end), end > first (row `first`, column end - 1).
    [[nodiscard]] double compute_s(std::size_t first, std::size_t end) const noexcept {
        if (!compute_table_.empty()) return compute_table_[first * compute_.size() + (end - 1)];
        return range(compute_, first, end);
    }
    [[nodiscard]] double parameter_bytes(std::size_t first, std::size_t end) const noexcept { return range(parameter_, first, end); }
    [[nodiscard]] double activation_bytes(std::size_t first, std::size_t end) const noexcept { return range(activation_, first, end); }
    [[nodiscard]] double output_activation_bytes(std::size_t state) const noexcept { return output_[state]; }

    [[nodiscard]] double stage_time_s(const stage_candidate& s) const noexcept {
        const double c = compute_s(s.first_state, s.end_state);
        if (std::isinf(c)) return c;
        const double w = parameter_bytes(s.first_state, s.end_state);
        const double stashed = activation_bytes(s.first_state, s.end_state) + w;
        const double r = s.replicas;
        const double bw = level_.bandwidth_bytes_per_s;
        if (s.devices_before == 0) {
            if (!fits(stashed, s.devices_total - s.replicas, s.replicas)) return inf;
            return (c + 4.0 * (r - 1.0) * w / (bw * r) / level_.machines_within) / r;
        }
        if (!fits(stashed, s.devices_total - s.devices_before - s.replicas, s.replicas)) return inf;
        return transfers_bound((c + (4.0 * (r - 1.0) * w) / (bw * r)) / r, s.first_state - 1, s.end_state - 1, s.replicas);
    }

    [[nodiscard]] double pipeline_time_s(double slowest_s, std::int32_t /*stages*/) const noexcept { return slowest_s; }

    /// The transfer terms' numerator for the stage of states [k + 1, j + 1): the larger of
    /// 2 out(k) / (B R) and (unless j is the last state) 2 out(j) / (B R); 0 without a ratio. A
    /// stage on r replicas waits for its transfers this value / r.
    [[nodiscard]] double transfer_bytes_per_s(std::size_t k, std::size_t j) const noexcept {
        return transfers_bound(0.0, k, j, 1);
    }
    /// 2 out(k) / (B R) (0 without a ratio): what a stage next to state k waits for its
    /// transfer at k, on one replica.
    [[nodiscard]] double output_transfer_s(std::size_t k) const noexcept {
        if (!level_.activation_compression_ratio) return 0.0;
        return (2.0 * output_[k]) / level_.bandwidth_bytes_per_s / *level_.activation_compression_ratio;
    }

    /// PipeDream's memory check: `stashed` bytes, ceil(after / replicas) times, within memory.
    [[nodiscard]] bool fits(double stashed, std::int32_t after, std::int32_t replicas) const noexcept {
        if (!level_.memory_bytes) return true;
        return stashed * std::ceil(static_cast<double>(after) / static_cast<double>(replicas)) <= *level_.memory_bytes;
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();

    static double range(const std::vector<double>& prefix, std::size_t first, std::size_t end) noexcept {
        return first == 0 ? prefix[end - 1] : prefix[end - 1] - prefix[first - 1];
    }

    // The activation transfers into and out of the stage (states k + 1 .. j), with a ratio only.
    double transfers_bound(double t, std::size_t k, std::size_t j, std::int32_t r) const noexcept {
        if (!level_.activation_compression_ratio) return t;
        const double ratio = *level_.activation_compression_ratio;
        const double per = level_.bandwidth_bytes_per_s * static_cast<double>(r);
        t = std::max(t, (2.0 * output_[k]) / per / ratio);
        if (j + 1 < output_.size()) t = std::max(t, (2.0 * output_[j]) / per / ratio);
        return t;
    }

    pipedream_level_options level_;
    std::vector<double> compute_table_;
    std::vector<double> compute_, activation_, parameter_, output_;
};

static_assert(stage_cost_model<pipedream_stage_cost>);

/// Work done by pipedream_partition's solver, to compare it with the plain recurrence.
struct pipedream_counters {
    std::int64_t state_pairs = 0;      ///< (k, j) pairs whose stage times were computed
    std::int64_t cells = 0;            ///< (j, m) cells of the recurrence filled
    std::int64_t swept_cells = 0;      ///< cells whose monotone part was answered by a two-pointer sweep
    std::int64_t plain_candidates = 0; ///< (k, m') candidates evaluated one by one
    std::int64_t searches_retried = 0; ///< searches below an upper bound that found nothing below it
    std::int64_t threshold_decisions = 0;  ///< feasibility tests of the chain solver (pipedream_chain.hpp)
    friend bool operator==(const pipedream_counters&, const pipedream_counters&) = default;
};

struct pipedream_details {
    std::size_t num_states = 0;  ///< PipeDream's antichain states of the graph
    pipedream_counters work{};   ///< what the exact solver did (0 for the generic recurrence)
};

/// status optimal (objective_value = bound = the time per minibatch: the recurrence is exact) or
/// infeasible (no partition: every one breaks the memory constraint); counters.evaluations = the
/// stage times computed (state pairs; 0 on the chain solver's path, which computes stage times
/// in its feasibility tests instead), counters.nodes = the recurrence's cells filled plus the
/// chain solver's feasibility tests (details.work has each; 0 when the chain solver's first
/// candidate, one stage on every machine, is already at the lower bound).
using pipedream_result = solve_result<pipedream_plan, pipedream_details>;

namespace detail {

struct pipedream_choice {
    std::int32_t split_state = -1;   // k; -1: one stage (PipeDream's initialisation)
    std::int32_t left_machines = 0;  // m - m' (0-based) of the left part
    std::int32_t replicas = 0;
};

// PipeDream's A[i][.][.] for one start row i: S x M times (+inf: None) and choices, plus the
// running minimum of every finished row j over machine counts (for the sweep).
struct pipedream_row {
    std::size_t states = 0, machines = 0;
    std::vector<double> time;
    std::vector<pipedream_choice> choice;
    std::vector<double> prefix_min;          // min over m' <= m of time(j, m')
    std::vector<std::int32_t> prefix_argmin;  // an m' attaining it

    void reset(std::size_t s, std::size_t m) {
        states = s;
        machines = m;
        time.assign(s * m, std::numeric_limits<double>::infinity());
        choice.assign(s * m, pipedream_choice{});
        prefix_min.assign(s * m, std::numeric_limits<double>::infinity());
        prefix_argmin.assign(s * m, 0);
    }
    [[nodiscard]] double& at(std::size_t j, std::size_t m) noexcept { return time[j * machines + m]; }
    [[nodiscard]] double at(std::size_t j, std::size_t m) const noexcept { return time[j * machines + m]; }
    void finish(std::size_t j) noexcept {
        double best = std::numeric_limits<double>::infinity();
        std::int32_t arg = 0;
        for (std::size_t m = 0; m < machines; ++m) {
            if (time[j * machines + m] < best) {
                best = time[j * machines + m];
                arg = static_cast<std::int32_t>(m);
            }
            prefix_min[j * machines + m] = best;
            prefix_argmin[j * machines + m] = arg;
        }
    }
};

struct pipedream_scratch {
    std::vector<double> stage, stage_prefix_min, best, inverse, sync_factor;
    std::vector<pipedream_choice> best_choice;
    std::vector<std::uint64_t> useful;  ///< banded search: states still worth a split after them
};

// Row `first` of one level: PipeDream's initialisation of A[first][j][m], then its recurrence
// over k in P(j) (not in P(first - 1) when first > 0), every cell exact. `machines` is the
// level's M; is_pred[i][k]: state k is a predecessor of state i (needed when first > 0).
// max_state_pairs > 0: stops once counters.state_pairs reaches it (the evaluation budget);
// max_nodes > 0: stops before a state's cells would take counters.cells + threshold_decisions past
// it (the node budget: a bounded search that retries refills rows). Either returns false, the row
// then unfinished; true: the row is complete.
[[nodiscard]] inline bool solve_pipedream_row(const pipedream_stage_cost& cost, const antichain_states& states,
                                              const std::vector<std::vector<bool>>* is_pred, std::size_t first,
                                              std::int32_t machines, bool straight, bool fewer, pipedream_row& row,
                                              pipedream_scratch& scratch, pipedream_counters& counters,
                                              double upper_bound = std::numeric_limits<double>::infinity(),
                                              std::int64_t max_state_pairs = 0, std::int64_t max_nodes = 0) {
    bool stopped = false;
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t s_count = cost.num_states();
    const auto m_count = static_cast<std::size_t>(machines);
    const std::size_t max_replicas = straight ? 1 : (m_count > 1 ? m_count - 1 : 1);
    const bool memory = cost.level().memory_bytes.has_value();
    // With a finite upper bound (row 0 of a single level only: compute must be additive), only
    // partitions faster than it are sought, and a cell (j, m) can lie on one only inside a band:
    // its prefix needs C_j / (m + 1) < bound (every stage takes at least its compute over its
    // replicas, so a slowest stage is at least the total over the machines), and the states after
    // j need (C_last - C_j) < bound (M - m - 1) on the machines left. Cells outside keep their
    // initialisation; candidates start at the bound.
    const bool banded = std::isfinite(upper_bound);
    const double total_compute = banded ? cost.compute_s(0, s_count) : 0.0;
    const double margin = 1.0 + 1e-9;  // rounding: never cut a cell the exact bound would keep
    row.reset(s_count, m_count);
    scratch.stage.assign(max_replicas + 1, inf);
    scratch.inverse.assign(max_replicas + 1, inf);
    scratch.sync_factor.assign(max_replicas + 1, 0.0);
    for (std::size_t r = 1; r <= max_replicas; ++r) {
        const double rd = static_cast<double>(r);
        scratch.inverse[r] = 1.0 / rd;
        scratch.sync_factor[r] = 4.0 * (rd - 1.0) / (cost.level().bandwidth_bytes_per_s * rd);
    }
    scratch.stage_prefix_min.assign(max_replicas + 1, inf);
    scratch.best.assign(m_count, inf);
    scratch.best_choice.assign(m_count, pipedream_choice{});
    auto& s = scratch.stage;
    auto& s_min = scratch.stage_prefix_min;

    // The banded search keeps a bit per state k telling whether a split after k can still lie
    // on a partition faster than the bound: not when the transfer out of k alone, on the most
    // replicas, reaches the bound, nor (once k's row is done) when every entry of k's row does.
    // Predecessors are then read a word of bits at a time, the useless ones skipped unseen.
    const bool filtered = banded && m_count >= 2;
    const double max_replicas_d = static_cast<double>(max_replicas);
    if (filtered) {
        scratch.useful.assign((s_count + 63) / 64, 0);
        for (std::size_t k = 0; k < s_count; ++k)
            if (cost.output_transfer_s(k) < upper_bound * max_replicas_d * margin)
                scratch.useful[k / 64] |= std::uint64_t{1} << (k % 64);
    }
    for (std::size_t j = first; j < s_count; ++j) {
        if (stopped) return false;
        if (filtered && j > first && row.prefix_min[(j - 1) * m_count + m_count - 2] >= upper_bound)
            scratch.useful[(j - 1) / 64] &= ~(std::uint64_t{1} << ((j - 1) % 64));
        // Initialisation: states first..j as one stage on m + 1 machines.
        const std::size_t init_machines = straight ? 1 : m_count;
        for (std::size_t m = 0; m < init_machines; ++m) {
            const stage_candidate one{.first_state = first, .end_state = j + 1, .replicas = static_cast<std::int32_t>(m + 1),
                                      .devices_before = 0, .devices_total = machines};
            row.at(j, m) = cost.stage_time_s(one);
            row.choice[j * m_count + m] = {.split_state = -1, .left_machines = 0, .replicas = static_cast<std::int32_t>(m + 1)};
        }
        if (j == first || m_count == 1) {
            row.finish(j);
            continue;
        }
        if (max_nodes > 0 &&
            counters.cells + counters.threshold_decisions + static_cast<std::int64_t>(m_count) - 1 > max_nodes)
            return false;
        counters.cells += static_cast<std::int64_t>(m_count) - 1;  // m = 1..M-1
        std::fill(scratch.best.begin(), scratch.best.end(), banded ? upper_bound : inf);
        std::fill(scratch.best_choice.begin(), scratch.best_choice.end(), pipedream_choice{});
        std::size_t m_lo = 1, m_hi = m_count - 1;  // the band of cells of j worth filling
        if (banded) {
            const double cj = cost.compute_s(0, j + 1);
            while (m_lo <= m_hi && cj > upper_bound * static_cast<double>(m_lo + 1) * margin) ++m_lo;
            if (j + 1 < s_count)
                while (m_hi >= m_lo && (m_hi + 1 == m_count ||
                                        total_compute - cj > upper_bound * static_cast<double>(m_count - m_hi - 1) * margin))
                    --m_hi;
            if (m_lo > m_hi) {
                row.finish(j);
                continue;
            }
        }
        const auto visit = [&](std::size_t k) {
            if (k < first) return;  // A[first][k] is None for k < first
            if (first > 0 && (states.chain ? k < first - 1 : (*is_pred)[first - 1][k])) return;
            const double c = cost.compute_s(k + 1, j + 1);
            if (std::isinf(c)) return;  // PipeDream: last_stage_time is None
            const double transfer = cost.transfer_bytes_per_s(k, j);
            if (banded) {
                // Every candidate is at least the left row's best on <= m_hi - 1 machines and at
                // least max(c, X) / m_hi (a stage takes at least its compute, and its transfers,
                // over its replicas).
                if (row.prefix_min[k * m_count + m_hi - 1] >= upper_bound) return;
                if (std::max(c, transfer) >= upper_bound * static_cast<double>(std::min(m_hi, max_replicas)) * margin) return;
            }
            if (stopped || (max_state_pairs > 0 && counters.state_pairs >= max_state_pairs)) {
                stopped = true;
                return;
            }
            ++counters.state_pairs;
            const double w = cost.parameter_bytes(k + 1, j + 1);
            const double stashed = cost.activation_bytes(k + 1, j + 1) + w;
            // The stage's time for every replica count (memory aside), and where it stops rising.
            // A straight pipeline has one replica per stage: nothing to sweep.
            // Only replica counts up to the band's top machine count matter for this j.
            const std::size_t r_top = std::min(m_hi, max_replicas);
            std::size_t mono_from = straight ? r_top + 1 : r_top;
            // (C + 4 (r - 1) W / (B r)) / r and the transfers X / r, as max(C + W q_r, X) / r
            // with q_r and 1 / r tabulated: a few ulps from PipeDream's operation order, which
            // the chosen partition's exact re-evaluation removes from the reported time.
            for (std::size_t r = 1; r <= r_top; ++r) {
                s[r] = std::max(c + w * scratch.sync_factor[r], transfer) * scratch.inverse[r];
                s_min[r] = r == 1 ? s[r] : std::min(s_min[r - 1], s[r]);
            }
            while (mono_from > 1 && mono_from <= r_top && s[mono_from - 1] >= s[mono_from]) --mono_from;
            const double* left = &row.time[k * m_count];
            const double* left_min = &row.prefix_min[k * m_count];
            const std::int32_t* left_arg = &row.prefix_argmin[k * m_count];
            std::size_t cross = 1;
            for (std::size_t m = m_lo; m <= m_hi; ++m) {
                double& b = scratch.best[m];
                const std::size_t top = std::min(m, max_replicas);
                // Nothing here can beat b: every left part is >= its row's minimum over <= m - 1
                // machines, every stage time >= its minimum over <= m replicas.
                if (left_min[m - 1] >= b || s_min[top] >= b) continue;
                const auto after = static_cast<std::int32_t>(m_count - (m + 1));  // machines after this stage
                // Replica counts where the stage's time still rises: one by one.
                const std::size_t plain_top = std::min(top, mono_from - 1);
                for (std::size_t r = 1; r <= plain_top; ++r) {
                    if (s[r] >= b) continue;
                    const double l = left[m - r];
                    if (l >= b) continue;
                    ++counters.plain_candidates;
                    if (!cost.fits(stashed, after, static_cast<std::int32_t>(r))) continue;
                    b = std::max(l, s[r]);
                    scratch.best_choice[m] = {.split_state = static_cast<std::int32_t>(k),
                                              .left_machines = static_cast<std::int32_t>(m - r), .replicas = static_cast<std::int32_t>(r)};
                }
                if (top < mono_from) continue;
                // Replica counts r in [lo, top] where the stage's time does not rise and it fits
                // (fitting only gets easier with more replicas). Any (u, r) there is no better
                // than (u*, m - u*) with u* the best left row entry over <= u machines, so the
                // best candidate is min over r of max(left_min[m - r], s[r]): a non-decreasing
                // and a non-increasing sequence, whose max is least at their crossing.
                std::size_t lo = std::max<std::size_t>(mono_from, 1);
                std::size_t a = 0;  // the first r in [lo, top] with left_min[m - r] >= s[r], else top
                if (!memory) {
                    // Without a memory limit lo is the same for every m, and the crossing only
                    // moves right as m grows (left_min[m - r] falls with m): one sweep per pair.
                    cross = std::max(cross, lo);
                    while (cross < top && left_min[m - cross] < s[cross]) ++cross;
                    a = std::min(cross, top);
                } else {
                    if (!cost.fits(stashed, after, static_cast<std::int32_t>(top))) continue;
                    if (!cost.fits(stashed, after, static_cast<std::int32_t>(lo))) {
                        std::size_t no = lo, yes = top;
                        while (yes - no > 1) {
                            const std::size_t mid = no + (yes - no) / 2;
                            (cost.fits(stashed, after, static_cast<std::int32_t>(mid)) ? yes : no) = mid;
                        }
                        lo = yes;
                    }
                    std::size_t no = lo, yes = top;
                    if (left_min[m - top] < s[top]) {
                        a = top;
                    } else if (left_min[m - lo] >= s[lo]) {
                        a = lo;
                    } else {
                        while (yes - no > 1) {
                            const std::size_t mid = no + (yes - no) / 2;
                            (left_min[m - mid] >= s[mid] ? yes : no) = mid;
                        }
                        a = yes;
                    }
                }
                ++counters.swept_cells;
                for (const std::size_t r : {a - (a > lo ? 1 : 0), a}) {
                    if (std::isinf(left_min[m - r])) continue;
                    const auto u = static_cast<std::size_t>(left_arg[m - r]);
                    const std::size_t reps = m - u;
                    const double cand = std::max(left[u], s[reps]);
                    if (cand < b) {
                        b = cand;
                        scratch.best_choice[m] = {.split_state = static_cast<std::int32_t>(k),
                                                  .left_machines = static_cast<std::int32_t>(u), .replicas = static_cast<std::int32_t>(reps)};
                    }
                }
            }
        };
        if (!filtered) {
            for_each_state_predecessor(states, j, visit);
        } else if (j + 1 == s_count || cost.output_transfer_s(j) < upper_bound * max_replicas_d * margin) {
            // (A stage ending at j < S - 1 pays j's transfer too.)
            const std::uint64_t* preds = states.chain ? nullptr : states.predecessor_sets.row_words(j);
            for (std::size_t w = 0; w * 64 < j; ++w) {
                std::uint64_t word = scratch.useful[w] & (preds ? preds[w] : ~std::uint64_t{0});
                if (w * 64 + 64 > j) word &= (std::uint64_t{1} << (j - w * 64)) - 1;  // k < j
                for (; word != 0; word &= word - 1) visit(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
            }
        }
        for (std::size_t m = 1; m < m_count; ++m) {
            double& cell = row.at(j, m);
            pipedream_choice& ch = row.choice[j * m_count + m];
            if (fewer && row.at(j, m - 1) < cell) {
                cell = row.at(j, m - 1);
                ch = row.choice[j * m_count + m - 1];
            }
            if (scratch.best_choice[m].replicas > 0 && scratch.best[m] < cell) {
                cell = scratch.best[m];
                ch = scratch.best_choice[m];
            }
        }
        row.finish(j);
    }
    return !stopped;
}

}  // namespace detail

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

// A chain on one level without memory, transfers or a straight pipeline: the threshold search
// of partition/pipedream_chain.hpp, its partition timed with PipeDream's formulas. Its answer is
// within chain_tolerance (relative) of the optimum; PipeDream compatibility asks for 1e-6.
// A lower bound on the slowest stage of any partition on `max_replicas` or fewer replicas per
// stage: the stage holding layer l takes at least what l alone would take on its best replica
// count, since PipeDream's stage time (C + 4 (r - 1) W / (B r)) / r (reference note, section 3)
// rises with the stage's compute C and parameters W (transfers and memory only add to it). As a
// function of r it is (C + a) / r - a / r^2 with a = 4 W / B, which rises up to r = 2a / (C + a)
// <= 2 and falls after, so its least value on [1, R] is at r = 1 or r = R. Only a starting point
// for the bounded search (each search is exact below its bound, whatever the bound).
[[nodiscard]] inline double pipedream_layer_lower_bound(const layer_graph& graph, const antichain_states& built,
                                                        double bandwidth_bytes_per_s, std::int32_t max_replicas) {
    const auto rd = static_cast<double>(max_replicas);
    double bound = 0.0;
    std::size_t next_removed = 0;
    for (std::size_t i = 0; i < graph.size(); ++i) {
        if (next_removed < built.removed_layers.size() && built.removed_layers[next_removed] == i) {
            ++next_removed;
            continue;
        }
        const layer& l = graph.at(i);
        const double c = l.forward_s + l.backward_s;
        const double a = 4.0 * l.parameter_bytes / bandwidth_bytes_per_s;
        bound = std::max(bound, std::min(c, (c + a) / rd - a / (rd * rd)));
    }
    return bound;
}

// The time of a real partition, an upper bound on the optimum for the bounded search: the
// partitions along one path of the state DAG (from the last state, each time to its last
// predecessor in the topological order, which is a direct one) are those of a chain, which the
// chain solver answers quickly for PipeDream's compute and synchronisation terms; its partition
// is then timed with the full stage cost (transfers and memory included). Infinity when there
// is none (one state, one machine, a straight pipeline, or the memory check fails).
[[nodiscard]] inline double pipedream_path_upper_bound(const antichain_states& built, const pipedream_stage_cost& cost,
                                                       std::int32_t machines, bool straight, bool fewer,
                                                       pipedream_counters& work) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::size_t s_count = built.states.size();
    if (straight || machines < 2 || s_count < 2 || built.chain) return inf;
    std::vector<std::size_t> path = {s_count - 1};
    while (const auto k = built.predecessor_sets.last(path.back())) path.push_back(*k);
    if (path.size() < 2) return inf;
    std::reverse(path.begin(), path.end());
    // With transfers the chain solver's partition (which ignores them) may cut where the
    // activations are large; cutting only at states whose transfer is at most a quantile of
    // those along the path (any subsequence of a path is a path) gives more partitions to time.
    std::vector<double> limits = {inf};
    if (cost.level().activation_compression_ratio) {
        std::vector<double> transfers;
        for (std::size_t i = 0; i + 1 < path.size(); ++i) transfers.push_back(cost.output_transfer_s(path[i]));
        std::sort(transfers.begin(), transfers.end());
        for (const std::size_t q : {std::size_t{1}, std::size_t{2}, std::size_t{3}})
            limits.push_back(transfers[std::min(transfers.size() - 1, transfers.size() * q / 4)]);
    }
    double best = inf;
    std::vector<std::size_t> kept;
    std::vector<double> compute, parameter;
    for (const double limit : limits) {
        kept.clear();
        compute.clear();
        parameter.clear();
        for (std::size_t i = 0; i < path.size(); ++i)
            if (i + 1 == path.size() || cost.output_transfer_s(path[i]) <= limit) {
                kept.push_back(path[i]);
                compute.push_back(built.states[path[i]].compute_s);
                parameter.push_back(built.states[path[i]].parameter_bytes);
            }
        if (kept.size() < 2) continue;
        const auto time_of = [&](const std::vector<chain_stage>& stages) {
            double slowest = 0.0;
            std::int32_t before = 0;
            for (const chain_stage& st : stages) {
                const stage_candidate c{.first_state = st.first_state == 0 ? 0 : kept[st.first_state - 1] + 1,
                                        .end_state = kept[st.end_state - 1] + 1, .replicas = st.replicas,
                                        .devices_before = before, .devices_total = machines};
                slowest = std::max(slowest, cost.stage_time_s(c));
                before += st.replicas;
            }
            return slowest;
        };
        pipedream_chain_solver solver(compute, parameter, cost.level().bandwidth_bytes_per_s, machines, fewer);
        best = std::min(best, time_of(solver.solve(time_of, 0.02, work.threshold_decisions)));
    }
    return best;
}

inline constexpr double chain_tolerance = 1e-10;

/// The recurrence stopped at a budget (the counters say which): no plan, nothing proven.
[[nodiscard]] inline pipedream_result pipedream_over_budget(std::size_t num_states, const pipedream_counters& work,
                                                            const search_budget& budget) {
    pipedream_result result;
    result.status = solve_status::budget_exhausted;
    result.details = {.num_states = num_states, .work = work};
    result.counters.evaluations = work.state_pairs;
    result.counters.nodes = work.cells + work.threshold_decisions;
    result.reason = budget.evaluations_exhausted(work.state_pairs)
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

inline pipedream_result pipedream_chain_partition(const layer_graph& graph, const antichain_states& built,
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
    const auto& states = built.states;
    const std::size_t s_count = states.size();
    if (s_count == 0) throw invalid_input("states", "[]", "at least one state (build_antichain_states)");
    pipedream_counters local;
    pipedream_counters& work = counters ? *counters : local;
    const std::size_t levels = options.machines.size();
    const bool chain_solver = built.chain && levels == 1 && s_count >= 2 && options.machines[0] >= 2 &&
                              !options.use_memory_constraint && !options.activation_compression_ratio &&
                              !options.straight_pipeline;
    {
        // The tables' cells: the chain solver keeps a row of machine-count bits per state (64 to a
        // cell) and three arrays over the machine counts, the recurrence a cell per state and
        // machine count, and (states + 1) x states between levels. In doubles: M + 1 overflows
        // an int32 at M = 2^31 - 1.
        double cells = 0.0;
        if (chain_solver) {
            const double machine_counts = static_cast<double>(options.machines[0]) + 1.0;
            cells = static_cast<double>(s_count + 1) * std::ceil(machine_counts / 64.0) + 3.0 * machine_counts;
        } else {
            for (const std::int32_t m : options.machines) cells = std::max(cells, static_cast<double>(s_count) * m);
            if (levels > 1) cells = std::max(cells, static_cast<double>(s_count + 1) * static_cast<double>(s_count));
        }
        if (options.budget.max_nodes > 0 && cells > static_cast<double>(options.budget.max_nodes)) {
            pipedream_result over;
            over.status = solve_status::budget_exhausted;
            over.details.num_states = s_count;
            over.reason = "the partition of " + std::to_string(s_count) + " states needs tables of " +
                          detail::format_number(cells) + " cells, over the budget of " +
                          std::to_string(options.budget.max_nodes) + " nodes";
            return over;
        }
    }

    if (chain_solver) return detail::pipedream_chain_partition(graph, built, options, work);
    // Predecessor sets as membership rows, for the "k in P(i - 1)" test of the non-final levels.
    std::vector<std::vector<bool>> is_pred;
    if (levels > 1 && !built.chain) {
        is_pred.assign(s_count, std::vector<bool>(s_count, false));
        for (std::size_t j = 0; j < s_count; ++j)
            for_each_state_predecessor(built, j, [&](std::size_t k) { is_pred[j][k] = true; });
    }
    std::vector<double> table;  // the previous level's A[i][j][M-1], (S + 1) x S; empty at level 1
    double within = 1.0;
    detail::pipedream_row row;
    detail::pipedream_scratch scratch;
    std::optional<pipedream_stage_cost> final_cost;
    for (std::size_t level = 0; level < levels; ++level) {
        const std::int32_t machines = options.machines[level];
        const pipedream_stage_cost cost(
            built,
            {.bandwidth_bytes_per_s = options.bandwidths_bytes_per_s.empty() ? 1e9 : options.bandwidths_bytes_per_s[level],
             .activation_compression_ratio = options.activation_compression_ratio,
             .memory_bytes = options.use_memory_constraint ? std::optional<double>(options.memory_bytes) : std::nullopt,
             .machines_within = within},
            std::move(table));
        table.clear();
        if (level + 1 == levels) {
            // A single level: search below growing upper bounds, from 1.1 times the lower bound
            // C_total / M, 1.5 times more each time, none past 16 times (each search is exact for answers
            // below its bound).
            double bound = std::numeric_limits<double>::infinity();
            if (levels == 1) {
                const double lower = std::max(cost.compute_s(0, s_count) / static_cast<double>(machines),
                                              detail::pipedream_layer_lower_bound(graph, built, cost.level().bandwidth_bytes_per_s,
                                                                                  options.straight_pipeline ? 1 : machines));
                if (lower > 0.0 && std::isfinite(lower)) bound = 1.1 * lower;
            }
            // No search past the time of a partition in hand (just above it, so that the
            // partition itself is below the bound).
            const double cap = levels == 1 ? detail::pipedream_path_upper_bound(built, cost, machines, options.straight_pipeline,
                                                                                options.use_fewer_machines, work) *
                                                 (1.0 + 1e-9)
                                           : std::numeric_limits<double>::infinity();
            // A cap within 3 times the first bound: one search below the cap, sure to succeed,
            // costs less than searches that fail first (measured on PipeDream's profiles: a
            // failed search costs a good part of a successful one; see docs/solvers/pipeline_plan.md).
            if (cap <= 3.0 * bound) bound = cap;
            while (true) {
                bound = std::min(bound, cap);
                if (!detail::solve_pipedream_row(cost, built, nullptr, 0, machines, options.straight_pipeline,
                                                 options.use_fewer_machines, row, scratch, work, bound,
                                                 options.budget.max_evaluations, options.budget.max_nodes))
                    return detail::pipedream_over_budget(s_count, work, options.budget);
                if (row.at(s_count - 1, static_cast<std::size_t>(machines) - 1) < bound || std::isinf(bound)) break;
                ++work.searches_retried;
                bound = bound < cap && bound < 16.0 * cost.compute_s(0, s_count) / static_cast<double>(machines)
                            ? 1.5 * bound
                            : std::numeric_limits<double>::infinity();
            }
            final_cost.emplace(cost);
            break;
        }
        // A lower level: every start row i (PipeDream's rows 0..S; row S is all None).
        const auto m_last = static_cast<std::size_t>(machines) - 1;
        std::vector<double> next((s_count + 1) * s_count, std::numeric_limits<double>::infinity());
        for (std::size_t i = 0; i < s_count; ++i) {
            if (!detail::solve_pipedream_row(cost, built, &is_pred, i, machines, options.straight_pipeline,
                                             options.use_fewer_machines, row, scratch, work,
                                             std::numeric_limits<double>::infinity(), options.budget.max_evaluations,
                                             options.budget.max_nodes))
                return detail::pipedream_over_budget(s_count, work, options.budget);
            for (std::size_t j = i; j < s_count; ++j) next[i * s_count + j] = row.at(j, m_last);
        }
        table = std::move(next);
        within = static_cast<double>(machines);
    }

    const std::int32_t machines = options.machines.back();
    const auto m_last = static_cast<std::size_t>(machines) - 1;
    if (std::isinf(row.at(s_count - 1, m_last))) return detail::pipedream_finish(std::nullopt, s_count, work);
    // Stages, last first, following the choices (PipeDream's analyze_partitioning). The time is
    // the slowest stage evaluated with PipeDream's own operation order, each stage in the place
    // the recurrence priced it (its cell's machine count decides the memory check).
    pipedream_plan plan;
    std::size_t end = s_count, j = s_count - 1, m = m_last;
    while (true) {
        const detail::pipedream_choice& ch = row.choice[j * row.machines + m];
        const std::size_t first = ch.split_state < 0 ? 0 : static_cast<std::size_t>(ch.split_state) + 1;
        const stage_candidate priced{.first_state = first, .end_state = end, .replicas = ch.replicas,
                                     .devices_before = ch.split_state < 0 ? 0 : ch.left_machines + 1, .devices_total = machines};
        plan.time_per_minibatch_s = std::max(plan.time_per_minibatch_s, final_cost->stage_time_s(priced));
        plan.stages.push_back(detail::describe_stage(graph, built, first, end, ch.replicas));
        if (ch.split_state < 0) break;
        end = first;
        j = static_cast<std::size_t>(ch.split_state);
        m = static_cast<std::size_t>(ch.left_machines);
    }
    std::reverse(plan.stages.begin(), plan.stages.end());
    return detail::pipedream_finish(std::move(plan), s_count, work);
}

/// PipeDream's partitioning of `graph`: its states (build_antichain_states), then
/// pipedream_partition(graph, states, options).
[[nodiscard]] inline pipedream_result pipedream_partition(const layer_graph& graph, const pipedream_options& options) {
    options.validate();
    return pipedream_partition(graph, build_antichain_states(graph), options);
}

}  // namespace dnnplan
