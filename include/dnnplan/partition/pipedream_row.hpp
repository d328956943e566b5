#pragma once
// One start row of PipeDream's dynamic program (Narayanan et al., SOSP 2019; its optimizer's
// optimizer_graph_hierarchical.py, as the reference note describes it, sections 4-5), every cell
// exact, without PipeDream's O(S^2 M^2) inner loops: for every pair of states (k, j) the stage's
// time is computed once for every replica count, and the (min, max) convolution of the left
// part's row with it is taken by a two-pointer sweep wherever the stage's time does not increase
// with replicas (an exchange argument makes this exact; see docs/solvers/pipeline_plan.md), with
// bound-pruned loops elsewhere. pipedream_partition() (partition/pipedream.hpp) runs it level by
// level.

#include <dnnplan/model/concepts.hpp>
#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace dnnplan {

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
// it (the node budget: a bounded search that retries refills rows). run() returns false when
// either stops it, the row then unfinished; true: the row is complete.
//
// With a finite upper bound (row 0 of a single level only: compute must be additive), only
// partitions faster than it are sought, and a cell (j, m) can lie on one only inside a band: its
// prefix needs C_j / (m + 1) < bound (every stage takes at least its compute over its replicas,
// so a slowest stage is at least the total over the machines), and the states after j need
// (C_last - C_j) < bound (M - m - 1) on the machines left. Cells outside keep their
// initialisation; candidates start at the bound.
class pipedream_row_search {
public:
    pipedream_row_search(const pipedream_stage_cost& cost, const antichain_states& states,
                         const std::vector<std::vector<bool>>* is_pred, std::size_t first, std::int32_t machines,
                         bool straight, bool fewer, pipedream_row& row, pipedream_scratch& scratch,
                         pipedream_counters& counters, double upper_bound, std::int64_t max_state_pairs,
                         std::int64_t max_nodes)
        : cost_(cost), states_(states), is_pred_(is_pred), first_(first), machines_(machines), straight_(straight),
          fewer_(fewer), row_(row), scratch_(scratch), counters_(counters), upper_bound_(upper_bound),
          max_state_pairs_(max_state_pairs), max_nodes_(max_nodes), s_count_(cost.num_states()),
          m_count_(static_cast<std::size_t>(machines)),
          max_replicas_(straight ? 1 : (m_count_ > 1 ? m_count_ - 1 : 1)),
          memory_(cost.level().memory_bytes.has_value()), banded_(std::isfinite(upper_bound)),
          filtered_(banded_ && m_count_ >= 2), total_compute_(banded_ ? cost.compute_s(0, s_count_) : 0.0),
          max_replicas_d_(static_cast<double>(max_replicas_)) {}

