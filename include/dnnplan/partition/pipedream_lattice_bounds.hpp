#pragma once
// Lower bounds on PipeDream's answer A[0][S-1][M-1] for one level of a single-source graph, which
// need no state of PipeDream's (docs/design/pipedream-wide-graphs.md, section 3.1). Each is a
// relaxation: every chain of ideals with replica counts that PipeDream's recurrence prices at T
// passes the bound's test at T, so a T that fails the test is below the optimum. They are
// reported rounded down by 1e-12 relative (section 3.3, "outward rounding"), so that rounding in
// the tests can never lift a bound above the optimum.
//
// Stage times are PipeDream's (reference note, section 3; partition/pipedream_cost.hpp):
//     (C + q_r W) / r,  q_r = 4 (r - 1) / (B r),
// plus transfers and the memory check, which only add to it or forbid it; LB0 and LB1 leave
// them out, the window bound uses both (below). For r >= 2 the time falls with r
// (docs/solvers/pipeline_plan.md, fact 1; the header comment of partition/pipedream_chain.hpp).

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_bounds.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_lattice_closures.hpp>
#include <dnnplan/partition/pipedream_lattice_cuts.hpp>
#include <dnnplan/partition/pipedream_lattice_knapsack.hpp>
#include <dnnplan/partition/pipedream_lattice_points.hpp>
#include <dnnplan/partition/pipedream_types.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The flags of a one-level run as the wide path reads them.
struct wide_setting {
    std::int32_t machines = 1;
    double bandwidth_bytes_per_s = 1e9;
    bool straight = false;
    bool fewer = false;
    std::optional<double> memory_bytes{};
    std::optional<double> activation_compression_ratio{};

    [[nodiscard]] static wide_setting of(const pipedream_options& o) {
        return {.machines = o.machines.front(),
                .bandwidth_bytes_per_s = o.bandwidths_bytes_per_s.empty() ? 1e9 : o.bandwidths_bytes_per_s.front(),
                .straight = o.straight_pipeline,
                .fewer = o.use_fewer_machines,
                .memory_bytes = o.use_memory_constraint ? std::optional<double>(o.memory_bytes) : std::nullopt,
                .activation_compression_ratio = o.activation_compression_ratio};
    }
    [[nodiscard]] pipedream_level_options level() const {
        return {.bandwidth_bytes_per_s = bandwidth_bytes_per_s, .activation_compression_ratio = activation_compression_ratio,
                .memory_bytes = memory_bytes, .machines_within = 1.0};
    }
    /// q_r = 4 (r - 1) / (B r): the synchronisation bytes' factor of a stage on r replicas.
    [[nodiscard]] double sync_factor(std::int32_t r) const noexcept {
        const double rd = r;
        return 4.0 * (rd - 1.0) / (bandwidth_bytes_per_s * rd);
    }
    /// The most output bytes at a cut next to a stage on r replicas within t: its transfer there
    /// takes 2 out / (B r R) (pipedream_cost.hpp, transfers_bound); +inf without a ratio.
    [[nodiscard]] double output_limit_bytes(std::int32_t r, double t) const noexcept {
        if (!activation_compression_ratio) return std::numeric_limits<double>::infinity();
        return t * bandwidth_bytes_per_s * static_cast<double>(r) * *activation_compression_ratio / 2.0;
    }
    /// PipeDream's (C + q_r W) / r, transfers and memory aside.
    [[nodiscard]] double compute_time_s(double c, double w, std::int32_t r) const noexcept {
        return (c + sync_factor(r) * w) / static_cast<double>(r);
    }
    /// Under the memory check (without use_fewer_machines) a first stage on r < M replicas holds
    /// its stashed bytes ceil((M - r) / r) = (M - 1) / r times: for each count of copies, the
    /// fewest replicas with it (1 only, on a straight pipeline) and the stage's cap, memory / copies.
    [[nodiscard]] std::vector<std::pair<std::int32_t, double>> first_stage_memory_caps() const {
        std::vector<std::pair<std::int32_t, double>> caps;
        if (!memory_bytes || fewer) return caps;
        for (std::int32_t r = 1, last = 0; r < (straight ? std::min(machines, 2) : machines); ++r)
            if (const std::int32_t copies = (machines - 1) / r; copies != last) caps.emplace_back(r, *memory_bytes / copies), last = copies;
        return caps;
    }
};

