// Fuzzes the trace and lifetime readers (io/bamboo_trace.hpp; the first byte picks the format):
// a reader accepts or throws the library's error; an accepted event trace is valid and replays
// within any capacity; accepted counts become a valid event trace; accepted lifetimes fit.
#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/hazard.hpp>
#include <dnnplan/preemption/trace_replay.hpp>

#include "fuzz_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string text(dnnplan_fuzz::text_of(data + 1, size - 1));
    switch (data[0] % 3) {
        case 0: {
            dnnplan::instance_trace trace;
            if (!dnnplan_fuzz::accepted([&] { trace = dnnplan::parse_instance_trace(text); })) return 0;
            if (!dnnplan_fuzz::accepted([&] { trace.validate(); }))
                dnnplan_fuzz::violated("an accepted trace is valid", std::to_string(trace.events.size()));
            const dnnplan::trace_replay replay(trace);
            const std::int32_t capacity = data[0] / 3 % 8;
            const dnnplan::instance_trace pool = replay.events(capacity, replay.end_ms(), 0);
            std::int64_t live = 0;
            for (const auto& e : pool.events)
                if ((live += e.kind == dnnplan::instance_event_kind::add ? 1 : -1) > capacity)
                    dnnplan_fuzz::violated("a replayed pool stays within its capacity", std::to_string(capacity));
            if (!dnnplan_fuzz::accepted([&] { pool.validate(); }))
                dnnplan_fuzz::violated("a replayed pool is a valid trace", std::to_string(capacity));
            break;
        }
        case 1: {
            dnnplan::availability_trace counts;
            if (!dnnplan_fuzz::accepted([&] { counts = dnnplan::parse_availability_trace(text); })) return 0;
            if (!dnnplan_fuzz::accepted([&] { counts.validate(); }))
                dnnplan_fuzz::violated("accepted counts are valid", std::to_string(counts.samples.size()));
            std::int64_t adds = 0;  // each rise is that many events: keep the harness's memory bounded
            for (std::size_t i = 0; i < counts.samples.size(); ++i)
                adds += std::max<std::int64_t>(0, counts.samples[i].available - (i == 0 ? 0 : counts.samples[i - 1].available));
            if (adds > 100'000) return 0;
            const dnnplan::instance_trace trace = dnnplan::to_instance_trace(counts);
            if (!dnnplan_fuzz::accepted([&] { trace.validate(); }))
                dnnplan_fuzz::violated("counts become a valid trace", std::to_string(trace.events.size()));
            break;
        }
        default: {
            std::vector<dnnplan::lifetime_group> groups;
            if (!dnnplan_fuzz::accepted([&] { groups = dnnplan::parse_lifetimes(text); })) return 0;
            for (const auto& group : groups) {
                const auto observations = dnnplan::lifetime_observations(group.vms);
                // A group the fits reject (no exposure, an infinite one) is an accepted rejection.
                dnnplan::exponential_hazard h;
                dnnplan::hour_of_day_hazard daily;
                if (!dnnplan_fuzz::accepted([&] {
                        h = dnnplan::fit_exponential_hazard(observations);
                        daily = dnnplan::fit_hour_of_day_hazard(observations);
                    }))
                    continue;
                if (!std::isfinite(h.rate_per_h) || !(h.lower_per_h <= h.rate_per_h) || !(h.rate_per_h <= h.upper_per_h) ||
                    !(daily.p_value >= 0.0 && daily.p_value <= 1.0))
                    dnnplan_fuzz::violated("accepted lifetimes fit with an interval around the rate", group.name);
            }
            break;
        }
    }
    return 0;
}
