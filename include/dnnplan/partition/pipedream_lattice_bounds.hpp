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
// plus transfers and the memory check, which only add to it or forbid it; none of the bounds
// uses them. For r >= 2 the time falls with r (docs/solvers/pipeline_plan.md, fact 1; the
// header comment of partition/pipedream_chain.hpp).

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_bounds.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
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
    /// PipeDream's (C + q_r W) / r, transfers and memory aside.
    [[nodiscard]] double compute_time_s(double c, double w, std::int32_t r) const noexcept {
        return (c + sync_factor(r) * w) / static_cast<double>(r);
    }
};

inline constexpr double wide_bound_rounding = 1.0 - 1e-12;

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
    const auto& f = lattice.figures();
    const auto& cl = lattice.closures();
    const double total = lattice.total_compute_s();
    const double slack = 1e-12 * total;
    std::vector<std::pair<double, double>> windows;
    for (const std::size_t l : lattice.kept().order) {
        double down = f.compute[l], up = f.compute[l];
        cl.ancestors.for_each(l, [&](std::size_t a) { down += f.compute[a]; });
        cl.descendants.for_each(l, [&](std::size_t d) { up += f.compute[d]; });
        const double lo = total - up + slack, hi = down - slack;
        if (lo < hi) windows.emplace_back(lo, hi);
    }
    std::sort(windows.begin(), windows.end());
    std::vector<std::pair<double, double>> merged;
    for (const auto& w : windows) {
        if (!merged.empty() && w.first < merged.back().second) merged.back().second = std::max(merged.back().second, w.second);
        else merged.push_back(w);
    }
    return merged;
}

/// The cut positions of a graph with few ideals ("exact points", design section 3.1, where the
/// windows only exclude some): the distinct compute sums of its nonempty ideals, ascending, and
/// for the parameters of the ideals at them, the most over the points up to each one and the
/// least over the points from each one on (a stage from a cut at or before x to a cut at y
/// holds at least parameters_from[y] - parameters_upto[x]).
struct exact_points {
    std::vector<double> compute_s{};
    std::vector<double> parameters_upto{};  ///< prefix maxima of the ideals' parameters
    std::vector<double> parameters_from{};  ///< suffix minima
};

/// Every nonempty ideal's compute and parameter sums, when there are at most `cap` ideals (none
/// otherwise). Enumerated once each by reverse search: an ideal's parent is
/// it minus its maximal layer latest in the topological order, so a child D + {v} (v on D's
/// frontier) is visited from D only when v is later than every other maximal layer of D + {v}
/// (those of D but v's in-neighbours).
class ideal_compute_enumerator {
public:
    explicit ideal_compute_enumerator(const ideal_lattice& lattice, std::size_t cap) : lattice_(lattice), cap_(cap) {
        const kept_layers& kept = lattice.kept();
        rank_.assign(lattice.layer_count(), 0);
        for (std::size_t i = 0; i < kept.order.size(); ++i) rank_[kept.order[i]] = i;
        pending_.assign(lattice.layer_count(), 0);
        // Per depth (layers in the ideal) the frontier and the maximal layers, reused.
        avail_.resize(kept.order.size() + 1);
        maxima_.resize(kept.order.size() + 1);
        for (const std::size_t l : kept.order) {
            pending_[l] = static_cast<std::uint32_t>(kept.pred[l].size());
            if (pending_[l] == 0) avail_[0].push_back(l);
        }
        values_.reserve(std::min<std::size_t>(cap, 1u << 16));
        visit(0, 0.0, 0.0);
    }

    /// The nonempty ideals enumerated (all of them unless over the cap): for one source,
    /// PipeDream's state count (section 1.3).
    [[nodiscard]] std::size_t ideal_count() const noexcept { return values_.size(); }
    [[nodiscard]] bool complete() const noexcept { return !over_; }