/// A first stage under the memory check: its ideal and its replicas (the fewest with its count of
/// memory copies; wide_setting::first_stage_memory_caps).
struct first_stage {
    std::int32_t replicas = 1;
    layer_bits cut{};
};

inline constexpr double wide_bound_rounding = 1.0 - 1e-12;

/// A lower bound on the output bytes of every ideal whose compute lies in [lo_s, hi_s].
struct cut_output_step {
    double lo_s = 0.0;
    double hi_s = 0.0;
    double bytes = 0.0;
};

/// The window bound enumerates the ideals' compute sums when there are at most this many
/// (inception_v3: 221,564; the nasnets' 1e11-1e12 stop at it and use the windows).
inline constexpr std::size_t wide_enumerated_ideals = 300000;

/// LB0: the larger of C / M (every stage takes at least its compute over its replicas) and each
/// layer's least time on its own (pipedream_layer_lower_bound).
[[nodiscard]] inline double lattice_compute_bound(const layer_graph& graph, const ideal_lattice& lattice, const wide_setting& s) {
    antichain_states removed;
    for (std::size_t i = 0; i < graph.size(); ++i)
        if (lattice.kept().removed[i]) removed.removed_layers.push_back(i);
    const double layer = pipedream_layer_lower_bound(graph, removed, s.bandwidth_bytes_per_s, s.straight ? 1 : s.machines);
    return std::max(lattice.total_compute_s() / static_cast<double>(s.machines), layer) * wide_bound_rounding;
}

/// rho(c, w, T): the fewest replicas r in [2, max_r] on which a stage holding (c, w) runs within
/// t (the time falls with r >= 2, so by bisection); max_r + 1 when none does.
[[nodiscard]] inline std::int32_t fewest_replicas(const wide_setting& s, double c, double w, double t, std::int32_t max_r) {
    if (max_r < 2 || s.compute_time_s(c, w, max_r) > t) return max_r + 1;
    std::int32_t no = 1, yes = max_r;
    while (yes - no > 1) {
        const std::int32_t mid = no + (yes - no) / 2;
        (s.compute_time_s(c, w, mid) <= t ? yes : no) = mid;
    }
    return yes;
}

/// LB1's test at T, machine counting (section 3.1): a stage on r replicas within T has
/// r T >= sum over its layers of (c_l + q_r w_l), and a layer with c_l > T sits on r >= rho_l(T)
/// replicas, so q_r >= q_rho (q_r rises with r). Summed over the stages:
///     M T >= sum_l (c_l + [c_l > T] q_rho_l(T) w_l).
/// False: no partition runs within T.
[[nodiscard]] inline bool machine_count_admits(const ideal_lattice& lattice, const wide_setting& s, double t) {
    const auto& f = lattice.figures();
    double work = 0.0;
    for (const std::size_t l : lattice.kept().order) {
        const double c = f.compute[l];
        if (c <= t) {
            work += c;
            continue;
        }
        if (s.straight) return false;
        const std::int32_t rho = fewest_replicas(s, c, f.parameter[l], t, s.machines);
        if (rho > s.machines) return false;
        work += c + s.sync_factor(rho) * f.parameter[l];
    }
    return work <= static_cast<double>(s.machines) * t;
}

