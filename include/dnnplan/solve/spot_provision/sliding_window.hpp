#pragma once
// spotDNN's provisioning heuristic, Algorithm 1 of Shang et al. (IWQoS 2023), kept faithful
// as the published baseline: list every available instance (each type repeated up to its
// quota), sort by iteration time, and for every size n in [n_lower, n_upper] evaluate each
// window of n consecutive instances, keeping the best that meets the deadline.
// O(x * y * K): x sizes, y windows per size, bounded by the search budget. No optimality proof:
// status feasible or no_plan_found (with result.limit when the budget stopped it).

#include <dnnplan/core/status.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/solve/spot_provision/cluster_space.hpp>
#include <dnnplan/search/search_core.hpp>
#include <dnnplan/solve/spot_provision/outcome.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

struct sliding_window_options {
    /// Sizes from n_lower of eq. (16) to n_upper of eq. (15), as in the paper; otherwise every
    /// size from 1 to the number of listed instances (the released artifact stops one short of
    /// that, range(1, len); the full list is a window too, so it is tried here).
    bool paper_bounds = true;
    /// Upper cap on n (eq. (15) in the paper's mode); none: no cap beyond the listed instances.
    std::optional<std::int64_t> n_upper{};
    /// Windows wrap around the end of the sorted list, as the released artifact's do.
    bool wrap_around = false;
};

/// Eq. (16): n_lower = ceil(b_min * j_min / (v_max * T_obj)) with j_min the iterations of a
/// single worker (n = 1, R = 0) of the smallest batch b_min and v_max the fastest single worker.
/// As the reference note says, this is not a valid lower bound in general (with gamma2 < 0 the
/// iterations are largest, not smallest, at b_min); it is kept because the paper uses it.
template <asynchronous_throughput_model Throughput, convergence_model Convergence>
[[nodiscard]] std::int64_t sliding_window_n_lower(const Throughput& throughput, const Convergence& convergence,
                                                  const cluster_space& space, const cluster_goals& goals) noexcept {
    double b_min = std::numeric_limits<double>::infinity(), v_max = 0.0;
    for (std::size_t k = 0; k < throughput.type_count(); ++k) {
        if (space.upper[k] <= 0) continue;
        b_min = std::min(b_min, throughput.worker_batch(k));
        v_max = std::max(v_max, throughput.worker_batch(k) / throughput.iteration_time_s(k, 1));
    }
    if (!(v_max > 0.0)) return 1;
    const double j_min = convergence.iterations_to_reach(goals.target_loss, 1, b_min, 0.0);
    const double n = std::ceil(b_min * j_min / (v_max * goals.deadline_s));
    if (!(n >= 1.0)) return 1;
    return n > 9.0e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(n);
}

namespace detail {

/// The sorted list of every available instance (each type repeated up to its quota), run-length
/// encoded: memory O(K) whatever the quotas, and a window moves in O(1).
class instance_runs {
public:
    struct run {
        std::size_t type;
        std::int64_t length;
    };
    struct cursor {
        std::size_t run = 0;
        std::int64_t offset = 0;
    };

    instance_runs(std::span<const std::size_t> types_in_order, std::span<const std::int32_t> quotas) {
        for (const std::size_t k : types_in_order)
            if (quotas[k] > 0) {
                runs_.push_back({.type = k, .length = quotas[k]});
                length_ += quotas[k];
            }
    }

    [[nodiscard]] std::int64_t length() const noexcept { return length_; }
    [[nodiscard]] std::size_t type_at(const cursor& c) const noexcept { return runs_[c.run].type; }

    /// The cursor at position `position` (0 <= position < length()), O(runs).
    [[nodiscard]] cursor at(std::int64_t position) const noexcept {
        cursor c;
        while (position >= runs_[c.run].length) {
            position -= runs_[c.run].length;
            ++c.run;
        }
        c.offset = position;
        return c;
    }

    /// One position on, wrapping at the end of the list.
    void advance(cursor& c) const noexcept {
        if (++c.offset == runs_[c.run].length) {
            c.offset = 0;
            c.run = c.run + 1 == runs_.size() ? 0 : c.run + 1;
        }
    }

