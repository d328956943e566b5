#pragma once
// Checkpoint-restart replayed on a recorded instance trace, deterministically: the job of
// preemption/checkpoint_restart.hpp held on `instances` instances of the trace, losing the
// segment in progress whenever one of them is removed (docs/models/checkpoint-restart.md, "Trace
// replay"). The checkpoint planner (solve/resilience_plan/checkpoint.hpp) replays realisations of
// a preemption process with it.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/checkpoint_restart.hpp>
#include <dnnplan/preemption/events.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

struct checkpoint_replay_options {
    double work_h = 1.0;               ///< W, > 0
    double interval_h = 1.0;           ///< tau, > 0
    double checkpoint_h = 0.0;         ///< delta, >= 0
    double restart_h = 0.0;            ///< R, >= 0: after every interruption, once the instances are there
    double replacement_delay_h = 0.0;  ///< a replacement is usable this long after it is taken, >= 0
    std::optional<double> horizon_h{}; ///< the end of the replay (>= 0); none: the last event's time

    void validate(std::string_view path = "options") const {
        checkpoint_restart_model{.work_h = work_h, .interval_h = interval_h, .checkpoint_h = checkpoint_h, .restart_h = restart_h}
            .validate(path);
        const std::string p = detail::field_prefix(path);
        detail::require_non_negative(p + "replacement_delay_h", replacement_delay_h);
        if (horizon_h) detail::require_non_negative(p + "horizon_h", *horizon_h);
    }
};

enum class replay_outcome { finished, trace_ended };

template <>
struct enum_text<replay_outcome> {
    static constexpr std::array<enum_name<replay_outcome>, 2> names{
        {{replay_outcome::finished, "finished"}, {replay_outcome::trace_ended, "trace_ended"}}};
};

struct checkpoint_replay {
    replay_outcome outcome = replay_outcome::trace_ended;
    double end_h = 0.0;                ///< the completion time when finished; the horizon otherwise
    std::int64_t interruptions = 0;    ///< removals of a held instance while the job worked or restarted
    std::int64_t held_losses = 0;      ///< every removal of a held instance (waiting ones included)
    std::int64_t segments_done = 0;    ///< checkpoints written
    double work_done_h = 0.0;          ///< work saved by those checkpoints (W when finished)
    double lost_h = 0.0;               ///< time of the interrupted segment attempts (work and checkpoint redone)
    double restart_time_h = 0.0;       ///< time spent restarting, interrupted restarts included
    double waiting_h = 0.0;            ///< time without `instances` usable instances
    friend bool operator==(const checkpoint_replay&, const checkpoint_replay&) = default;
};

namespace detail {

/// The replay's state machine: the instances held and spare, the job's phase (waiting for usable
/// instances, restarting, working, done) and the figures so far.
class checkpoint_replayer {
public:
    checkpoint_replayer(std::int32_t instances, const checkpoint_replay_options& options)
        : o_(options), seg_(split_work(options.work_h, options.interval_h)), wanted_(static_cast<std::size_t>(instances)),
          s_(options.interval_h + options.checkpoint_h), s_last_(seg_.last_work_h + options.checkpoint_h) {}

    [[nodiscard]] bool done() const noexcept { return now_ == phase::done; }

    /// The job up to time `to` (h): it starts once every held instance is usable, restarts, and
    /// saves the segments that end by `to`.
    void advance(double to) {
        while (true) {
            if (now_ == phase::waiting) {
                if (!start_when_usable(to)) return;
            } else if (now_ == phase::restarting) {
                if (phase_start_ + o_.restart_h > to) return;
                out_.restart_time_h += o_.restart_h;
                phase_start_ += o_.restart_h;
                now_ = phase::working;
            } else if (now_ == phase::working) {
                work_until(to);
                return;
            } else {
                return;
            }
        }
    }

    /// One event of the trace at time `t` (h), after advance(t).
    void apply(const instance_event& e, double t) {
        if (e.kind == instance_event_kind::add) {
            spares_.push_back(e.node);
        } else {
            const auto h = std::find_if(held_.begin(), held_.end(), [&](const held_instance& x) { return x.node == e.node; });
            if (h != held_.end()) {
                held_.erase(h);
                ++out_.held_losses;
                if (now_ == phase::working || now_ == phase::restarting) interrupt(t);
            } else {
                spares_.erase(std::find(spares_.begin(), spares_.end(), e.node));
            }
        }
        fill(t);
    }

