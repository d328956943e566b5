#pragma once
// Exact minimum-cost (or minimum-time) cluster for asynchronous training with a deadline and a
// target loss: branch and bound with bounds proven in docs/solvers/exact.md.
//
// Outline. For every cluster size n the per-worker iteration times T_k(n) are constants, and
// with r = sum x_k / T_k (iterations/s), W = sum x_k (alpha + beta b_k) / T_k and
// P = fixed + sum x_k p_k, the convergence model's minorant gives j >= max(0, W / r), so
//   T = j / r >= max(0, W / r) / r   and   cost >= T * P / 3600 = j * (P / r) / 3600.
// W / r and P / r are linear-fractional and r is linear in the counts, so their extremes over
// all completions of a partial cluster ({lo <= y <= hi, sum y = remaining}) are computed
// exactly (search/box_sum.hpp). Those separate extremes are reached by different mixes; the
// joint vertex bound (B8 in the docs) bounds a * c and W / r^2 together over the quota-free
// simplex, where both are minimised at a vertex, with the deadline entering by Lagrange. Sizes
// n are explored best bound first; inside one n, a depth-first search fixes one type's count
// per level.

#include <dnnplan/core/status.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/box_sum.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

struct exact_options {
    search_budget budget{};      ///< nodes (bound evaluations), evaluations (leaves), wall time
    double relative_gap = 1e-9;  ///< cut a subtree when its bound >= incumbent * (1 - relative_gap)

    void validate(std::string_view path = "options") const {
        const std::string p = detail::field_prefix(path);
        budget.validate(p + "budget");
        if (!(relative_gap >= 0.0 && relative_gap < 1.0))
            throw invalid_input(p + "relative_gap", detail::format_number(relative_gap), "a number in [0, 1)");
    }
};

namespace detail {

/// A valid lower bound on the convergence coefficient R of eq. (5) for any cluster of n
/// workers whose speeds lie in [s_lo, s_hi]: R >= (1 - w_max) sqrt(n / (n - 1)) by
/// Cauchy-Schwarz on the other n - 1 shares, and w_max <= s_hi / (s_hi + (n - 1) s_lo).
[[nodiscard]] inline double convergence_coefficient_lower_bound(std::int64_t n, double s_lo, double s_hi) noexcept {
    if (n <= 1) return 0.0;
    const double others = static_cast<double>(n - 1);
    const double w_max = s_hi / (s_hi + others * s_lo);
    return std::max(0.0, (1.0 - w_max) * std::sqrt(static_cast<double>(n) / others));
}

/// max over lambda >= 0 of min_k (a[k] + lambda * s[k]): a concave piecewise-linear function,
/// walked from lambda = 0 along its breakpoints (at most one step per line). +inf when every
/// slope is positive (unbounded).
[[nodiscard]] inline double max_of_lower_envelope(std::span<const double> a, std::span<const double> s) noexcept {
    const std::size_t count = a.size();
    if (count == 0) return std::numeric_limits<double>::infinity();
    double lambda = 0.0;
    // Active line at lambda = 0: smallest value, then smallest slope.
    std::size_t active = 0;
    for (std::size_t k = 1; k < count; ++k)
        if (a[k] < a[active] || (a[k] == a[active] && s[k] < s[active])) active = k;
    for (std::size_t step = 0; step <= count; ++step) {
        if (s[active] <= 0.0) break;  // the envelope no longer rises: lambda is optimal
        double next = std::numeric_limits<double>::infinity();
        std::size_t next_line = active;
        for (std::size_t k = 0; k < count; ++k) {
            if (!(s[k] < s[active])) continue;
            const double cross = std::max(lambda, (a[k] - a[active]) / (s[active] - s[k]));
            if (cross < next || (cross == next && s[k] < s[next_line])) {
                next = cross;
                next_line = k;
            }
        }
        if (!std::isfinite(next)) return std::numeric_limits<double>::infinity();
        lambda = next;
        active = next_line;
    }
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < count; ++k) best = std::min(best, a[k] + lambda * s[k]);
    return best;
}

