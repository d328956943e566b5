#pragma once
// The runtime deadline policy's vocabulary: the job, the market it runs in (one availability trace
// per region, on one clock, with prices), the state of a run between ticks, what a policy sees at
// a tick (deadline_view: only what has been observed so far) and what it decides.
//
// The tick model (docs/solvers/deadline_policy.md, "The tick model"; the model of Can't Be Late,
// Wu et al., NSDI '24, section 3): a trace at gap g seconds; a job of C seconds of work, a deadline R
// seconds after its start tick s, a changeover d paid at the start of every run, N instances (a
// gang: spot is available at a tick iff available >= N; costs are per instance x N). At tick i
// (elapsed i g): (1) if the tick before ran, the work advances by max(g - o, 0), o the changeover
// still pending (o falls by what the tick used), capped at the work left; (2) the job is done when
// the work left is <= 1e-3 s, at i g (met iff i g <= R); (3) a spot run whose spot is gone is
// preempted (now waiting); (4) the policy chooses wait, spot (only if available) or on-demand, and a
// choice other than wait that differs from the current one starts a run: o = d (and, in another
// region than the checkpoint's, the egress E); (5) the tick is billed in full, g / 3600 x N x the
// spot price at tick s + i or the on-demand price (wait: 0).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/spot_market.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

enum class deadline_action : std::uint8_t { wait, spot, on_demand };

template <>
struct enum_text<deadline_action> {
    static constexpr std::array<enum_name<deadline_action>, 3> names{{
        {deadline_action::wait, "wait"},
        {deadline_action::spot, "spot"},
        {deadline_action::on_demand, "on_demand"},
    }};
};

/// The policies: the library's own (`standard`, named "default"), the published baselines, and
/// the hindsight optimum (which reads the whole window: simulate and compare only).
enum class deadline_policy_kind { standard, on_demand, greedy, uniform_progress, optimal };

template <>
struct enum_text<deadline_policy_kind> {
    static constexpr std::array<enum_name<deadline_policy_kind>, 5> names{{
        {deadline_policy_kind::standard, "default"},
        {deadline_policy_kind::on_demand, "on_demand"},
        {deadline_policy_kind::greedy, "greedy"},
        {deadline_policy_kind::uniform_progress, "uniform_progress"},
        {deadline_policy_kind::optimal, "optimal"},
    }};
};

/// A job is done when no more work than this is left (step 2 of the tick model).
inline constexpr double deadline_work_tolerance_s = 1e-3;

/// The job: C seconds of work to finish within R seconds of its start, d seconds of changeover at
/// the start of every run, on a gang of N instances; E USD to move the checkpoint to another region.
struct deadline_job {
    double work_s = 0.0;          ///< C, > 0
    double deadline_s = 0.0;      ///< R, > 0, from the start tick
    double changeover_s = 0.0;    ///< d, >= 0: billed, no progress
    std::int32_t instances = 1;   ///< N, >= 1
    double egress_usd = 0.0;      ///< E, >= 0: a run started in a region other than the checkpoint's (the first run pays none)

    void validate(std::string_view path = "job") const {
        const std::string p = detail::field_prefix(path);
        if (!(work_s > deadline_work_tolerance_s) || !std::isfinite(work_s))
            throw invalid_input(p + "work_s", detail::format_number(work_s),
                                "a finite number of seconds > 1e-3 (the tick model's done tolerance)");
        detail::require_positive(p + "deadline_s", deadline_s);
        detail::require_non_negative(p + "changeover_s", changeover_s);
        detail::require_at_least(p + "instances", instances, 1);
        detail::require_non_negative(p + "egress_usd", egress_usd);
    }
};

/// Where the job can run: one trace per region, on one clock (the same gap and length), each with
/// its spot prices per tick and its on-demand price.
struct deadline_market {
    std::vector<spot_market_trace> regions{};

    [[nodiscard]] std::size_t ticks() const noexcept { return regions.empty() ? 0 : regions.front().size(); }
    [[nodiscard]] double gap_s() const noexcept { return regions.empty() ? 0.0 : regions.front().gap_s; }

    void validate(std::string_view path = "market") const {
        const std::string p = detail::field_prefix(path);
        if (regions.empty()) throw invalid_input(p + "regions", "[]", "at least one region");
        for (std::size_t r = 0; r < regions.size(); ++r) {
            const std::string at = p + "regions[" + std::to_string(r) + "]";
            regions[r].validate(at);
            if (regions[r].spot_usd_per_h.empty())
                throw invalid_input(at + ".spot_usd_per_h", "[]", "a spot price per tick (from the trace or given)");
            if (!regions[r].on_demand_usd_per_h)
                throw invalid_input(at + ".on_demand_usd_per_h", "missing", "an on-demand price (from the trace or given)");
            if (regions[r].gap_s != regions.front().gap_s)
                throw invalid_input(at + ".gap_s", detail::format_number(regions[r].gap_s),
                                    "the gap of regions[0] (" + detail::format_number(regions.front().gap_s) + "): one clock");
            if (regions[r].size() != regions.front().size())
                throw invalid_input(at + ".available", std::to_string(regions[r].size()) + " ticks",
                                    "as many ticks as regions[0] (" + std::to_string(regions.front().size()) + "): one clock");
        }
    }
};

