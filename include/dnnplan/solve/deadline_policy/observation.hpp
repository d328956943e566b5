#pragma once
// What a scheduler has observed when it asks the deadline policy for one decision (the `decide`
// input, io/deadline_policy_json.hpp): the market up to now (every region's trace ends at the tick
// of now), the job, the tick it started at, its state, and the runtime policy to ask. The job
// started start_tick ticks into the traces, so it has run market.ticks() - 1 - start_tick ticks;
// the decision is the one deadline_view would be given at that tick (runtime/deadline_problem.hpp, the tick model).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dnnplan {

struct deadline_observation {
    deadline_market market{};     ///< every region observed up to now: its last tick is now
    deadline_job job{};
    std::size_t start_tick = 0;    ///< the trace tick the job started at, <= the last tick
    deadline_state state{};        ///< the run's state at now (work_left_s: the work left)
    deadline_policy_kind policy = deadline_policy_kind::standard;  ///< the policy to ask ("default")

    /// Ticks the job has run: the last observed tick minus the start tick.
    [[nodiscard]] std::int64_t tick() const noexcept {
        return static_cast<std::int64_t>(market.ticks()) - 1 - static_cast<std::int64_t>(start_tick);
    }
    [[nodiscard]] double elapsed_s() const noexcept { return static_cast<double>(tick()) * market.gap_s(); }

    /// The market (regions on one clock, with prices; named "regions[r]..." under `path`, as the
    /// decide document spells them), the job, a start tick within the traces, the work left in
    /// [0, work_s], the changeover left in [0, changeover_s], a region that exists (or -1 only
    /// before the first run: waiting, no work done), and a runtime policy (not `optimal`: it
    /// needs the future). Throws invalid_input naming the field.
    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        market.validate(path);
        job.validate(p + "job");
        if (start_tick >= market.ticks())
            throw invalid_input(p + "start_tick", std::to_string(start_tick),
                                "a tick of the traces (< " + std::to_string(market.ticks()) + "): the job started within what was observed");
        if (!(std::isfinite(state.work_left_s) && state.work_left_s >= 0.0 && state.work_left_s <= job.work_s))
            throw invalid_input(p + "state.work_left_s", detail::format_number(state.work_left_s),
                                "a number in [0, job.work_s = " + detail::format_number(job.work_s) + "]");
        if (!(std::isfinite(state.changeover_left_s) && state.changeover_left_s >= 0.0 && state.changeover_left_s <= job.changeover_s))
            throw invalid_input(p + "state.changeover_left_s", detail::format_number(state.changeover_left_s),
                                "a number in [0, job.changeover_s = " + detail::format_number(job.changeover_s) + "]");
        validate_region(p);
        if (policy == deadline_policy_kind::optimal)
            throw invalid_input(p + "policy", "\"optimal\"",
                                "a runtime policy (\"default\", \"on_demand\", \"greedy\", \"uniform_progress\"): the optimum needs the future");
    }

private:
    void validate_region(const std::string& p) const {
        const auto regions = static_cast<std::int64_t>(market.regions.size());
        if (state.region < -1 || state.region >= regions)
            throw invalid_input(p + "state.region", std::to_string(state.region),
                                "a region index in [0, " + std::to_string(regions) + ") or -1 (null: no run yet)");
        if (state.region == -1 && (state.mode != deadline_action::wait || state.work_left_s != job.work_s))
            throw invalid_input(p + "state.region", "-1 (null: no run yet)",
                                "the region of the run or of the checkpoint: null only before the first run (mode wait, no work done)");
    }
};

}  // namespace dnnplan