template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
class exact_search_engine {
public:
    exact_search_engine(const Throughput& throughput, const Convergence& convergence, const Cost& cost,
                        const cluster_space& space, const cluster_goals& goals, const exact_options& options)
        : tm_(throughput), cm_(convergence), cost_(cost), space_(space), goals_(goals), options_(options),
          k_count_(space.type_count()) {
        const std::size_t k = k_count_;
        for (auto* v : {&u_, &b_, &p_, &s_, &rate_c_, &y_c1_, &y_c2_, &secant_c_}) v->assign(k, 0.0);
        for (auto* v : {&lo_, &hi_, &y_lo_, &y_hi_}) v->assign(k, 0);
        for (auto* v : {&suf_lo_, &suf_hi_}) v->assign(k + 1, 0);
        for (auto* v : {&suf_smin_, &suf_smax_, &suf_bmin_, &suf_bmax_, &suf_umax_, &suf_ratio_}) v->assign(k + 1, 0.0);
        perm_.resize(k);
        order_.resize(k);
        counts_.assign(k, 0);
    }

    [[nodiscard]] search_outcome run() {
        search_outcome out;
        const std::int64_t n_lo = space_.smallest_size();
        const std::int64_t n_hi = space_.largest_size();
        // Sizes are taken in blocks of consecutive n: the root bound of every size of a block, then
        // the block's sizes best bound first. One block holds every size of an ordinary problem
        // (so the order is best bound first overall); with quotas in the millions, memory stays
        // O(block) and the budget ends the walk.
        constexpr std::int64_t block = 4096;
        std::vector<std::pair<double, std::int64_t>> sizes;
        // A lower bound on the objective of the sizes not searched when the budget ran out: those of
        // the block being searched have their root bound; sizes never bounded prove only 0.
        double remaining_lb = std::numeric_limits<double>::infinity();
        for (std::int64_t first = n_lo; first <= n_hi && !guard_.stopped(); first += block) {
            const std::int64_t last = std::min(n_hi, first + (block - 1));
            sizes.clear();
            bool bounded_all = true;
            for (std::int64_t n = first; n <= last; ++n) {
                if (guard_.exhausted(counters_)) {
                    bounded_all = false;
                    break;
                }
                prepare_size(n);
                const node_bound root = bound_at(0, fixed_state{});
                if (root.time_lb > deadline_cut_) {
                    ++counters_.pruned_by_constraint;
                    continue;
                }
                sizes.emplace_back(root.objective_lb, n);
            }
            std::sort(sizes.begin(), sizes.end());
            for (std::size_t i = 0; i < sizes.size() && !guard_.stopped(); ++i) {
                if (cut(sizes[i].first)) {
                    counters_.pruned_by_bound += static_cast<std::int64_t>(sizes.size() - i);
                    break;
                }
                prepare_size(sizes[i].second);
                search(0, fixed_state{});
                // Stopped inside this size (or before it): it and the later ones of the block are
                // bounded by their root bounds, the smallest of which is this one.
                if (guard_.stopped()) remaining_lb = std::min(remaining_lb, sizes[i].first);
            }
            // Sizes of this block whose root bound was never computed, or of later blocks: only 0.
            if (guard_.stopped() && (!bounded_all || last < n_hi)) remaining_lb = 0.0;
        }
        out.counters = counters_;
        const bool has_plan = best_.has_plan();
        const double best_value = best_.value();
        best_.move_plan_to(out);
        conclude_search(out, {.limit = guard_.limit(), .unexplored_key_lb = remaining_lb}, has_plan, best_value, false,
                        no_cluster_reason(best_.rejected_non_finite()), guard_.describe(counters_));
        out.counters.elapsed_s = guard_.elapsed_s();
        return out;
    }

private:
    // Aggregates of the types fixed so far.
    struct fixed_state {
        std::int64_t count = 0;
        double rate = 0.0;        // sum x u
        double batch_rate = 0.0;  // sum x b u
        double price = 0.0;       // sum x p (workers only)
        double s_min = std::numeric_limits<double>::infinity(), s_max = 0.0;
        double b_min = std::numeric_limits<double>::infinity(), b_max = 0.0;
        double ratio_min = std::numeric_limits<double>::infinity();  // min p/u of fixed types
    };
    struct node_bound {
        double time_lb = 0.0;
        double objective_lb = 0.0;
    };