/// The cut positions a straight pipeline's test uses: no ideal has a compute sum inside
/// (g_l, e_l), e_l = C(down-set of l) and g_l = C - C(up-set of l) (section 2, "Layer windows":
/// an ideal holding l holds its down-set, one without l holds none of its up-set). The union of
/// these open intervals, merged and sorted, each shrunk by 1e-12 C at both ends against rounding.
[[nodiscard]] inline std::vector<std::pair<double, double>> forbidden_compute_windows(const ideal_lattice& lattice) {
    const double slack = 1e-12 * lattice.total_compute_s();
    std::vector<std::pair<double, double>> windows;
    for (const std::size_t l : lattice.kept().order) {
        const auto w = lattice.window_of(l, slack);
        if (w.last_without < w.first_with) windows.emplace_back(w.last_without, w.first_with);
    }
    std::sort(windows.begin(), windows.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& w : windows) {
        if (!merged.empty() && w.first < merged.back().second) merged.back().second = std::max(merged.back().second, w.second);
        else merged.push_back(w);
    }
    return merged;
}

/// The farthest cut position within `to` (a point outside every forbidden window), or `to`.
[[nodiscard]] inline double farthest_allowed(const std::vector<std::pair<double, double>>& windows, double to) {
    // The window holding `to`, if any: the last one starting below it.
    const auto it = std::upper_bound(windows.begin(), windows.end(), std::make_pair(to, std::numeric_limits<double>::infinity()));
    if (it != windows.begin() && std::prev(it)->first < to && to < std::prev(it)->second) return std::prev(it)->first;
    return to;
}

