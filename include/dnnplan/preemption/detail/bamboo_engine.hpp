#pragma once
// Bamboo's discrete-event simulation, event for event (Thorpe et al., NSDI 2023;
// uclasystem/bamboo project_pactum/simulation/simulator.py): the engine behind simulate_bamboo
// (preemption/bamboo_simulator.hpp, whose header comment has the rules). One method per event
// kind of simulator.py, named after it; the figures of Bamboo's Result in finish().

#include <dnnplan/preemption/bamboo_random.hpp>
#include <dnnplan/preemption/bamboo_run.hpp>
#include <dnnplan/preemption/detail/bamboo_queue.hpp>
#include <dnnplan/preemption/python_random.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dnnplan::detail::bamboo {

enum class instance_state : std::uint8_t { creating, ready, running };

struct coordinate {
    std::int32_t pipeline = 0, stage = 0;
    friend bool operator==(const coordinate&, const coordinate&) = default;
};

struct instance {
    std::int64_t start_ms = 0;
    instance_state state = instance_state::creating;
    bool alive = false;
    std::int32_t coordinate_count = 0;   // 0, 1 or 2 (a third would have been a fatal failure)
    std::array<coordinate, 2> coordinates{};
};

/// Bamboo's random-mode arrivals and removals, hour by hour (simulator.py
/// generate_spot_instance_events), on the engine's live instances.
struct hourly_generator {
    python_random rng;
    bamboo_random_options options;
    std::array<double, 24> removal{}, addition{};
    std::int64_t next_id = 1;
};

class engine {
public:
    engine(const bamboo_options& options, std::vector<std::string> names)
        : o_(options), names_(std::move(names)), instances_(names_.size()) {}

    void push(std::int64_t t, std::int32_t kind, std::int64_t data = 0) { heap_.push({t, kind, data, 0}); }
    void attach(hourly_generator generator) { generator_.emplace(std::move(generator)); }
    [[nodiscard]] std::int64_t new_instance(std::string name) {
        names_.push_back(std::move(name));
        instances_.emplace_back();
        return static_cast<std::int64_t>(names_.size() - 1);
    }

    bamboo_run run() {
        std::int64_t t = 0;
        while (!heap_.empty()) {
            const event e = heap_.pop();
            t = e.time_ms;
            if (o_.duration_ms && t > *o_.duration_ms) {
                t = *o_.duration_ms;
                break;
            }
            switch (e.kind) {
                case add: on_add(t, e.data); break;
                case remove: on_remove(t, e.data); break;
                case generate: on_generate(t); break;
                case ready: on_ready(t, e.data); break;
                case global_timeout: on_timeout(t, true); break;
                case local_timeout: on_timeout(t, false); break;
                default: t = on_step(t, e.data); break;
            }
            if (failed_) break;
            if (o_.target_steps && steps_ >= *o_.target_steps) break;
            if (!heap_.empty() && heap_.top().time_ms == t) continue;
            record_batch(t);
        }
        return finish(t);
    }

private:
    // ---- the dict of live instances, in order of addition --------------------------------
    template <class F>
    void for_each_live(F&& f) {
        for (const std::int64_t i : order_)
            if (instances_[static_cast<std::size_t>(i)].alive) f(i, instances_[static_cast<std::size_t>(i)]);
    }
    void compact_order() {
        if (dead_in_order_ <= live_ + 16) return;
        std::erase_if(order_, [&](std::int64_t i) { return !instances_[static_cast<std::size_t>(i)].alive; });
        dead_in_order_ = 0;
    }
    instance& at(std::int64_t i) { return instances_[static_cast<std::size_t>(i)]; }

    // ---- events ------------------------------------------------------------------------------
    void on_add(std::int64_t t, std::int64_t i) {
        instance& x = at(i);
        x = instance{.start_ms = t, .state = instance_state::creating, .alive = true};
        order_.push_back(i);
        ++live_;
        push(t + o_.instance_creation_ms, ready, i);
    }

    void on_ready(std::int64_t t, std::int64_t i) {
        instance& x = at(i);
        if (!x.alive) return;
        x.state = instance_state::ready;
        if (status_ == status::stopped) {
            start_rendezvous(t, true);
        } else if (status_ == status::rendezvous) {
            rendezvous_.push_back(i);
        } else {
            ++waiting_;
        }
    }

