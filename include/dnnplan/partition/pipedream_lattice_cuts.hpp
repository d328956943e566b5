#pragma once
// A lower bound on PipeDream's output bytes at a cut position when the ideals are too many to
// enumerate (docs/design/pipedream-wide-graphs.md, section 3.1, the window relaxation's
// transfers; the nasnets): a minimum weighted vertex cut between the layers every ideal of that
// compute must hold and those it cannot hold.
//
// Why it is a lower bound. At a position p, an ideal D of compute p holds every layer l with
// g_l < p ("forced in", I) and none with p < e_l ("forced out", O): e_l and g_l are the least
// compute of an ideal holding l and the most of one without it (pipedream_lattice_bounds.hpp,
// forbidden_compute_windows). PipeDream's out(D) sums the activations of augment(A), A the
// maximal layers of D (antichain.hpp, augment_antichain), and augment(A) holds D's boundary, the
// layers of D with a kept successor outside D: such a layer x is maximal, or an ancestor of some
// maximal a with a successor outside D, hence neither a nor an ancestor of a (those are in D),
// and x has two or more successors, so augment adds it for a. A path of kept layers from I to O
// leaves D once, at a boundary layer. So the boundary is a vertex cut between I and O, and out(D)
// >= the least activation bytes of such a cut = the maximum flow with vertex capacities
// (Ford and Fulkerson's max-flow min-cut theorem, vertex form by splitting each layer in two).
// Any feasible flow is at most the minimum cut, so a flow computed in floating point, less a
// slack for its rounding, is still a lower bound.
//
// PipeDream's dead tensors count too: a layer x of D is in augment(A) whenever D holds no layer
// that is at or below every successor of x. If a successor of x is outside D, x is on the
// boundary. Else some maximal a of D is above x, and every such a misses some successor o (not
// o's descendant, nor o): a would be at or below them all; with two or more successors x is
// branching, so augment adds x for a; with none x is maximal. So at every p < K(x), K(x) the
// least e_z of a layer z at or below every successor of x (+inf when there is none), an ideal
// holding x pays act(x). In the flow such a layer x, when it may be in D, becomes a sink of
// capacity act(x) (paid if D holds it; its successors then need no cut through x), and when it is
// forced in (g_x < p), a constant.
//
// I and O change only where p crosses some g_l or e_l: between two consecutive such values,
// and at each, they are fixed, so the bound is a step function with at most 4 n + 3 steps. Where
// a layer is forced both in and out (inside a forbidden window) no ideal lies: +inf there.

#include <dnnplan/partition/ideal_lattice.hpp>
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

/// Maximum flow with double capacities on a small graph (Dinic's algorithm: breadth-first
/// levels, depth-first blocking flows). Residuals within `tolerance` count as saturated: the
/// flow found is feasible, so at most the minimum cut, and the bound stays valid.
class small_max_flow {
public:
    small_max_flow(std::size_t nodes, double tolerance) : head_(nodes, none), level_(nodes), next_(nodes), tolerance_(tolerance) {}

    void add_edge(std::size_t from, std::size_t to, double capacity) {
        edges_.push_back({to, head_[from], capacity});
        head_[from] = edges_.size() - 1;
        edges_.push_back({from, head_[to], 0.0});
        head_[to] = edges_.size() - 1;
    }

    [[nodiscard]] double run(std::size_t source, std::size_t sink) {
        double flow = 0.0;
        while (levels(source, sink)) {
            next_ = head_;
            while (true) {
                const double pushed = push(source, sink, std::numeric_limits<double>::infinity());
                if (!(pushed > tolerance_)) break;
                flow += pushed;
            }
        }
        return flow;
    }

private:
    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    struct edge {
        std::size_t to, next;
        double residual;
    };

    bool levels(std::size_t source, std::size_t sink) {
        std::fill(level_.begin(), level_.end(), none);
        level_[source] = 0;
        std::vector<std::size_t> queue{source};
        for (std::size_t i = 0; i < queue.size(); ++i)
            for (std::size_t e = head_[queue[i]]; e != none; e = edges_[e].next)
                if (edges_[e].residual > tolerance_ && level_[edges_[e].to] == none) {
                    level_[edges_[e].to] = level_[queue[i]] + 1;
                    queue.push_back(edges_[e].to);
                }
        return level_[sink] != none;
    }