/// The window bound (section 3.1's window relaxation, with single points for positions): the
/// stages are cuts 0 = p_0 < p_1 < ... < p_k = C, every p_i the compute of an ideal and hence
/// outside the forbidden windows. A stage (p, p'] holds every layer l with p < e_l (no ideal of
/// compute p holds l) and p' > g_l (every ideal of compute p' does): its parameters W are at
/// least theirs, W(p, p'), and on r replicas within T it needs
///     (p' - p) + q_r W(p, p') <= r T.
/// W(p, p') grows with p' and falls with p, so reaching farther never hurts: reach[m], the
/// farthest cut at most m machines can reach, is the largest over r of the farthest feasible
/// allowed point from reach[m - r]; a straight pipeline has r = 1 only. As in LB1, a layer with
/// c_l > T needs rho_l(T) replicas or more: a stage on fewer must stop at or before g_l if it
/// may not start past it (p < e_l). Not reaching C on M machines: nothing runs within T.
///
/// The transfers and the memory check restrict it too (a plan on exactly M machines;
/// pipedream_cost.hpp): a stage on r replicas after k > 0 machines waits 2 out / (B r R) for the
/// output of the cut it starts at and (unless it ends the graph) of the cut it ends at, so both
/// cuts hold an ideal with out <= T B r R / 2. The plan's cut after k machines is at most
/// reach[k] and is such a point, so it is at most the last such point within reach[k], where the
/// stage may start instead (reaching farther still never hurts); it ends at such a point too.
/// "Such a point": with exact points, one whose least output (a lower bound) passes; with the
/// windows alone, one where the least vertex cut between the forced layers passes
/// (pipedream_lattice_cuts.hpp). Without use_fewer_machines the stage has M - k - r machines after it, so
/// its stashed bytes times ceil((M - k - r) / r) are within the memory: with exact points at
/// least stashed_from_bytes[y] - stashed_upto_bytes[p] of them; in both forms at least the forced
/// layers' bytes plus a fractional knapsack of the rest of the stage's compute
/// (pipedream_lattice_knapsack.hpp; `filled_reach` below), and with the windows alone at least a
/// Lagrangian bound over the ideals the two positions allow (pipedream_lattice_closures.hpp).
class window_relaxation {
public:
    /// `enumerated_ideals`: the most ideals enumerated for exact points (0: the windows only).
    window_relaxation(const ideal_lattice& lattice, const wide_setting& setting, std::size_t enumerated_ideals = wide_enumerated_ideals)
        : setting_(setting), windows_(forbidden_compute_windows(lattice)), total_(lattice.total_compute_s()) {
        const auto& f = lattice.figures();
        const double slack = 1e-12 * total_;  // the forced sets shrunk against rounding
        for (const std::size_t l : lattice.kept().order) {
            const auto cut = lattice.window_of(l, slack);
            const layer_window w{.first_with = cut.first_with, .last_without = cut.last_without,
                                 .parameter_bytes = f.parameter[l], .stashed_bytes = f.parameter[l] + f.activation[l],
                                 .compute_s = f.compute[l]};
            if (w.parameter_bytes > 0.0 || (setting_.memory_bytes && f.activation[l] > 0.0)) layers_.push_back(w);
            heavy_.push_back(w);
        }
        std::sort(layers_.begin(), layers_.end(), [](const auto& a, const auto& b) { return a.last_without < b.last_without; });
        std::sort(heavy_.begin(), heavy_.end(), [](const auto& a, const auto& b) { return a.compute_s > b.compute_s; });
        if (enumerated_ideals > 0) {
            const auto caps = setting_.first_stage_memory_caps();
            std::vector<double> bytes;
            for (const auto& [r, cap] : caps) bytes.push_back(cap);
            ideal_compute_enumerator ideals(lattice, enumerated_ideals, std::move(bytes));
            if (ideals.complete()) {
                ideal_count_ = ideals.ideal_count();
                for (std::size_t j = 0; j < caps.size(); ++j)
                    if (ideals.most_compute_within()[j].first > 0.0) first_stages_.push_back({caps[j].first, ideals.most_compute_within()[j].second});
            }
            points_ = std::move(ideals).points();
        }
        if (points_ && setting_.activation_compression_ratio) outputs_ = last_at_most_index(points_->output_min_bytes);
        if (!points_ && setting_.activation_compression_ratio) cut_outputs_.emplace(lattice, slack);
        if (!points_ && setting_.memory_bytes && !setting_.fewer) closures_.emplace(lattice, slack);
        if (setting_.memory_bytes && !setting_.fewer) {
            std::vector<stashed_compute_knapsack::layer> all;
            for (const layer_window& l : heavy_)
                all.push_back({.first_with = l.first_with, .compute_s = l.compute_s, .stashed_bytes = l.stashed_bytes});
            knapsack_.emplace(std::move(all));
        }
        if (setting_.memory_bytes) {  // the knapsack's, and farthest_within_stashed_s's (also with use_fewer_machines)
            std::vector<layer_window> by_g = heavy_;
            std::sort(by_g.begin(), by_g.end(), [](const auto& a, const auto& b) { return a.last_without < b.last_without; });
            every_layer_.parameters.assign(1, 0.0);
            every_layer_.stashed.assign(1, 0.0);
            every_layer_.compute.assign(1, 0.0);
            for (const layer_window& l : by_g) {
                every_layer_.last_without.push_back(l.last_without);
                every_layer_.parameters.push_back(every_layer_.parameters.back() + l.parameter_bytes);
                every_layer_.stashed.push_back(every_layer_.stashed.back() + l.stashed_bytes);
                every_layer_.compute.push_back(every_layer_.compute.back() + l.compute_s);
            }
        }
        for (const std::size_t l : lattice.kept().order) {
            if (lattice.kept().pred[l].empty()) {
                if (f.compute[l] > 0.0) empty_first_stage_ = setting_.fewer;
                least_first_cut_s_ = std::min(least_first_cut_s_, f.compute[l] - 1e-12 * total_);
            }
            parameter_total_ += f.parameter[l];
            stashed_total_ += f.parameter[l] + f.activation[l];
        }
    }

    /// Whether the positions are the ideals' own compute sums (else: outside the windows).
    [[nodiscard]] bool has_exact_points() const noexcept { return points_.has_value(); }
    /// The nonempty ideals enumerated for the exact points (PipeDream's states, for one source);
    /// 0 when there were too many.
    [[nodiscard]] std::size_t ideal_count() const noexcept { return ideal_count_; }