    [[nodiscard]] bool cut(double objective_lb) const noexcept {
        return best_.has_plan() && objective_lb >= best_.value() * (1.0 - options_.relative_gap);
    }

    void prepare_size(std::int64_t n) {
        n_ = n;
        const std::size_t k = k_count_;
        // Order: most cost- (or time-) efficient homogeneous cluster first; the first leaves
        // are then greedy-like plans, which makes the incumbent good early.
        const affine_in_batch any = cm_.iterations_minorant(goals_.target_loss, n, 0.0);
        std::vector<double>& key = y_c1_;
        for (std::size_t t = 0; t < k; ++t) {
            const double time_s = tm_.iteration_time_s(t, n);
            const double iterations = std::max(0.0, any.at(tm_.worker_batch(t)));
            key[t] = goals_.objective == objective_kind::min_cost ? iterations * time_s * cost_.type_usd_per_h(t)
                                                                         : iterations * time_s;
            perm_[t] = t;
        }
        std::sort(perm_.begin(), perm_.end(), [&](std::size_t a, std::size_t c) {
            const bool ua = space_.upper[a] > 0, uc = space_.upper[c] > 0;
            if (ua != uc) return ua;
            return key[a] < key[c] || (key[a] == key[c] && a < c);
        });
        for (std::size_t i = 0; i < k; ++i) {
            const std::size_t t = perm_[i];
            u_[i] = 1.0 / tm_.iteration_time_s(t, n);
            b_[i] = tm_.worker_batch(t);
            p_[i] = cost_.type_usd_per_h(t);
            s_[i] = b_[i] * u_[i];
            lo_[i] = space_.lower[t];
            hi_[i] = space_.upper[t];
        }
        const double inf = std::numeric_limits<double>::infinity();
        suf_lo_[k] = suf_hi_[k] = 0;
        suf_smin_[k] = suf_bmin_[k] = suf_ratio_[k] = inf;
        suf_smax_[k] = suf_bmax_[k] = suf_umax_[k] = 0.0;
        for (std::size_t i = k; i-- > 0;) {
            suf_lo_[i] = suf_lo_[i + 1] + lo_[i];
            suf_hi_[i] = suf_hi_[i + 1] + hi_[i];
            const bool usable = hi_[i] > 0;
            suf_smin_[i] = usable ? std::min(suf_smin_[i + 1], s_[i]) : suf_smin_[i + 1];
            suf_smax_[i] = usable ? std::max(suf_smax_[i + 1], s_[i]) : suf_smax_[i + 1];
            suf_bmin_[i] = usable ? std::min(suf_bmin_[i + 1], b_[i]) : suf_bmin_[i + 1];
            suf_bmax_[i] = usable ? std::max(suf_bmax_[i + 1], b_[i]) : suf_bmax_[i + 1];
            suf_umax_[i] = usable ? std::max(suf_umax_[i + 1], u_[i]) : suf_umax_[i + 1];
            suf_ratio_[i] = usable ? std::min(suf_ratio_[i + 1], p_[i] / u_[i]) : suf_ratio_[i + 1];
        }
    }

    [[nodiscard]] double objective_from(double iterations_lb, double rate_hi, double ratio_lb) const noexcept {
        const double j = std::max(0.0, iterations_lb);
        return goals_.objective == objective_kind::min_cost ? j * ratio_lb / 3600.0 : j / rate_hi;
    }

