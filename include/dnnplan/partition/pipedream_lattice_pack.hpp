#pragma once
// Real partitions of a single-source graph without PipeDream's states: chains of ideals of the
// kept layers (partition/ideal_lattice.hpp) with replica counts, priced exactly as PipeDream's
// recurrence prices that path, and built by greedy precedence-constrained fills at a threshold
// (UB1 of docs/design/pipedream-wide-graphs.md, section 3.2).
//
// Why the price is PipeDream's. A chain {} < D^1 < ... < D^s = V is a path of PipeDream's state
// DAG (section 1.3: states are the nonempty ideals, P(j) is strict inclusion). Its first stage
// is the recurrence's initialisation, A[0][j][r-1] with j = D^1; every later stage on r replicas
// is the recurrence's last stage at the cell of index (machines up to and including it) - 1,
// whose memory check counts the machines after that cell; with use_fewer_machines the unused
// machines are the cells A[S-1][m] -> A[S-1][m+1] at the end (allowed: S - 1 >= 1). The stage's
// figures are PipeDream's prefix differences over the states D^(i-1) and D^i and its transfers
// use PipeDream's augmented `out` of those states: a path of `antichain_states` holding exactly
// these states, priced by pipedream_stage_cost, gives the time A[0][S-1][M-1] has for this path,
// so the optimum is at most it.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_lattice_bounds.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// A chain of ideals with replica counts: stage i holds cuts[i] minus cuts[i - 1] (cuts[-1] is
/// empty) on replicas[i]; the last cut holds every kept layer.
struct lattice_plan {
    std::vector<layer_bits> cuts{};
    std::vector<std::int32_t> replicas{};

    [[nodiscard]] std::int32_t machines() const noexcept {
        std::int32_t m = 0;
        for (const std::int32_t r : replicas) m += r;
        return m;
    }
};

/// PipeDream's states of a plan's cuts, in chain order (state i = cuts[i]).
[[nodiscard]] inline antichain_states lattice_path_states(const ideal_lattice& lattice, const lattice_plan& plan) {
    antichain_states path;
    path.states.reserve(plan.cuts.size());
    for (const layer_bits& cut : plan.cuts) path.states.push_back(lattice.state_of(cut));
    return path;
}

/// The price of plans with fixed cuts and any replica counts (see the header comment).
class lattice_pricer {
public:
    lattice_pricer(const ideal_lattice& lattice, const wide_setting& setting, const lattice_plan& plan)
        : setting_(setting), path_(lattice_path_states(lattice, plan)), cost_(path_, setting.level()) {}

    [[nodiscard]] const antichain_states& path() const noexcept { return path_; }

    /// Stage i on r replicas after `before` machines (ignored for the first stage, the
    /// initialisation).
    [[nodiscard]] double stage_time_s(std::size_t i, std::int32_t r, std::int32_t before) const noexcept {
        return cost_.stage_time_s({.first_state = i, .end_state = i + 1, .replicas = r,
                                   .devices_before = i == 0 ? 0 : before, .devices_total = setting_.machines});
    }

    /// Every stage's time, stage i after the machines of the stages before it.
    [[nodiscard]] std::vector<double> stage_times_s(const std::vector<std::int32_t>& replicas) const {
        std::vector<double> times(replicas.size());
        std::int32_t before = 0;
        for (std::size_t i = 0; i < replicas.size(); ++i) {
            times[i] = stage_time_s(i, replicas[i], before);
            before += replicas[i];
        }
        return times;
    }

    /// The slowest stage: the plan's time per minibatch.
    [[nodiscard]] double time_s(const std::vector<std::int32_t>& replicas) const {
        const std::vector<double> times = stage_times_s(replicas);
        return times.empty() ? std::numeric_limits<double>::infinity() : *std::max_element(times.begin(), times.end());
    }

private:
    wide_setting setting_;
    antichain_states path_;
    pipedream_stage_cost cost_;
};

/// What a stage may hold: r replicas within t, `after` machines after it (the memory check).
struct stage_limit {
    std::int32_t replicas = 1;
    double time_s = 0.0;
    std::int32_t after = 0;
};

