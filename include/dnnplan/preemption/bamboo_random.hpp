#pragma once
// Bamboo's random mode (Thorpe et al., NSDI 2023; uclasystem/bamboo simulator.py
// generate_spot_instance_events): its options, and the mode as a preemption process
// (bamboo_random_process, preemption/process.hpp) that draws the same arrivals and removals
// without a simulation around them. The simulation in random mode is simulate_bamboo(random,
// seed, options) (preemption/bamboo_simulator.hpp); docs/models/bamboo.md, "Random mode".

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/python_random.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// Bamboo's random mode: every hour, each live instance is removed with the hour's removal
/// probability at a uniformly drawn second of the hour; up to the capacity, arrivals drawn with
/// the hour's addition probability join in time order (and may themselves be removed later in
/// the hour). Drawn from CPython's random.Random(seed) in Bamboo's order (python_random.hpp).
struct bamboo_random_options {
    std::int32_t capacity = 48;                ///< Bamboo's spot_instance_desired_capacity (GPT-2: 48)
    std::int32_t start_hour = 0;               ///< the hour of day at time 0
    /// The removal probability of every hour; none: Bamboo's default table by hour of day
    /// (0.05, but 0.01 in hours 3-5 and 0.25 in hours 15-22).
    std::optional<double> removal_probability{};
    /// Draw the 24 addition probabilities uniformly from the stream first (Bamboo's
    /// generate_addition_probabilities); false: Bamboo's default table (0.05, but 0.5 in hours
    /// 3-5 and 0 in hours 15-22).
    bool generate_addition_probabilities = true;

    void validate(std::string_view path = "random") const {
        const std::string p = detail::field_prefix(path);
        detail::require_at_least(p + "capacity", capacity, 1);
        detail::require_at_least(p + "start_hour", start_hour, 0);
        if (start_hour > 23) throw invalid_input(p + "start_hour", std::to_string(start_hour), "an hour of day in [0, 23]");
        if (removal_probability && !(*removal_probability >= 0.0 && *removal_probability <= 1.0))
            throw invalid_input(p + "removal_probability", detail::format_number(*removal_probability), "a probability in [0, 1]");
    }

    [[nodiscard]] std::array<double, 24> removal_by_hour() const noexcept {
        std::array<double, 24> out{};
        for (std::size_t h = 0; h < 24; ++h)
            out[h] = removal_probability ? *removal_probability : (h >= 3 && h <= 5) ? 0.01 : (h >= 15 && h <= 22) ? 0.25 : 0.05;
        return out;
    }
    [[nodiscard]] static std::array<double, 24> default_addition_by_hour() noexcept {
        std::array<double, 24> out{};
        for (std::size_t h = 0; h < 24; ++h) out[h] = (h >= 3 && h <= 5) ? 0.5 : (h >= 15 && h <= 22) ? 0.0 : 0.05;
        return out;
    }
};

/// Bamboo's random mode as a preemption process (preemption/process.hpp): the
/// arrivals and removals of bamboo_random_options, hour by hour, for a pool of `capacity`
/// instances, without a simulation around them. The same draws as simulate_bamboo(random, seed)
/// make, but for the order of the live instances after two additions at the same second (here:
/// the order they were drawn in; in the simulation, Bamboo's queue order), which decides the
/// order of the next hour's removal trials: distributionally the same process, and seed for seed
/// the same until such a tie.
struct bamboo_random_process {
    bamboo_random_options options{};

    /// -ln(1 - p) averaged over the 24 hours of the removal table (rate_from_hourly_probability):
    /// the Poisson rate with the same chance of surviving each hour; Bamboo draws one trial per
    /// instance and hour instead (instances added within an hour are tried once, for its rest).
    [[nodiscard]] double preemptions_per_instance_h() const {
        double sum = 0.0;
        for (const double p : options.removal_by_hour()) sum += p < 1.0 ? -std::log1p(-p) : std::numeric_limits<double>::infinity();
        return sum / 24.0;
    }

    [[nodiscard]] instance_trace events(std::int32_t capacity, std::int64_t horizon_ms, std::uint64_t seed) const {
        bamboo_random_options o = options;
        o.capacity = capacity;
        o.validate("options");
        detail::require_at_least("horizon_ms", horizon_ms, 0);
        python_random rng(seed);
        const std::array<double, 24> removal = o.removal_by_hour();
        std::array<double, 24> addition = bamboo_random_options::default_addition_by_hour();
        if (o.generate_addition_probabilities)
            for (double& p : addition) p = rng.random();
        instance_trace out;
        std::int64_t next_id = 1;
        std::vector<std::string> live;  // in order of addition
        const auto name = [&] { return "node" + std::to_string(next_id++); };
        for (std::int32_t k = 0; k < capacity; ++k)
            if (addition[static_cast<std::size_t>(o.start_hour)] > rng.random()) {
                live.push_back(name());
                out.events.push_back({0, instance_event_kind::add, live.back()});
            }
        for (std::int64_t t = 0; t <= horizon_ms; t += 3'600'000) {
            const auto hour = static_cast<std::size_t>((o.start_hour + t / 3'600'000) % 24);
            const auto draw = [&](double p) -> std::optional<std::int64_t> {
                if (p > rng.random()) return t + 1000 * static_cast<std::int64_t>(rng.randrange(3600));
                return std::nullopt;
            };
            using timed = std::pair<std::int64_t, std::string>;
            std::vector<timed> removals;
            for (const std::string& n : live)
                if (const auto d = draw(removal[hour])) removals.emplace_back(*d, n);
            std::vector<std::int64_t> arrivals;
            const auto trials = static_cast<std::int64_t>(capacity) - static_cast<std::int64_t>(live.size()) +
                                static_cast<std::int64_t>(removals.size());
            for (std::int64_t k = 0; k < trials; ++k)
                if (const auto d = draw(addition[hour])) arrivals.push_back(*d);
            std::priority_queue<timed, std::vector<timed>, std::greater<>> rm(std::greater<>{}, std::move(removals));
            std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> add(std::greater<>{}, std::move(arrivals));
            std::vector<instance_event> hour_events;
            auto count = static_cast<std::int64_t>(live.size());
            while (!rm.empty() || !add.empty()) {
                if (!rm.empty() && (add.empty() || rm.top().first < add.top())) {
                    hour_events.push_back({rm.top().first, instance_event_kind::remove, rm.top().second});
                    rm.pop();
                    --count;
                    continue;
                }
                const std::int64_t d = add.top();
                add.pop();
                if (count == capacity) continue;
                ++count;
                hour_events.push_back({d, instance_event_kind::add, name()});
                if (const auto d2 = draw(removal[hour]); d2 && *d2 >= d) rm.emplace(*d2, hour_events.back().node);
            }
            // In time order, additions before removals at the same time (Bamboo's event kinds).
            std::stable_sort(hour_events.begin(), hour_events.end(), [](const instance_event& a, const instance_event& b) {
                return a.time_ms != b.time_ms ? a.time_ms < b.time_ms : a.kind < b.kind;
            });
            for (const instance_event& e : hour_events) {
                if (e.time_ms > horizon_ms) break;
                out.events.push_back(e);
                if (e.kind == instance_event_kind::add) live.push_back(e.node);
                else std::erase(live, e.node);
            }
        }
        return out;
    }
};

}  // namespace dnnplan
