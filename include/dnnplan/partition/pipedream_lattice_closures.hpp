#pragma once
// A lower bound on a stage's stashed bytes (activations and parameters, PipeDream's memory check)
// that keeps precedence, for the window bound when only the windows are known (class
// window_relaxation in partition/pipedream_lattice_bounds.hpp; the nasnets). The fractional
// knapsack of pipedream_lattice_knapsack.hpp ignores which layers must come before which; this
// bound prices whole ideals instead, by a Lagrangian relaxation of their compute.
//
// The relaxation. A stage after k machines holds X = I' \ I for ideals I within I', with C(I) =
// p_a and C(I') = p'; the window DP knows only p_a <= p (p: reach[k], or the stage's start within
// it). S (stashed bytes) and C (compute) are sums over layers, so for every real mu
//     S(X) = S(I') - S(I) = (S - mu C)(I') - (S - mu C)(I) + mu (p' - p_a).
// The same mu on both ideals: only then does the compute term collapse to p' - p_a, which the
// positions fix. I' is in F(p'), the ideals holding every layer forced in at p' (g_l < p') and
// none forced out (e_l > p'), and I in F(p_a) (pipedream_lattice_cuts.hpp's header comment: e_l,
// g_l are the least compute of an ideal holding l and the most of one without it). So with
// w = S - mu C,
//     S(X) >= mu p' + min_{J in F(p')} w(J) - G_mu(p),
//     G_mu(p) = max over positions x <= p of (mu x + max_{J in F(x)} w(J)) >= mu p_a + w(I):
// valid for every start at or before p, as the DP needs (a stage that may start earlier gets no
// larger bound). Each mu gives a bound; a stage must pass all of them.
//
// The extremes of w over F(q). The forced-in layers IN are a down-set, the forced-out OUT an
// up-set, so an ideal of F(q) is IN plus a down-closed set J of the free layers; a path between
// two free layers stays among free ones (a layer between them is below a free layer, so not in
// OUT, and above one, so not in IN), so the kept edges among free layers are its precedence.
// min w(J) over such J is a minimum-weight closure: one max-flow (Picard, "Maximal closure of a
// graph and applications to combinatorial problems", Management Science 22(11), 1976): source to
// v with capacity -w_v for w_v < 0, v to sink with w_v for w_v > 0, v to each free predecessor
// with infinite capacity; min w(J) = sum_{w_v < 0} w_v + min cut >= that sum + any feasible flow.
// Symmetrically max w(J) = sum_{w_v > 0} w_v - min cut <= that sum - any feasible flow. A flow
// found in floating point is feasible, so with a slack for its rounding both stay valid.
//
// Steps. F(q) changes only where q crosses some g_l or e_l: as in pipedream_lattice_cuts.hpp, a
// point step at each breakpoint and an open step between two, at most 4 n + 3, each with its
// extremes per mu, built once. A query (`farthest`) then finds, per mu, the last step whose
// least value fits (a tree of minima) and the farthest p' in it, lowering until every mu agrees.

#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_lattice_cuts.hpp>
#include <dnnplan/partition/pipedream_lattice_points.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The most free layers, summed over the steps whose closures are built, before the bound is given
/// up (no restriction, still a relaxation): each costs 2 flows per multiplier. nasnetalarge sums
/// about 260,000 (2,335 steps with flows; 0.19 s with 3 multipliers); a graph wide everywhere
/// could need minutes.
inline constexpr std::size_t closure_free_layers_cap = 2'000'000;