    // Bounds over every completion of the types at positions >= depth.
    [[nodiscard]] node_bound bound_at(std::size_t depth, const fixed_state& f) noexcept {
        ++counters_.nodes;
        const std::int64_t m = n_ - f.count;
        const bool open = m > 0;
        const double s_lo = std::min(f.s_min, open ? suf_smin_[depth] : f.s_min);
        const double s_hi = std::max(f.s_max, open ? suf_smax_[depth] : f.s_max);
        const affine_in_batch minorant = cm_.iterations_minorant(
            goals_.target_loss, n_, convergence_coefficient_lower_bound(n_, s_lo, s_hi));
        const double fixed_usd_per_h = cost_.fixed_usd_per_h();

        // Tier 1, O(1): b_w, p/u and u of the completion lie within the extremes of the types
        // that can be present (b_w and P/r are weighted averages; mediant inequality).
        const double b_lo = std::min(f.b_min, open ? suf_bmin_[depth] : f.b_min);
        const double b_hi = std::max(f.b_max, open ? suf_bmax_[depth] : f.b_max);
        double iterations_lb = std::min(minorant.at(b_lo), minorant.at(b_hi));
        double rate_hi = f.rate + static_cast<double>(m) * suf_umax_[depth];
        double ratio_lb = std::min(f.ratio_min, open ? suf_ratio_[depth] : f.ratio_min) + fixed_usd_per_h / rate_hi;
        node_bound nb{.time_lb = std::max(0.0, iterations_lb) / rate_hi,
                      .objective_lb = objective_from(iterations_lb, rate_hi, ratio_lb)};
        if (!open || nb.time_lb > deadline_cut_ || cut(nb.objective_lb)) return nb;
        if (joint_vertex_bound(depth, f, minorant, m, nb)) return nb;

        // Tier 2: exact extremes over {lo <= y <= hi, sum y = m} of the free types.
        const std::size_t free_count = k_count_ - depth;
        for (std::size_t i = 0; i < free_count; ++i) {
            const std::size_t t = depth + i;
            y_lo_[i] = lo_[t];
            y_hi_[i] = hi_[t];
            y_c1_[i] = u_[t] * minorant.at(b_[t]);  // omega
            y_c2_[i] = p_[t];
            rate_c_[i] = u_[t];
        }
        const box_sum_set y{.lo = std::span<const std::int32_t>(y_lo_.data(), free_count),
                            .hi = std::span<const std::int32_t>(y_hi_.data(), free_count),
                            .m = m};
        const std::span<const double> rate_c(rate_c_.data(), free_count);
        const std::span<std::size_t> order(order_.data(), free_count);
        const double fixed_w = minorant.intercept * f.rate + minorant.slope * f.batch_rate;
        const std::span<const double> omega(y_c1_.data(), free_count);
        iterations_lb = std::max(iterations_lb, box_sum_min_ratio(y, fixed_w, omega, f.rate, rate_c, order));
        rate_hi = std::min(rate_hi, f.rate + box_sum_max_linear(y, rate_c, order));
        nb.time_lb = std::max(nb.time_lb, std::max(0.0, iterations_lb) / rate_hi);
        if (nb.time_lb > deadline_cut_) return nb;
        const double rate_lo = f.rate + box_sum_min_linear(y, rate_c, order);
        if (std::isfinite(goals_.deadline_s) && deadline_secant_cut(y, fixed_w, omega, f.rate, rate_lo, rate_hi)) {
            nb.time_lb = std::numeric_limits<double>::infinity();
            return nb;
        }
        if (goals_.objective == objective_kind::min_cost) {
            const std::span<const double> price_c(y_c2_.data(), free_count);
            const double price0 = f.price + fixed_usd_per_h;
            const double plain = box_sum_min_ratio(y, price0, price_c, f.rate, rate_c, order);
            ratio_lb = std::max(ratio_lb, plain);
            // A completion that meets the deadline has r >= rho = iterations_lb / D, so for any
            // mu >= 0: P / r >= (P + mu (rho - r)) / r = (P + mu rho) / r - mu.
            const double rho = iterations_lb / goals_.deadline_s;
            if (iterations_lb > 0.0 && rho > rate_lo && std::isfinite(rho) && plain > 0.0) {
                for (double mu = plain / 4.0; mu <= plain * 16.0; mu *= 2.0)
                    ratio_lb = std::max(ratio_lb, box_sum_min_ratio(y, price0 + mu * rho, price_c, f.rate, rate_c, order) - mu);
            }
        }
        nb.objective_lb = std::max(nb.objective_lb, objective_from(iterations_lb, rate_hi, ratio_lb));
        return nb;
    }

