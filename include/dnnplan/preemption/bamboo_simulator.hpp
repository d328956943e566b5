#pragma once
// Bamboo's discrete-event simulation of pipeline training with redundant computation (Thorpe et
// al., NSDI 2023; uclasystem/bamboo project_pactum/simulation/simulator.py), event for event:
// - P pipelines of S stages, one instance per stage; stage i also holds a shadow of stage
//   (i + 1) mod S. A lost instance's stage moves to its predecessor (then "overloaded": two
//   stages); losing an overloaded instance, or an instance whose predecessor is overloaded, is a
//   fatal failure: a global rendezvous (30 s) from scratch.
// - After a non-fatal loss while training, the step time is multiplied by 1.5 (truncated to a
//   whole ms) until the next rendezvous, and the step in flight is stretched by half of its rest.
// - After every step, a local rendezvous (S fixed) when, with O overloaded, W waiting and
//   A = P S - O active instances: O > 0 and W >= O; or O > 0 and 2 O / A > 0.05; or
//   floor((A + W) / S) > P. A rendezvous forms P = floor(ready / S) pipelines.
// - Every live instance is billed from its addition; the figures are Bamboo's time averages.
// The event queue is an emulation of CPython's heapq on (time, kind): events with equal time and
// kind come out in heapq's array order, which is neither FIFO nor file order, and which decides
// which of two simultaneous losses is fatal; it is reproduced exactly. Runs of steps between two
// events are advanced in closed form: the queue's layout under "push the smallest, pop it" reaches
// a fixed point after a cycle or two, after which the rest of the run changes only counters and
// sums. docs/models/bamboo.md has the rules with their sources and the reproduced figures.

#include <dnnplan/preemption/bamboo_model.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/python_random.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
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

namespace detail::bamboo {

enum event_kind : std::int32_t { add = 1, remove = 2, generate = 3, ready = 4, global_timeout = 5, local_timeout = 6, step = 7 };

struct event {
    std::int64_t time_ms = 0;
    std::int32_t kind = 0;
    std::int64_t data = 0;     // instance index (add, remove, ready), rendezvous version (step)
    std::uint64_t serial = 0;  // identity for the layout check; never compared
};

[[nodiscard]] inline bool less(const event& a, const event& b) noexcept {
    return a.time_ms < b.time_ms || (a.time_ms == b.time_ms && a.kind < b.kind);
}

/// CPython's heapq (Lib/heapq.py: heappush = _siftdown; heappop = _siftup then _siftdown) on
/// (time, kind), so that equal keys come out in the same order as in Bamboo's simulator.
class python_heap {
public:
    void push(event e) {
        e.serial = next_serial_++;
        track(a_.size());
        a_.push_back(e);
        sift_to_root(0, a_.size() - 1);
    }
    event pop() {
        event last = a_.back();
        track(a_.size() - 1);
        a_.pop_back();
        if (a_.empty()) return last;
        event top = a_[0];
        set(0, last);
        sift_to_leaf(0);
        return top;
    }
    [[nodiscard]] const event& top() const noexcept { return a_.front(); }
    [[nodiscard]] bool empty() const noexcept { return a_.empty(); }

    /// One "push e, then pop the smallest" with e smaller than every queued event; true when the
    /// array is the same afterwards (then every further such cycle leaves it the same too: the
    /// cycle compares queued events only, never e, which rises to the root and leaves).
    bool cycle_is_identity(const event& e) {
        touched_.clear();
        tracking_ = true;
        push(e);
        (void)pop();
        tracking_ = false;
        for (const auto& [pos, serial] : touched_)
            if (pos < a_.size() && a_[pos].serial != serial) return false;
        return true;
    }

private:
    void track(std::size_t pos) {
        if (!tracking_) return;
        for (const auto& t : touched_)
            if (t.first == pos) return;
        touched_.emplace_back(pos, pos < a_.size() ? a_[pos].serial : std::numeric_limits<std::uint64_t>::max());
    }
    void set(std::size_t pos, const event& e) {
        track(pos);
        a_[pos] = e;
    }
    // heapq._siftdown: the item at pos moves toward the root past every larger parent.
    void sift_to_root(std::size_t start, std::size_t pos) {
        const event item = a_[pos];
        while (pos > start) {
            const std::size_t parent = (pos - 1) >> 1;
            if (less(item, a_[parent])) {
                set(pos, a_[parent]);
                pos = parent;
                continue;
            }
            break;
        }
        set(pos, item);
    }
    // heapq._siftup: the hole at pos goes down to a leaf along the smaller children (the right
    // one unless the left is strictly smaller), then the item sifts back toward the root.
    void sift_to_leaf(std::size_t pos) {
        const std::size_t end = a_.size(), start = pos;
        const event item = a_[pos];
        std::size_t child = 2 * pos + 1;
        while (child < end) {
            const std::size_t right = child + 1;
            if (right < end && !less(a_[child], a_[right])) child = right;
            set(pos, a_[child]);
            pos = child;
            child = 2 * pos + 1;
        }
        set(pos, item);
        sift_to_root(start, pos);
    }

