#pragma once
// The timeline of one minibatch of synchronous 1F1B (PipeDream-Flush / DAPPLE's schedule, the one
// model/pipeline_1f1b.hpp prices): stage s runs min(S - s - 1, M) forward passes, then alternates
// one forward and one backward, then the remaining backward passes, then its exposed all-reduce.
// A forward waits for the previous stage's forward of the same micro-batch, a backward for the
// next stage's backward. Each pass takes the stage's per-micro-batch time, max(compute, transfer)
// (the model's), split between forward and backward as the compute is. The model's closed form,
// (M + S - 1) x slowest, is what this timeline spans when every stage takes the slowest time; with
// unequal stages the timeline is the exact event order of one minibatch on its own (no overlap
// with the next minibatch's fill), which is what a picture of the schedule shows.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace dnnplan {

enum class pipeline_pass { forward, backward, sync };

template <>
struct enum_text<pipeline_pass> {
    static constexpr std::array<enum_name<pipeline_pass>, 3> names{
        {{pipeline_pass::forward, "forward"}, {pipeline_pass::backward, "backward"}, {pipeline_pass::sync, "sync"}}};
};

/// One pass of one stage in the timeline.
struct pipeline_event {
    std::size_t stage = 0;
    pipeline_pass pass = pipeline_pass::forward;
    std::optional<std::int32_t> micro_batch{};  ///< none for the all-reduce
    double start_s = 0.0;
    double end_s = 0.0;
    friend bool operator==(const pipeline_event&, const pipeline_event&) = default;
};

/// The 1F1B timeline of one minibatch of `micro_batches` micro-batches over `stages` (their
/// figures, first stage first: compute_s, forward_s, transfer_s, exposed_sync_s are read), in the
/// order the passes start per stage. O(S M) events. Throws invalid_input for micro_batches < 1.
[[nodiscard]] inline std::vector<pipeline_event> timeline_1f1b(std::span<const stage_breakdown> stages,
                                                               std::int32_t micro_batches) {
    detail::require_at_least("micro_batches", micro_batches, 1);
    const std::size_t count = stages.size();
    const auto m = static_cast<std::size_t>(micro_batches);
    std::vector<std::vector<std::pair<bool, std::size_t>>> order(count);  // (forward?, micro-batch)
    std::vector<double> fwd(count), bwd(count);
    for (std::size_t s = 0; s < count; ++s) {
        const stage_breakdown& f = stages[s];
        const double busy = std::max(f.compute_s, f.transfer_s);
        const double share = f.compute_s > 0 ? f.forward_s / f.compute_s : 0.5;
        fwd[s] = busy * share;
        bwd[s] = busy - fwd[s];
        const std::size_t warmup = std::min(count - s - 1, m);
        std::size_t next_f = 0, next_b = 0;
        for (; next_f < warmup; ++next_f) order[s].emplace_back(true, next_f);
        while (next_b < m) {
            if (next_f < m) order[s].emplace_back(true, next_f++);
            order[s].emplace_back(false, next_b++);
        }
    }
    std::vector<std::vector<std::optional<double>>> f_end(count, std::vector<std::optional<double>>(m)), b_end = f_end;
    std::vector<std::size_t> position(count, 0);
    std::vector<double> free_at(count, 0.0);
    std::vector<pipeline_event> events;
    events.reserve(count * (2 * m + 1));
    // Every pass becomes ready once its neighbour's pass is done; sweeping the stages until none
    // advances places each pass exactly once (1F1B's dependencies have no cycle).
    for (bool progress = true; progress;) {
        progress = false;
        for (std::size_t s = 0; s < count; ++s) {
            while (position[s] < order[s].size()) {
                const auto [forward, mb] = order[s][position[s]];
                double ready = free_at[s];
                if (forward && s > 0) {
                    if (!f_end[s - 1][mb]) break;
                    ready = std::max(ready, *f_end[s - 1][mb]);
                }
                if (!forward && s + 1 < count) {
                    if (!b_end[s + 1][mb]) break;
                    ready = std::max(ready, *b_end[s + 1][mb]);
                }
                const double end = ready + (forward ? fwd[s] : bwd[s]);
                (forward ? f_end : b_end)[s][mb] = end;
                free_at[s] = end;
                events.push_back({.stage = s, .pass = forward ? pipeline_pass::forward : pipeline_pass::backward,
                                  .micro_batch = static_cast<std::int32_t>(mb), .start_s = ready, .end_s = end});
                ++position[s];
                progress = true;
            }
        }
    }
    for (std::size_t s = 0; s < count; ++s) {
        const double sync = stages[s].exposed_sync_s;
        if (sync > 0)
            events.push_back({.stage = s, .pass = pipeline_pass::sync, .micro_batch = std::nullopt, .start_s = free_at[s],
                              .end_s = free_at[s] + sync});
    }
    return events;
}

}  // namespace dnnplan