    /// The least output bytes at the cut positions, as steps [lo, hi] with a lower bound on the
    /// output of every ideal of compute in them (the exact points', or the vertex cuts'; +inf
    /// where no ideal lies); none without transfers.
    [[nodiscard]] std::vector<cut_output_step> cut_output_steps() const {
        std::vector<cut_output_step> steps;
        if (outputs_)
            for (std::size_t i = 0; i < points_->compute_s.size(); ++i)
                steps.push_back({points_->compute_s[i], points_->compute_s[i], points_->output_min_bytes[i]});
        else if (cut_outputs_)
            for (std::size_t i = 0; i < cut_outputs_->steps(); ++i) {
                const auto [lo, hi] = cut_outputs_->step_positions(i);
                steps.push_back({lo, hi, cut_outputs_->step_bytes(i)});
            }
        return steps;
    }

    /// With exact points, under the memory check: for each first stage's memory cap
    /// (wide_setting::first_stage_memory_caps), its fewest replicas and the ideal of most compute
    /// within it; empty otherwise.
    [[nodiscard]] const std::vector<first_stage>& first_stages() const noexcept { return first_stages_; }

    /// Under the memory check, at least the compute of every ideal of at most `most_bytes` stashed
    /// bytes (activations and parameters): the g_l of the first layer, in order of g_l, at which
    /// their bytes summed exceed it (an ideal holds every layer with g_l below its compute), and
    /// the exact points' least bytes at each point, or the Lagrangian closures' bound on a stage
    /// from the first cut (pipedream_lattice_closures.hpp); C without a memory limit.
    [[nodiscard]] double farthest_within_stashed_s(double most_bytes) const {
        if (!setting_.memory_bytes) return total_;
        const auto& sums = every_layer_.stashed;  // ascending, 0 first
        const auto in = static_cast<std::size_t>(std::upper_bound(sums.begin(), sums.end(), most_bytes) - sums.begin());
        const double forced = in - 1 < every_layer_.last_without.size() ? every_layer_.last_without[in - 1] : total_;
        if (points_) {
            const auto& from = points_->stashed_from_bytes;  // ascending: suffix minima
            const auto n = std::upper_bound(from.begin(), from.end(), most_bytes) - from.begin();
            return std::min(forced, n == 0 ? 0.0 : points_->compute_s[static_cast<std::size_t>(n - 1)]);
        }
        return std::min(forced, closures_ ? closures_->farthest(0.0, total_, most_bytes) : total_);
    }

    [[nodiscard]] bool admits(double t) {
        const auto m_count = static_cast<std::size_t>(setting_.machines);
        reach_.assign(m_count + 1, -1.0);  // -1: not reachable
        reach_[0] = 0.0;
        prepared_.assign(m_count + 1, false);
        forced_.resize(m_count + 1);
        slow_.clear();  // the layers slower than t on one machine, with rho_l(t)
        for (const layer_window& l : heavy_) {
            if (l.compute_s <= t) break;
            slow_.emplace_back(l, fewest_replicas(setting_, l.compute_s, l.parameter_bytes, t, setting_.machines));
        }
        for (std::size_t m = 1; m <= m_count; ++m) {
            // Idle machines: at most M is a relaxation of exactly M. But the first stage holds the
            // source, so it advances unless the source has no compute or it may use fewer machines.
            reach_[m] = m > 1 || empty_first_stage_ ? reach_[m - 1] : -1.0;
            for (std::size_t r = 1; r <= (setting_.straight ? 1 : m); ++r) {
                if (reach_[m - r] < 0.0) continue;
                const std::optional<double> start = stage_start(m - r, static_cast<std::int32_t>(r), t);
                if (!start) continue;
                const double next = farthest(m - r, *start, static_cast<std::int32_t>(r), t);
                if (next >= total_) return true;
                // The first stage is a nonempty ideal: it holds a source, so it ends at or past the
                // least compute of a source (less the windows' slack), not merely past 0.
                if (m == r && !empty_first_stage_ && next < least_first_cut_s_) continue;
                if (next > reach_[m - r]) reach_[m] = std::max(reach_[m], next);
            }
        }
        return false;
    }

private:
    struct layer_window {
        double first_with = 0.0;    // e_l: the least compute of an ideal holding l
        double last_without = 0.0;  // g_l: the most compute of an ideal without l
        double parameter_bytes = 0.0;
        double stashed_bytes = 0.0;  // activations and parameters
        double compute_s = 0.0;
    };
    struct forced_layers {
        std::vector<double> last_without;  // g_l of the layers with e_l > p, ascending
        std::vector<double> parameters;    // parameters[i]: the W of the first i of them
        std::vector<double> stashed;       // stashed[i]: their activations and parameters
        std::vector<double> compute;       // compute[i]: their compute
    };

