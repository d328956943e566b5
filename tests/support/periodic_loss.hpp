#pragma once
// A preemption process written in the tests (the preemption_process concept's own kind of
// extension), shared by the tests of the planners that take one.

#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/process.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dnnplan_test {

/// A process of the test's own (preemption_process): one instance of the pool lost every
/// `period_ms`, the oldest first, replaced one minute later; the seed is ignored.
struct periodic_loss {
    std::int64_t period_ms = 1'800'000;
    double preemptions_per_instance_h() const noexcept { return 0.0; }  // per instance: see events()
    dnnplan::instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t) const {
        dnnplan::instance_trace out;
        std::vector<std::string> live;
        std::int64_t next = 0;
        for (std::int32_t i = 0; i < capacity; ++i) {
            live.push_back("n" + std::to_string(next++));
            out.events.push_back({0, dnnplan::instance_event_kind::add, live.back()});
        }
        for (std::int64_t t = period_ms; t <= horizon_ms && capacity > 0; t += period_ms) {
            out.events.push_back({t, dnnplan::instance_event_kind::remove, live.front()});
            live.erase(live.begin());
            if (t + 60'000 > horizon_ms) break;
            live.push_back("n" + std::to_string(next++));
            out.events.push_back({t + 60'000, dnnplan::instance_event_kind::add, live.back()});
        }
        return out;
    }
};
static_assert(dnnplan::preemption_process<periodic_loss>);

}  // namespace dnnplan_test