/// The layers a greedy fill adds to a stage, and their sums.
struct stage_fill {
    std::vector<std::size_t> added{};
    double compute_s = 0.0, parameter_bytes = 0.0, activation_bytes = 0.0;
};

/// The frontier of a cut: the kept layers outside it whose kept in-neighbours are all inside.
class lattice_frontier {
public:
    explicit lattice_frontier(const ideal_lattice& lattice) : lattice_(lattice) { reset(lattice.empty_ideal()); }

    /// The frontier of the ideal d.
    void reset(const layer_bits& d) {
        const kept_layers& kept = lattice_.kept();
        cut_ = d;
        done_ = 0;
        pending_.assign(lattice_.layer_count(), 0);
        available_.clear();
        for (const std::size_t l : kept.order) {
            if (has_layer(d, l)) {
                ++done_;
                continue;
            }
            for (const std::size_t p : kept.pred[l])
                if (!has_layer(d, p)) ++pending_[l];
            if (pending_[l] == 0) available_.push_back(l);
        }
    }

    [[nodiscard]] const layer_bits& cut() const noexcept { return cut_; }
    [[nodiscard]] bool complete() const noexcept { return done_ == lattice_.kept_count(); }
    [[nodiscard]] std::size_t remaining() const noexcept { return lattice_.kept_count() - done_; }
    [[nodiscard]] const std::vector<std::size_t>& available() const noexcept { return available_; }

    /// A precedence-constrained knapsack fill (section 3.2, UB1): the most compute that keeps the
    /// stage within `limit`, only layers of `within` when given. A depth-first search that always
    /// first takes the largest available layer that fits (compute, then the first found): its
    /// first leaf is the greedy largest-first fill; then up to `retries` times it leaves out a
    /// layer it took, deepest first, and descends again. The frontier itself is left as it was.
    [[nodiscard]] stage_fill fill(const wide_setting& s, const stage_limit& limit, const layer_bits* within = nullptr,
                                  std::int64_t retries = 0) {
        search_ = {.setting = &s, .limit = &limit, .within = within, .retries = retries};
        best_ = {};
        current_ = {};
        excluded_.assign(lattice_.layer_count(), 0);
        std::vector<std::size_t> avail = available_;
        descend(avail);
        return best_;
    }

    /// The kept layers outside the cut and their sums: what a last stage holds.
    [[nodiscard]] stage_fill rest() const {
        const layer_figures& f = lattice_.figures();
        stage_fill out;
        for (const std::size_t l : lattice_.kept().order)
            if (!has_layer(cut_, l)) {
                out.added.push_back(l);
                out.compute_s += f.compute[l];
                out.parameter_bytes += f.parameter[l];
                out.activation_bytes += f.activation[l];
            }
        return out;
    }

    // PipeDream's stage time (C + q_r W) / r within t (transfers aside: the plan's price has
    // them), and its memory check (Act + W) ceil(after / r) <= memory.
    [[nodiscard]] static bool fits(const wide_setting& s, const stage_limit& limit, double c, double w, double a) {
        if (s.compute_time_s(c, w, limit.replicas) > limit.time_s) return false;
        if (!s.memory_bytes) return true;
        return (a + w) * std::ceil(static_cast<double>(limit.after) / static_cast<double>(limit.replicas)) <= *s.memory_bytes;
    }

    /// Moves the cut past the layers of a fill.
    void commit(const std::vector<std::size_t>& added) {
        const kept_layers& kept = lattice_.kept();
        for (const std::size_t l : added) {
            add_layer(cut_, l);
            ++done_;
            available_.erase(std::find(available_.begin(), available_.end(), l));
            for (const std::size_t n : kept.succ[l])
                if (--pending_[n] == 0) available_.push_back(n);
        }
    }

private:
    struct search_state {
        const wide_setting* setting = nullptr;
        const stage_limit* limit = nullptr;
        const layer_bits* within = nullptr;
        std::int64_t retries = 0;
    };