    void on_remove(std::int64_t t, std::int64_t i) {
        instance& x = at(i);
        ++removals_;
        lifetimes_ms_.push_back(t - x.start_ms);
        removal_times_ms_.push_back(t);
        x.alive = false;
        --live_;
        ++dead_in_order_;
        if (x.state == instance_state::running) {
            if (x.coordinate_count > 1) return fatal_failure(t);
            const coordinate lost = x.coordinates[0];
            const coordinate target{lost.pipeline, lost.stage - 1 == -1 ? stages_ - 1 : lost.stage - 1};
            bool fatal = false, done = false;
            for (const std::int64_t k : order_) {
                instance& other = at(k);
                if (!other.alive) continue;
                for (std::int32_t c = 0; c < other.coordinate_count; ++c) {
                    if (other.coordinates[static_cast<std::size_t>(c)] != target) continue;
                    if (other.coordinate_count > 1) {
                        fatal = true;
                    } else {
                        other.coordinates[1] = lost;
                        other.coordinate_count = 2;
                    }
                    done = true;
                    break;
                }
                if (done) break;
            }
            if (fatal) return fatal_failure(t);
        }
        if (status_ == status::running && !fallback_) {
            fallback_ = std::pair{steps_, t};
            fallback_handled_ = false;
            step_ms_ = static_cast<std::int64_t>(static_cast<double>(step_ms_) * o_.slowdown);
        }
        compact_order();
    }

    void fatal_failure(std::int64_t t) {
        ++fatal_failures_;
        start_rendezvous(t, true);
        compact_order();
    }

    void collect_rendezvous() {
        rendezvous_.clear();
        for_each_live([&](std::int64_t i, const instance& x) {
            if (x.state != instance_state::creating) rendezvous_.push_back(i);
        });
    }

    void push_timeout(std::int64_t t, bool global) {
        push(t + (global ? o_.global_rendezvous_ms : o_.workload.local_rendezvous_ms), global ? global_timeout : local_timeout);
    }

    void start_rendezvous(std::int64_t t, bool global) {
        status_ = status::rendezvous;
        collect_rendezvous();
        push_timeout(t, global);
    }

    void on_timeout(std::int64_t t, bool global) {
        for (const std::int64_t i : rendezvous_)
            if (!at(i).alive) {  // a member left: restart the full timeout
                collect_rendezvous();
                push_timeout(t, global);
                return;
            }
        const auto n = static_cast<std::int32_t>(rendezvous_.size());
        const std::int32_t s_target = o_.workload.stages;
        pipelines_ = n < s_target ? 0 : n / s_target;
        stages_ = n < s_target ? 0 : s_target;
        std::int32_t k = 0;
        waiting_ = 0;
        for (const std::int64_t i : rendezvous_) {
            instance& x = at(i);
            if (k < pipelines_ * stages_) {
                x.coordinates[0] = {k / stages_, k % stages_};
                x.coordinate_count = 1;
                x.state = instance_state::running;
                ++k;
            } else {
                x.coordinate_count = 0;
                x.state = instance_state::ready;
                ++waiting_;
            }
        }
        fallback_.reset();
        fallback_handled_ = false;
        ++version_;
        rendezvous_.clear();
        if (pipelines_ == 0) {
            status_ = status::stopped;
            return;
        }
        status_ = status::running;
        const auto rows = static_cast<std::int32_t>(o_.workload.step_ms.size());
        if (pipelines_ > rows) {
            if (o_.beyond_table == beyond_step_table::stop) {
                failed_ = true;
                failure_ = "a rendezvous at " + std::to_string(t) + " ms formed " + std::to_string(pipelines_) +
                           " pipelines of " + std::to_string(stages_) + " stages; the step table has " + std::to_string(rows) +
                           " rows (Bamboo's simulator stops here too; beyond_table use_last_row extends it)";
                return;
            }
            step_ms_ = o_.workload.step_ms.back();
        } else {
            step_ms_ = o_.workload.step_ms[static_cast<std::size_t>(pipelines_ - 1)];
        }
        push(t + step_ms_, step, version_);
        if (!first_rendezvous_ms_) {
            first_rendezvous_ms_ = t;
            previous_step_ms_ = t;
        }
    }

    [[nodiscard]] bool should_reconfigure() {
        std::int32_t overloaded = 0;
        for_each_live([&](std::int64_t, const instance& x) {
            if (x.state == instance_state::running && x.coordinate_count > 1) ++overloaded;
        });
        if (overloaded > 0 && waiting_ >= overloaded) return true;
        const std::int32_t active = pipelines_ * stages_ - overloaded;
        if (overloaded > 0 && 2.0 * overloaded / active > 0.05) return true;
        return (active + waiting_) / o_.workload.stages > pipelines_;
    }