    // The layers a stage starting at reach[k] may be forced to hold.
    const forced_layers& forced(std::size_t k) {
        if (!prepared_[k]) {
            forced_layers& fl = forced_[k];
            fl.last_without.clear();
            fl.parameters.assign(1, 0.0);
            fl.stashed.assign(1, 0.0);
            fl.compute.assign(1, 0.0);
            for (const layer_window& l : layers_)
                if (l.first_with > reach_[k]) {
                    fl.last_without.push_back(l.last_without);
                    fl.parameters.push_back(fl.parameters.back() + l.parameter_bytes);
                    fl.stashed.push_back(fl.stashed.back() + l.stashed_bytes);
                    fl.compute.push_back(fl.compute.back() + l.compute_s);
                }
            prepared_[k] = true;
        }
        return forced_[k];
    }

    // ceil(after / r), the times PipeDream's memory check counts a stage's stashed bytes, for a
    // stage on r replicas after k machines with M - k - r after it; 0 without the check (and with
    // use_fewer_machines, where the machines after it are not known).
    [[nodiscard]] double copies(std::size_t k, std::int32_t r) const noexcept {
        if (!setting_.memory_bytes || setting_.fewer) return 0.0;
        const double after = setting_.machines - static_cast<std::int32_t>(k) - r;
        return std::ceil(after / static_cast<double>(r));
    }

    // T B r R / 2: the most output bytes at a cut next to a stage on r replicas within t.
    [[nodiscard]] double output_limit_bytes(std::int32_t r, double t) const noexcept {
        return setting_.output_limit_bytes(r, t) * (1.0 + 1e-12);
    }

    // Where a stage on r replicas after k machines may start: reach[k], or with transfers the last
    // point within it whose output such a stage can wait for; none when there is none.
    [[nodiscard]] std::optional<double> stage_start(std::size_t k, std::int32_t r, double t) const {
        if (k > 0 && cut_outputs_) return cut_outputs_->last_position(0.0, reach_[k], output_limit_bytes(r, t));
        if (k == 0 || !outputs_) return reach_[k];
        const exact_points& pts = *points_;
        const auto end = static_cast<std::size_t>(
            std::upper_bound(pts.compute_s.begin(), pts.compute_s.end(), reach_[k] + 1e-12 * total_) - pts.compute_s.begin());
        const auto at = outputs_->find(0, end, output_limit_bytes(r, t));
        if (!at) return std::nullopt;
        return std::min(reach_[k], pts.compute_s[*at] + 1e-12 * total_);
    }