    /// counts[k] = the instances of type k among the first n of the list (n <= length()), O(runs).
    void prefix_counts(std::int64_t n, std::span<std::int32_t> counts) const noexcept {
        for (auto& c : counts) c = 0;
        for (const run& r : runs_) {
            if (n <= 0) break;
            const std::int64_t take = std::min(n, r.length);
            counts[r.type] = static_cast<std::int32_t>(take);
            n -= take;
        }
    }

private:
    std::vector<run> runs_;
    std::int64_t length_ = 0;
};

}  // namespace detail

/// Windows that do not keep the space's lower bounds (existing instances) are skipped: the
/// only departure from the paper, needed for a plan that keeps running instances. The list of
/// instances is run-length encoded (memory O(K), not O(quota)); the budget bounds the windows
/// visited (nodes) and evaluated (evaluations): over it, result.limit says which, with the best
/// window so far. Statuses: feasible (no proof) or no_plan_found.
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] search_outcome sliding_window_search(const Throughput& throughput, const Convergence& convergence,
                                                   const Cost& cost, const cluster_space& space,
                                                   const cluster_goals& goals,
                                                   const sliding_window_options& options = {},
                                                   const search_budget& budget = {}) {
    const std::size_t k_count = space.type_count();
    std::vector<std::size_t> types(k_count);
    std::iota(types.begin(), types.end(), std::size_t{0});
    // Sorted by the iteration time of a worker alone (the artifact sorts by measured time);
    // with eq. (6) the order is the same at every n.
    std::stable_sort(types.begin(), types.end(), [&](std::size_t a, std::size_t b) {
        return throughput.iteration_time_s(a, 1) < throughput.iteration_time_s(b, 1);
    });
    const detail::instance_runs list(types, space.upper);
    const std::int64_t len = list.length();

    std::int64_t n_first = 1, n_last = len;
    if (options.paper_bounds) n_first = sliding_window_n_lower(throughput, convergence, space, goals);
    if (options.n_upper) n_last = std::min(n_last, *options.n_upper);
    n_first = std::max(n_first, space.min_workers);
    n_last = std::min(n_last, space.max_workers);

    search_outcome out;
    cluster_incumbent best(goals);
    budget_guard guard(budget);
    cluster_counts counts(k_count, 0), previous;
    for (std::int64_t n = n_first; n <= n_last && !guard.stopped(); ++n) {
        const std::int64_t windows = options.wrap_around ? len : len - n + 1;
        list.prefix_counts(n, counts);
        detail::instance_runs::cursor head = list.at(0), tail = list.at(n % len);
        for (std::int64_t start = 0; start < windows; ++start) {
            if (guard.exhausted(out.counters)) break;
            if (start > 0) {  // slide by one: drop the first instance, take the next
                --counts[list.type_at(head)];
                ++counts[list.type_at(tail)];
                list.advance(head);
                list.advance(tail);
            }
            ++out.counters.nodes;
            if (counts == previous) continue;  // the artifact skips a window equal to the last one
            previous = counts;
            if (!space.contains(counts)) continue;
            ++out.counters.evaluations;
            best.offer(counts, predict_cluster(throughput, convergence, cost, counts, goals.target_loss));
        }
    }
    const bool has_plan = best.has_plan();
    const double value = best.value();
    best.move_plan_to(out);
    out.objective_value.reset();
    if (has_plan) out.objective_value = value;
    out.limit = guard.limit();
    if (guard.stopped()) {
        out.status = has_plan ? solve_status::feasible : solve_status::no_plan_found;
        out.reason = guard.describe(out.counters) + " (sliding-window heuristic: no bound)";
    } else if (has_plan) {
        out.status = solve_status::feasible;
        out.reason = "sliding-window heuristic: optimality not proven";
    } else {
        out.status = solve_status::no_plan_found;
        out.reason = n_first > n_last
                         ? "the sliding window has no size to try: its smallest size " + std::to_string(n_first) +
                               " (eq. (16), or the space's smallest size) exceeds its largest " + std::to_string(n_last) +
                               " (eq. (15), the listed instances and any cap)"
                         : "the sliding window found no window that meets the goals for n in [" +
                               std::to_string(n_first) + ", " + std::to_string(n_last) + "]";
        if (best.rejected_non_finite() > 0)
            out.reason += " (" + std::to_string(best.rejected_non_finite()) +
                          " windows meet the deadline but their cost is too large for a double)";
    }
    out.counters.elapsed_s = guard.elapsed_s();
    return out;
}

}  // namespace dnnplan