    double push(std::size_t node, std::size_t sink, double limit) {
        if (node == sink) return limit;
        for (; next_[node] != none; next_[node] = edges_[next_[node]].next) {
            edge& e = edges_[next_[node]];
            if (e.residual <= tolerance_ || level_[e.to] != level_[node] + 1) continue;
            const double pushed = push(e.to, sink, std::min(limit, e.residual));
            if (pushed > tolerance_) {
                e.residual -= pushed;
                edges_[next_[node] ^ 1U].residual += pushed;
                return pushed;
            }
        }
        return 0.0;
    }

    std::vector<edge> edges_;
    std::vector<std::size_t> head_, level_, next_;
    double tolerance_;
};

/// What the windows-only bounds over cut positions share (window_output_bounds below;
/// stashed_closure_bounds, pipedream_lattice_closures.hpp): each layer's window, e_l and g_l shrunk
/// by a slack against rounding (as the forbidden windows are), the positions in [0, C] where the
/// forced sets change, and the layers' sides on a step between them.
class window_steps {
public:
    enum class side : std::uint8_t { free, in, out };
    struct layer_window {
        std::size_t layer;
        double first_with;    // e_l, shrunk
        double last_without;  // g_l, shrunk
    };

    window_steps(const ideal_lattice& lattice, double slack_s) {
        const double total = lattice.total_compute_s();
        breaks_ = {0.0, total};
        for (const std::size_t l : lattice.kept().order) {
            const auto w = lattice.window_of(l, slack_s);
            windows_.push_back({l, w.first_with, w.last_without});
            breaks_.push_back(w.first_with);
            breaks_.push_back(w.last_without);
        }
        std::sort(breaks_.begin(), breaks_.end());
        breaks_.erase(std::unique(breaks_.begin(), breaks_.end()), breaks_.end());
        while (!breaks_.empty() && breaks_.front() < 0.0) breaks_.erase(breaks_.begin());
        while (!breaks_.empty() && breaks_.back() > total) breaks_.pop_back();
    }

    [[nodiscard]] const std::vector<layer_window>& layers() const noexcept { return windows_; }

    /// step(lo, hi, open) for the point at each position where a forced set changes and for the
    /// open step after it, in order: a point b holds in = {g < b}, out = {e > b}; the open step
    /// (b, b') in = {g <= b}, out = {e >= b'}. Between and at these positions the sets are fixed.
    template <class Step>
    void for_each_step(Step&& step) const {
        for (std::size_t i = 0; i < breaks_.size(); ++i) {
            step(breaks_[i], breaks_[i], false);
            if (i + 1 < breaks_.size()) step(breaks_[i], breaks_[i + 1], true);
        }
    }

    /// The layers' sides on the step [lo, hi] (`open`: (lo, hi)) into `sides` (by layer index);
    /// true when a layer is both forced in and out: no ideal lies there.
    bool sides(double lo, double hi, bool open, std::vector<side>& sides) const {
        bool empty = false;
        for (const layer_window& w : windows_) {
            const bool in = open ? w.last_without <= lo : w.last_without < lo;
            const bool out = open ? w.first_with >= hi : w.first_with > hi;
            empty = empty || (in && out);
            sides[w.layer] = in ? side::in : out ? side::out : side::free;
        }
        return empty;
    }

private:
    std::vector<layer_window> windows_;
    std::vector<double> breaks_;
};

/// The step function of section 3.1's output bound over the cut positions (see the header
/// comment): for a position p, at most the least `out` of an ideal of compute p.
class window_output_bounds {
public:
    /// `slack_s`: the forced sets shrunk by it at both ends against rounding (as the windows are).
    window_output_bounds(const ideal_lattice& lattice, double slack_s) : steps_(lattice, slack_s) {
        for (const layer_window& w : steps_.layers()) total_activation_bytes_ += lattice.figures().activation[w.layer];
        find_dead_tensors(lattice);
        steps_.for_each_step([&](double lo, double hi, bool open) { add_step(lattice, lo, hi, open); });
        raise_by_maximal_layers(lattice);
        index_ = last_at_most_index(bytes_);
    }

