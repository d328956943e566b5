#pragma once
// UB3 of docs/design/pipedream-wide-graphs.md, section 3.2: an exact search over a restricted
// family of ideals. The family (the cuts of the packer's plans, and the ideals one layer away
// from the best plan's cuts) is turned into PipeDream's states, in an order by size, with
// predecessor rows by subset tests (section 1.3: P(j) is strict inclusion), and the existing
// row solver (partition/pipedream_row.hpp) finds the best partition among them. Rounds repeat
// around each better plan (a local search). Every plan it returns is a chain of real ideals,
// priced by lattice_pricer.

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_cost.hpp>
#include <dnnplan/partition/pipedream_lattice_bounds.hpp>
#include <dnnplan/partition/pipedream_lattice_pack.hpp>
#include <dnnplan/partition/pipedream_row.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace dnnplan::detail {

[[nodiscard]] inline std::size_t layer_count_of(const layer_bits& bits) noexcept {
    std::size_t c = 0;
    for (const std::uint64_t w : bits) c += static_cast<std::size_t>(std::popcount(w));
    return c;
}

/// PipeDream's states of a family of nonempty ideals, smallest first (a topological order of
/// inclusion): figures and `out` per state (ideal_lattice::state_of), D_j as layer rows, and the
/// predecessors of j the ideals strictly inside D_j.
[[nodiscard]] inline antichain_states antichain_states_from_ideals(const ideal_lattice& lattice, std::vector<layer_bits> ideals) {
    std::sort(ideals.begin(), ideals.end(), [](const layer_bits& a, const layer_bits& b) {
        const std::size_t ca = layer_count_of(a), cb = layer_count_of(b);
        return ca != cb ? ca < cb : a < b;
    });
    ideals.erase(std::unique(ideals.begin(), ideals.end()), ideals.end());
    ideals.erase(std::remove_if(ideals.begin(), ideals.end(), [](const layer_bits& d) { return layer_count_of(d) == 0; }),
                 ideals.end());
    const std::size_t s_count = ideals.size();
    antichain_states out;
    for (std::size_t i = 0; i < lattice.layer_count(); ++i)
        if (lattice.kept().removed[i]) out.removed_layers.push_back(i);
    out.layer_sets = bitset_rows(s_count, lattice.layer_count());
    out.predecessor_sets = bitset_rows(s_count);
    out.states.reserve(s_count);
    for (std::size_t j = 0; j < s_count; ++j) {
        out.states.push_back(lattice.state_of(ideals[j]));
        for_each_layer(ideals[j], [&](std::size_t l) { out.layer_sets.set(j, l); });
        for (std::size_t k = 0; k < j; ++k)
            if (is_subset(ideals[k], ideals[j]) && ideals[k] != ideals[j]) out.predecessor_sets.set(j, k);
    }
    return out;
}

/// The local search: a family of ideals grown around the best plan, each round solved exactly.
class lattice_local_search {
public:
    lattice_local_search(const ideal_lattice& lattice, const wide_setting& setting, std::size_t max_family,
                         std::int64_t max_state_pairs)
        : lattice_(lattice), s_(setting), max_family_(max_family), max_state_pairs_(max_state_pairs), frontier_(lattice) {}

    /// Adds the cuts of a plan to the family (while it has room).
    void add_cuts(const lattice_plan& plan) {
        for (const layer_bits& cut : plan.cuts) add(cut);
    }

    /// With transfers: of the down-sets of single layers (principal ideals), the one with the
    /// least output in each of `bins` equal ranges of compute. The packer's fills end wherever the
    /// compute runs out; on the nasnets their cuts' outputs (PipeDream's augmented `out`) are 2-3
    /// times those of principal ideals at the same compute, and a stage waits 2 out / (B r R) for
    /// them (pipedream_cost.hpp), so UB3 gets these cheap cuts to choose from.
    void add_low_output_ideals(std::size_t bins) {
        const double total = lattice_.total_compute_s();
        if (bins == 0 || !(total > 0.0)) return;  // no compute to range over
        std::vector<std::pair<double, layer_bits>> least(bins, {std::numeric_limits<double>::infinity(), layer_bits{}});
        for (const std::size_t v : lattice_.kept().order) {
            layer_bits d = lattice_.empty_ideal();
            add_layer(d, v);
            lattice_.closures().ancestors.for_each(v, [&](std::size_t a) { add_layer(d, a); });
            if (d == lattice_.full_ideal()) continue;
            const antichain_state st = lattice_.state_of(d);
            const auto bin = std::min(bins - 1, static_cast<std::size_t>(st.compute_s / total * static_cast<double>(bins)));
            if (st.output_activation_bytes < least[bin].first) least[bin] = {st.output_activation_bytes, std::move(d)};
        }
        for (const auto& [bytes, d] : least)
            if (std::isfinite(bytes)) add(d);
    }

