#pragma once
// Preemptions at a constant rate (a Poisson process per instance), each loss replaced after a
// delay: poisson_preemption, a preemption_process (preemption/process.hpp) whose rate may come
// from a fitted hazard (preemption/hazard.hpp); and the Poisson rate of Bamboo's hourly removal
// probability. docs/models/preemption.md, "The processes".

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/process.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// Bamboo's random mode removes an instance in an hour with probability p; as a Poisson rate that
/// is -ln(1 - p) per hour (P(no event in 1 h) = e^{-lambda} = 1 - p). p in [0, 1).
[[nodiscard]] inline double rate_from_hourly_probability(double p) {
    if (!(p >= 0.0 && p < 1.0)) throw invalid_input("probability", detail::format_number(p), "a number in [0, 1)");
    return -std::log1p(-p);
}

/// Instances preempted at a constant rate, each lost one replaced after a delay: every instance
/// lives an exponential time of mean 1 / rate_per_instance_h hours from its add (independently),
/// and at each loss a replacement is requested that arrives replacement_delay_ms later. So the
/// pool holds `capacity` instances minus those awaiting replacement, never more.
struct poisson_preemption {
    double rate_per_instance_h = 0.0;        ///< lambda, preemptions per instance-hour, >= 0
    std::int64_t replacement_delay_ms = 0;   ///< from a loss to its replacement's add, >= 0

    void validate(std::string_view path = "") const {
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "rate_per_instance_h", rate_per_instance_h);
        detail::require_at_least(p + "replacement_delay_ms", replacement_delay_ms, 0);
    }

    [[nodiscard]] double preemptions_per_instance_h() const noexcept { return rate_per_instance_h; }

    /// The largest capacity * horizon_h * rate_per_instance_h events() generates.
    static constexpr double max_expected_preemptions = 1e7;

    /// One realisation over [0, horizon_ms]: `capacity` adds at 0 (node1 ... node<capacity>), then
    /// each instance's removal at add + an exponential lifetime (rounded up to whole ms, at least
    /// 1 ms: +0.5 ms on the mean, 1.4e-7 of it at 1 preemption/h) and
    /// its replacement's add (a new name node<k>, k counting up) after the delay; events after
    /// horizon_ms are not generated. At equal times, events come in the order they were
    /// scheduled. Deterministic: lifetimes are -ln(1 - u) / lambda with u = the top 53 bits of
    /// std::mt19937_64(seed) output / 2^53, one draw per add in event order.
    /// Throws invalid_input naming "rate_per_instance_h" (also when capacity * horizon_h * rate >
    /// 1e7: the list would not fit in memory), "replacement_delay_ms", "capacity" (>= 0) or
    /// "horizon_ms" (>= 0).
    [[nodiscard]] instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t seed) const {
        validate();
        detail::check_process_arguments(capacity, horizon_ms);
        // Each event costs memory: bound the mean number of preemptions (a lifetime is at least
        // 1 ms, so the realised count stays within a small factor of it).
        const double expected = static_cast<double>(capacity) * static_cast<double>(horizon_ms) / 3.6e6 * rate_per_instance_h;
        if (expected > max_expected_preemptions)
            throw invalid_input("rate_per_instance_h", detail::format_number(rate_per_instance_h),
                                "a rate with capacity * horizon * rate <= 1e7 expected preemptions (here " +
                                    detail::format_number(expected) + ")");
        struct pending {
            std::int64_t time_ms;
            std::uint64_t order;  // scheduling order: ties in time keep it
            instance_event_kind kind;
            std::int64_t id;
            bool operator>(const pending& o) const noexcept {
                return time_ms != o.time_ms ? time_ms > o.time_ms : order > o.order;
            }
        };
        std::priority_queue<pending, std::vector<pending>, std::greater<>> queue;
        std::uint64_t order = 0;
        std::int64_t next_id = 1;
        for (std::int32_t i = 0; i < capacity; ++i)
            queue.push({0, order++, instance_event_kind::add, next_id++});
        std::mt19937_64 generator(seed);
        const double horizon = static_cast<double>(horizon_ms);
        instance_trace out;
        while (!queue.empty()) {
            const pending e = queue.top();
            queue.pop();
            out.events.push_back({.time_ms = e.time_ms, .kind = e.kind, .node = "node" + std::to_string(e.id)});
            if (e.kind == instance_event_kind::add) {
                const double u = static_cast<double>(generator() >> 11U) * 0x1.0p-53;
                if (rate_per_instance_h > 0.0) {
                    const double lifetime_ms = std::max(1.0, std::ceil(-std::log1p(-u) / rate_per_instance_h * 3.6e6));
                    const double end = static_cast<double>(e.time_ms) + lifetime_ms;
                    if (end <= horizon)
                        queue.push({static_cast<std::int64_t>(end), order++, instance_event_kind::remove, e.id});
                }
            } else if (replacement_delay_ms <= horizon_ms - e.time_ms) {
                queue.push({e.time_ms + replacement_delay_ms, order++, instance_event_kind::add, next_id++});
            }
        }
        return out;
    }
};

static_assert(preemption_process<poisson_preemption>);

}  // namespace dnnplan