/// The Lagrangian bound of the header comment on the stashed bytes of a stage between two cut
/// positions, for a handful of multipliers mu (bytes per second of compute).
class stashed_closure_bounds {
public:
    /// `slack_s`: the forced sets shrunk by it at both ends against rounding (as the windows are);
    /// `multipliers`: how many mu, at compute-weighted quantiles of the layers' bytes per compute.
    /// Each costs two flows per step (nasnetalarge: 4,675 steps, about 12 us a flow, 110 free
    /// layers a step). 3 (quantiles 1/6, 1/2, 5/6) as measured on the nasnets and PipeDream's runs:
    /// 1 and 2 bound fewer runs within 0.5 %, 6 and 8 took twice the time for no better bounds.
    /// `most_free_layers`: closure_free_layers_cap.
    stashed_closure_bounds(const ideal_lattice& lattice, double slack_s, std::size_t multipliers = 3,
                           std::size_t most_free_layers = closure_free_layers_cap)
        : steps_(lattice, slack_s), compute_total_s_(lattice.total_compute_s()), free_layers_left_(most_free_layers) {
        const auto& f = lattice.figures();
        for (const layer_window& w : steps_.layers()) stashed_total_bytes_ += f.parameter[w.layer] + f.activation[w.layer];
        for (const double mu : quantile_multipliers(lattice, multipliers)) {
            per_mu_.emplace_back();
            per_mu_.back().mu_bytes_per_s = mu;
        }
        steps_.for_each_step([&](double lo, double hi, bool open) {
            if (!per_mu_.empty()) add_step(lattice, lo, hi, open);
        });
        if (per_mu_.empty()) lo_.clear(), hi_.clear();  // over the cap: no bound
        for (multiplier& m : per_mu_) {
            double before = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < lo_.size(); ++j) {
                m.first_value.push_back(m.mu_bytes_per_s * lo_[j] + m.least[j]);
                before = std::max(before, m.mu_bytes_per_s * hi_[j] + m.most[j]);
                m.before.push_back(before);
            }
            m.index = last_at_most_index(m.first_value);
        }
    }

    /// The farthest p' in (p, to] at which a stage from a cut at or before p to one at p' may hold
    /// at most `most_bytes` of stashed bytes by every multiplier's bound; p if none.
    [[nodiscard]] double farthest(double p, double to, double most_bytes) const {
        if (!(to > p) || per_mu_.empty()) return std::max(p, to);
        const auto start = static_cast<std::size_t>(std::upper_bound(lo_.begin(), lo_.end(), p) - lo_.begin());
        if (start == 0) return to;
        double at_most = to;
        for (int round = 0; round < 16; ++round) {  // unfinished rounds leave a larger p': still a relaxation
            bool lowered = false;
            for (const multiplier& m : per_mu_) {
                const double budget = most_bytes + started_before(m, start, p);
                const auto end = static_cast<std::size_t>(std::upper_bound(lo_.begin(), lo_.end(), at_most) - lo_.begin());
                const auto at = m.index.find(start - 1, end, budget);
                if (!at) return p;
                double x = std::min(at_most, hi_[*at]);
                if (m.mu_bytes_per_s > 0.0) x = std::min(x, (budget - m.least[*at]) / m.mu_bytes_per_s);
                if (x <= p) return p;
                if (x < at_most) at_most = x, lowered = true;
            }
            if (!lowered) break;
        }
        return at_most;
    }

    /// The bound itself: at most the stashed bytes of a stage from a cut at or before p to one at
    /// p_end (+inf where no ideal lies at p_end).
    [[nodiscard]] double least_stashed_bytes(double p, double p_end) const {
        const auto start = static_cast<std::size_t>(std::upper_bound(lo_.begin(), lo_.end(), p) - lo_.begin());
        const auto end = static_cast<std::size_t>(std::upper_bound(lo_.begin(), lo_.end(), p_end) - lo_.begin());
        double bound = 0.0;
        if (start == 0 || end == 0) return bound;
        for (const multiplier& m : per_mu_) {
            // p_end in the last step starting at or before it, or in the point step just before.
            double least = m.least[end - 1];
            if (end >= 2 && lo_[end - 2] == p_end) least = std::min(least, m.least[end - 2]);
            bound = std::max(bound, m.mu_bytes_per_s * p_end + least - started_before(m, start, p));
        }
        return bound;
    }

    [[nodiscard]] std::size_t steps() const noexcept { return lo_.size(); }
    [[nodiscard]] std::size_t flows() const noexcept { return flows_; }