    // Mean price (USD/h x h) over [h0, h1] of the recorded price step function, walked backwards
    // from its last point as simulator.py does (a change recorded at x counts from x on).
    [[nodiscard]] double price_integral(double h0, double h1) const {
        double y = cost_.back().second, x = h1, acc = 0.0;
        std::size_t i = cost_.size() - 1;
        while (true) {
            const double x1 = cost_[i].first;
            if (i == 0) {
                acc += y * (x - h0);
                break;
            }
            if (x1 > h0) {
                acc += y * (x - x1);
                y = cost_[i - 1].second;
                x = x1;
            } else {
                acc += y * (x - h0);
                break;
            }
            i -= 2;  // the series is a seed point and pairs (old, new) at each change: i stays even
        }
        return acc;
    }

    // One completed step at t; returns the time of the last step it completed (t, or later when
    // a run of steps was advanced in closed form).
    std::int64_t on_step(std::int64_t t, std::int64_t version) {
        if (version != version_) return t;
        if (fallback_ && !fallback_handled_ && fallback_->first == steps_) {
            push(static_cast<std::int64_t>(static_cast<double>(t - fallback_->second) * (o_.slowdown - 1.0)) + t, step, version);
            fallback_handled_ = true;
            return t;
        }
        count_step(t);
        if (should_reconfigure()) {
            start_rendezvous(t, false);
            return t;
        }
        if (o_.closed_form_steps && (heap_.empty() || heap_.top().time_ms != t)) {
            // The batch at t ends with this step: its price change is recorded before the run
            // (as the loop would record it before the next step).
            record_batch(t);
            t = advance_run(t);
        }
        if (!(o_.target_steps && steps_ >= *o_.target_steps)) push(t + step_ms_, step, version_);
        return t;
    }

    void count_step(std::int64_t t) {
        ++steps_;
        const std::int64_t dt = t - previous_step_ms_;
        const double sps = static_cast<double>(o_.workload.samples_per_step) / (static_cast<double>(dt) / 1000.0);
        const double h0 = static_cast<double>(previous_step_ms_) / 3600000.0, h1 = static_cast<double>(t) / 3600000.0;
        performance_sum_ += (h1 - h0) * sps;
        const double mean_price = price_integral(h0, h1) / (static_cast<double>(dt) / 3600000.0);
        value_sum_ += (h1 - h0) * (sps / mean_price);
        previous_step_ms_ = t;
        if (o_.record_series) progress_.emplace_back(t, steps_);
    }

    // The steps that complete before the next queued event (and within the duration and the
    // target), after the step at t: nothing but the counters and the sums changes during them
    // (no event, so no rendezvous, no price change, the same should_reconfigure answer). Their
    // pushes and pops are applied to the queue until its layout stops changing.
    std::int64_t advance_run(std::int64_t t) {
        const std::int64_t dt = step_ms_;
        std::int64_t limit = std::numeric_limits<std::int64_t>::max();  // a step at >= limit is not in the run
        if (!heap_.empty()) limit = heap_.top().time_ms;
        if (o_.duration_ms) limit = std::min(limit, *o_.duration_ms + 1);
        if (t >= limit || dt > limit - t) return t;
        std::int64_t count = (limit - 1 - t) / dt;  // steps at t + j dt < limit, j = 1..count
        if (o_.target_steps) count = std::min(count, *o_.target_steps - steps_);
        if (count <= 0) return t;
        std::int64_t j = 1;
        for (; j <= count; ++j)
            if (heap_.cycle_is_identity({t + j * dt, step, version_, 0})) break;
        const std::int64_t exact = std::min(j, count);  // cycles applied one by one
        const double sps = static_cast<double>(o_.workload.samples_per_step) / (static_cast<double>(dt) / 1000.0);
        const double price = cost_.back().second;
        const double h0 = static_cast<double>(t) / 3600000.0;
        const double h1 = static_cast<double>(t + count * dt) / 3600000.0;
        performance_sum_ += (h1 - h0) * sps;
        value_sum_ += (h1 - h0) * (sps / price);
        steps_ += count;
        closed_form_ += count - exact;
        previous_step_ms_ = t + count * dt;
        if (o_.record_series) progress_.emplace_back(previous_step_ms_, steps_);
        return previous_step_ms_;
    }