    /// Adds first stages found apart (the first stages of most compute within the memory caps).
    void add_first_stages(const std::vector<first_stage>& stages) {
        for (const first_stage& f : stages) add(f.cut);
    }

    /// Rounds of: the ideals one layer away from the best plan's cuts join the family, and the
    /// best partition over the family replaces the plan when faster. Returns the best plan and
    /// its price; stops when a round finds nothing faster, after `rounds`, or at the budget.
    std::pair<lattice_plan, double> improve(lattice_plan best, double best_time, int rounds) {
        for (int round = 0; round < rounds; ++round) {
            add_cuts(best);
            for (const layer_bits& cut : best.cuts) add_neighbours(cut);
            std::optional<lattice_plan> found = solve_family(best_time);
            if (!found) break;
            const double time = lattice_pricer(lattice_, s_, *found).time_s(found->replicas);
            if (!(time < best_time)) break;
            best = std::move(*found);
            best_time = time;
        }
        return {std::move(best), best_time};
    }

    [[nodiscard]] std::size_t family_size() const noexcept { return family_.size(); }
    [[nodiscard]] const pipedream_counters& work() const noexcept { return work_; }

private:
    void add(const layer_bits& d) {
        if (family_.size() < max_family_) family_.insert(d);
    }

    // D plus one layer of its frontier, and D minus one of its maximal layers.
    void add_neighbours(const layer_bits& d) {
        frontier_.reset(d);
        for (const std::size_t v : frontier_.available()) {
            layer_bits up = d;
            add_layer(up, v);
            add(up);
        }
        for (const std::size_t u : lattice_.maximal_layers(d)) {
            layer_bits down = d;
            down[u / 64] &= ~(std::uint64_t{1} << (u % 64));
            add(down);
        }
    }

    // The best partition over the family faster than `below`, if any (the row solver's bounded
    // search of row 0; its plan traced as pipedream_levels::trace_plan does). Idle machines go at
    // the end, where lattice_pricer puts them.
    [[nodiscard]] std::optional<lattice_plan> solve_family(double below) {
        std::vector<layer_bits> ideals(family_.begin(), family_.end());
        ideals.push_back(lattice_.full_ideal());
        const antichain_states built = antichain_states_from_ideals(lattice_, std::move(ideals));
        const pipedream_stage_cost cost(built, s_.level());
        const auto m_count = static_cast<std::size_t>(s_.machines);
        // max_state_pairs_ caps the pairs of every round together (the counters run on).
        if (!solve_pipedream_row(cost, built, nullptr, 0, s_.machines, s_.straight, s_.fewer, row_, scratch_, work_, below,
                                 max_state_pairs_, 0))
            return std::nullopt;
        std::size_t j = built.states.size() - 1, m = m_count - 1;
        if (!(row_.at(j, m) < below)) return std::nullopt;
        lattice_plan plan;
        while (true) {
            const pipedream_choice& ch = row_.choice[j * m_count + m];
            layer_bits cut = lattice_.empty_ideal();
            built.layer_sets.for_each(j, [&](std::size_t l) { add_layer(cut, l); });
            plan.cuts.push_back(std::move(cut));
            plan.replicas.push_back(ch.replicas);
            if (ch.split_state < 0) break;
            j = static_cast<std::size_t>(ch.split_state);
            m = static_cast<std::size_t>(ch.left_machines);
        }
        std::reverse(plan.cuts.begin(), plan.cuts.end());
        std::reverse(plan.replicas.begin(), plan.replicas.end());
        return plan;
    }

    const ideal_lattice& lattice_;
    wide_setting s_;
    std::size_t max_family_;
    std::int64_t max_state_pairs_;
    lattice_frontier frontier_;
    std::set<layer_bits> family_;
    pipedream_row row_;
    pipedream_scratch scratch_;
    pipedream_counters work_;
};

}  // namespace dnnplan::detail