private:
    using layer_window = window_steps::layer_window;
    using side = window_steps::side;
    struct multiplier {
        double mu_bytes_per_s = 0.0;
        std::vector<double> least{}, most{};  // per step: min and max of w over its ideals (+inf, -inf: none)
        std::vector<double> first_value{};  // mu lo + least: the bound's least value in the step
        std::vector<double> before{};       // max over steps up to this one of mu hi + most
        last_at_most_index index{};         // over first_value
    };

    // G_mu(p), the steps [0, start) being those with lo <= p: the last one only up to p.
    [[nodiscard]] static double started_before(const multiplier& m, std::size_t start, double p) {
        const double earlier = start >= 2 ? m.before[start - 2] : -std::numeric_limits<double>::infinity();
        return std::max(earlier, m.mu_bytes_per_s * p + m.most[start - 1]);
    }

    // mu at the compute-weighted quantiles (i + 1/2) / count of the layers' stashed bytes per
    // compute: a stage's marginal layers price near one of them.
    [[nodiscard]] static std::vector<double> quantile_multipliers(const ideal_lattice& lattice, std::size_t count) {
        const auto& f = lattice.figures();
        std::vector<std::pair<double, double>> ratio;  // bytes per compute, compute
        double total = 0.0;
        for (const std::size_t l : lattice.kept().order)
            if (f.compute[l] > 0.0) {
                ratio.emplace_back((f.parameter[l] + f.activation[l]) / f.compute[l], f.compute[l]);
                total += f.compute[l];
            }
        std::sort(ratio.begin(), ratio.end());
        std::vector<double> mu;
        double seen = 0.0;
        std::size_t next = 0;
        for (const auto& [r, c] : ratio) {
            seen += c;
            while (next < count && seen >= total * (static_cast<double>(next) + 0.5) / static_cast<double>(count)) {
                if (mu.empty() || r > mu.back()) mu.push_back(r);
                ++next;
            }
        }
        return mu;
    }

    // The step [lo, hi]: in = {g < lo}, out = {e > hi}; an open step (lo, hi) (`open`): in =
    // {g <= lo}, out = {e >= hi}. Where a layer is both, no ideal lies.
    void add_step(const ideal_lattice& lattice, double lo, double hi, bool open) {
        const auto& f = lattice.figures();
        side_.assign(lattice.layer_count(), side::free);
        const bool empty = steps_.sides(lo, hi, open, side_);
        lo_.push_back(lo);
        hi_.push_back(hi);
        if (lo_.size() > 1 && empty == last_empty_ && side_ == last_side_) {  // no set moved: the same values
            for (multiplier& m : per_mu_) m.least.push_back(m.least.back()), m.most.push_back(m.most.back());
            return;
        }
        last_empty_ = empty;
        last_side_ = side_;
        if (empty) {
            for (multiplier& m : per_mu_)
                m.least.push_back(std::numeric_limits<double>::infinity()), m.most.push_back(-std::numeric_limits<double>::infinity());
            return;
        }
        id_.resize(lattice.layer_count(), none);
        for (const std::size_t l : free_) id_[l] = none;
        free_.clear();
        double in_bytes = 0.0, in_compute_s = 0.0;  // the forced-in layers' S and C
        for (const layer_window& w : steps_.layers()) {
            const std::size_t l = w.layer;
            if (side_[l] == side::in) in_bytes += f.parameter[l] + f.activation[l], in_compute_s += f.compute[l];
            if (side_[l] != side::free) continue;
            id_[l] = free_.size() + 2;  // 0, 1: the source and the sink
            free_.push_back(l);
        }
        if (free_.size() > free_layers_left_) {
            per_mu_.clear();
            return;
        }
        free_layers_left_ -= free_.size();
        for (multiplier& m : per_mu_) {
            const double mu = m.mu_bytes_per_s, forced = in_bytes - mu * in_compute_s;
            weight_.clear();
            for (const std::size_t l : free_) weight_.push_back(f.parameter[l] + f.activation[l] - mu * f.compute[l]);
            const double slack = 1e-9 * (stashed_total_bytes_ + mu * compute_total_s_);
            m.least.push_back(forced - most_closure(lattice.kept(), -1.0, slack) - slack);
            m.most.push_back(forced + most_closure(lattice.kept(), 1.0, slack) + slack);
        }
    }

    // At least the most sign * w(J) over the down-closed sets J of the free layers (Picard's
    // closure by one max-flow; see the header comment).
    [[nodiscard]] double most_closure(const kept_layers& kept, double sign, double slack) {
        ++flows_;
        double positive = 0.0, wide = 1.0;
        for (const double w : weight_) wide += std::abs(w);
        small_max_flow flow(free_.size() + 2, 1e-3 * slack);
        for (std::size_t i = 0; i < free_.size(); ++i) {
            const double b = sign * weight_[i];
            if (b > 0.0) {
                flow.add_edge(0, i + 2, b);
                positive += b;
            } else if (b < 0.0) {
                flow.add_edge(i + 2, 1, -b);
            }
            for (const std::size_t u : kept.pred[free_[i]])
                if (id_[u] != none) flow.add_edge(i + 2, id_[u], wide);
        }
        return positive - flow.run(0, 1);
    }

    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    window_steps steps_;
    std::vector<multiplier> per_mu_;
    std::vector<side> side_, last_side_;
    bool last_empty_ = false;
    std::vector<double> lo_, hi_;  // the steps, by position
    std::vector<std::size_t> id_, free_;  // the free layers of the step being built, and their flow nodes
    std::vector<double> weight_;           // their w
    double stashed_total_bytes_ = 0.0, compute_total_s_ = 0.0;
    std::size_t free_layers_left_;
    std::size_t flows_ = 0;
};

}  // namespace dnnplan::detail