/// The ticks of a window, floor(R / g), checked to lie inside the market from `start_tick`
/// (start_tick + floor(R / g) < the traces' ticks). Throws invalid_input naming `path` otherwise.
[[nodiscard]] inline std::size_t window_ticks(const deadline_market& market, const deadline_job& job, std::size_t start_tick,
                                              const std::string& path) {
    const double span = std::floor(job.deadline_s / market.gap_s());  // compared as a double: R / g may exceed any size_t
    if (!(span < static_cast<double>(market.ticks())) || start_tick >= market.ticks() - static_cast<std::size_t>(span))
        throw invalid_input(path, std::to_string(start_tick),
                            "a tick with the deadline inside the traces (start tick + floor(R / g) < " + std::to_string(market.ticks()) +
                                ", floor(R / g) = " + detail::format_number(span) + ")");
    return static_cast<std::size_t>(span);
}

/// A run's state between ticks (after the preemption check of step 3).
struct deadline_state {
    deadline_action mode = deadline_action::wait;  ///< what runs now
    /// The region of the current run, or while waiting the region that holds the checkpoint; -1:
    /// no run yet (the first run pays no egress).
    std::int32_t region = -1;
    double changeover_left_s = 0.0;  ///< o
    double work_left_s = 0.0;        ///< W
};

/// A policy's choice at a tick. `why` is a static text (no allocation per tick).
struct deadline_decision {
    deadline_action action = deadline_action::wait;
    std::int32_t region = 0;  ///< where spot or on-demand runs (ignored for wait)
    std::string_view why{};
};

/// What a policy sees at tick i of a job started at trace tick s: the job, its state, the clock,
/// and what has been observed in every region up to trace tick s + i (the history before the
/// job's start included). Reading a later tick throws dnnplan::error: no policy can.
class deadline_view {
public:
    deadline_view(const deadline_market& market, const deadline_job& job, std::size_t start_tick, std::int64_t tick,
                  const deadline_state& state) noexcept
        : market_(&market), job_(&job), start_(start_tick), tick_(tick), state_(&state) {}

    [[nodiscard]] const deadline_job& job() const noexcept { return *job_; }
    [[nodiscard]] const deadline_state& state() const noexcept { return *state_; }
    [[nodiscard]] std::size_t regions() const noexcept { return market_->regions.size(); }
    [[nodiscard]] const std::string& region_name(std::size_t r) const { return market_->regions.at(r).name; }
    [[nodiscard]] double gap_s() const noexcept { return market_->gap_s(); }
    [[nodiscard]] std::int64_t tick() const noexcept { return tick_; }  ///< i, ticks since the start
    [[nodiscard]] double elapsed_s() const noexcept { return static_cast<double>(tick_) * gap_s(); }
    /// s + i: the trace tick of now, the last one observed.
    [[nodiscard]] std::size_t now() const noexcept { return start_ + static_cast<std::size_t>(tick_); }
    [[nodiscard]] std::size_t start_tick() const noexcept { return start_; }

    /// Instances available in region r at trace tick k <= now().
    [[nodiscard]] std::int32_t available(std::size_t r, std::size_t k) const { return market_->regions.at(r).available[observed(k)]; }
    [[nodiscard]] double spot_usd_per_h(std::size_t r, std::size_t k) const {
        return market_->regions.at(r).spot_usd_per_h[observed(k)];
    }
    [[nodiscard]] double on_demand_usd_per_h(std::size_t r) const { return *market_->regions.at(r).on_demand_usd_per_h; }
    /// Whether a gang of N can run on spot in region r now.
    [[nodiscard]] bool spot_now(std::size_t r) const { return available(r, now()) >= job_->instances; }

private:
    [[nodiscard]] std::size_t observed(std::size_t k) const {
        if (k > now())
            throw error("deadline_view: trace tick " + std::to_string(k) + " read at trace tick " + std::to_string(now()) +
                        ": a policy sees only what has been observed");
        return k;
    }

    const deadline_market* market_;
    const deadline_job* job_;
    std::size_t start_;
    std::int64_t tick_;
    const deadline_state* state_;
};

/// A runtime policy: decides at every tick from what has been observed. It may keep state of its
/// own between ticks of one job (decide is non-const), and must be cheap (it runs every tick).
template <class P>
concept deadline_policy = requires(P& p, const deadline_view& v) {
    { p.decide(v) } -> std::same_as<deadline_decision>;
};

}  // namespace dnnplan
