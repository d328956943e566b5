#pragma once
// The ideals (down-sets) of PipeDream's kept layer DAG, held implicitly as bit sets over the
// layer indices. For a kept graph with a single source, PipeDream's antichain states are exactly
// its nonempty ideals and its predecessor relation P(j) is strict inclusion
// (docs/design/pipedream-wide-graphs.md, section 1.3), so a chain of ideals
// {} = D^0 < D^1 < ... < D^s = V is a path of PipeDream's recurrence, with no state numbered:
// the wide path (partition/pipedream_wide.hpp) works on these.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dnnplan::detail {

/// A set of layers, one bit per layer index.
using layer_bits = std::vector<std::uint64_t>;

[[nodiscard]] inline bool has_layer(const layer_bits& bits, std::size_t l) noexcept { return (bits[l / 64] >> (l % 64)) & 1U; }
inline void add_layer(layer_bits& bits, std::size_t l) noexcept { bits[l / 64] |= std::uint64_t{1} << (l % 64); }

/// Calls f(l) for every layer of `bits`, in layer order.
template <class F>
void for_each_layer(const layer_bits& bits, F&& f) {
    for (std::size_t w = 0; w < bits.size(); ++w)
        for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) f(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
}

/// Whether `inner` is a subset of `outer` (the predecessor test of section 1.3: n / 64 words).
[[nodiscard]] inline bool is_subset(const layer_bits& inner, const layer_bits& outer) noexcept {
    for (std::size_t w = 0; w < inner.size(); ++w)
        if ((inner[w] & ~outer[w]) != 0) return false;
    return true;
}

/// The kept layers of a graph with their closures and figures, and PipeDream's state of an ideal.
class ideal_lattice {
public:
    explicit ideal_lattice(const layer_graph& graph)
        : kept_(keep_pipedream_layers(graph)), closures_(close_layers(kept_)), figures_(graph),
          branching_(branching_layers(kept_)), extra_(1, graph.size()), words_((graph.size() + 63) / 64) {
        full_.assign(words_, 0);
        for (const std::size_t l : kept_.order) {
            add_layer(full_, l);
            total_compute_ += figures_.compute[l];
        }
    }

    [[nodiscard]] const kept_layers& kept() const noexcept { return kept_; }
    [[nodiscard]] const layer_closures& closures() const noexcept { return closures_; }
    [[nodiscard]] const layer_figures& figures() const noexcept { return figures_; }
    [[nodiscard]] std::size_t layer_count() const noexcept { return kept_.removed.size(); }
    [[nodiscard]] std::size_t kept_count() const noexcept { return kept_.order.size(); }
    [[nodiscard]] double total_compute_s() const noexcept { return total_compute_; }
    [[nodiscard]] layer_bits empty_ideal() const { return layer_bits(words_, 0); }
    [[nodiscard]] const layer_bits& full_ideal() const noexcept { return full_; }

    /// Where kept layer l can be cut around: e_l, the least compute of an ideal holding l (its
    /// down-set's), and g_l, the most of one without it (C less its up-set's), each moved out by
    /// `slack_s` against rounding (e_l - slack, g_l + slack).
    struct compute_window {
        double first_with = 0.0;
        double last_without = 0.0;
    };
    [[nodiscard]] compute_window window_of(std::size_t l, double slack_s) const {
        double down = figures_.compute[l], up = figures_.compute[l];
        closures_.ancestors.for_each(l, [&](std::size_t a) { down += figures_.compute[a]; });
        closures_.descendants.for_each(l, [&](std::size_t d) { up += figures_.compute[d]; });
        return {down - slack_s, total_compute_ - up + slack_s};
    }

    /// act(E(l)): the activations PipeDream's augment adds for kept layer l alone (antichain.hpp,
    /// augment_antichain: its branching ancestors with a successor that is neither l nor an
    /// ancestor of l), l's own left out. An ideal with l maximal pays at least this plus act(l).
    [[nodiscard]] double augment_extra_bytes(std::size_t l) const {
        double bytes = 0.0;
        for (const std::size_t x : augment_antichain(kept_, closures_, branching_, {l}, extra_))
            if (x != l) bytes += figures_.activation[x];
        return bytes;
    }

    /// The number of kept layers without a kept in-neighbour (section 1.3 needs exactly one).
    [[nodiscard]] std::size_t source_count() const noexcept {
        return static_cast<std::size_t>(
            std::count_if(kept_.order.begin(), kept_.order.end(), [&](std::size_t l) { return kept_.pred[l].empty(); }));
    }

    /// The maximal layers of ideal d, in layer order: PipeDream's key of the state d.
    [[nodiscard]] std::vector<std::size_t> maximal_layers(const layer_bits& d) const {
        std::vector<std::size_t> top;
        for_each_layer(d, [&](std::size_t l) {
            if (std::none_of(kept_.succ[l].begin(), kept_.succ[l].end(), [&](std::size_t s) { return has_layer(d, s); }))
                top.push_back(l);
        });
        return top;
    }

    /// PipeDream's state of the nonempty ideal d: its augmented antichain (graph.py augment of
    /// the maximal layers), the sums of the figures over d, and the activations over the augmented
    /// antichain, PipeDream's `out` with its dead tensors (section 2, "PipeDream's out quirk").
    [[nodiscard]] antichain_state state_of(const layer_bits& d) const {
        antichain_state st;
        st.antichain = augment_antichain(kept_, closures_, branching_, maximal_layers(d), extra_);
        for (const std::size_t u : st.antichain) st.output_activation_bytes += figures_.activation[u];
        for_each_layer(d, [&](std::size_t l) {
            st.compute_s += figures_.compute[l];
            st.activation_bytes += figures_.activation[l];
            st.parameter_bytes += figures_.parameter[l];
        });
        return st;
    }

    /// Whether d is an ideal of the kept layers: every kept layer of d has its kept in-neighbours in d.
    [[nodiscard]] bool is_ideal(const layer_bits& d) const {
        bool ok = true;
        for_each_layer(d, [&](std::size_t l) {
            if (kept_.removed[l]) ok = false;
            for (const std::size_t p : kept_.pred[l]) ok = ok && has_layer(d, p);
        });
        return ok;
    }

private:
    kept_layers kept_;
    layer_closures closures_;
    layer_figures figures_;
    bitset_rows branching_;
    mutable bitset_rows extra_;  // augment's scratch
    std::size_t words_;
    layer_bits full_;
    double total_compute_ = 0.0;
};

}  // namespace dnnplan::detail