    void on_generate(std::int64_t t);

    void record_batch(std::int64_t t) {
        const auto n = static_cast<double>(live_);
        if (instances_series_.empty()) {
            if (t > 0) {
                instances_series_.emplace_back(0.0, n);
                cost_.emplace_back(0.0, n * o_.spot_usd_per_h);
                if (o_.record_series) prices_.emplace_back(0, n * o_.spot_usd_per_h);
            }
        } else if (instances_series_.back().second != n) {
            const double h = static_cast<double>(t) / 3600000.0;
            const double previous = instances_series_.back().second;
            instances_series_.emplace_back(h, previous);
            instances_series_.emplace_back(h, n);
            cost_.emplace_back(h, previous * o_.spot_usd_per_h);
            cost_.emplace_back(h, n * o_.spot_usd_per_h);
            if (o_.record_series) prices_.emplace_back(t, n * o_.spot_usd_per_h);
        }
    }

    bamboo_run finish(std::int64_t t);

    enum class status { stopped, rendezvous, running };

    const bamboo_options& o_;
    std::vector<std::string> names_;
    std::vector<instance> instances_;
    std::vector<std::int64_t> order_;
    std::int64_t live_ = 0, dead_in_order_ = 0;
    python_heap heap_;
    std::optional<hourly_generator> generator_;
    status status_ = status::stopped;
    std::vector<std::int64_t> rendezvous_;
    std::int64_t version_ = 0;
    std::int32_t waiting_ = 0, pipelines_ = 0, stages_ = 0;
    std::int64_t step_ms_ = 0, steps_ = 0, fatal_failures_ = 0, removals_ = 0, closed_form_ = 0;
    std::optional<std::pair<std::int64_t, std::int64_t>> fallback_;
    bool fallback_handled_ = false;
    std::optional<std::int64_t> first_rendezvous_ms_;
    std::int64_t previous_step_ms_ = 0;
    double performance_sum_ = 0.0, value_sum_ = 0.0;
    std::vector<std::pair<double, double>> instances_series_, cost_;
    std::vector<std::int64_t> lifetimes_ms_, removal_times_ms_;
    std::vector<std::pair<std::int64_t, std::int64_t>> progress_;
    std::vector<std::pair<std::int64_t, double>> prices_;
    bool failed_ = false;
    std::string failure_;
};

// simulator.py generate_spot_instance_events: the next hour's mark first, then removal trials
// for every live instance (dict order), then up to capacity - live + removed arrival trials, merged
// in time order (a removal first unless an arrival is strictly earlier); an accepted arrival gets
// its own removal trial in the same hour.
inline void engine::on_generate(std::int64_t t) {
    hourly_generator& g = *generator_;
    push(t + 3'600'000, generate);
    const auto hour = static_cast<std::size_t>((g.options.start_hour + t / 3'600'000) % 24);
    std::vector<std::int64_t> alive;
    for_each_live([&](std::int64_t i, const instance&) { alive.push_back(i); });
    const auto draw = [&](double p) -> std::optional<std::int64_t> {
        if (p > g.rng.random()) return t + 1000 * static_cast<std::int64_t>(g.rng.randrange(3600));
        return std::nullopt;
    };
    // Removals as a min-heap on (time, name), names compared as strings (Python's tuples).
    const auto later = [&](const std::pair<std::int64_t, std::int64_t>& a, const std::pair<std::int64_t, std::int64_t>& b) {
        if (a.first != b.first) return a.first > b.first;
        return names_[static_cast<std::size_t>(a.second)] > names_[static_cast<std::size_t>(b.second)];
    };
    std::priority_queue<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>, decltype(later)>
        removals(later);
    for (const std::int64_t i : alive)
        if (const auto d = draw(g.removal[hour])) removals.emplace(*d, i);
    std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> arrivals;
    const auto trials = static_cast<std::int64_t>(g.options.capacity) - static_cast<std::int64_t>(alive.size()) +
                        static_cast<std::int64_t>(removals.size());
    for (std::int64_t k = 0; k < trials; ++k)
        if (const auto d = draw(g.addition[hour])) arrivals.push(*d);
    auto live = static_cast<std::int64_t>(alive.size());
    while (!removals.empty() || !arrivals.empty()) {
        if (!removals.empty() && (arrivals.empty() || removals.top().first < arrivals.top())) {
            push(removals.top().first, remove, removals.top().second);
            removals.pop();
            --live;
            continue;
        }
        const std::int64_t d = arrivals.top();
        arrivals.pop();
        if (live == g.options.capacity) continue;
        const std::int64_t i = new_instance("node" + std::to_string(g.next_id++));
        push(d, add, i);
        ++live;
        if (const auto d2 = draw(g.removal[hour]); d2 && *d2 >= d) removals.emplace(*d2, i);
    }
}

