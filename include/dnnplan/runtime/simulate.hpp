#pragma once
// The tick simulator (runtime/deadline_problem.hpp states the tick model): runs a policy on a
// job started at one tick of a market's traces and accounts its cost, its finish and what ran. The
// policy sees a deadline_view: only what has been observed up to the tick it decides at.

#include <dnnplan/core/error.hpp>
#include <dnnplan/runtime/deadline_problem.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dnnplan {

/// What one job (one start tick) cost and how it ran.
struct deadline_outcome {
    std::size_t start_tick = 0;
    double cost_usd = 0.0;        ///< the billed ticks and the egress charges
    double finish_s = 0.0;        ///< i g at the tick the work was done; unfinished: the time the trace ended
    bool finished = false;        ///< false: the trace ended first (work_left_s says how much was left)
    bool met = false;             ///< finished with finish_s <= R
    double work_left_s = 0.0;
    double spot_s = 0.0;          ///< billed seconds on spot (per instance of the gang)
    double on_demand_s = 0.0;     ///< billed seconds on on-demand
    std::int64_t changeovers = 0;   ///< runs started
    std::int64_t region_moves = 0;  ///< runs started away from the checkpoint's region (each paid E)
    friend bool operator==(const deadline_outcome&, const deadline_outcome&) = default;
};

namespace detail::deadline {

/// Step 1: the tick before ran, so the work advances by max(g - o, 0), capped at the work left, and
/// the pending changeover o falls by what the tick used.
inline void advance(deadline_state& s, double gap_s) noexcept {
    if (s.mode == deadline_action::wait) return;
    const double used = std::min(s.changeover_left_s, gap_s);
    const double progress = std::max(gap_s - s.changeover_left_s, 0.0);
    s.changeover_left_s -= used;
    s.work_left_s -= std::min(progress, s.work_left_s);
}

/// Step 4's bookkeeping: a decision other than wait that differs from what runs (its action or its
/// region) starts a run: the changeover, and the egress when the checkpoint is elsewhere.
inline void start_if_new(deadline_state& s, const deadline_decision& d, const deadline_job& job, deadline_outcome& out) {
    if (d.action == deadline_action::wait) {
        s.mode = deadline_action::wait;  // the checkpoint stays where it is (s.region)
        return;
    }
    if (d.action != s.mode || d.region != s.region) {
        s.changeover_left_s = job.changeover_s;
        ++out.changeovers;
        if (s.region >= 0 && d.region != s.region) {
            ++out.region_moves;
            out.cost_usd += job.egress_usd;
        }
    }
    s.mode = d.action;
    s.region = d.region;
}

/// A decision the market cannot carry out is the policy's error.
inline void check_decision(const deadline_decision& d, const deadline_view& v) {
    if (d.action == deadline_action::wait) return;
    if (d.region < 0 || static_cast<std::size_t>(d.region) >= v.regions())
        throw error("deadline policy: region " + std::to_string(d.region) + " does not exist (" + std::to_string(v.regions()) +
                    " regions)");
    if (d.action == deadline_action::spot && !v.spot_now(static_cast<std::size_t>(d.region)))
        throw error("deadline policy: spot chosen in region " + std::to_string(d.region) + " at tick " + std::to_string(v.tick()) +
                    ", where it is not available");
}

/// Step 5: the tick is billed in full.
inline void bill(const deadline_state& s, const deadline_market& m, const deadline_job& job, std::size_t k, deadline_outcome& out) {
    if (s.mode == deadline_action::wait) return;
    const spot_market_trace& t = m.regions[static_cast<std::size_t>(s.region)];
    const double g = m.gap_s();
    const double usd_per_h = s.mode == deadline_action::spot ? t.spot_usd_per_h[k] : *t.on_demand_usd_per_h;
    out.cost_usd += usd_per_h * g / 3600.0 * job.instances;
    (s.mode == deadline_action::spot ? out.spot_s : out.on_demand_s) += g;
}

}  // namespace detail::deadline

/// Runs `policy` on `job` started at trace tick `start_tick` of `market`, tick by tick, until the
/// work is done or the trace ends. Throws invalid_input for a bad job, market or start tick, and
/// dnnplan::error when the policy chooses what the market cannot carry out (spot where there is
/// none, a region that does not exist) or reads a tick it has not observed.
template <deadline_policy Policy>
[[nodiscard]] deadline_outcome simulate_window(const deadline_market& market, const deadline_job& job, std::size_t start_tick,
                                               Policy& policy) {
    market.validate("market");
    job.validate("job");
    if (start_tick >= market.ticks())
        throw invalid_input("start_tick", std::to_string(start_tick), "a tick of the traces (< " + std::to_string(market.ticks()) + ")");
    deadline_outcome out{.start_tick = start_tick};
    deadline_state state{.work_left_s = job.work_s};
    const double g = market.gap_s();
    for (std::int64_t i = 0;; ++i) {
        const std::size_t k = start_tick + static_cast<std::size_t>(i);
        if (i > 0) detail::deadline::advance(state, g);
        const double t = static_cast<double>(i) * g;
        if (state.work_left_s <= deadline_work_tolerance_s) {
            out.finished = true;
            out.finish_s = t;
            out.met = t <= job.deadline_s;
            return out;
        }
        if (k >= market.ticks()) {
            out.finish_s = t;
            out.work_left_s = state.work_left_s;
            return out;
        }
        if (state.mode == deadline_action::spot &&
            market.regions[static_cast<std::size_t>(state.region)].available[k] < job.instances)
            state.mode = deadline_action::wait;  // preempted
        const deadline_view view(market, job, start_tick, i, state);
        const deadline_decision d = policy.decide(view);
        detail::deadline::check_decision(d, view);
        detail::deadline::start_if_new(state, d, job, out);
        detail::deadline::bill(state, market, job, k, out);
    }
}

}  // namespace dnnplan