    // The farthest allowed p' > p with (p' - p) + q_r W(p, p') <= r t (p if none), for a stage
    // after k machines starting at p <= reach[k] (the forced layers of reach[k] are forced from p
    // too). With the first i forced layers in (p' in (g_(i-1), g_i]) p' may go up to
    // cap_i = p + r t - q_r W_i; the last i with cap_i > g_(i-1) is found by bisection.
    [[nodiscard]] double farthest(std::size_t k, double p, std::int32_t r, double t) {
        const forced_layers& fl = forced(k);
        const double q = setting_.sync_factor(r);
        const auto cap = [&](std::size_t i) { return p + static_cast<double>(r) * t - q * fl.parameters[i]; };
        const auto open = [&](std::size_t i) { return i == 0 || cap(i) > fl.last_without[i - 1]; };
        // Layers with g_l < p are in for every p' > p.
        const auto always = static_cast<std::size_t>(std::lower_bound(fl.last_without.begin(), fl.last_without.end(), p) -
                                                     fl.last_without.begin());
        std::size_t lo = always;
        if (!open(lo)) return p;
        std::size_t hi = fl.last_without.size() + 1;  // open(lo) holds; hi is past the end
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            (open(mid) ? lo : hi) = mid;
        }
        double to = cap(lo);
        if (lo < fl.last_without.size()) to = std::min(to, fl.last_without[lo]);
        if (const double n = copies(k, r); n > 0.0) {  // the memory check: the first i forced layers in
            const double most = *setting_.memory_bytes / n + 1e-12 * stashed_total_;  // farthest_point's slack
            const auto in = static_cast<std::size_t>(std::upper_bound(fl.stashed.begin(), fl.stashed.end(), most) - fl.stashed.begin());
            if (in <= always) return p;  // even the layers every stage from p holds break it
            if (in - 1 < fl.last_without.size()) to = std::min(to, fl.last_without[in - 1]);
            to = std::min(to, filled_reach(fl, always, {.base_s = p}, p, to, most));
            // Or as a difference of prefixes: the ideal it ends at holds every layer with g_l < p'
            // and has compute p'; the one it starts at has compute at most p, so at most the
            // densest bytes of compute p among the layers with e_l <= p.
            const double before_bytes = knapsack_->most_stashed_bytes(p, p) + 1e-12 * stashed_total_;
            to = std::min(to, filled_reach(every_layer_, 0, {.base_s = 0.0, .credit_bytes = before_bytes}, p, to, most));
            if (closures_ && to > p) to = std::min(to, closures_->farthest(p, to, most));  // precedence kept
        }
        for (const auto& [l, rho] : slow_)
            if (rho > r && l.first_with > p) to = std::min(to, l.last_without);
        if (to <= p) return p;
        if (to >= total_) return to;
        if (points_) return farthest_point(p, to, {.replicas = r, .time_s = t, .before = k});
        to = std::max(p, farthest_allowed(windows_, to));
        if (k == 0 || !cut_outputs_) return to;
        return cut_outputs_->last_position(p, to, output_limit_bytes(r, t)).value_or(p);
    }

    // The farthest p' in (p, to] at which a stage ending at p' and starting at a cut at or before
    // p can hold its compute within `most` stashed bytes; p if none. With the first i forced
    // layers in (p' in (g_(i-1), g_i]; forced from the plan's own cut too, as in `farthest`), its
    // compute is at least p' - p, its other layers have compute at least p' - p - C_i and e_l <=
    // p', so by the knapsack of pipedream_lattice_knapsack.hpp p' <= p + C_i +
    // most_compute(p', most - S_i). Not monotone in i (S_i and C_i both rise): the segments are
    // scanned down from to's.
    struct fill_start {
        double base_s = 0.0;        // the compute before the stage
        double credit_bytes = 0.0;  // the most stashed bytes before the stage
    };
    [[nodiscard]] double filled_reach(const forced_layers& fl, std::size_t always, fill_start from, double p, double to,
                                      double most) const {
        const auto& g = fl.last_without;
        auto i = static_cast<std::size_t>(std::lower_bound(g.begin(), g.end(), to) - g.begin());
        for (;; --i) {
            const double hi = i < g.size() ? std::min(to, g[i]) : to;
            const double lo = i == always ? p : std::max(p, g[i - 1]);
            if (fl.stashed[i] <= most + from.credit_bytes) {
                const double reach =
                    from.base_s + fl.compute[i] + knapsack_->most_compute_s(hi, most + from.credit_bytes - fl.stashed[i]) + 1e-12 * total_;
                if (std::min(hi, reach) > lo) return std::min(hi, reach);
            }
            if (i <= always || g[i - 1] <= p) return p;
        }
    }

    struct stage_shape {
        std::int32_t replicas = 1;
        double time_s = 0.0;
        std::size_t before = 0;  // machines before the stage
    };

    // The largest ideal compute sum y within `to` from which a stage starting at a cut at or
    // before p fits: (y - p) + q_r (parameters_from[y] - parameters_upto[p]) <= r t and, under
    // the memory check, (stashed_from_bytes[y] - stashed_upto_bytes[p]) ceil(after / r) <= memory
    // (all rise with y; y <= to keeps the forced layers' term); with transfers after k > 0
    // machines, the last such y whose output the stage can wait for. p when there is none. With 1e-12 of slack
    // on sums (here and along a plan's path they are added in different orders).
    [[nodiscard]] double farthest_point(double p, double to, stage_shape st) const {
        const exact_points& pts = *points_;
        const double slack_c = 1e-12 * total_, slack_w = 1e-12 * parameter_total_, slack_s = 1e-12 * stashed_total_;
        const auto first_after = [&](double x) {
            return static_cast<std::size_t>(std::upper_bound(pts.compute_s.begin(), pts.compute_s.end(), x + slack_c) -
                                            pts.compute_s.begin());
        };
        const std::size_t upto = first_after(p);  // points <= p: [0, upto)
        const double parameters_before = upto == 0 ? 0.0 : pts.parameters_upto[upto - 1] + slack_w;
        const double stashed_before = upto == 0 ? 0.0 : pts.stashed_upto_bytes[upto - 1] + slack_s;
        const double q = setting_.sync_factor(st.replicas), r = st.replicas, n = copies(st.before, st.replicas);
        const auto fits = [&](std::size_t j) {
            const double w = std::max(0.0, pts.parameters_from[j] - slack_w - parameters_before);
            if (n > 0.0 && std::max(0.0, pts.stashed_from_bytes[j] - slack_s - stashed_before) * n > *setting_.memory_bytes) return false;
            return (pts.compute_s[j] - slack_c - p) + q * w <= r * st.time_s;
        };
        std::size_t lo = upto, hi = first_after(to);  // candidates [upto, hi)
        if (lo >= hi || !fits(lo)) return p;
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            (fits(mid) ? lo : hi) = mid;
        }
        if (outputs_ && st.before > 0) {
            const auto at = outputs_->find(upto, lo + 1, output_limit_bytes(st.replicas, st.time_s));
            if (!at) return p;
            lo = *at;
        }
        return std::max(p, std::min(to, pts.compute_s[lo] + slack_c));
    }

    wide_setting setting_;
    std::vector<std::pair<double, double>> windows_;
    double total_;
    // layers_: with parameters (under the memory check: with bytes), by g_l; heavy_: all, slowest first
    std::vector<layer_window> layers_, heavy_;
    std::vector<std::pair<layer_window, std::int32_t>> slow_;
    std::optional<exact_points> points_;
    std::optional<last_at_most_index> outputs_;  // over points_->output_min_bytes, with transfers
    std::optional<window_output_bounds> cut_outputs_;  // without points, with transfers
    std::optional<stashed_compute_knapsack> knapsack_;  // under the memory check (without use_fewer_machines)
    std::optional<stashed_closure_bounds> closures_;    // the same, without points
    std::vector<first_stage> first_stages_;             // with points: first_stages()
    forced_layers every_layer_;  // all layers by g_l, under the memory check
    double parameter_total_ = 0.0, stashed_total_ = 0.0;
    std::size_t ideal_count_ = 0;
    bool empty_first_stage_ = true;  // whether the first stage may end at compute 0
    double least_first_cut_s_ = std::numeric_limits<double>::infinity();  // the least source's compute
    std::vector<double> reach_;
    std::vector<bool> prepared_;
    std::vector<forced_layers> forced_;
};

/// The largest T in [lo, hi] at which `admits` fails, by geometric bisection to 1e-13 relative
/// (the tests are monotone: a larger T admits more); lo when it already admits. `tests` counts
/// the calls.
template <class Admits>
[[nodiscard]] double largest_failing_threshold(double lo, double hi, Admits&& admits, std::int64_t& tests) {
    ++tests;
    if (!(lo > 0.0) || admits(lo)) return lo;
    for (int i = 0; i < 200 && hi > lo * (1.0 + 1e-13); ++i) {
        const double mid = std::sqrt(lo * hi);
        if (!(mid > lo && mid < hi)) break;
        ++tests;
        (admits(mid) ? hi : lo) = mid;
    }
    return lo;
}

}  // namespace dnnplan::detail
