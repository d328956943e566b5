#pragma once
// The cut positions of the wide path's window bound when a graph has few enough ideals
// (docs/design/pipedream-wide-graphs.md, section 3.1, "exact points"): every nonempty ideal of the
// kept layers enumerated once by reverse search, with the sums the bound reads at each distinct
// compute sum (parameters, stashed bytes, a lower bound on PipeDream's output), and an index
// that finds the last point whose output a stage can wait for.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The cut positions of a graph with few ideals ("exact points", design section 3.1, where the
/// windows only exclude some): the distinct compute sums of its nonempty ideals, ascending, and
/// for the parameters of the ideals at them, the most over the points up to each one and the
/// least over the points from each one on (a stage from a cut at or before x to a cut at y
/// holds at least parameters_from[y] - parameters_upto[x]); the same for the stashed bytes
/// (activations and parameters, PipeDream's memory check); and a lower bound on the least output
/// of the ideals at each point (0 for the whole graph, whose state has no output transfer).
/// PipeDream's out is the activations over the augmented antichain, the maximal layers A and, for
/// each a in A, the branching ancestors E(a) with a successor that is neither a nor an ancestor
/// of a (antichain.hpp, augment_antichain); E(a) depends on a alone and misses A (A is an
/// antichain), so out >= act(A) + max over a of act(E(a)).
struct exact_points {
    std::vector<double> compute_s{};
    std::vector<double> parameters_upto{};     ///< prefix maxima of the ideals' parameters
    std::vector<double> parameters_from{};     ///< suffix minima
    std::vector<double> stashed_upto_bytes{};  ///< prefix maxima of the ideals' activations + parameters
    std::vector<double> stashed_from_bytes{};  ///< suffix minima
    std::vector<double> output_min_bytes{};    ///< at most the least output bytes of an ideal at the point
};

/// The largest index in [first, end) whose value is at most a threshold, in O(log n) (a tree of
/// minima over the values).
class last_at_most_index {
public:
    last_at_most_index() = default;
    explicit last_at_most_index(const std::vector<double>& values) : n_(values.size()) {
        while (size_ < n_) size_ *= 2;
        min_.assign(2 * size_, std::numeric_limits<double>::infinity());
        std::copy(values.begin(), values.end(), min_.begin() + static_cast<std::ptrdiff_t>(size_));
        for (std::size_t i = size_; i-- > 1;) min_[i] = std::min(min_[2 * i], min_[2 * i + 1]);
    }
    /// The largest i in [first, end) with values[i] <= at_most, if any.
    [[nodiscard]] std::optional<std::size_t> find(std::size_t first, std::size_t end, double at_most) const {
        if (first >= std::min(end, n_)) return std::nullopt;
        return search(1, 0, size_, first, std::min(end, n_), at_most);
    }

private:
    [[nodiscard]] std::optional<std::size_t> search(std::size_t node, std::size_t lo, std::size_t hi, std::size_t first, std::size_t end,
                                                    double at_most) const {
        if (hi <= first || end <= lo || min_[node] > at_most) return std::nullopt;
        if (hi - lo == 1) return lo;
        const std::size_t mid = lo + (hi - lo) / 2;
        if (const auto right = search(2 * node + 1, mid, hi, first, end, at_most)) return right;
        return search(2 * node, lo, mid, first, end, at_most);
    }
    std::size_t n_ = 0, size_ = 1;
    std::vector<double> min_;
};

/// Every nonempty ideal's compute, parameter and stashed sums and a lower bound on its output,
/// when there are at most `cap` ideals (none otherwise), and for each of `stash_caps` the ideal of
/// most compute within it (the whole graph aside). Enumerated once each by reverse search:
/// an ideal's parent is it minus its maximal layer latest in the topological order, so a child
/// D + {v} (v on D's frontier) is visited from D only when v is later than every other maximal
/// layer of D + {v} (those of D but v's in-neighbours).
class ideal_compute_enumerator {
public:
    ideal_compute_enumerator(const ideal_lattice& lattice, std::size_t cap, std::vector<double> stash_caps = {})
        : lattice_(lattice), cap_(cap), stash_caps_(std::move(stash_caps)), current_(lattice.empty_ideal()) {
        const kept_layers& kept = lattice.kept();
        most_within_.assign(stash_caps_.size(), {-1.0, layer_bits{}});
        rank_.assign(lattice.layer_count(), 0);
        for (std::size_t i = 0; i < kept.order.size(); ++i) rank_[kept.order[i]] = i;
        pending_.assign(lattice.layer_count(), 0);
        // Per depth (layers in the ideal) the frontier and the maximal layers, reused.
        avail_.resize(kept.order.size() + 1);
        maxima_.resize(kept.order.size() + 1);
        // What augmenting an antichain adds for each of its layers (ideal_lattice::augment_extra_bytes).
        augmented_extra_bytes_.assign(lattice.layer_count(), 0.0);
        for (const std::size_t l : kept.order) {
            pending_[l] = static_cast<std::uint32_t>(kept.pred[l].size());
            if (pending_[l] == 0) avail_[0].push_back(l);
            augmented_extra_bytes_[l] = lattice.augment_extra_bytes(l);
        }
        values_.reserve(std::min<std::size_t>(cap, 1u << 16));
        visit(0, {});
    }

