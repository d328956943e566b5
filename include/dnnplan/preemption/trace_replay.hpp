#pragma once
// A recorded instance trace as a preemption process (preemption/process.hpp): trace_replay gives
// the trace's events, capped to a pool of `capacity` instances, whatever the seed, and its rate is
// the maximum-likelihood one (removals over instance-hours). docs/models/preemption.md, "The
// processes".

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/process.hpp>

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace dnnplan {

/// A recorded trace as a preemption process: what it says happened, whatever the seed.
class trace_replay {
public:
    /// `end_ms`: when the observation stopped (default: the last event's time; at least that);
    /// instances still live then count as live until it. Throws invalid_input naming
    /// "trace.events[i].<field>" or "end_ms".
    explicit trace_replay(instance_trace trace, std::optional<std::int64_t> end_ms = std::nullopt)
        : trace_(std::move(trace)) {
        trace_.validate("trace");
        const std::int64_t last = trace_.events.empty() ? 0 : trace_.events.back().time_ms;
        if (end_ms && *end_ms < last)
            throw invalid_input("end_ms", std::to_string(*end_ms),
                                "an integer >= " + std::to_string(last) + " (the trace's last event time)");
        end_ms_ = end_ms.value_or(last);
        std::unordered_map<std::string_view, std::int64_t> added;  // live node -> add time
        double live_ms = 0.0;
        for (const instance_event& e : trace_.events) {
            if (e.kind == instance_event_kind::add) {
                added.emplace(e.node, e.time_ms);
            } else {
                const auto it = added.find(e.node);
                live_ms += static_cast<double>(e.time_ms - it->second);
                added.erase(it);
                ++removals_;
            }
        }
        for (const auto& [node, time_ms] : added) live_ms += static_cast<double>(end_ms_ - time_ms);
        instance_hours_ = live_ms / 3.6e6;
    }

    [[nodiscard]] const instance_trace& trace() const noexcept { return trace_; }
    [[nodiscard]] std::int64_t end_ms() const noexcept { return end_ms_; }
    /// Remove events: every one is a preemption.
    [[nodiscard]] std::int64_t removals() const noexcept { return removals_; }
    /// The sum over instances of the time each was live (add to remove, or to end_ms).
    [[nodiscard]] double instance_hours() const noexcept { return instance_hours_; }

    /// removals / instance-hours: the maximum-likelihood rate of fit_exponential_hazard with every
    /// instance still live at end_ms censored there. 0 without removals; +inf for removals
    /// without any instance-hour (everything at one instant).
    [[nodiscard]] double preemptions_per_instance_h() const noexcept {
        if (removals_ == 0) return 0.0;
        return instance_hours_ > 0.0 ? static_cast<double>(removals_) / instance_hours_
                                     : std::numeric_limits<double>::infinity();
    }

    /// The trace's events at times <= horizon_ms, for a pool that holds at most `capacity`
    /// instances: an add while `capacity` are held waits (first in, first out), and when a held
    /// instance is removed the longest-waiting live one is added at that time in its place; the
    /// removal of a waiting instance is not an event of the pool. With capacity >= the trace's
    /// peak, the trace itself (cut at horizon_ms). The seed is ignored.
    /// Throws invalid_input naming "capacity" (>= 0) or "horizon_ms" (>= 0).
    [[nodiscard]] instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t /*seed*/) const {
        detail::check_process_arguments(capacity, horizon_ms);
        instance_trace out;
        std::unordered_set<std::string_view> held;
        std::deque<std::string_view> waiting;
        for (const instance_event& e : trace_.events) {
            if (e.time_ms > horizon_ms) break;
            if (e.kind == instance_event_kind::add) {
                if (static_cast<std::int64_t>(held.size()) < capacity) {
                    held.insert(e.node);
                    out.events.push_back(e);
                } else {
                    waiting.push_back(e.node);
                }
            } else if (held.erase(e.node) != 0) {
                out.events.push_back(e);
                if (!waiting.empty()) {
                    held.insert(waiting.front());
                    out.events.push_back({.time_ms = e.time_ms, .kind = instance_event_kind::add, .node = std::string(waiting.front())});
                    waiting.pop_front();
                }
            } else {
                for (auto it = waiting.begin(); it != waiting.end(); ++it)
                    if (*it == e.node) {
                        waiting.erase(it);
                        break;
                    }
            }
        }
        return out;
    }

private:
    instance_trace trace_;
    std::int64_t end_ms_ = 0;
    std::int64_t removals_ = 0;
    double instance_hours_ = 0.0;
};

static_assert(preemption_process<trace_replay>);

}  // namespace dnnplan