    // Joint bound over the relaxation that keeps sum y = m but drops the free types' quotas:
    // its vertices put all m remaining workers on one type k. a = W / r and c = P / r are
    // linear-fractional with one denominator, so (a, c) ranges over the projective image of that
    // simplex, a polygon whose vertices are the images of the simplex vertices. a * c and
    // a * (1 / r) = W / r^2 are quasi-concave where positive (their square roots are geometric
    // means of affine functions), so their minima are at those K vertices:
    //   T >= min_k W_k / r_k^2, and, a feasible completion having a (n / r) <= n D, for every
    //   lambda >= 0: a c >= a (c + lambda n / r) - lambda n D = W (P + lambda n) / r^2 - lambda n D.
    // Raises nb and returns true when it proves the node can be cut.
    [[nodiscard]] bool joint_vertex_bound(std::size_t depth, const fixed_state& f, const affine_in_batch& minorant,
                                          std::int64_t m, node_bound& nb) noexcept {
        const double md = static_cast<double>(m), nd = static_cast<double>(n_);
        const double fixed_w = minorant.intercept * f.rate + minorant.slope * f.batch_rate;
        const double fixed_p = f.price + cost_.fixed_usd_per_h();
        const double d = goals_.deadline_s;
        const bool by_cost = goals_.objective == objective_kind::min_cost;
        std::size_t count = 0;
        double time_lb = std::numeric_limits<double>::infinity();
        for (std::size_t t = depth; t < k_count_; ++t) {
            if (hi_[t] <= 0) continue;
            const double w = fixed_w + md * u_[t] * minorant.at(b_[t]);
            if (!(w > 0.0)) return false;  // some vertex needs no iterations: no joint bound
            const double r = f.rate + md * u_[t];
            const double w_per_r2 = w / (r * r);
            time_lb = std::min(time_lb, w_per_r2);
            y_c1_[count] = w_per_r2 * (fixed_p + md * p_[t]);  // a c at this vertex
            y_c2_[count] = w_per_r2 * nd - (std::isfinite(d) ? nd * d : 0.0);  // its slope in lambda
            ++count;
        }
        if (count == 0) return false;
        nb.time_lb = std::max(nb.time_lb, time_lb);
        if (nb.time_lb > deadline_cut_) return true;
        double objective = time_lb;
        if (by_cost) {
            const std::span<const double> values(y_c1_.data(), count), slopes(y_c2_.data(), count);
            objective = (std::isfinite(d) ? max_of_lower_envelope(values, slopes)
                                          : *std::min_element(values.begin(), values.end())) /
                        3600.0;
        }
        nb.objective_lb = std::max(nb.objective_lb, objective);
        return cut(nb.objective_lb);
    }

    // True when every completion misses the deadline: T >= W / r^2 and, r lying in
    // [rate_lo, rate_hi], r^2 <= (rate_lo + rate_hi) r - rate_lo rate_hi (the secant of a convex
    // function lies above it), so W - D r^2 >= a linear function of y whose minimum is exact.
    [[nodiscard]] bool deadline_secant_cut(const box_sum_set& y, double fixed_w, std::span<const double> omega,
                                           double fixed_rate, double rate_lo, double rate_hi) noexcept {
        const double d = goals_.deadline_s;
        const double slope = d * (rate_lo + rate_hi);
        const std::size_t free_count = omega.size();
        for (std::size_t i = 0; i < free_count; ++i) secant_c_[i] = omega[i] - slope * u_[k_count_ - free_count + i];
        const double low = fixed_w - slope * fixed_rate + d * rate_lo * rate_hi +
                           box_sum_min_linear(y, std::span<const double>(secant_c_.data(), free_count),
                                              std::span<std::size_t>(order_.data(), free_count));
        return low > 1e-9 * d * rate_hi * rate_hi;
    }