inline bamboo_run engine::finish(std::int64_t t) {
    bamboo_run out;
    out.preemptions = removals_;
    out.fatal_failures = fatal_failures_;
    out.steps = steps_;
    out.last_event_ms = t;
    out.closed_form_steps = closed_form_;
    out.progress = std::move(progress_);
    out.prices = std::move(prices_);
    const bamboo_workload_spec& m = o_.workload;
    out.on_demand_samples_per_s = static_cast<double>(m.samples_per_step) / m.on_demand_step_s;
    out.on_demand_usd_per_h = static_cast<double>(m.on_demand_instances) * o_.on_demand_usd_per_h;
    out.on_demand_value = out.on_demand_samples_per_s / out.on_demand_usd_per_h;
    if (failed_) {
        out.status = bamboo_status::no_step_time;
        out.reason = failure_;
        return out;
    }
    if (!first_rendezvous_ms_ || steps_ == 0) {
        out.status = bamboo_status::never_trained;
        out.reason = first_rendezvous_ms_ ? "no training step completed" : "fewer than " + std::to_string(m.stages) +
                                                                              " instances were never ready together: no pipeline formed";
        return out;
    }
    // Time of the last step; the series end there (simulator.py: duration_hours).
    out.end_h = static_cast<double>(previous_step_ms_) / 3600000.0;
    out.run_h = out.end_h - static_cast<double>(*first_rendezvous_ms_) / 3600000.0;
    const auto n = static_cast<double>(live_);
    instances_series_.emplace_back(out.end_h, n);
    cost_.emplace_back(out.end_h, n * o_.spot_usd_per_h);
    const auto pair_average = [](const std::vector<std::pair<double, double>>& s, double d) {
        if (d == 0.0) return 0.0;
        double acc = 0.0;
        for (std::size_t k = 0; k + 1 < s.size(); k += 2) acc += (s[k + 1].first - s[k].first) * s[k + 1].second;
        return acc / d;
    };
    out.average_instances = pair_average(instances_series_, out.end_h);
    out.usd_per_h = pair_average(cost_, out.end_h);
    out.samples_per_s = out.run_h == 0.0 ? 0.0 : performance_sum_ / out.run_h;
    out.value = out.run_h == 0.0 ? 0.0 : value_sum_ / out.run_h;
    // Preemption intervals and lifetimes (hours), as the Result's statistics.
    const auto mean_stdev = [](const std::vector<double>& v) {
        if (v.empty()) return std::pair{0.0, 0.0};
        const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
        if (v.size() < 2) return std::pair{mean, 0.0};
        double ss = 0.0;
        for (const double x : v) ss += (x - mean) * (x - mean);
        return std::pair{mean, std::sqrt(ss / static_cast<double>(v.size() - 1))};
    };
    std::vector<double> gaps;
    for (std::size_t k = 1; k < removal_times_ms_.size(); ++k)
        gaps.push_back(static_cast<double>(removal_times_ms_[k] - removal_times_ms_[k - 1]) / 3600000.0);
    std::tie(out.preemption_interval_mean_h, out.preemption_interval_stdev_h) = mean_stdev(gaps);
    std::vector<double> lifetimes;
    for (const std::int64_t l : lifetimes_ms_) lifetimes.push_back(static_cast<double>(l) / 3600000.0);
    for_each_live([&](std::int64_t, const instance& x) { lifetimes.push_back(static_cast<double>(t - x.start_ms) / 3600000.0); });
    std::tie(out.lifetime_mean_h, out.lifetime_stdev_h) = mean_stdev(lifetimes);
    if (!lifetimes.empty()) {
        std::sort(lifetimes.begin(), lifetimes.end());
        const std::size_t h = lifetimes.size() / 2;
        out.lifetime_median_h = lifetimes.size() % 2 ? lifetimes[h] : (lifetimes[h - 1] + lifetimes[h]) / 2.0;
    }
    return out;
}

}  // namespace dnnplan::detail::bamboo
