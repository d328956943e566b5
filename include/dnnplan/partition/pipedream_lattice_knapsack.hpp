#pragma once
// The memory side of the window bound when only the windows are known (the nasnets; class
// window_relaxation in partition/pipedream_lattice_bounds.hpp): how much compute a stage can hold
// within a budget of stashed bytes (activations and parameters), from the layers it may hold.
//
// A relaxation: a stage (p, p'] holds X = I' \ I, C(I) = p, C(I') = p', so its compute is exactly
// p' - p, and each of its layers has e_l <= p' (e_l: the compute of l's down-set; an ideal holding
// l holds its down-set). Precedence aside, the least stashed bytes of a set of such layers with a
// given compute is at least the fractional knapsack's: the layers in increasing order of stashed
// bytes per compute, the last one in part (the greedy order is optimal for the fractional
// knapsack: Dantzig, "Discrete-variable extremum problems", Operations Research 5(2), 1957). So
// the most compute within a budget is at most this knapsack's, over any superset of the layers
// with e_l <= p'.

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dnnplan::detail {

/// The fractional knapsack of a stage's compute against its stashed bytes, over the layers with
/// e_l <= to. The layers are cut into at most `groups` prefixes in increasing e_l, each sorted by
/// bytes per compute once; a query takes the smallest prefix holding every layer with e_l <= to
/// (a superset: a relaxation still), so it costs three binary searches and no allocation.
class stashed_compute_knapsack {
public:
    struct layer {
        double first_with = 0.0;  // e_l
        double compute_s = 0.0;
        double stashed_bytes = 0.0;
    };

    explicit stashed_compute_knapsack(std::vector<layer> layers, std::size_t groups = 128) {
        // Layers without compute add bytes and no compute: never worth taking for the least bytes,
        // always for the most (kept apart, by e_l).
        std::sort(layers.begin(), layers.end(), [](const layer& a, const layer& b) { return a.first_with < b.first_with; });
        free_bytes_upto_.assign(1, 0.0);
        for (const layer& l : layers)
            if (!(l.compute_s > 0.0)) {
                free_first_with_.push_back(l.first_with);
                free_bytes_upto_.push_back(free_bytes_upto_.back() + l.stashed_bytes);
            }
        std::erase_if(layers, [](const layer& l) { return !(l.compute_s > 0.0); });
        const std::size_t n = layers.size();
        for (const layer& l : layers) first_with_.push_back(l.first_with);
        groups = std::max<std::size_t>(1, std::min(groups, n));
        for (std::size_t g = 1; g <= groups; ++g) group_end_.push_back((g * n + groups - 1) / groups);
        // By bytes per compute, compared as products (no division, zero bytes first).
        std::vector<std::size_t> by_density(n);
        for (std::size_t i = 0; i < n; ++i) by_density[i] = i;
        std::sort(by_density.begin(), by_density.end(), [&](std::size_t a, std::size_t b) {
            return layers[a].stashed_bytes * layers[b].compute_s < layers[b].stashed_bytes * layers[a].compute_s;
        });
        compute_upto_s_.resize(group_end_.size());
        stashed_upto_bytes_.resize(group_end_.size());
        for (std::size_t g = 0; g < group_end_.size(); ++g) {
            std::vector<double>& c = compute_upto_s_[g];
            std::vector<double>& s = stashed_upto_bytes_[g];
            c.assign(1, 0.0);
            s.assign(1, 0.0);
            for (const std::size_t i : by_density)
                if (i < group_end_[g]) {
                    c.push_back(c.back() + layers[i].compute_s);
                    s.push_back(s.back() + layers[i].stashed_bytes);
                }
        }
    }

    /// The most compute of a set of layers with e_l <= to (fractions allowed) whose stashed bytes
    /// are at most budget_bytes; 0 for a negative budget.
    [[nodiscard]] double most_compute_s(double to, double budget_bytes) const noexcept {
        if (budget_bytes < 0.0) return 0.0;
        const auto count = static_cast<std::size_t>(std::upper_bound(first_with_.begin(), first_with_.end(), to) - first_with_.begin());
        if (count == 0) return 0.0;
        const auto g = static_cast<std::size_t>(std::lower_bound(group_end_.begin(), group_end_.end(), count) - group_end_.begin());
        const std::vector<double>& c = compute_upto_s_[g];
        const std::vector<double>& s = stashed_upto_bytes_[g];
        // s[i] <= budget for the first i layers by density; the next one (if any) in part.
        const auto i = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), budget_bytes) - s.begin()) - 1;
        if (i + 1 >= s.size()) return c.back();
        return c[i] + (c[i + 1] - c[i]) * (budget_bytes - s[i]) / (s[i + 1] - s[i]);
    }

    /// The most stashed bytes of a set of layers with e_l <= to (fractions allowed) whose compute
    /// is at most compute_s: the densest layers, i.e. all but the least stashed bytes of the rest.
    [[nodiscard]] double most_stashed_bytes(double to, double compute_s) const noexcept {
        const auto free = static_cast<std::size_t>(std::upper_bound(free_first_with_.begin(), free_first_with_.end(), to) -
                                                   free_first_with_.begin());
        return free_bytes_upto_[free] + most_computed_bytes(to, compute_s);
    }

private:
    [[nodiscard]] double most_computed_bytes(double to, double compute_s) const noexcept {
        const auto count = static_cast<std::size_t>(std::upper_bound(first_with_.begin(), first_with_.end(), to) - first_with_.begin());
        if (count == 0 || compute_s <= 0.0) return 0.0;
        const auto g = static_cast<std::size_t>(std::lower_bound(group_end_.begin(), group_end_.end(), count) - group_end_.begin());
        const std::vector<double>& c = compute_upto_s_[g];
        const std::vector<double>& s = stashed_upto_bytes_[g];
        const double rest = c.back() - compute_s;  // the least bytes of the rest: the first layers by density
        if (rest <= 0.0) return s.back();
        const auto i = static_cast<std::size_t>(std::upper_bound(c.begin(), c.end(), rest) - c.begin()) - 1;
        if (i + 1 >= c.size()) return s.back();
        return s.back() - (s[i] + (s[i + 1] - s[i]) * (rest - c[i]) / (c[i + 1] - c[i]));
    }

    std::vector<double> first_with_;                 // e_l ascending
    std::vector<std::size_t> group_end_;              // prefix g: the first group_end_[g] layers by e_l
    std::vector<std::vector<double>> compute_upto_s_;  // per prefix, by bytes per compute: running sums
    std::vector<std::vector<double>> stashed_upto_bytes_;
    std::vector<double> free_first_with_, free_bytes_upto_;  // the layers without compute, by e_l
};

}  // namespace dnnplan::detail