    void evaluate_leaf() {
        ++counters_.evaluations;
        best_.offer(counts_, predict_cluster(tm_, cm_, cost_, std::span<const std::int32_t>(counts_), goals_.target_loss));
    }

    void search(std::size_t depth, const fixed_state& f) {
        if (guard_.exhausted(counters_)) return;
        const node_bound nb = bound_at(depth, f);
        if (nb.time_lb > deadline_cut_) {
            ++counters_.pruned_by_constraint;
            return;
        }
        if (cut(nb.objective_lb)) {
            ++counters_.pruned_by_bound;
            return;
        }
        const std::int64_t m = n_ - f.count;
        if (m == 0 && suf_lo_[depth] == 0) {  // every remaining type is at zero
            evaluate_leaf();
            return;
        }
        const std::size_t t = perm_[depth];
        const std::int64_t x_lo = std::max<std::int64_t>(lo_[depth], m - suf_hi_[depth + 1]);
        const std::int64_t x_hi = std::min<std::int64_t>(hi_[depth], m - suf_lo_[depth + 1]);
        for (std::int64_t x = x_hi; x >= x_lo; --x) {
            counts_[t] = static_cast<std::int32_t>(x);
            if (depth + 1 == k_count_) {
                evaluate_leaf();
            } else {
                fixed_state g = f;
                if (x > 0) {
                    const double xd = static_cast<double>(x);
                    g.count += x;
                    g.rate += xd * u_[depth];
                    g.batch_rate += xd * b_[depth] * u_[depth];
                    g.price += xd * p_[depth];
                    g.s_min = std::min(g.s_min, s_[depth]);
                    g.s_max = std::max(g.s_max, s_[depth]);
                    g.b_min = std::min(g.b_min, b_[depth]);
                    g.b_max = std::max(g.b_max, b_[depth]);
                    g.ratio_min = std::min(g.ratio_min, p_[depth] / u_[depth]);
                }
                search(depth + 1, g);
            }
            if (guard_.stopped()) break;
        }
        counts_[t] = 0;
    }

    const Throughput& tm_;
    const Convergence& cm_;
    const Cost& cost_;
    const cluster_space& space_;
    cluster_goals goals_;
    exact_options options_;
    std::size_t k_count_;
    // A time bound above this proves the deadline is missed; the slack keeps rounding in the
    // bound from cutting a cluster whose evaluated time meets the deadline.
    double deadline_cut_ = goals_.deadline_s * (1.0 + 1e-9);

    std::int64_t n_ = 0;
    std::vector<std::size_t> perm_, order_;
    std::vector<double> u_, b_, p_, s_, rate_c_, y_c1_, y_c2_, secant_c_;
    std::vector<std::int32_t> lo_, hi_, y_lo_, y_hi_;
    std::vector<std::int64_t> suf_lo_, suf_hi_;
    std::vector<double> suf_smin_, suf_smax_, suf_bmin_, suf_bmax_, suf_umax_, suf_ratio_;
    cluster_counts counts_;

    search_counters counters_;
    cluster_incumbent best_{goals_};
    budget_guard guard_{options_.budget};
};

}  // namespace detail

/// The cluster of `space` that minimises the objective subject to the deadline, with a proof:
/// status optimal (within options.relative_gap), infeasible, or, when a limit stops it, feasible
/// with the best plan so far or no_plan_found, with a proven lower bound. Requires a target loss above the loss floor.
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] search_outcome exact_search(const Throughput& throughput, const Convergence& convergence, const Cost& cost,
                                          const cluster_space& space, const cluster_goals& goals,
                                          const exact_options& options = {}) {
    detail::exact_search_engine<Throughput, Convergence, Cost> engine(throughput, convergence, cost, space, goals, options);
    return engine.run();
}

}  // namespace dnnplan