    /// The largest position x in [from, to] where an ideal of compute x may have an output of
    /// at most `at_most_bytes` (by this bound); none when there is none.
    [[nodiscard]] std::optional<double> last_position(double from, double to, double at_most_bytes) const {
        const auto first = static_cast<std::size_t>(std::lower_bound(hi_.begin(), hi_.end(), from) - hi_.begin());
        const auto end = static_cast<std::size_t>(std::upper_bound(lo_.begin(), lo_.end(), to) - lo_.begin());
        const auto at = index_.find(first, end, at_most_bytes);
        if (!at) return std::nullopt;
        return std::max(from, std::min(to, hi_[*at]));
    }

    /// The bound's steps: positions [lo, hi] and the least output bytes there (+inf: no ideal).
    [[nodiscard]] std::size_t steps() const noexcept { return bytes_.size(); }
    [[nodiscard]] double step_bytes(std::size_t i) const noexcept { return bytes_[i]; }
    [[nodiscard]] std::pair<double, double> step_positions(std::size_t i) const noexcept { return {lo_[i], hi_[i]}; }

private:
    using layer_window = window_steps::layer_window;
    using side = window_steps::side;
    struct dead_interval {
        std::size_t layer;
        double to;  // an ideal holding x pays it at every position below: K(x), shrunk
    };

    // Where an ideal holding a layer pays it, as a dead tensor or on the boundary (see the
    // header comment): below K(x).
    void find_dead_tensors(const ideal_lattice& lattice) {
        const kept_layers& kept = lattice.kept();
        const auto& desc = lattice.closures().descendants;
        std::vector<double> first_with(lattice.layer_count());
        for (const layer_window& w : steps_.layers()) first_with[w.layer] = w.first_with;
        for (const std::size_t x : kept.order) {
            layer_bits below;  // at or below every successor of x so far
            for (std::size_t i = 0; i < kept.succ[x].size(); ++i) {
                const std::size_t o = kept.succ[x][i];
                layer_bits mine = lattice.empty_ideal();
                add_layer(mine, o);
                desc.for_each(o, [&](std::size_t z) { add_layer(mine, z); });
                if (i == 0) below = std::move(mine);
                else
                    for (std::size_t w = 0; w < below.size(); ++w) below[w] &= mine[w];
            }
            double join = std::numeric_limits<double>::infinity();
            for_each_layer(below, [&](std::size_t z) { join = std::min(join, first_with[z]); });
            if (join > 0.0) dead_.push_back({x, join});
        }
    }

    // A nonempty ideal D other than the whole graph pays, for each of its maximal layers a, act(a)
    // and act(E(a)), E(a) the extra layers augment adds for a alone (antichain.hpp,
    // augment_antichain: E(a) depends on a alone and misses a), so out(D) >= alpha(a) = act(a) +
    // act(E(a)). A maximal a of D has e_a <= p (D holds its down-set) and p <= g_s for each
    // successor s (D holds none), so at every p of a step some a with [e_a, min_s g_s] meeting
    // the step has alpha(a) <= out(D): the least such alpha bounds the step too. Not at 0 (the
    // empty ideal) nor at C (the whole graph).
    void raise_by_maximal_layers(const ideal_lattice& lattice) {
        const kept_layers& kept = lattice.kept();
        const double total = lattice.total_compute_s();
        std::vector<double> last_without(lattice.layer_count(), 0.0);
        for (const layer_window& w : steps_.layers()) last_without[w.layer] = w.last_without;
        std::vector<std::pair<std::pair<double, double>, double>> maximal;  // ([e_a, min_s g_s], alpha(a))
        for (const layer_window& w : steps_.layers()) {
            const double alpha = lattice.augment_extra_bytes(w.layer) + lattice.figures().activation[w.layer];
            double hi = std::numeric_limits<double>::infinity();
            for (const std::size_t s : kept.succ[w.layer]) hi = std::min(hi, last_without[s]);
            maximal.push_back({{w.first_with, hi}, alpha});
        }
        for (std::size_t i = 0; i < bytes_.size(); ++i) {
            if (lo_[i] <= 0.0 || hi_[i] >= total || !std::isfinite(bytes_[i])) continue;
            double least = std::numeric_limits<double>::infinity();
            for (const auto& [span, alpha] : maximal)
                if (span.first <= hi_[i] && span.second >= lo_[i]) least = std::min(least, alpha);
            if (std::isfinite(least)) bytes_[i] = std::max(bytes_[i], least);
        }
    }

