#pragma once
// What a preemption process is to the library (the extension point of the preemption-aware
// planners and models: a type with these members, checked by the concept), and a holder for a
// process of the caller's. The library's processes are poisson_preemption
// (preemption/poisson_preemption.hpp), trace_replay (preemption/trace_replay.hpp) and
// bamboo_random_process (preemption/bamboo_random.hpp).

#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

namespace dnnplan {

/// A process of spot instances being preempted (and replaced) over time.
template <class P>
concept preemption_process = requires(const P& p, std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t seed) {
    /// Mean preemptions per instance-hour (a Poisson rate); what the analytic models use.
    { p.preemptions_per_instance_h() } -> std::convertible_to<double>;
    /// One realisation: add/remove events for a pool that tries to keep `capacity` instances,
    /// over [0, horizon_ms]. Deterministic for a seed (a trace ignores it).
    { p.events(capacity, horizon_ms, seed) } -> std::same_as<instance_trace>;
};

namespace detail {

/// The arguments every library process checks in events().
inline void check_process_arguments(std::int32_t capacity, std::int64_t horizon_ms) {
    require_at_least("capacity", capacity, 0);
    require_at_least("horizon_ms", horizon_ms, 0);
}

}  // namespace detail

/// Any type of the caller's that satisfies preemption_process (above), held by
/// value behind its two members: how a process of one's own goes into a planner's request.
/// The library's processes go in as themselves (they have a JSON form; this has none).
class any_preemption_process {
public:
    template <preemption_process Process>
        requires(!std::same_as<std::remove_cvref_t<Process>, any_preemption_process>)
    explicit any_preemption_process(Process process)
        : rate_per_instance_h_(static_cast<double>(process.preemptions_per_instance_h())),
          events_([p = std::move(process)](std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t seed) {
              return p.events(capacity, horizon_ms, seed);
          }) {}

    [[nodiscard]] double preemptions_per_instance_h() const noexcept { return rate_per_instance_h_; }
    [[nodiscard]] instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t seed) const {
        return events_(capacity, horizon_ms, seed);
    }

private:
    double rate_per_instance_h_ = 0.0;
    std::function<instance_trace(std::int32_t, std::int64_t, std::uint64_t)> events_;
};

}  // namespace dnnplan