    [[nodiscard]] std::optional<exact_points> points() && {
        if (over_) return std::nullopt;
        std::sort(values_.begin(), values_.end());
        exact_points out;
        for (const auto& [c, params] : values_) {
            if (out.compute_s.empty() || c != out.compute_s.back()) {
                out.compute_s.push_back(c);
                out.parameters_upto.push_back(params);
                out.parameters_from.push_back(params);
            }
            out.parameters_upto.back() = std::max(out.parameters_upto.back(), params);
            out.parameters_from.back() = std::min(out.parameters_from.back(), params);
        }
        for (std::size_t i = 1; i < out.compute_s.size(); ++i)
            out.parameters_upto[i] = std::max(out.parameters_upto[i], out.parameters_upto[i - 1]);
        for (std::size_t i = out.compute_s.size(); i-- > 1;)
            out.parameters_from[i - 1] = std::min(out.parameters_from[i - 1], out.parameters_from[i]);
        return out;
    }

private:
    // The children of the ideal at `depth` (its frontier avail_[depth], its maximal layers
    // maxima_[depth]).
    void visit(std::size_t depth, double compute, double parameters) {
        const kept_layers& kept = lattice_.kept();
        for (std::size_t i = 0; i < avail_[depth].size() && !over_; ++i) {
            const std::size_t v = avail_[depth][i];
            const auto& in = kept.pred[v];
            auto& next_max = maxima_[depth + 1];
            next_max.assign(1, v);
            bool canonical = true;
            for (const std::size_t u : maxima_[depth]) {
                if (std::find(in.begin(), in.end(), u) != in.end()) continue;
                canonical = canonical && rank_[u] < rank_[v];
                next_max.push_back(u);
            }
            if (!canonical) continue;
            if (values_.size() >= cap_) {
                over_ = true;
                return;
            }
            const double c = compute + lattice_.figures().compute[v];
            const double params = parameters + lattice_.figures().parameter[v];
            values_.emplace_back(c, params);
            auto& next_avail = avail_[depth + 1];
            next_avail.clear();
            for (const std::size_t a : avail_[depth])
                if (a != v) next_avail.push_back(a);
            for (const std::size_t w : kept.succ[v])
                if (--pending_[w] == 0) next_avail.push_back(w);
            visit(depth + 1, c, params);
            for (const std::size_t w : kept.succ[v]) ++pending_[w];
        }
    }

    const ideal_lattice& lattice_;
    std::size_t cap_;
    std::vector<std::size_t> rank_;
    std::vector<std::uint32_t> pending_;
    std::vector<std::vector<std::size_t>> avail_, maxima_;
    std::vector<std::pair<double, double>> values_;  // (compute, parameters) per ideal
    bool over_ = false;
};

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
class window_relaxation {
public:
    /// `enumerated_ideals`: the most ideals enumerated for exact points (0: the windows only).
    window_relaxation(const ideal_lattice& lattice, const wide_setting& setting, std::size_t enumerated_ideals = wide_enumerated_ideals)
        : setting_(setting), windows_(forbidden_compute_windows(lattice)), total_(lattice.total_compute_s()) {
        const auto& f = lattice.figures();
        const auto& cl = lattice.closures();
        const double slack = 1e-12 * total_;  // the forced sets shrunk against rounding
        for (const std::size_t l : lattice.kept().order) {
            double down = f.compute[l], up = f.compute[l];
            cl.ancestors.for_each(l, [&](std::size_t a) { down += f.compute[a]; });
            cl.descendants.for_each(l, [&](std::size_t d) { up += f.compute[d]; });
            const layer_window w{.first_with = down - slack, .last_without = total_ - up + slack,
                                 .parameter_bytes = f.parameter[l], .compute_s = f.compute[l]};
            if (w.parameter_bytes > 0.0) layers_.push_back(w);
            heavy_.push_back(w);
        }
        std::sort(layers_.begin(), layers_.end(), [](const auto& a, const auto& b) { return a.last_without < b.last_without; });
        std::sort(heavy_.begin(), heavy_.end(), [](const auto& a, const auto& b) { return a.compute_s > b.compute_s; });
        if (enumerated_ideals > 0) points_ = ideal_compute_enumerator(lattice, enumerated_ideals).points();
        for (const std::size_t l : lattice.kept().order) parameter_total_ += f.parameter[l];
    }

    /// Whether the positions are the ideals' own compute sums (else: outside the windows).
    [[nodiscard]] bool has_exact_points() const noexcept { return points_.has_value(); }

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
            reach_[m] = reach_[m - 1];  // idle machines: at most M is a relaxation of exactly M
            for (std::size_t r = 1; r <= (setting_.straight ? 1 : m); ++r) {
                if (reach_[m - r] < 0.0) continue;
                const double next = farthest(m - r, static_cast<std::int32_t>(r), t);
                if (next >= total_) return true;
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
        double compute_s = 0.0;
    };
    struct forced_layers {
        std::vector<double> last_without;  // g_l of the layers with e_l > p, ascending
        std::vector<double> parameters;    // parameters[i]: the W of the first i of them
    };

