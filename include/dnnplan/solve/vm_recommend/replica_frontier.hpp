#pragma once
// The VM recommender's exact Pareto frontier for the synchronous model with equal batches
// (model/sync_data_parallel.hpp, sync_cluster_throughput with batch_policy::equal): a dynamic
// programme over replica and instance counts instead of the branch and bound of
// solve/vm_recommend/branch_and_bound.hpp. docs/solvers/vm_recommend.md, "The frontier by replica
// counts", has the proof; in short:
//
// With equal batches the model's speed is r(c) = G(K) / combine(T_j(m(K)), T_sync(K, N)) with K =
// sum c_k g_k replicas, N = sum c_k nodes, m(K) the batch per replica, G(K) the samples per step
// and T_j the compute time of the slowest type j present (the step waits for the slowest replica;
// Pollux: Qiao et al., OSDI 2021, section 3.2; its T_sync, the node-term variant and the ring's
// depend on K and N only). combine is increasing in the compute time, so among the
// configurations with the same K and N whose types are all no slower than T_j at m(K), the
// cheapest one is at least as fast as each of them: it weakly dominates all of them. Every
// configuration c therefore has a weakly dominating candidate: for the order of the types by
// T_k(m(K)) (index on a tie) and the last type j of that order c uses, the cheapest
// configuration with c's K and N that uses j and only types before it (with the space's quotas,
// max_instances and max_distinct_types). The candidates are read off one bounded-knapsack table
// over (distinct types, N, K), filled type by type in that order: after type j, the cell holds
// the least price of the configurations using types up to j. A candidate is kept when using j is
// no dearer than not using it (otherwise a configuration of earlier, no slower, types at the same
// K and N is cheaper and weakly dominates it). Every candidate kept is rebuilt, evaluated by the
// model and offered to the frontier (search/pareto.hpp): the frontier of the candidates is the
// frontier of the space (weak dominance is transitive, and a candidate is feasible whenever a
// configuration it dominates is: it is no slower and no dearer). With a global batch the order of
// the types may change with K (m(K) = B / K): the K with the same order share one table.
//
// Offer dominance (B1 of the docs) as in the branch and bound: every type at its cheapest allowed
// price kind.

#include <dnnplan/core/status.hpp>
#include <dnnplan/model/sync_data_parallel.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/vm_recommend/offer_space.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// Whether the frontier by replica counts applies: the synchronous model with equal batches.
template <class M>
[[nodiscard]] bool vm_replica_frontier_applies(const M& model) noexcept {
    if constexpr (std::same_as<M, sync_cluster_throughput>) return model.spec().policy == batch_policy::equal;
    else return false;
}

/// The exact frontier of the offer space for sync_cluster_throughput with equal batches. Counters:
/// nodes = table cells filled, evaluations = candidates evaluated by the model. A budget stops it
/// between table rows or candidates: the frontier of the candidates evaluated so far (real,
/// feasible configurations), with the limit. One table per group of replica counts with the same
/// type order, each of cells = (distinct types tracked + 1) (max_instances + 1) (its most
/// replicas + 1) per type; fits() says whether one table is within max_cells per type and
/// max_table in all, and every table together within max_work and below the node budget (vm_run
/// runs the branch and bound otherwise, which can stop anywhere in its tree).
class vm_replica_frontier {
public:
    static constexpr double max_cells = 4194304.0;    // 2^22 cells of a type: ~130 MB of working rows
    static constexpr double max_table = 33554432.0;   // 2^25 choices of a table: 128 MB
    static constexpr double max_work = 268435456.0;   // 2^28 cells over every table: about a second

    vm_replica_frontier(const sync_cluster_throughput& model, const vm_space& space, const search_budget& budget)
        : model_(model), s_(space), guard_(budget), max_nodes_(budget.max_nodes) {
        for (std::size_t t = 0; t < s_.k_count; ++t)
            if (s_.quota[t] > 0) usable_.push_back(t);
        n_max_ = s_.max_instances;
        const auto types = static_cast<std::int64_t>(usable_.size());
        d_tracked_ = s_.max_distinct < types;
        d_dim_ = d_tracked_ ? s_.max_distinct + 1 : 1;
        const double k_max = most_replicas();
        too_large_ = cells_of(k_max) > max_cells || cells_of(k_max) * static_cast<double>(usable_.size()) > max_table;
        if (!too_large_) groups_ = orders_by_replicas(static_cast<std::int64_t>(k_max));
        for (const auto& group : groups_) work_cells_ += cells_of(static_cast<double>(group.second.back())) * static_cast<double>(usable_.size());
        counts_.assign(s_.k_count, 0);
        offer_counts_.assign(2 * s_.k_count, 0);
    }