    std::vector<event> a_;
    std::uint64_t next_serial_ = 0;
    bool tracking_ = false;
    std::vector<std::pair<std::size_t, std::uint64_t>> touched_;
};

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
        push(t + (global ? o_.global_rendezvous_ms : o_.model.local_rendezvous_ms), global ? global_timeout : local_timeout);
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
        const std::int32_t s_target = o_.model.stages;
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
        const auto rows = static_cast<std::int32_t>(o_.model.step_ms.size());
        if (pipelines_ > rows) {
            if (o_.beyond_table == beyond_step_table::stop) {
                failed_ = true;
                failure_ = "a rendezvous at " + std::to_string(t) + " ms formed " + std::to_string(pipelines_) +
                           " pipelines of " + std::to_string(stages_) + " stages; the step table has " + std::to_string(rows) +
                           " rows (Bamboo's simulator stops here too; beyond_table use_last_row extends it)";
                return;
            }
            step_ms_ = o_.model.step_ms.back();
        } else {
            step_ms_ = o_.model.step_ms[static_cast<std::size_t>(pipelines_ - 1)];
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
        return (active + waiting_) / o_.model.stages > pipelines_;
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
        const double sps = static_cast<double>(o_.model.samples_per_step) / (static_cast<double>(dt) / 1000.0);
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
        const double sps = static_cast<double>(o_.model.samples_per_step) / (static_cast<double>(dt) / 1000.0);
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
    const bamboo_model_spec& m = o_.model;
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

}  // namespace detail::bamboo

/// Bamboo's simulation on a trace of additions and removals (trace mode): the events are queued
/// in trace order, so that simultaneous ones come out as in Bamboo. Throws invalid_input for bad
/// options or an inconsistent trace; every expected outcome is a status in the run.
[[nodiscard]] inline bamboo_run simulate_bamboo(const instance_trace& trace, const bamboo_options& options = {}) {
    options.validate();
    trace.validate("trace");
    // Every addition is a new instance (a name added again after its removal is a new one, as
    // in Bamboo's dict); a removal is of the name's live instance (validate() checked there is one).
    std::unordered_map<std::string_view, std::int64_t> live;
    std::vector<std::string> names;
    std::vector<std::int64_t> instance_of(trace.events.size());
    for (std::size_t k = 0; k < trace.events.size(); ++k) {
        const instance_event& e = trace.events[k];
        if (e.kind == instance_event_kind::add) {
            live[e.node] = static_cast<std::int64_t>(names.size());
            names.push_back(e.node);
        }
        instance_of[k] = live.at(e.node);
    }
    detail::bamboo::engine sim(options, std::move(names));
    for (std::size_t k = 0; k < trace.events.size(); ++k)
        sim.push(trace.events[k].time_ms,
                 trace.events[k].kind == instance_event_kind::add ? detail::bamboo::add : detail::bamboo::remove, instance_of[k]);
    return sim.run();
}

/// Bamboo's simulation in random mode: the arrivals and removals drawn hour by hour from
/// random.Random(seed) as Bamboo draws them, so that a seed reproduces Bamboo's run.
[[nodiscard]] inline bamboo_run simulate_bamboo(const bamboo_random_options& random, std::uint64_t seed,
                                                const bamboo_options& options = {}) {
    options.validate();
    random.validate();
    detail::bamboo::hourly_generator g{.rng = python_random(seed), .options = random};
    g.removal = random.removal_by_hour();
    g.addition = bamboo_random_options::default_addition_by_hour();
    if (random.generate_addition_probabilities)
        for (double& p : g.addition) p = g.rng.random();
    const double initial = g.addition[static_cast<std::size_t>(random.start_hour)];
    detail::bamboo::engine sim(options, {});
    for (std::int32_t k = 0; k < random.capacity; ++k)
        if (initial > g.rng.random()) sim.push(0, detail::bamboo::add, sim.new_instance("node" + std::to_string(g.next_id++)));
    sim.push(0, detail::bamboo::generate);
    sim.attach(std::move(g));
    return sim.run();
}

}  // namespace dnnplan

namespace dnnplan {

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