    // The layers a stage starting at reach[k] may be forced to hold.
    const forced_layers& forced(std::size_t k) {
        if (!prepared_[k]) {
            forced_layers& fl = forced_[k];
            fl.last_without.clear();
            fl.parameters.assign(1, 0.0);
            for (const layer_window& l : layers_)
                if (l.first_with > reach_[k]) {
                    fl.last_without.push_back(l.last_without);
                    fl.parameters.push_back(fl.parameters.back() + l.parameter_bytes);
                }
            prepared_[k] = true;
        }
        return forced_[k];
    }

    // The farthest allowed p' > p = reach[k] with (p' - p) + q_r W(p, p') <= r t (p if none).
    // With the first i forced layers in (p' in (g_(i-1), g_i]) p' may go up to
    // cap_i = p + r t - q_r W_i; the last i with cap_i > g_(i-1) is found by bisection.
    [[nodiscard]] double farthest(std::size_t k, std::int32_t r, double t) {
        const double p = reach_[k];
        const forced_layers& fl = forced(k);
        const double q = setting_.sync_factor(r);
        const auto cap = [&](std::size_t i) { return p + static_cast<double>(r) * t - q * fl.parameters[i]; };
        const auto open = [&](std::size_t i) { return i == 0 || cap(i) > fl.last_without[i - 1]; };
        // Layers with g_l < p are in for every p' > p.
        std::size_t lo = static_cast<std::size_t>(std::lower_bound(fl.last_without.begin(), fl.last_without.end(), p) -
                                                  fl.last_without.begin());
        if (!open(lo)) return p;
        std::size_t hi = fl.last_without.size() + 1;  // open(lo) holds; hi is past the end
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            (open(mid) ? lo : hi) = mid;
        }
        double to = cap(lo);
        if (lo < fl.last_without.size()) to = std::min(to, fl.last_without[lo]);
        for (const auto& [l, rho] : slow_)
            if (rho > r && l.first_with > p) to = std::min(to, l.last_without);
        if (to <= p) return p;
        if (to >= total_) return to;
        return points_ ? farthest_point(p, to, r, t) : std::max(p, farthest_allowed(windows_, to));
    }

    // The largest ideal compute sum y within `to` from which a stage starting at a cut at or
    // before p fits: (y - p) + q_r (parameters_from[y] - parameters_upto[p]) <= r t (both terms
    // rise with y; y <= to keeps the forced layers' term). p when there is none. With 1e-12 of
    // slack on sums (here and along a plan's path they are added in different orders).
    [[nodiscard]] double farthest_point(double p, double to, std::int32_t r, double t) const {
        const exact_points& pts = *points_;
        const double slack_c = 1e-12 * total_, slack_w = 1e-12 * parameter_total_;
        const auto first_after = [&](double x) {
            return static_cast<std::size_t>(std::upper_bound(pts.compute_s.begin(), pts.compute_s.end(), x + slack_c) -
                                            pts.compute_s.begin());
        };
        const std::size_t upto = first_after(p);  // points <= p: [0, upto)
        const double before = upto == 0 ? 0.0 : pts.parameters_upto[upto - 1] + slack_w;
        const double q = setting_.sync_factor(r);
        const auto fits = [&](std::size_t j) {
            const double w = std::max(0.0, pts.parameters_from[j] - slack_w - before);
            return (pts.compute_s[j] - slack_c - p) + q * w <= static_cast<double>(r) * t;
        };
        std::size_t lo = upto, hi = first_after(to);  // candidates [upto, hi)
        if (lo >= hi || !fits(lo)) return p;
        while (hi - lo > 1) {
            const std::size_t mid = lo + (hi - lo) / 2;
            (fits(mid) ? lo : hi) = mid;
        }
        return std::max(p, std::min(to, pts.compute_s[lo] + slack_c));
    }

    wide_setting setting_;
    std::vector<std::pair<double, double>> windows_;
    double total_;
    std::vector<layer_window> layers_, heavy_;  // with parameters, by g_l; all, slowest first
    std::vector<std::pair<layer_window, std::int32_t>> slow_;
    std::optional<exact_points> points_;
    double parameter_total_ = 0.0;
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