    /// Whether every table is within the limits above and below the node budget (in doubles:
    /// quotas and GPU counts are int32, their products need not fit an int64). The budget counts
    /// as spent when the nodes reach it, so the tables must stay strictly below it.
    [[nodiscard]] bool fits() const noexcept {
        return !too_large_ && work_cells_ <= max_work && (max_nodes_ == 0 || work_cells_ < static_cast<double>(max_nodes_));
    }

    [[nodiscard]] vm_search_outcome run() {
        if (fits()) {
            for (const auto& [order, replicas] : groups_) {
                run_order(order, replicas);
                if (guard_.stopped()) break;
            }
        }
        out_.limit = guard_.limit();
        out_.counters.elapsed_s = guard_.elapsed_s();
        return std::move(out_);
    }

private:
    static constexpr double inf = std::numeric_limits<double>::infinity();
    static constexpr double tie = 1e-12;  // a candidate within this (relative) of the cheaper cell is kept

    // The most replicas of a configuration: the types with the most GPUs first, up to max_instances
    // (a box cut by one cardinality row: the greedy is exact).
    [[nodiscard]] double most_replicas() const {
        std::vector<std::size_t> by_gpus = usable_;
        std::sort(by_gpus.begin(), by_gpus.end(), [&](std::size_t a, std::size_t b) { return s_.gpus[a] > s_.gpus[b]; });
        std::int64_t left = n_max_;
        double replicas = 0.0;  // exact below 2^53, and only compared with max_cells beyond
        for (const std::size_t t : by_gpus) {
            const std::int64_t take = std::min<std::int64_t>(s_.quota[t], left);
            replicas += static_cast<double>(take) * s_.gpus[t];
            left -= take;
        }
        return replicas;
    }

    // The compute time of type t at K replicas, as sync_cluster_throughput::step_time computes it
    // (the batch per replica m = micro-batch / K).
    [[nodiscard]] double compute_time(std::size_t t, std::int64_t replicas) const noexcept {
        const auto& spec = model_.spec();
        const double k = static_cast<double>(replicas);
        const double micro_batch = spec.basis == batch_basis::global ? spec.batch : spec.batch * k;
        return spec.types[t].compute.at(micro_batch / k);
    }

    // The cells of one type's table up to k_lim replicas.
    [[nodiscard]] double cells_of(double k_lim) const noexcept {
        return static_cast<double>(d_dim_) * (static_cast<double>(n_max_) + 1.0) * (k_lim + 1.0);
    }