    /// The nonempty ideals enumerated (all of them unless over the cap): for one source,
    /// PipeDream's state count (section 1.3).
    [[nodiscard]] std::size_t ideal_count() const noexcept { return values_.size(); }
    [[nodiscard]] bool complete() const noexcept { return !over_; }
    /// For each stash cap given, the ideal of most compute within it, if one is (empty: none).
    [[nodiscard]] const std::vector<std::pair<double, layer_bits>>& most_compute_within() const noexcept { return most_within_; }

    [[nodiscard]] std::optional<exact_points> points() && {
        if (over_) return std::nullopt;
        std::sort(values_.begin(), values_.end(), [](const sums& a, const sums& b) { return a.compute_s < b.compute_s; });
        exact_points out;
        for (const sums& v : values_) {
            if (out.compute_s.empty() || v.compute_s != out.compute_s.back()) {
                out.compute_s.push_back(v.compute_s);
                out.parameters_upto.push_back(v.parameter_bytes);
                out.parameters_from.push_back(v.parameter_bytes);
                out.stashed_upto_bytes.push_back(v.stashed_bytes);
                out.stashed_from_bytes.push_back(v.stashed_bytes);
                out.output_min_bytes.push_back(v.output_bytes);
            }
            out.parameters_upto.back() = std::max(out.parameters_upto.back(), v.parameter_bytes);
            out.parameters_from.back() = std::min(out.parameters_from.back(), v.parameter_bytes);
            out.stashed_upto_bytes.back() = std::max(out.stashed_upto_bytes.back(), v.stashed_bytes);
            out.stashed_from_bytes.back() = std::min(out.stashed_from_bytes.back(), v.stashed_bytes);
            out.output_min_bytes.back() = std::min(out.output_min_bytes.back(), v.output_bytes);
        }
        for (std::size_t i = 1; i < out.compute_s.size(); ++i) {
            out.parameters_upto[i] = std::max(out.parameters_upto[i], out.parameters_upto[i - 1]);
            out.stashed_upto_bytes[i] = std::max(out.stashed_upto_bytes[i], out.stashed_upto_bytes[i - 1]);
        }
        for (std::size_t i = out.compute_s.size(); i-- > 1;) {
            out.parameters_from[i - 1] = std::min(out.parameters_from[i - 1], out.parameters_from[i]);
            out.stashed_from_bytes[i - 1] = std::min(out.stashed_from_bytes[i - 1], out.stashed_from_bytes[i]);
        }
        return out;
    }

private:
    struct sums {
        double compute_s = 0.0, parameter_bytes = 0.0, stashed_bytes = 0.0, output_bytes = 0.0;
    };

    // The children of the ideal at `depth` (its frontier avail_[depth], its maximal layers
    // maxima_[depth]) with its sums `at` (output aside).
    void visit(std::size_t depth, const sums& at) {
        const layer_figures& f = lattice_.figures();
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
            sums next{.compute_s = at.compute_s + f.compute[v], .parameter_bytes = at.parameter_bytes + f.parameter[v],
                      .stashed_bytes = at.stashed_bytes + f.activation[v] + f.parameter[v]};
            if (depth + 1 < kept.order.size()) {  // the whole graph's state has no output
                double extra = 0.0;
                for (const std::size_t u : next_max) next.output_bytes += f.activation[u], extra = std::max(extra, augmented_extra_bytes_[u]);
                next.output_bytes += extra;
            }
            values_.push_back(next);
            add_layer(current_, v);
            if (depth + 1 < kept.order.size())
                for (std::size_t j = 0; j < stash_caps_.size(); ++j)
                    if (next.stashed_bytes <= stash_caps_[j] && next.compute_s > most_within_[j].first) most_within_[j] = {next.compute_s, current_};
            auto& next_avail = avail_[depth + 1];
            next_avail.clear();
            for (const std::size_t a : avail_[depth])
                if (a != v) next_avail.push_back(a);
            for (const std::size_t w : kept.succ[v])
                if (--pending_[w] == 0) next_avail.push_back(w);
            visit(depth + 1, next);
            current_[v / 64] &= ~(std::uint64_t{1} << (v % 64));
            for (const std::size_t w : kept.succ[v]) ++pending_[w];
        }
    }

    const ideal_lattice& lattice_;
    std::size_t cap_;
    std::vector<std::size_t> rank_;
    std::vector<std::uint32_t> pending_;
    std::vector<std::vector<std::size_t>> avail_, maxima_;
    std::vector<sums> values_;  // per ideal
    std::vector<double> augmented_extra_bytes_;  // per layer
    std::vector<double> stash_caps_;
    layer_bits current_;  // the ideal being visited
    std::vector<std::pair<double, layer_bits>> most_within_;  // per stash cap: (compute, ideal)
    bool over_ = false;
};

}  // namespace dnnplan::detail
