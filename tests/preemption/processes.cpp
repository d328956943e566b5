// The library's preemption processes (preemption/poisson_preemption.hpp,
// preemption/trace_replay.hpp): the Poisson process's rate, determinism, replacements and
// capacity, the trace replay's rate and capped pool, both satisfy preemption_process; bad
// arguments name the field.

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/poisson_preemption.hpp>
#include <dnnplan/preemption/process.hpp>
#include <dnnplan/preemption/trace_replay.hpp>

#include "../support/checks.hpp"
#include "../support/instance_events.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

using namespace dnnplan;
using dnnplan_test::field_of;

namespace {

using dnnplan_test::add;
using dnnplan_test::remove;

/// The live count never exceeds `capacity` and the trace is valid.
std::int64_t live_peak(const instance_trace& trace) {
    trace.validate();
    std::int64_t live = 0, peak = 0;
    for (const auto& e : trace.events) {
        live += e.kind == instance_event_kind::add ? 1 : -1;
        peak = std::max(peak, live);
    }
    return peak;
}

constexpr std::int64_t process_hour_ms = 3'600'000;

}  // namespace

TEST_CASE("poisson_preemption: removals per instance-hour, determinism, capacity", "[preemption][process]") {
    const poisson_preemption p{.rate_per_instance_h = 2.0, .replacement_delay_ms = 60'000};
    CHECK(p.preemptions_per_instance_h() == 2.0);
    const std::int64_t horizon = 100 * process_hour_ms;
    const instance_trace run = p.events(16, horizon, 7);
    CHECK(live_peak(run) == 16);
    const trace_replay replay(run, horizon);
    INFO("removals " << replay.removals() << " over " << replay.instance_hours() << " instance-hours");
    CHECK(replay.preemptions_per_instance_h() == Approx(2.0).epsilon(0.05));
    // Over 20 seeds (about 64,000 removals) the mean rate is within 1.5% (about 4 standard errors).
    double removals = 0.0, hours = 0.0;
    for (std::uint64_t seed = 100; seed < 120; ++seed) {
        const trace_replay r(p.events(16, horizon, seed), horizon);
        removals += static_cast<double>(r.removals());
        hours += r.instance_hours();
    }
    CHECK(removals / hours == Approx(2.0).epsilon(0.015));

    // Deterministic per seed; another seed, another stream.
    CHECK(p.events(8, 10 * process_hour_ms, 42) == p.events(8, 10 * process_hour_ms, 42));
    CHECK_FALSE(p.events(8, 10 * process_hour_ms, 42) == p.events(8, 10 * process_hour_ms, 43));

    // Each add after time 0 is a replacement, exactly the delay after a removal.
    for (std::uint64_t seed = 0; seed < 5; ++seed) {
        const instance_trace t = p.events(4, 20 * process_hour_ms, seed);
        CHECK(live_peak(t) <= 4);
        std::vector<std::int64_t> replacements_due, replacements;
        for (const auto& e : t.events) {
            CHECK(e.time_ms <= 20 * process_hour_ms);
            if (e.kind == instance_event_kind::remove && e.time_ms + 60'000 <= 20 * process_hour_ms) replacements_due.push_back(e.time_ms + 60'000);
            if (e.kind == instance_event_kind::add && e.time_ms > 0) replacements.push_back(e.time_ms);
        }
        CHECK(replacements == replacements_due);
    }

    // No preemptions: the initial pool only.
    const instance_trace calm = poisson_preemption{}.events(3, process_hour_ms, 1);
    CHECK(calm.events == std::vector<instance_event>{add(0, "node1"), add(0, "node2"), add(0, "node3")});
    CHECK(poisson_preemption{.rate_per_instance_h = 5.0}.events(0, process_hour_ms, 1).events.empty());
}

TEST_CASE("poisson_preemption: bad arguments name the field", "[preemption][process]") {
    const poisson_preemption p{.rate_per_instance_h = 1.0};
    CHECK(field_of([&] { (void)p.events(-1, process_hour_ms, 0); }) == "capacity");
    CHECK(field_of([&] { (void)p.events(1, -1, 0); }) == "horizon_ms");
    CHECK(field_of([] { (void)poisson_preemption{.rate_per_instance_h = -1.0}.events(1, 1, 0); }) == "rate_per_instance_h");
    CHECK(field_of([] { (void)poisson_preemption{.replacement_delay_ms = -1}.events(1, 1, 0); }) == "replacement_delay_ms");
    CHECK(field_of([] { (void)poisson_preemption{.rate_per_instance_h = 1e9}.events(1000, process_hour_ms, 0); }) == "rate_per_instance_h");
    CHECK(field_of([] { poisson_preemption{.rate_per_instance_h = std::nan("")}.validate("process"); }) ==
          "process.rate_per_instance_h");
}

TEST_CASE("trace_replay: removals per instance-hour, a capped pool, the seed ignored", "[preemption][process]") {
    const instance_trace trace{{add(0, "a"), add(0, "b"), remove(process_hour_ms, "a"), add(process_hour_ms, "c"), remove(2 * process_hour_ms, "b")}};
    const trace_replay replay(trace);
    CHECK(replay.removals() == 2);
    CHECK(replay.end_ms() == 2 * process_hour_ms);
    CHECK(replay.instance_hours() == 4.0);  // a 1 h, b 2 h, c 1 h (live at the end)
    CHECK(replay.preemptions_per_instance_h() == 0.5);
    CHECK(trace_replay(trace, 3 * process_hour_ms).instance_hours() == 5.0);
    CHECK(replay.events(10, 100 * process_hour_ms, 1) == trace);
    CHECK(replay.events(10, 100 * process_hour_ms, 1) == replay.events(10, 100 * process_hour_ms, 2));

    // At most one instance held: b waits for a's loss, c for b's.
    const std::vector<instance_event> one{add(0, "a"), remove(process_hour_ms, "a"), add(process_hour_ms, "b"), remove(2 * process_hour_ms, "b"),
                                          add(2 * process_hour_ms, "c")};
    CHECK(replay.events(1, 100 * process_hour_ms, 0).events == one);
    CHECK(replay.events(1, process_hour_ms, 0).events == std::vector<instance_event>(one.begin(), one.begin() + 3));
    // A waiting instance that leaves is not an event of the pool.
    const trace_replay leaves({{add(0, "a"), add(1, "b"), remove(2, "b"), remove(3, "a")}});
    CHECK(leaves.events(1, 10, 0).events == std::vector<instance_event>{add(0, "a"), remove(3, "a")});

    CHECK(trace_replay(instance_trace{}).preemptions_per_instance_h() == 0.0);
    CHECK(std::isinf(trace_replay({{add(0, "a"), remove(0, "a")}}).preemptions_per_instance_h()));
    CHECK(field_of([&] { (void)trace_replay(trace, process_hour_ms); }) == "end_ms");
    CHECK(field_of([] { (void)trace_replay({{add(0, "a"), remove(1, "b")}}); }) == "trace.events[1].node");
    CHECK(field_of([&] { (void)replay.events(-1, 1, 0); }) == "capacity");

    // Bamboo's p3 trace: 167 removals.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/bamboo/p3-trace.csv", std::ios::binary);
    REQUIRE(in.good());
    const trace_replay p3(parse_instance_trace(in));
    CHECK(p3.removals() == 167);
    INFO("p3: " << p3.instance_hours() << " instance-hours, " << p3.preemptions_per_instance_h() << " / h");
    CHECK(p3.preemptions_per_instance_h() > 0.0);
    CHECK(live_peak(p3.events(16, p3.end_ms(), 0)) == 16);
}

TEST_CASE("the preemption processes satisfy preemption_process", "[preemption][process]") {
    STATIC_REQUIRE(preemption_process<poisson_preemption>);
    STATIC_REQUIRE(preemption_process<trace_replay>);
}