    // The usable types ordered by compute time at each K in [1, k_max] (index on a tie), the K with
    // the same order grouped: one group when the batch is per replica (m, hence the order, is the
    // same at every K); with a global batch up to 1 + T (T - 1) / 2 groups (affine times cross
    // at most once a pair).
    [[nodiscard]] std::vector<std::pair<std::vector<std::size_t>, std::vector<std::int64_t>>> orders_by_replicas(std::int64_t k_max) const {
        std::vector<std::pair<std::vector<std::size_t>, std::vector<std::int64_t>>> groups;
        std::vector<double> time(s_.k_count, 0.0);
        const bool one_order = model_.spec().basis != batch_basis::global;
        for (std::int64_t k = 1; k <= k_max; ++k) {
            if (one_order && !groups.empty()) {
                groups.front().second.push_back(k);
                continue;
            }
            for (const std::size_t t : usable_) time[t] = compute_time(t, k);
            std::vector<std::size_t> order = usable_;
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return time[a] < time[b]; });
            auto at = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == order; });
            if (at == groups.end()) groups.push_back({std::move(order), {k}});
            else at->second.push_back(k);
        }
        return groups;
    }

    [[nodiscard]] std::size_t cell(std::int64_t d, std::int64_t n, std::int64_t k) const noexcept {
        return static_cast<std::size_t>((d * (n_max_ + 1) + n) * (k_lim_ + 1) + k);
    }

    // One table over the types in `order`, read at the replica counts `replicas` (ascending).
    void run_order(const std::vector<std::size_t>& order, const std::vector<std::int64_t>& replicas) {
        k_lim_ = replicas.back();
        const std::size_t cells = static_cast<std::size_t>(d_dim_ * (n_max_ + 1) * (k_lim_ + 1));
        std::vector<double> before(cells, inf), after(cells, inf), with(cells, inf);
        std::vector<std::int32_t> with_count(cells, 0);
        choice_.assign(cells * order.size(), 0);
        before[cell(0, 0, 0)] = 0.0;
        for (std::size_t layer = 0; layer < order.size(); ++layer) {
            if (!fill_layer(order[layer], layer, before, after, with, with_count)) return;
            if (!offer_candidates(order, layer, replicas, before, with, with_count)) return;
            std::swap(before, after);
        }
    }

    // after = min(before, with), with(d, N, K) = min over 1 <= x <= quota of
    // before(d - 1, N - x, K - x g) + x p: the least price using type t (x of it) and types before it.
    [[nodiscard]] bool fill_layer(std::size_t t, std::size_t layer, const std::vector<double>& before,
                                  std::vector<double>& after, std::vector<double>& with,
                                  std::vector<std::int32_t>& with_count) {
        const auto g = static_cast<std::int64_t>(s_.gpus[t]);
        const double p = s_.cheapest(t);
        std::int32_t* choice = choice_.data() + layer * before.size();
        for (std::int64_t d = 0; d < d_dim_; ++d) {
            const std::int64_t from = d_tracked_ ? d - 1 : 0;
            for (std::int64_t n = 0; n <= n_max_; ++n) {
                if (guard_.exhausted(out_.counters)) return false;
                out_.counters.nodes += k_lim_ + 1;
                const std::int64_t x_hi = from < 0 ? 0 : std::min<std::int64_t>(s_.quota[t], n);
                for (std::int64_t k = 0; k <= k_lim_; ++k) {
                    double best = inf;
                    std::int32_t best_x = 0;
                    for (std::int64_t x = 1; x <= x_hi && x * g <= k; ++x) {
                        const double v = before[cell(from, n - x, k - x * g)] + static_cast<double>(x) * p;
                        if (v < best) {
                            best = v;
                            best_x = static_cast<std::int32_t>(x);
                        }
                    }
                    const std::size_t c = cell(d, n, k);
                    with[c] = best;
                    with_count[c] = best_x;
                    const bool use = best < before[c];
                    after[c] = use ? best : before[c];
                    choice[c] = use ? best_x : 0;
                }
            }
        }
        return true;
    }

    // The candidates whose last type (in `order`) is order[layer]: per (N, K) of the group, the
    // cheapest cell using it, kept when no dearer than the cheapest cell without it.
    [[nodiscard]] bool offer_candidates(const std::vector<std::size_t>& order, std::size_t layer,
                                        const std::vector<std::int64_t>& replicas, const std::vector<double>& before,
                                        const std::vector<double>& with, const std::vector<std::int32_t>& with_count) {
        for (std::int64_t n = 1; n <= n_max_; ++n) {
            for (const std::int64_t k : replicas) {
                double without = inf, best = inf;
                std::int64_t best_d = 0;
                for (std::int64_t d = 0; d < d_dim_; ++d) {
                    without = std::min(without, before[cell(d, n, k)]);
                    if (with[cell(d, n, k)] < best) {
                        best = with[cell(d, n, k)];
                        best_d = d;
                    }
                }
                if (!(best < inf) || best > without * (1.0 + tie)) continue;
                if (guard_.exhausted(out_.counters)) return false;
                evaluate(order, layer, best_d, n, k, with_count[cell(best_d, n, k)]);
            }
        }
        return true;
    }

    // Rebuilds the candidate (x of order[layer], the rest from the table's choices) and offers it.
    void evaluate(const std::vector<std::size_t>& order, std::size_t layer, std::int64_t d, std::int64_t n,
                  std::int64_t k, std::int32_t x) {
        std::fill(counts_.begin(), counts_.end(), 0);
        const std::size_t cells = choice_.size() / order.size();
        counts_[order[layer]] = x;
        n -= x;
        k -= x * static_cast<std::int64_t>(s_.gpus[order[layer]]);
        if (d_tracked_) --d;
        for (std::size_t l = layer; l-- > 0;) {
            const std::int32_t y = choice_[l * cells + cell(d, n, k)];
            if (y == 0) continue;
            counts_[order[l]] = y;
            n -= y;
            k -= y * static_cast<std::int64_t>(s_.gpus[order[l]]);
            if (d_tracked_) --d;
        }
        for (std::size_t t = 0; t < s_.k_count; ++t) {
            const bool spot = s_.cheapest_kind(t) == price_kind::spot;
            offer_counts_[2 * t] = spot ? counts_[t] : 0;
            offer_counts_[2 * t + 1] = spot ? 0 : counts_[t];
        }
        ++out_.counters.evaluations;
        const double r = model_.samples_per_s(std::span<const std::int32_t>(counts_));
        vm_offer(out_, s_, true, offer_counts_, counts_, vm_make_figures(s_, counts_, r, vm_price(s_, offer_counts_)));
    }

    const sync_cluster_throughput& model_;
    const vm_space& s_;
    budget_guard guard_;
    std::int64_t max_nodes_ = 0;  // the node budget (0: none)
    std::vector<std::size_t> usable_;
    std::int64_t n_max_ = 0, k_lim_ = 0, d_dim_ = 1;
    std::vector<std::pair<std::vector<std::size_t>, std::vector<std::int64_t>>> groups_;  // (type order, its replica counts)
    double work_cells_ = 0.0;  // the cells of every table
    bool too_large_ = false, d_tracked_ = false;
    std::vector<std::int32_t> choice_, counts_, offer_counts_;
    vm_search_outcome out_;
};

}  // namespace dnnplan::detail
