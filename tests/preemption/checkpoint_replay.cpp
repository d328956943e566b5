// The replay of checkpoint-restart on a recorded trace (preemption/checkpoint_replay.hpp): a
// hand-made trace with a hand-computed answer, its horizons and edges, and bad input.

#include <dnnplan/preemption/checkpoint_replay.hpp>

#include "../support/checks.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

using dnnplan_test::field_of;

TEST_CASE("trace replay: a hand-made trace with a hand-computed answer", "[preemption][checkpoint]") {
    using dnnplan::instance_event_kind;
    constexpr std::int64_t h = 3'600'000;  // ms
    const auto at = [](double hours) { return static_cast<std::int64_t>(std::llround(hours * 3'600'000.0)); };
    dnnplan::instance_trace trace{{
        {0, instance_event_kind::add, "a"},
        {0, instance_event_kind::add, "b"},
        {0, instance_event_kind::add, "c"},
        {at(1.5), instance_event_kind::remove, "a"},  // held: interrupts segment 2 (0.4 h lost); c replaces a
        {2 * h, instance_event_kind::remove, "c"},    // held: interrupts segment 2 again (0.25 h lost); no spare
        {at(2.5), instance_event_kind::add, "d"},     // taken, usable at 2.55
        {at(2.6), instance_event_kind::add, "e"},     // spare
        {at(2.7), instance_event_kind::remove, "b"},  // held: interrupts the restart begun at 2.55; e replaces b
        {3 * h, instance_event_kind::add, "f"},       // spare
        {at(3.2), instance_event_kind::remove, "f"},  // not held: nothing
    }};
    // W = 3 in segments of 1 h + 0.1 h checkpoint, R = 0.2 h, replacements usable after 0.05 h.
    dnnplan::checkpoint_replay_options o{.work_h = 3.0, .interval_h = 1.0, .checkpoint_h = 0.1, .restart_h = 0.2,
                                         .replacement_delay_h = 0.05, .horizon_h = 10.0};
    // Timeline: work from 0 (a, b); segment 1 saved at 1.1; loss at 1.5; c usable 1.55, restart to
    // 1.75; loss at 2.0; d usable 2.55, restart from 2.55; loss at 2.7; e usable 2.75, restart to
    // 2.95; segments at 4.05 and 5.15. Waiting 0.05 + 0.55 + 0.05, restarting 0.2 + 0.15 + 0.2.
    const auto r = dnnplan::replay_checkpoint_restart(trace, 2, o);
    CHECK(r.outcome == dnnplan::replay_outcome::finished);
    CHECK(r.end_h == Approx(5.15));
    CHECK(r.interruptions == 3);
    CHECK(r.held_losses == 3);
    CHECK(r.segments_done == 3);
    CHECK(r.work_done_h == Approx(3.0));
    CHECK(r.lost_h == Approx(0.65));
    CHECK(r.restart_time_h == Approx(0.55));
    CHECK(r.waiting_h == Approx(0.65));
    CHECK(r.end_h == Approx(3.3 + r.lost_h + r.restart_time_h + r.waiting_h));

    // A horizon before the end: the trace ended with 2 segments saved.
    o.horizon_h = 5.0;
    const auto cut = dnnplan::replay_checkpoint_restart(trace, 2, o);
    CHECK(cut.outcome == dnnplan::replay_outcome::trace_ended);
    CHECK(cut.end_h == 5.0);
    CHECK(cut.segments_done == 2);
    // No horizon: the last event (3.2 h).
    o.horizon_h.reset();
    CHECK(dnnplan::replay_checkpoint_restart(trace, 2, o).segments_done == 1);
    // More instances than ever live at once: the job never starts.
    o.horizon_h = 4.0;
    const auto starved = dnnplan::replay_checkpoint_restart(trace, 4, o);
    CHECK(starved.outcome == dnnplan::replay_outcome::trace_ended);
    CHECK(starved.segments_done == 0);
    CHECK(starved.waiting_h == Approx(4.0));
    // One instance and no losses of it: W + n delta.
    // One instance, R = 0, no delay: a (held) lost at 1.5 with 0.4 h of segment 2, b taken; c
    // removed as a spare; b lost at 2.7 just after segment 2 was saved at 2.6 (0.1 h lost), d taken;
    // the last segment from 2.7 to 3.8.
    const auto single = dnnplan::replay_checkpoint_restart(trace, 1, {.work_h = 3.0, .interval_h = 1.0, .checkpoint_h = 0.1, .horizon_h = 10.0});
    CHECK(single.outcome == dnnplan::replay_outcome::finished);
    CHECK(single.end_h == Approx(3.8));
    CHECK(single.interruptions == 2);
    CHECK(single.lost_h == Approx(0.5));
}

TEST_CASE("trace replay: malformed input names the field", "[preemption][checkpoint]") {
    const dnnplan::instance_trace trace{{{0, dnnplan::instance_event_kind::add, "a"}, {5, dnnplan::instance_event_kind::remove, "b"}}};
    const dnnplan::instance_trace ok{{{0, dnnplan::instance_event_kind::add, "a"}}};
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(trace, 1, {}); }) == "trace.events[1].node");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 0, {}); }) == "instances");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.work_h = -1.0}); }) == "options.work_h");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.replacement_delay_h = -1.0}); }) == "options.replacement_delay_h");
    CHECK(field_of([&] { (void)dnnplan::replay_checkpoint_restart(ok, 1, {.horizon_h = -1.0}); }) == "options.horizon_h");
}
