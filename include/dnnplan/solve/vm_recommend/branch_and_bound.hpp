#pragma once
// The VM recommender's exact search (Srifty: Luo et al., MLSys 2022) over the offer space of
// solve/vm_recommend/offer_space.hpp: a branch and bound over counts per type with the bounds
// B0-B10 proved in docs/solvers/vm_recommend.md, and vm_run, which picks it, the frontier by
// replica counts (solve/vm_recommend/replica_frontier.hpp) or the exhaustive oracle
// (solve/vm_recommend/exhaustive.hpp) for a model and a search.
//
// Offer dominance (B1): the model sees counts per type only, so moving an instance of type k
// from one price kind to the other keeps r and every space constraint; all objectives and the
// constraints prefer the lower price. The branch and bound therefore searches counts per type,
// each type at its cheapest allowed price (spot on a tie), which loses no optimal value and no
// frontier point. The exhaustive oracle enumerates the offer space itself.

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/vm_recommend/exhaustive.hpp>
#include <dnnplan/solve/vm_recommend/offer_space.hpp>
#include <dnnplan/solve/vm_recommend/replica_frontier.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// Depth-first branch and bound over counts per type (each at its cheapest allowed price, B1).
/// The one-instance clusters are evaluated first, then the tree covers the clusters of at least
/// two instances (B7). One level per usable type; the bounds of a node hold for every completion
/// of its prefix with at least min_instances_ instances (and, B10, the speed it must reach).
template <linearly_bounded_throughput_model M>
class vm_branch_and_bound {
public:
    vm_branch_and_bound(const M& model, const vm_space& space, bool pareto, const search_budget& budget,
                        double relative_gap)
        : model_(model), s_(space), pareto_(pareto), relative_gap_(relative_gap), guard_(budget) {
        const std::size_t k = s_.k_count;
        counts_.assign(k, 0);
        lo_.assign(k, 0);
        hi_.assign(k, 0);
        rate_.assign(k, 0.0);
        slab_rate_.assign(k, 0.0);
        offer_counts_.assign(2 * k, 0);
        order_.reserve(k);
        for (std::size_t t = 0; t < k; ++t)
            if (s_.quota[t] > 0) perm_.push_back(t);
        // Types in order of their root bound: best throughput per USD first (fastest first for
        // max_throughput), so that the first leaves are good plans and the incumbent prunes early.
        for (const std::size_t t : perm_)
            hi_[t] = static_cast<std::int32_t>(std::min<std::int64_t>(s_.quota[t], s_.max_instances));
        model_.samples_per_s_linear_bound(std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                                          std::span<double>(rate_), std::min<std::int64_t>(2, s_.max_instances), 0.0);
        std::vector<double> key(k, 0.0);
        for (const std::size_t t : perm_)
            key[t] = s_.objective == objective_kind::max_throughput ? -rate_[t] : s_.cheapest(t) / rate_[t];
        std::stable_sort(perm_.begin(), perm_.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    }

    // B7: the one-instance clusters first (one leaf per usable type, in search order), then the
    // tree over the clusters of at least two instances, whose bounds may use that (a cluster of
    // one instance synchronises within its node, or not at all).
    [[nodiscard]] vm_search_outcome run() {
        min_instances_ = 1;
        const node_bound root = bound(0, state{});
        if (root.prune) {
            ++out_.counters.pruned_by_constraint;
        } else {
            for (const std::size_t t : perm_) {
                if (out_of_budget()) {
                    out_.unexplored_key_lb = std::min(out_.unexplored_key_lb, root.key_lb);
                    break;
                }
                counts_[t] = 1;
                evaluate_leaf(state{.count = 1, .distinct = 1, .price = s_.cheapest(t)});
                counts_[t] = 0;
            }
            min_instances_ = 2;
            if (!guard_.stopped() && s_.max_instances >= 2) search(0, state{});
        }
        out_.limit = guard_.limit();
        out_.counters.elapsed_s = guard_.elapsed_s();
        return std::move(out_);
    }

private:
    struct state {
        std::int64_t count = 0;     // instances fixed
        std::int64_t distinct = 0;  // types fixed at a positive count
        double price = 0.0;         // P of the fixed types
    };
    struct node_bound {
        bool prune = false;        // a constraint cannot be met, or the objective bound cuts
        bool by_constraint = false;
        double key_lb = 0.0;       // lower bound on the key of every completion
        double first_lb = 0.0;     // lower bounds on the frontier coordinates
        double second_lb = 0.0;
    };

    static constexpr double slack = 1e-9;  // rounding margin of the constraint cuts

    [[nodiscard]] bool out_of_budget() noexcept { return guard_.exhausted(out_.counters); }

    // Bounds over every completion of the prefix perm_[0, depth) (B2-B6, B9, B10 of the docs).
    [[nodiscard]] node_bound bound(std::size_t depth, const state& f) noexcept {
        ++out_.counters.nodes;
        const std::int64_t cap_left = s_.max_instances - f.count;
        set_box(depth, f, cap_left);
        if (!reaches_min_instances(depth, f)) return pruned_by_constraint();
        // The speed every feasible completion needs: min_samples_per_s, and work / deadline.
        const double r_need = std::max(s_.min_samples_per_s, s_.work > 0.0 ? s_.work / s_.deadline_s : 0.0);
        model_.samples_per_s_linear_bound(std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                                          std::span<double>(rate_), min_instances_, r_need);
        double r_fixed = 0.0;
        for (std::size_t i = 0; i < depth; ++i) r_fixed += static_cast<double>(counts_[perm_[i]]) * rate_[perm_[i]];
        const double r_ub = speed_upper_bound(depth, f, cap_left, r_fixed);
        if (!(r_ub > 0.0) || r_ub < r_need) return pruned_by_constraint();

        // B4: P >= P_fixed + max(cheapest free instance if none is fixed yet,
        //                        min { y.p : 0 <= y <= hi, y.w >= r_need - R_fixed }) (fractional cover).
        double p_first = 0.0;
        if (f.count == 0) {
            p_first = std::numeric_limits<double>::infinity();
            for (const std::size_t t : order_) p_first = std::min(p_first, s_.cheapest(t));
        }
        const double p_cover = cover_price(r_need - r_fixed, rate_);
        const double p_lb = f.price + std::max(p_first, p_cover);
        if (p_lb > s_.max_usd_per_h * (1.0 + slack)) return pruned_by_constraint();

        const double ratio_lb = price_per_speed_lower_bound(f, r_fixed, cap_left, p_lb, r_ub);
        node_bound nb = objective_bounds(r_ub, p_lb, ratio_lb);
        if (pareto_) {
            nb.prune = out_.frontier.dominates_region(nb.first_lb, nb.second_lb, relative_gap_) ||
                       staircase_dominates(nb, f, p_first, r_need);
        } else if (out_.best.has_plan()) {
            const double inc = out_.best.key();
            nb.prune = nb.key_lb >= inc - relative_gap_ * std::abs(inc);
        }
        return nb;
    }

    [[nodiscard]] static node_bound pruned_by_constraint() noexcept {
        node_bound nb;
        nb.prune = nb.by_constraint = true;
        return nb;
    }

    // The box of the completions: fixed types at their count, free types in [0, hi].
    void set_box(std::size_t depth, const state& f, std::int64_t cap_left) noexcept {
        const bool types_left = f.distinct < s_.max_distinct;
        for (std::size_t i = 0; i < perm_.size(); ++i) {
            const std::size_t t = perm_[i];
            if (i < depth) {
                lo_[t] = hi_[t] = counts_[t];
            } else {
                lo_[t] = 0;
                hi_[t] = types_left ? static_cast<std::int32_t>(std::min<std::int64_t>(s_.quota[t], cap_left)) : 0;
            }
        }
    }

    // The clusters of this search have at least min_instances_ instances (B7): can the box hold one?
    [[nodiscard]] bool reaches_min_instances(std::size_t depth, const state& f) const noexcept {
        std::int64_t reachable = f.count;
        for (std::size_t i = depth; i < perm_.size(); ++i) reachable += hi_[perm_[i]];
        return std::min(reachable, s_.max_instances) >= min_instances_;
    }

    // An upper bound on the speed of every completion, with the rounding margin; leaves order_
    // holding the free types with room.
    [[nodiscard]] double speed_upper_bound(std::size_t depth, const state& f, std::int64_t cap_left,
                                           double r_fixed) noexcept {
        // B2: r <= R_fixed + max { y.w : 0 <= y <= hi, sum y <= cap_left } (greedy by w), and
        // B3: with a budget, r <= R_fixed + max { y.w : 0 <= y <= hi, y.p <= P_max - P_fixed }
        // (fractional knapsack, greedy by w / p).
        order_.clear();
        for (std::size_t i = depth; i < perm_.size(); ++i)
            if (hi_[perm_[i]] > 0) order_.push_back(perm_[i]);
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return rate_[a] > rate_[b]; });
        double r_count = r_fixed;
        std::int64_t left = cap_left;
        for (const std::size_t t : order_) {
            if (left <= 0) break;
            const std::int64_t take = std::min<std::int64_t>(hi_[t], left);
            r_count += static_cast<double>(take) * rate_[t];
            left -= take;
        }
        double r_budget = std::numeric_limits<double>::infinity();
        if (std::isfinite(s_.max_usd_per_h)) {
            std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
                return rate_[a] / s_.cheapest(a) > rate_[b] / s_.cheapest(b);
            });
            r_budget = r_fixed;
            double money = s_.max_usd_per_h - f.price;
            for (const std::size_t t : order_) {
                if (money <= 0.0) break;
                const double units = std::min(static_cast<double>(hi_[t]), money / s_.cheapest(t));
                r_budget += units * rate_[t];
                money -= units * s_.cheapest(t);
            }
        }
        // B2': the model's own bound over the box with at most max_instances instances.
        double r_box = std::numeric_limits<double>::infinity();
        if constexpr (box_bounded_throughput_model<M>)
            r_box = model_.samples_per_s_upper_bound(std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                                                     s_.max_instances, min_instances_);
        return std::min({r_count, r_budget, r_box}) * (1.0 + slack);
    }

    // A lower bound on the price per speed P / r of every completion.
    [[nodiscard]] double price_per_speed_lower_bound(const state& f, double r_fixed, std::int64_t cap_left, double p_lb,
                                                     double r_ub) noexcept {
        // B5: P / r >= P / (sum c w) >= min(P_fixed / R_fixed, min over free types of p / w)
        // (mediant inequality), and B6: P / r >= P_lb / r_ub.
        double ratio_lb = r_fixed > 0.0 ? f.price / r_fixed : std::numeric_limits<double>::infinity();
        for (const std::size_t t : order_)
            if (rate_[t] > 0.0) ratio_lb = std::min(ratio_lb, s_.cheapest(t) / rate_[t]);
        if (s_.objective != objective_kind::max_throughput || pareto_)
            ratio_lb = min_ratio(f.price, r_fixed, cap_left, ratio_lb);
        return std::max(ratio_lb * (1.0 - slack), p_lb / r_ub);
    }

    // The bounds on the key and on the frontier coordinates, from the bounds on speed, price and
    // price per speed (not pruned yet).
    [[nodiscard]] node_bound objective_bounds(double r_ub, double p_lb, double ratio_lb) const noexcept {
        node_bound nb;
        const double work = s_.work;
        switch (s_.objective) {
            case objective_kind::max_throughput: nb.key_lb = -r_ub; break;
            case objective_kind::max_samples_per_usd: nb.key_lb = -3600.0 / ratio_lb; break;
            case objective_kind::min_cost:
            case objective_kind::min_time: nb.key_lb = work > 0.0 ? work * ratio_lb / 3600.0 : p_lb; break;
        }
        if (work > 0.0) {
            nb.first_lb = work / r_ub;
            nb.second_lb = work * ratio_lb / 3600.0;
        } else {
            nb.first_lb = -r_ub;
            nb.second_lb = p_lb;
        }
        return nb;
    }

    // B9 (the frontier's staircase): held points q_1, ..., q_n sorted by the first coordinate.
    // A completion whose first coordinate lies in [q_i.first, q_{i+1}.first) is faster than
    // q_{i+1} (r > its speed), so its price is at least P_f + max(p_first, the fractional cover of
    // that speed) (B4) and its second coordinate at least that price (no work) or time x price /
    // 3600 with time >= max(q_i.first, first_lb) (work). When that is >= q_i.second in every slab
    // the box meets, q_i weakly dominates every completion in its slab. Bounds lowered by the
    // margin relative_gap (and the cover by 1e-9) against rounding.
    [[nodiscard]] bool staircase_dominates(const node_bound& nb, const state& f, double p_first, double r_need) noexcept {
        const auto& points = out_.frontier.points();
        if (points.empty()) return false;
        const double gap = relative_gap_;
        if (!(points.front().first <= nb.first_lb - gap * std::abs(nb.first_lb))) return false;
        // The cheapest price of a completion of speed >= `speed`, with linear rates `w` valid for
        // those completions (B4, with B10's rates).
        const auto price_to_reach = [&](double speed, const std::vector<double>& w) {
            double fixed = 0.0;
            for (std::size_t i = 0; i < perm_.size(); ++i) fixed += static_cast<double>(lo_[perm_[i]]) * w[perm_[i]];
            return f.price + std::max(p_first, cover_price(speed - fixed, w));
        };
        const double work = s_.work;
        const auto speed_of = [&](double first) { return work > 0.0 ? work / first : -first; };
        const auto second_of = [&](std::size_t i, double price) {
            const double second = work > 0.0 ? std::max(points[i].first, nb.first_lb) * price / 3600.0 : price;
            return std::max(second, nb.second_lb);
        };
        const auto dominated = [&](std::size_t i, double second) {
            return points[i].second <= second - gap * std::abs(second);
        };
        for (std::size_t i = 0; i < points.size(); ++i) {
            const bool last = i + 1 == points.size();
            if (!last && points[i + 1].first <= nb.first_lb) continue;  // the slab ends before the box starts
            const double r_low = std::max(r_need, last ? 0.0 : speed_of(points[i + 1].first));
            if (dominated(i, second_of(i, price_to_reach(r_low, rate_)))) continue;
            if (!(r_low > r_need)) return false;
            // B10: the rates of the completions at least r_low fast are smaller.
            model_.samples_per_s_linear_bound(std::span<const std::int32_t>(lo_), std::span<const std::int32_t>(hi_),
                                              std::span<double>(slab_rate_), min_instances_, r_low);
            if (!dominated(i, second_of(i, price_to_reach(r_low, slab_rate_)))) return false;
        }
        return true;
    }

    // B4: a lower bound on min { y.p : y.w >= need, 0 <= y <= hi } over the free types (order_):
    // the fractional cover, greedy by p / w (exact for the relaxation), lowered by the rounding
    // margin.
    [[nodiscard]] double cover_price(double need, const std::vector<double>& w) noexcept {
        if (!(need > 0.0)) return 0.0;
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
            return s_.cheapest(a) * w[b] < s_.cheapest(b) * w[a];  // p/w ascending
        });
        double left = need, price = 0.0;
        for (const std::size_t t : order_) {
            if (left <= 0.0) break;
            if (!(w[t] > 0.0)) continue;
            const double units = std::min(static_cast<double>(hi_[t]), left / w[t]);
            price += units * s_.cheapest(t);
            left -= units * w[t];
        }
        return price * (1.0 - slack);  // short of `need`: still the least price of what it reached
    }

    // B5': min over { 0 <= y <= hi, sum y <= cap } of (a0 + y.p) / (d0 + y.w), over the y with
    // d0 + y.w > 0, by Dinkelbach's method (1967). For a lambda, F(lambda) = min_y (a0 + y.p) -
    // lambda (d0 + y.w) is reached by taking y = hi on the most negative coefficients p - lambda w
    // up to the cap (a box cut by one cardinality row: the greedy is exact). F(lambda) >= 0 proves
    // every ratio >= lambda. Starting from the ratio of some completion, lambda <- ratio of the
    // minimiser decreases to the minimum in finitely many steps (F = 0 there). The result is
    // lowered by a relative 1e-9 against rounding; without convergence the mediant bound stays.
    [[nodiscard]] double min_ratio(double a0, double d0, std::int64_t cap, double mediant) noexcept {
        if (!std::isfinite(mediant) || order_.empty()) return mediant;
        const auto fill = [&](double lambda, double& num, double& den) {
            std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
                return s_.cheapest(a) - lambda * rate_[a] < s_.cheapest(b) - lambda * rate_[b];
            });
            num = a0;
            den = d0;
            std::int64_t left = cap;
            for (const std::size_t t : order_) {
                if (left <= 0 || !(s_.cheapest(t) - lambda * rate_[t] < 0.0)) break;
                const std::int64_t take = std::min<std::int64_t>(hi_[t], left);
                num += static_cast<double>(take) * s_.cheapest(t);
                den += static_cast<double>(take) * rate_[t];
                left -= take;
            }
        };
        // A completion: fill at a lambda just above the mediant bound (takes the best-ratio types).
        double num = 0.0, den = 0.0;
        fill(mediant * (1.0 + 1e-12) + 1e-300, num, den);
        if (!(den > 0.0)) return mediant;
        double lambda = num / den;
        for (int iteration = 0; iteration < 32; ++iteration) {
            fill(lambda, num, den);
            if (num - lambda * den >= 0.0) return std::max(mediant, lambda * (1.0 - 1e-9));
            if (!(den > 0.0)) return mediant;
            const double next = num / den;
            if (!(next < lambda)) return std::max(mediant, lambda * (1.0 - 1e-9));  // rounding stall
            lambda = next;
        }
        return mediant;
    }

    void evaluate_leaf(const state& f) {
        if (f.count < min_instances_) return;  // none, or a one-instance cluster evaluated first (B7)
        ++out_.counters.evaluations;
        for (std::size_t k = 0; k < s_.k_count; ++k) {
            const bool spot = s_.cheapest_kind(k) == price_kind::spot;
            offer_counts_[2 * k] = spot ? counts_[k] : 0;
            offer_counts_[2 * k + 1] = spot ? 0 : counts_[k];
        }
        const double r = model_.samples_per_s(std::span<const std::int32_t>(counts_));
        vm_offer(out_, s_, pareto_, offer_counts_, counts_, vm_make_figures(s_, counts_, r, vm_price(s_, offer_counts_)));
    }

    void search(std::size_t depth, const state& f) {
        const node_bound nb = bound(depth, f);
        if (nb.prune) {
            if (nb.by_constraint) ++out_.counters.pruned_by_constraint;
            else ++out_.counters.pruned_by_bound;
            return;
        }
        const std::int64_t cap_left = s_.max_instances - f.count;
        if (depth == perm_.size() || cap_left == 0 || f.distinct == s_.max_distinct) {
            evaluate_leaf(f);  // every free type at 0
            return;
        }
        const std::size_t t = perm_[depth];
        const std::int64_t x_hi = std::min<std::int64_t>(s_.quota[t], cap_left);
        for (std::int64_t x = x_hi; x >= 0; --x) {
            if (out_of_budget()) {
                // The children not searched lie in this node's box: its bound covers them.
                out_.unexplored_key_lb = std::min(out_.unexplored_key_lb, nb.key_lb);
                break;
            }
            counts_[t] = static_cast<std::int32_t>(x);
            state g = f;
            if (x > 0) {
                g.count += x;
                g.distinct += 1;
                g.price += static_cast<double>(x) * s_.cheapest(t);
            }
            search(depth + 1, g);
        }
        counts_[t] = 0;
    }

    const M& model_;
    const vm_space& s_;
    bool pareto_;
    double relative_gap_;
    budget_guard guard_;
    std::vector<std::size_t> perm_, order_;
    std::vector<std::int32_t> counts_, lo_, hi_, offer_counts_;
    std::vector<double> rate_;
    vm_search_outcome out_;
    std::int64_t min_instances_ = 1;  // the fewest instances of a cluster the current search covers
    std::vector<double> slab_rate_;   // B10's rates in staircase_dominates
};

/// The search for a model and a method: the exact frontier of the synchronous model with equal
/// batches by replica counts (solve/vm_recommend/replica_frontier.hpp) when its table fits, the
/// branch and bound for any other exact search of a model with a linear bound, else the oracle.
template <cluster_throughput_model M>
[[nodiscard]] vm_search_outcome vm_run(const M& model, const vm_space& s, bool pareto, const search_budget& budget,
                                       double relative_gap, search_method method) {
    if constexpr (std::same_as<M, sync_cluster_throughput>) {
        if (pareto && method == search_method::exact && vm_replica_frontier_applies(model)) {
            vm_replica_frontier frontier(model, s, budget);
            if (frontier.fits()) return frontier.run();
        }
    }
    if constexpr (linearly_bounded_throughput_model<M>) {
        if (method == search_method::exact) return vm_branch_and_bound<M>(model, s, pareto, budget, relative_gap).run();
    }
    return vm_exhaustive(model, s, pareto, budget);
}

}  // namespace dnnplan::detail