    // The largest available layer that fits (not left out, within the allowed ones); none: size().
    [[nodiscard]] std::size_t pick(const std::vector<std::size_t>& avail) const {
        const layer_figures& f = lattice_.figures();
        std::size_t best = avail.size();
        for (std::size_t i = 0; i < avail.size(); ++i) {
            const std::size_t l = avail[i];
            if (excluded_[l] != 0 || (search_.within && !has_layer(*search_.within, l))) continue;
            if (best < avail.size() && f.compute[l] <= f.compute[avail[best]]) continue;
            if (fits(*search_.setting, *search_.limit, current_.compute_s + f.compute[l], current_.parameter_bytes + f.parameter[l],
                     current_.activation_bytes + f.activation[l]))
                best = i;
        }
        return best;
    }

    // One node of the fill's search: take the pick and descend; then, while retries are left,
    // leave it out and descend again. A leaf (nothing fits) is a candidate fill.
    void descend(std::vector<std::size_t>& avail) {
        const std::size_t i = pick(avail);
        if (i == avail.size()) {
            if (current_.compute_s > best_.compute_s || (current_.compute_s == best_.compute_s && current_.added.size() > best_.added.size()))
                best_ = current_;
            return;
        }
        const std::size_t l = avail[i];
        const layer_figures& f = lattice_.figures();
        std::vector<std::size_t> next = avail;
        next[i] = next.back();
        next.pop_back();
        for (const std::size_t n : lattice_.kept().succ[l])
            if (--pending_[n] == 0) next.push_back(n);
        const stage_fill sums{.compute_s = current_.compute_s, .parameter_bytes = current_.parameter_bytes,
                              .activation_bytes = current_.activation_bytes};
        current_.added.push_back(l);
        current_.compute_s += f.compute[l];
        current_.parameter_bytes += f.parameter[l];
        current_.activation_bytes += f.activation[l];
        descend(next);
        current_.added.pop_back();
        current_.compute_s = sums.compute_s;  // restored, not subtracted: no rounding drift
        current_.parameter_bytes = sums.parameter_bytes;
        current_.activation_bytes = sums.activation_bytes;
        for (const std::size_t n : lattice_.kept().succ[l]) ++pending_[n];
        if (search_.retries <= 0) return;
        --search_.retries;
        excluded_[l] = 1;
        descend(avail);
        excluded_[l] = 0;
    }

    const ideal_lattice& lattice_;
    layer_bits cut_;
    std::size_t done_ = 0;
    std::vector<std::uint32_t> pending_;
    std::vector<std::size_t> available_;
    search_state search_;
    stage_fill best_, current_;
    std::vector<char> excluded_;
};

/// Under the memory check, for each first stage's cap (wide_setting::first_stage_memory_caps), the
/// ideal of most compute found within it by the fill's depth-first search (no time limit),
/// `retries` split evenly over the caps. Where the memory holds the first stage, the packing's
/// fills at its thresholds stop early (1,024 retries each): on nasnetalarge with an eighth of its
/// bytes on 2 machines they end at 51.08 ms of compute, this search (65,536 retries) at 52.76 ms;
/// the most there is 55.63 ms (docs/solvers/pipeline_plan.md). With exact points the window
/// relaxation finds the most (window_relaxation::first_stages).
[[nodiscard]] inline std::vector<first_stage> stash_capped_first_stages(const ideal_lattice& lattice, const wide_setting& s, std::int64_t retries) {
    const auto caps = s.first_stage_memory_caps();
    std::vector<first_stage> out;
    if (caps.empty()) return out;
    lattice_frontier frontier(lattice);
    const std::int64_t each = retries / static_cast<std::int64_t>(caps.size());
    for (const auto& [r, cap] : caps) {
        frontier.reset(lattice.empty_ideal());
        const stage_limit limit{.replicas = r, .time_s = std::numeric_limits<double>::infinity(), .after = s.machines - r};
        const stage_fill f = frontier.fill(s, limit, nullptr, each);
        if (f.added.empty() || f.added.size() == lattice.kept_count()) continue;
        first_stage stage{.replicas = r, .cut = lattice.empty_ideal()};
        for (const std::size_t l : f.added) add_layer(stage.cut, l);
        out.push_back(std::move(stage));
    }
    return out;
}

}  // namespace dnnplan::detail