    // The step [lo, hi]: in = {g < lo}, out = {e > hi}; for an open step (lo, hi) (`open`),
    // in = {g <= lo} and out = {e >= hi}.
    void add_step(const ideal_lattice& lattice, double lo, double hi, bool open) {
        side_.assign(lattice.layer_count(), side::free);
        paid_.assign(lattice.layer_count(), 0);
        for (const dead_interval& d : dead_)  // as the forced sets: on the whole step
            if (open ? hi <= d.to : hi < d.to) paid_[d.layer] = 1;
        const bool empty = steps_.sides(lo, hi, open, side_);
        lo_.push_back(lo);
        hi_.push_back(hi);
        // Next to a breakpoint that moves no set the step is the last one again: no new flow.
        if (!bytes_.empty() && empty == last_empty_ && side_ == last_side_ && paid_ == last_paid_) {
            bytes_.push_back(bytes_.back());
            return;
        }
        bytes_.push_back(empty ? std::numeric_limits<double>::infinity() : least_cut_bytes(lattice));
        last_empty_ = empty;
        last_side_ = side_;
        last_paid_ = paid_;
    }

    // The least activation bytes of a set of layers meeting every kept path from `in` to `out`:
    // a flow on the last in-layers of such paths (those with a successor not in) and the free
    // layers, each split into a node pair joined by its activation bytes.
    [[nodiscard]] double least_cut_bytes(const ideal_lattice& lattice) {
        const kept_layers& kept = lattice.kept();
        const auto& act = lattice.figures().activation;
        std::vector<std::size_t> id(lattice.layer_count(), none), local;
        for (const layer_window& w : steps_.layers()) {
            const std::size_t l = w.layer;
            const bool boundary = side_[l] == side::in && std::any_of(kept.succ[l].begin(), kept.succ[l].end(),
                                                                       [&](std::size_t s) { return side_[s] != side::in; });
            if (side_[l] == side::free || boundary) {
                id[l] = 2 * local.size() + 2;  // 0, 1: the source and the sink
                local.push_back(l);
            }
        }
        const double wide = 2.0 * total_activation_bytes_ + 1.0;  // uncuttable
        const double slack = 1e-9 * total_activation_bytes_;
        small_max_flow flow(2 * local.size() + 2, 1e-3 * slack);
        double paid = 0.0;  // the forced-in layers an ideal pays
        for (const layer_window& w : steps_.layers()) paid += paid_[w.layer] != 0 && side_[w.layer] == side::in ? act[w.layer] : 0.0;
        for (const std::size_t l : local) {
            if (side_[l] == side::in) flow.add_edge(0, id[l], wide);
            if (paid_[l] != 0 && side_[l] == side::free) {  // paid if D holds it, then no cut needed past it
                flow.add_edge(id[l], 1, act[l]);
                continue;
            }
            flow.add_edge(id[l], id[l] + 1, paid_[l] != 0 ? 0.0 : act[l]);
            for (const std::size_t s : kept.succ[l]) {
                if (side_[s] == side::free) flow.add_edge(id[l] + 1, id[s], wide);
                if (side_[s] == side::out) flow.add_edge(id[l] + 1, 1, wide);
            }
        }
        return std::max(0.0, paid + flow.run(0, 1) - slack);
    }

    static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    window_steps steps_;
    double total_activation_bytes_ = 0.0;
    std::vector<dead_interval> dead_;
    std::vector<side> side_, last_side_;
    std::vector<char> paid_, last_paid_;  // per layer: a dead tensor at the step
    bool last_empty_ = false;
    std::vector<double> lo_, hi_, bytes_;  // the steps, by position
    last_at_most_index index_;
};

}  // namespace dnnplan::detail