    [[nodiscard]] bool run() {
        prepare();
        for (std::size_t j = first_; j < s_count_; ++j) {
            if (stopped_) return false;
            if (!fill_state(j)) return false;
        }
        return !stopped_;
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();
    static constexpr double margin = 1.0 + 1e-9;  // rounding: never cut a cell the exact bound would keep

    // One pair (k, j) being merged into j's cells: the left row k, the stage's stashed bytes,
    // the first replica count from which its time no longer rises, and the sweep's crossing.
    struct split {
        std::size_t k = 0;
        double stashed = 0.0;
        std::size_t mono_from = 0;
        const double* left = nullptr;
        const double* left_min = nullptr;
        const std::int32_t* left_arg = nullptr;
        std::size_t cross = 1;
    };

    // The row reset, 1 / r and q_r = 4 (r - 1) / (B r) tabulated, and the banded search's bits.
    void prepare() {
        row_.reset(s_count_, m_count_);
        scratch_.stage.assign(max_replicas_ + 1, inf);
        scratch_.inverse.assign(max_replicas_ + 1, inf);
        scratch_.sync_factor.assign(max_replicas_ + 1, 0.0);
        for (std::size_t r = 1; r <= max_replicas_; ++r) {
            const double rd = static_cast<double>(r);
            scratch_.inverse[r] = 1.0 / rd;
            scratch_.sync_factor[r] = 4.0 * (rd - 1.0) / (cost_.level().bandwidth_bytes_per_s * rd);
        }
        scratch_.stage_prefix_min.assign(max_replicas_ + 1, inf);
        scratch_.best.assign(m_count_, inf);
        scratch_.best_choice.assign(m_count_, pipedream_choice{});
        // The banded search keeps a bit per state k telling whether a split after k can still lie
        // on a partition faster than the bound: not when the transfer out of k alone, on the most
        // replicas, reaches the bound, nor (once k's row is done) when every entry of k's row does.
        // Predecessors are then read a word of bits at a time, the useless ones skipped unseen.
        if (filtered_) {
            scratch_.useful.assign((s_count_ + 63) / 64, 0);
            for (std::size_t k = 0; k < s_count_; ++k)
                if (cost_.output_transfer_s(k) < upper_bound_ * max_replicas_d_ * margin)
                    scratch_.useful[k / 64] |= std::uint64_t{1} << (k % 64);
        }
    }

    // State j's cells: PipeDream's initialisation, then the best split of every cell in the
    // band. False when the node budget stops the row.
    [[nodiscard]] bool fill_state(std::size_t j) {
        if (filtered_ && j > first_ && row_.prefix_min[(j - 1) * m_count_ + m_count_ - 2] >= upper_bound_)
            scratch_.useful[(j - 1) / 64] &= ~(std::uint64_t{1} << ((j - 1) % 64));
        initialise(j);
        if (j == first_ || m_count_ == 1) {
            row_.finish(j);
            return true;
        }
        if (max_nodes_ > 0 &&
            counters_.cells + counters_.threshold_decisions + static_cast<std::int64_t>(m_count_) - 1 > max_nodes_)
            return false;
        counters_.cells += static_cast<std::int64_t>(m_count_) - 1;  // m = 1..M-1
        std::fill(scratch_.best.begin(), scratch_.best.end(), banded_ ? upper_bound_ : inf);
        std::fill(scratch_.best_choice.begin(), scratch_.best_choice.end(), pipedream_choice{});
        if (set_band(j)) {
            visit_predecessors(j);
            settle(j);
        }
        row_.finish(j);
        return true;
    }

    // PipeDream's initialisation: states first..j as one stage on m + 1 machines.
    void initialise(std::size_t j) {
        const std::size_t init_machines = straight_ ? 1 : m_count_;
        for (std::size_t m = 0; m < init_machines; ++m) {
            const stage_candidate one{.first_state = first_, .end_state = j + 1, .replicas = static_cast<std::int32_t>(m + 1),
                                      .devices_before = 0, .devices_total = machines_};
            row_.at(j, m) = cost_.stage_time_s(one);
            row_.choice[j * m_count_ + m] = {.split_state = -1, .left_machines = 0, .replicas = static_cast<std::int32_t>(m + 1)};
        }
    }

    // The band [m_lo_, m_hi_] of j's cells worth filling (all of 1..M-1 without a bound); false
    // when it is empty.
    [[nodiscard]] bool set_band(std::size_t j) {
        m_lo_ = 1;
        m_hi_ = m_count_ - 1;
        if (!banded_) return true;
        const double cj = cost_.compute_s(0, j + 1);
        while (m_lo_ <= m_hi_ && cj > upper_bound_ * static_cast<double>(m_lo_ + 1) * margin) ++m_lo_;
        if (j + 1 < s_count_)
            while (m_hi_ >= m_lo_ && (m_hi_ + 1 == m_count_ ||
                                      total_compute_ - cj > upper_bound_ * static_cast<double>(m_count_ - m_hi_ - 1) * margin))
                --m_hi_;
        return m_lo_ <= m_hi_;
    }

    // visit(j, k) for the predecessors k of j; in the banded search only those still useful.
    void visit_predecessors(std::size_t j) {
        if (!filtered_) {
            for_each_state_predecessor(states_, j, [&](std::size_t k) { visit(j, k); });
            return;
        }
        // (A stage ending at j < S - 1 pays j's transfer too.)
        if (!(j + 1 == s_count_ || cost_.output_transfer_s(j) < upper_bound_ * max_replicas_d_ * margin)) return;
        const std::uint64_t* preds = states_.chain ? nullptr : states_.predecessor_sets.row_words(j);
        for (std::size_t w = 0; w * 64 < j; ++w) {
            std::uint64_t word = scratch_.useful[w] & (preds ? preds[w] : ~std::uint64_t{0});
            if (w * 64 + 64 > j) word &= (std::uint64_t{1} << (j - w * 64)) - 1;  // k < j
            for (; word != 0; word &= word - 1) visit(j, w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
        }
    }

    // The splits of j's cells after state k: row k's entry on the machines left, then the stage
    // of states k + 1..j.
    void visit(std::size_t j, std::size_t k) {
        if (k < first_) return;  // A[first][k] is None for k < first
        if (first_ > 0 && (states_.chain ? k < first_ - 1 : (*is_pred_)[first_ - 1][k])) return;
        const double c = cost_.compute_s(k + 1, j + 1);
        if (std::isinf(c)) return;  // PipeDream: last_stage_time is None
        const double transfer = cost_.transfer_bytes_per_s(k, j);
        if (banded_ && !may_beat_bound(k, c, transfer)) return;
        if (!count_state_pair()) return;
        const double w = cost_.parameter_bytes(k + 1, j + 1);
        split sp{.k = k, .stashed = cost_.activation_bytes(k + 1, j + 1) + w, .mono_from = tabulate_stage(c, w, transfer),
                 .left = &row_.time[k * m_count_], .left_min = &row_.prefix_min[k * m_count_],
                 .left_arg = &row_.prefix_argmin[k * m_count_], .cross = 1};
        for (std::size_t m = m_lo_; m <= m_hi_; ++m) improve_cell(sp, m);
    }

    // Every candidate is at least the left row's best on <= m_hi - 1 machines and at least
    // max(c, X) / m_hi (a stage takes at least its compute, and its transfers, over its replicas).
    [[nodiscard]] bool may_beat_bound(std::size_t k, double c, double transfer) const noexcept {
        if (row_.prefix_min[k * m_count_ + m_hi_ - 1] >= upper_bound_) return false;
        return !(std::max(c, transfer) >= upper_bound_ * static_cast<double>(std::min(m_hi_, max_replicas_)) * margin);
    }

    // Counts a state pair against the evaluation budget; false (and the row stopped) over it.
    [[nodiscard]] bool count_state_pair() noexcept {
        if (stopped_ || (max_state_pairs_ > 0 && counters_.state_pairs >= max_state_pairs_)) {
            stopped_ = true;
            return false;
        }
        ++counters_.state_pairs;
        return true;
    }

    // The stage's time for every replica count (memory aside) and its running minimum; returns
    // where it stops rising. A straight pipeline has one replica per stage: nothing to sweep.
    // Only replica counts up to the band's top machine count matter for this j.
    [[nodiscard]] std::size_t tabulate_stage(double c, double w, double transfer) {
        auto& s = scratch_.stage;
        auto& s_min = scratch_.stage_prefix_min;
        const std::size_t r_top = std::min(m_hi_, max_replicas_);
        std::size_t mono_from = straight_ ? r_top + 1 : r_top;
        // (C + 4 (r - 1) W / (B r)) / r and the transfers X / r, as max(C + W q_r, X) / r
        // with q_r and 1 / r tabulated: a few ulps from PipeDream's operation order, which
        // the chosen partition's exact re-evaluation removes from the reported time.
        for (std::size_t r = 1; r <= r_top; ++r) {
            s[r] = std::max(c + w * scratch_.sync_factor[r], transfer) * scratch_.inverse[r];
            s_min[r] = r == 1 ? s[r] : std::min(s_min[r - 1], s[r]);
        }
        while (mono_from > 1 && mono_from <= r_top && s[mono_from - 1] >= s[mono_from]) --mono_from;
        return mono_from;
    }

    // Cell (j, m): the split after sp.k on its best replica counts, if it beats the cell's best.
    void improve_cell(split& sp, std::size_t m) {
        const std::size_t top = std::min(m, max_replicas_);
        // Nothing here can beat the best: every left part is >= its row's minimum over <= m - 1
        // machines, every stage time >= its minimum over <= m replicas.
        if (sp.left_min[m - 1] >= scratch_.best[m] || scratch_.stage_prefix_min[top] >= scratch_.best[m]) return;
        const auto after = static_cast<std::int32_t>(m_count_ - (m + 1));  // machines after this stage
        try_rising_replicas(sp, m, std::min(top, sp.mono_from - 1), after);
        if (top < sp.mono_from) return;
        // Replica counts r in [lo, top] where the stage's time does not rise and it fits
        // (fitting only gets easier with more replicas). Any (u, r) there is no better
        // than (u*, m - u*) with u* the best left row entry over <= u machines, so the
        // best candidate is min over r of max(left_min[m - r], s[r]): a non-decreasing
        // and a non-increasing sequence, whose max is least at their crossing.
        std::size_t lo = std::max<std::size_t>(sp.mono_from, 1);
        std::size_t a = 0;  // the first r in [lo, top] with left_min[m - r] >= s[r], else top
        if (!memory_) {
            a = sweep_crossing(sp, m, top, lo);
        } else {
            const std::optional<std::size_t> found = bisect_crossing(sp, m, top, after, lo);
            if (!found) return;
            a = *found;
        }
        ++counters_.swept_cells;
        try_crossing(sp, m, lo, a);
    }

    // Replica counts 1..plain_top, where the stage's time still rises: one by one.
    void try_rising_replicas(const split& sp, std::size_t m, std::size_t plain_top, std::int32_t after) {
        const auto& s = scratch_.stage;
        double& b = scratch_.best[m];
        for (std::size_t r = 1; r <= plain_top; ++r) {
            if (s[r] >= b) continue;
            const double l = sp.left[m - r];
            if (l >= b) continue;
            ++counters_.plain_candidates;
            if (!cost_.fits(sp.stashed, after, static_cast<std::int32_t>(r))) continue;
            b = std::max(l, s[r]);
            scratch_.best_choice[m] = {.split_state = static_cast<std::int32_t>(sp.k),
                                       .left_machines = static_cast<std::int32_t>(m - r), .replicas = static_cast<std::int32_t>(r)};
        }
    }

    // Without a memory limit lo is the same for every m, and the crossing only moves right as m
    // grows (left_min[m - r] falls with m): one sweep per pair.
    [[nodiscard]] std::size_t sweep_crossing(split& sp, std::size_t m, std::size_t top, std::size_t lo) const {
        const auto& s = scratch_.stage;
        sp.cross = std::max(sp.cross, lo);
        while (sp.cross < top && sp.left_min[m - sp.cross] < s[sp.cross]) ++sp.cross;
        return std::min(sp.cross, top);
    }

    // With a memory limit: lo raised to the fewest replicas that fit, then the crossing by
    // bisection; none when the stage does not fit even on `top` replicas.
    [[nodiscard]] std::optional<std::size_t> bisect_crossing(const split& sp, std::size_t m, std::size_t top,
                                                             std::int32_t after, std::size_t& lo) const {
        const auto& s = scratch_.stage;
        if (!cost_.fits(sp.stashed, after, static_cast<std::int32_t>(top))) return std::nullopt;
        if (!cost_.fits(sp.stashed, after, static_cast<std::int32_t>(lo))) {
            std::size_t no = lo, yes = top;
            while (yes - no > 1) {
                const std::size_t mid = no + (yes - no) / 2;
                (cost_.fits(sp.stashed, after, static_cast<std::int32_t>(mid)) ? yes : no) = mid;
            }
            lo = yes;
        }
        std::size_t no = lo, yes = top;
        if (sp.left_min[m - top] < s[top]) return top;
        if (sp.left_min[m - lo] >= s[lo]) return lo;
        while (yes - no > 1) {
            const std::size_t mid = no + (yes - no) / 2;
            (sp.left_min[m - mid] >= s[mid] ? yes : no) = mid;
        }
        return yes;
    }

    // The candidates at the crossing a and just before it.
    void try_crossing(const split& sp, std::size_t m, std::size_t lo, std::size_t a) {
        const auto& s = scratch_.stage;
        double& b = scratch_.best[m];
        for (const std::size_t r : {a - (a > lo ? 1 : 0), a}) {
            if (std::isinf(sp.left_min[m - r])) continue;
            const auto u = static_cast<std::size_t>(sp.left_arg[m - r]);
            const std::size_t reps = m - u;
            const double cand = std::max(sp.left[u], s[reps]);
            if (cand < b) {
                b = cand;
                scratch_.best_choice[m] = {.split_state = static_cast<std::int32_t>(sp.k),
                                           .left_machines = static_cast<std::int32_t>(u), .replicas = static_cast<std::int32_t>(reps)};
            }
        }
    }

    // j's cells take the best split found, or (with use_fewer_machines) the cell on one machine
    // fewer, when either beats the initialisation.
    void settle(std::size_t j) {
        for (std::size_t m = 1; m < m_count_; ++m) {
            double& cell = row_.at(j, m);
            pipedream_choice& ch = row_.choice[j * m_count_ + m];
            if (fewer_ && row_.at(j, m - 1) < cell) {
                cell = row_.at(j, m - 1);
                ch = row_.choice[j * m_count_ + m - 1];
            }
            if (scratch_.best_choice[m].replicas > 0 && scratch_.best[m] < cell) {
                cell = scratch_.best[m];
                ch = scratch_.best_choice[m];
            }
        }
    }

    const pipedream_stage_cost& cost_;
    const antichain_states& states_;
    const std::vector<std::vector<bool>>* is_pred_;
    std::size_t first_;
    std::int32_t machines_;
    bool straight_, fewer_;
    pipedream_row& row_;
    pipedream_scratch& scratch_;
    pipedream_counters& counters_;
    double upper_bound_;
    std::int64_t max_state_pairs_, max_nodes_;
    std::size_t s_count_, m_count_, max_replicas_;
    bool memory_, banded_, filtered_;
    double total_compute_, max_replicas_d_;
    bool stopped_ = false;
    std::size_t m_lo_ = 1, m_hi_ = 0;  // the band of the state being filled
};

// The row search (pipedream_row_search) of row `first`; false when a budget stopped it.
[[nodiscard]] inline bool solve_pipedream_row(const pipedream_stage_cost& cost, const antichain_states& states,
                                              const std::vector<std::vector<bool>>* is_pred, std::size_t first,
                                              std::int32_t machines, bool straight, bool fewer, pipedream_row& row,
                                              pipedream_scratch& scratch, pipedream_counters& counters,
                                              double upper_bound = std::numeric_limits<double>::infinity(),
                                              std::int64_t max_state_pairs = 0, std::int64_t max_nodes = 0) {
    return pipedream_row_search(cost, states, is_pred, first, machines, straight, fewer, row, scratch, counters, upper_bound,
                                max_state_pairs, max_nodes)
        .run();
}

}  // namespace detail

}  // namespace dnnplan
