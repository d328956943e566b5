#pragma once
// The published deadline policies, as baselines: on-demand throughout; greedy (spot when it is
// there, else wait, with the safety net); Uniform Progress, the policy of "Can't Be Late:
// Optimizing Spot Instance Savings under Deadlines" (Wu et al., NSDI '24, section 4.2 and its
// simulator's strategy), rule for rule. All three run in one region.
//
// Uniform Progress, with t elapsed, W work left, W0 = C, cur the state after preemption, a this
// tick's spot availability, left = floor((R - t) / g) g:
//   1. wait when W <= 1e-3; else ask = spot if a, else wait;
//   2. behind the uniform line, W0 - W < t W0 / R: ask = spot if a, else on-demand;
//   3. cur on-demand and (not a, or (t + 2d) W0 / R >= W0 - W): ask = on-demand;
//   4. ceil((W + 2d) / g) g >= left and cur is wait or on-demand: ask = on-demand;
//   5. ceil((W + d) / g) g >= left: ask = spot if cur is spot and o < 1e-3, else on-demand; and
//      when d = 0 and a: spot.
// Greedy is the same without rules 2 and 3 (rules 4 and 5 are the safety net). The comparisons
// are written over products, (W0 - W) R < t W0, so that with g, d, C and R in whole seconds they are
// exact in double arithmetic.

#include <dnnplan/runtime/deadline_problem.hpp>

#include <cmath>
#include <cstdint>

namespace dnnplan {

/// On-demand from the first tick to the last, in `region`.
struct on_demand_policy {
    std::int32_t region = 0;
    [[nodiscard]] deadline_decision decide(const deadline_view& v) const noexcept {
        if (v.state().work_left_s <= deadline_work_tolerance_s) return {deadline_action::wait, region, "done"};
        return {deadline_action::on_demand, region, "on-demand throughout"};
    }
};

namespace detail::deadline {

/// Rules 4 and 5, the safety net shared by greedy and Uniform Progress: on-demand once the work
/// left (with one or two changeovers) no longer fits in the whole ticks left. On-demand runs in
/// `od_region` (the checkpoint's: moving a run that must finish on-demand would only add a
/// changeover and the egress); `spot_region` is where spot may be taken now (-1: nowhere), which
/// rule 5 does when there is no changeover to pay.
[[nodiscard]] inline deadline_decision safety_net(const deadline_view& v, deadline_decision ask, std::int32_t spot_region,
                                                  std::int32_t od_region) noexcept {
    const deadline_job& job = v.job();
    const deadline_state& s = v.state();
    const double g = v.gap_s(), d = job.changeover_s, w = s.work_left_s, t = v.elapsed_s();
    const double left = std::floor((job.deadline_s - t) / g) * g;
    const bool idle_or_on_demand = s.mode != deadline_action::spot;
    if (std::ceil((w + 2.0 * d) / g) * g >= left && idle_or_on_demand)
        ask = {deadline_action::on_demand, od_region, "safety net: the work and two changeovers fill the time left"};
    if (std::ceil((w + d) / g) * g >= left) {
        const bool keep_spot = s.mode == deadline_action::spot && s.changeover_left_s < 1e-3;
        ask = keep_spot ? deadline_decision{deadline_action::spot, s.region, "safety net: the spot run, past its changeover"}
                        : deadline_decision{deadline_action::on_demand, od_region, "safety net: the work and a changeover fill the time left"};
        if (d == 0.0 && spot_region >= 0) ask = {deadline_action::spot, spot_region, "safety net: spot, no changeover to pay"};
    }
    return ask;
}

/// Greedy (uniform = false) or Uniform Progress (uniform = true) in one region.
[[nodiscard]] inline deadline_decision uniform_progress(const deadline_view& v, std::int32_t region, bool uniform) {
    const deadline_state& s = v.state();
    if (s.work_left_s <= deadline_work_tolerance_s) return {deadline_action::wait, region, "done"};
    const bool a = v.spot_now(static_cast<std::size_t>(region));
    deadline_decision ask = a ? deadline_decision{deadline_action::spot, region, "spot is available"}
                              : deadline_decision{deadline_action::wait, region, "waiting for spot"};
    if (uniform) {
        const double w0 = v.job().work_s, r = v.job().deadline_s, t = v.elapsed_s(), d = v.job().changeover_s;
        const double done = w0 - s.work_left_s;
        if (done * r < t * w0)
            ask = a ? deadline_decision{deadline_action::spot, region, "behind the uniform line: spot"}
                    : deadline_decision{deadline_action::on_demand, region, "behind the uniform line: on-demand"};
        if (s.mode == deadline_action::on_demand && (!a || (t + 2.0 * d) * w0 >= done * r))
            ask = {deadline_action::on_demand, region, "on-demand until two changeovers ahead of the line"};
    }
    return safety_net(v, ask, a ? region : -1, region);
}

}  // namespace detail::deadline

/// Spot when it is available, else wait; the safety net moves to on-demand when the slack is gone.
struct greedy_policy {
    std::int32_t region = 0;
    [[nodiscard]] deadline_decision decide(const deadline_view& v) const {
        return detail::deadline::uniform_progress(v, region, false);
    }
};

/// Can't Be Late's Uniform Progress (above).
struct uniform_progress_policy {
    std::int32_t region = 0;
    [[nodiscard]] deadline_decision decide(const deadline_view& v) const {
        return detail::deadline::uniform_progress(v, region, true);
    }
};

static_assert(deadline_policy<on_demand_policy>);
static_assert(deadline_policy<greedy_policy>);
static_assert(deadline_policy<uniform_progress_policy>);

}  // namespace dnnplan
