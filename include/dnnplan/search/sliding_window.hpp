#pragma once
// spotDNN's provisioning heuristic, Algorithm 1 of Shang et al. (IWQoS 2023), kept faithful
// as the published baseline: list every available instance (each type repeated up to its
// quota), sort by iteration time, and for every size n in [n_lower, n_upper] evaluate each
// window of n consecutive instances, keeping the best that meets the deadline.
// O(x * y * K): x sizes, y windows per size. No optimality proof: status feasible or not_found.

#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/search/cluster_space.hpp>
#include <dnnplan/search/outcome.hpp>

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

/// Windows that do not keep the space's lower bounds (existing instances) are skipped: the
/// only departure from the paper, needed for a plan that keeps running instances.
template <asynchronous_throughput_model Throughput, convergence_model Convergence, linear_cost_model Cost>
[[nodiscard]] search_outcome sliding_window_search(const Throughput& throughput, const Convergence& convergence,
                                                   const Cost& cost, const cluster_space& space,
                                                   const cluster_goals& goals,
                                                   const sliding_window_options& options = {}) {
    const std::size_t k_count = space.type_count();
    std::vector<std::size_t> types(k_count);
    std::iota(types.begin(), types.end(), std::size_t{0});
    // Sorted by the iteration time of a worker alone (the artifact sorts by measured time);
    // with eq. (6) the order is the same at every n.
    std::stable_sort(types.begin(), types.end(), [&](std::size_t a, std::size_t b) {
        return throughput.iteration_time_s(a, 1) < throughput.iteration_time_s(b, 1);
    });
    std::vector<std::size_t> list;
    for (const std::size_t k : types) list.insert(list.end(), static_cast<std::size_t>(space.upper[k]), k);
    const auto len = static_cast<std::int64_t>(list.size());

    std::int64_t n_first = 1, n_last = len;
    if (options.paper_bounds) n_first = sliding_window_n_lower(throughput, convergence, space, goals);
    if (options.n_upper) n_last = std::min(n_last, *options.n_upper);
    n_first = std::max(n_first, space.min_workers);
    n_last = std::min(n_last, space.max_workers);

    search_outcome out;
    incumbent best(goals);
    cluster_counts counts(k_count, 0), previous;
    for (std::int64_t n = n_first; n <= n_last; ++n) {
        const std::int64_t windows = options.wrap_around ? len : len - n + 1;
        const auto at = [&](std::int64_t i) { return list[static_cast<std::size_t>(i % len)]; };
        std::fill(counts.begin(), counts.end(), 0);
        for (std::int64_t i = 0; i < n; ++i) ++counts[at(i)];
        for (std::int64_t start = 0; start < windows; ++start) {
            if (start > 0) {  // slide by one: drop the first instance, take the next
                --counts[at(start - 1)];
                ++counts[at(start + n - 1)];
            }
            if (counts == previous) continue;  // the artifact skips a window equal to the last one
            previous = counts;
            if (!space.contains(counts)) continue;
            ++out.counters.clusters_evaluated;
            best.offer(counts, predict_cluster(throughput, convergence, cost, counts, goals.target_loss));
        }
    }
    best.move_plan_to(out);
    out.lower_bound = 0.0;
    if (out.prediction) {
        out.status = solve_status::feasible;
        out.reason = "sliding-window heuristic: optimality not proven";
    } else {
        out.status = solve_status::not_found;
        out.reason = n_first > n_last
                         ? "the sliding window has no size to try: its smallest size " + std::to_string(n_first) +
                               " (eq. (16), or the space's smallest size) exceeds its largest " + std::to_string(n_last) +
                               " (eq. (15), the listed instances and any cap)"
                         : "the sliding window found no window that meets the goals for n in [" +
                               std::to_string(n_first) + ", " + std::to_string(n_last) + "]";
    }
    return out;
}

}  // namespace dnnplan