    /// The replay at its horizon: the job's end, or the horizon with the waiting so far.
    [[nodiscard]] checkpoint_replay finish(double horizon) {
        if (now_ != phase::done) {
            advance(horizon);
            if (now_ != phase::done) {
                out_.end_h = horizon;
                if (now_ == phase::waiting) out_.waiting_h += std::max(0.0, horizon - waiting_since_);
            }
        }
        return out_;
    }

private:
    enum class phase { waiting, restarting, working, done };
    struct held_instance {
        std::string_view node;
        double usable_h;
    };

    // Waiting: the job (re)starts when all the instances it holds are usable (the first start
    // costs nothing; later ones a restart).
    bool start_when_usable(double to) {
        if (held_.size() < wanted_) return false;
        double ready = waiting_since_;
        for (const auto& h : held_) ready = std::max(ready, h.usable_h);
        if (ready > to) return false;
        out_.waiting_h += ready - waiting_since_;
        now_ = started_ ? phase::restarting : phase::working;
        started_ = true;
        phase_start_ = ready;
        return true;
    }

    // Working: the full segments that end by `to` in closed form, then the last one.
    void work_until(double to) {
        const std::int64_t full_left = seg_.count - 1 - out_.segments_done;
        if (full_left > 0) {
            auto k = static_cast<std::int64_t>(std::max(0.0, std::floor((to - phase_start_) / s_)));
            k = std::min(k, full_left);
            while (k > 0 && phase_start_ + static_cast<double>(k) * s_ > to) --k;
            while (k < full_left && phase_start_ + static_cast<double>(k + 1) * s_ <= to) ++k;
            phase_start_ += static_cast<double>(k) * s_;
            out_.segments_done += k;
            out_.work_done_h += static_cast<double>(k) * o_.interval_h;
            if (k < full_left) return;
        }
        if (phase_start_ + s_last_ > to) return;
        out_.segments_done += 1;
        out_.work_done_h += seg_.last_work_h;
        out_.end_h = phase_start_ + s_last_;
        out_.outcome = replay_outcome::finished;
        now_ = phase::done;
    }

    // A held instance lost while the job works or restarts: the time since the phase began is
    // lost, and the job waits for a replacement.
    void interrupt(double t) {
        ++out_.interruptions;
        (now_ == phase::working ? out_.lost_h : out_.restart_time_h) += t - phase_start_;
        now_ = phase::waiting;
        waiting_since_ = t;
    }

    // The spares, in the order they were added, replace the instances lost; a replacement is
    // usable replacement_delay_h after it is taken (at once before the job first starts).
    void fill(double at) {
        while (held_.size() < wanted_ && !spares_.empty()) {
            held_.push_back({spares_.front(), started_ ? at + o_.replacement_delay_h : at});
            spares_.pop_front();
        }
    }

    const checkpoint_replay_options& o_;
    checkpoint_segments seg_;
    std::size_t wanted_;
    double s_, s_last_;
    std::vector<held_instance> held_;
    std::deque<std::string_view> spares_;  // live, not held, in the order they were added
    phase now_ = phase::waiting;
    double phase_start_ = 0.0, waiting_since_ = 0.0;
    bool started_ = false;
    checkpoint_replay out_;
};

}  // namespace detail

/// The job on a recorded trace (time 0 = the trace's 0 ms = the job's arrival). It holds
/// `instances` instances: the first live ones in the order they were added; a lost one is replaced
/// by the live instance not held that was added first, else by the next one added; a replacement
/// is usable replacement_delay_h after it is taken (the instances taken before the job first
/// starts are usable at once). The job starts when all are usable (the first start costs nothing),
/// then writes a checkpoint after every segment; a removal of a held instance while it works or
/// restarts interrupts it: the segment in progress is lost and a restart of R begins once the
/// instances are usable again. Events at one time apply in the trace's order, after the job has
/// advanced to that time (a segment ending at the event's time is saved). Deterministic.
[[nodiscard]] inline checkpoint_replay replay_checkpoint_restart(const instance_trace& trace, std::int32_t instances,
                                                                 const checkpoint_replay_options& options) {
    trace.validate("trace");
    detail::require_at_least("instances", instances, 1);
    options.validate("options");
    constexpr double ms_per_h = 3'600'000.0;
    const double horizon = options.horizon_h.value_or(
        trace.events.empty() ? 0.0 : static_cast<double>(trace.events.back().time_ms) / ms_per_h);
    detail::checkpoint_replayer job(instances, options);
    for (const auto& e : trace.events) {
        const double t = static_cast<double>(e.time_ms) / ms_per_h;
        if (t > horizon) break;
        job.advance(t);
        if (job.done()) break;
        job.apply(e, t);
    }
    return job.finish(horizon);
}

}  // namespace dnnplan
