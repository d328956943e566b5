// Tests of preemption/bamboo_simulator.hpp: Bamboo's own output on the p3 trace with GPT-2 (its
// worked example), every workload on both AWS traces against the reference figures (an independent
// re-implementation of Bamboo's simulator.py reproduces the worked example bit for bit; the other
// rows are its output: docs/models/bamboo.md), random mode seed for seed against Bamboo's Python
// draws, closed-form step runs against the one-by-one loop, and conservation of instances.
#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/bamboo_seeds.hpp>
#include <dnnplan/preemption/bamboo_simulator.hpp>
#include <dnnplan/preemption/python_random.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace dnnplan;

namespace {

instance_trace read_trace(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/bamboo/" + name + "-trace.csv");
    REQUIRE(in);
    return parse_instance_trace(in);
}

const instance_trace& p3() {
    static const instance_trace t = read_trace("p3");
    return t;
}

const instance_trace& g4dn() {
    static const instance_trace t = read_trace("g4dn");
    return t;
}

bamboo_options options_for(bamboo_workload m) {
    bamboo_options o;
    o.workload = bamboo_workload_preset(m);
    return o;
}

// Relative error within 1e-9 (the closed-form runs differ from the
// one-by-one sums in the last bits only).
void check_close(double got, double expected) {
    INFO("got " << got << ", expected " << expected);
    CHECK(std::abs(got - expected) <= 1e-9 * std::abs(expected));
}

struct reference_row {
    bamboo_workload workload;
    std::int64_t preemptions, fatal_failures, steps;
    double average_instances, samples_per_s, usd_per_h, value, on_demand_samples_per_s, on_demand_usd_per_h;
};

}  // namespace

TEST_CASE("python_random draws what CPython's random.Random draws", "[preemption][bamboo][random]") {
    // python3 -c "import random; r = random.Random(1); print(repr(r.random()), r.randrange(0, 3600), r.getrandbits(12))"
    python_random r(1);
    CHECK(r.random() == 0.13436424411240122);
    CHECK(r.randrange(3600) == 3471);
    CHECK(r.getrandbits(12) == 3286);
    CHECK(python_random(0).random() == 0.8444218515250481);
    CHECK(python_random((std::uint64_t{1} << 40) + 5).random() == 0.5043802970418443);  // a two-word key
}

TEST_CASE("Bamboo's worked example: GPT-2 on the p3 trace, exactly", "[preemption][bamboo]") {
    const bamboo_run r = simulate_bamboo(p3(), options_for(bamboo_workload::gpt2));
    REQUIRE(r.status == bamboo_status::completed);
    CHECK(r.preemptions == 167);
    CHECK(r.fatal_failures == 6);
    CHECK(r.steps == 30143);
    check_close(r.average_instances, 24.068652140186547);
    check_close(r.samples_per_s, 23.684322312215052);
    check_close(r.usd_per_h, 21.902473447569747);
    check_close(r.value, 1.1441266477374128);
    CHECK(r.on_demand_samples_per_s == 9.495548961424332);
    CHECK(r.on_demand_usd_per_h == 97.92);
    check_close(r.on_demand_value, 0.09697251798840208);
    check_close(r.end_h, 11.333708333333334);
    check_close(r.run_h, 11.312875);
    CHECK(r.last_event_ms == 40'920'000);
    check_close(r.lifetime_mean_h, 1.5430320150659131);
    check_close(r.lifetime_median_h, 1.1333333333333333);
    check_close(r.lifetime_stdev_h, 1.3575889518653235);
    check_close(r.preemption_interval_mean_h, 0.06506024096385542);
    check_close(r.preemption_interval_stdev_h, 0.12963596940865105);
    CHECK(r.closed_form_steps > 25'000);  // most steps are advanced in closed form
}

TEST_CASE("every workload on both AWS traces: the reference figures", "[preemption][bamboo]") {
    // docs/models/bamboo.md, "Reference runs": the ResNet rows run to the 12 h duration on p3.
    const std::vector<reference_row> p3_rows = {
        {bamboo_workload::bert, 167, 6, 11375, 24.068361472629682, 73.7345193419114, 21.902208940092997, 3.344008935891294,
         105.1792828685259, 61.2},
        {bamboo_workload::resnet, 167, 13, 13904, 23.2902438816014, 123.8316627153551, 21.19412193225726, 5.561985059086984,
         295.38461538461536, 61.2},
    };
    const std::vector<reference_row> g4dn_rows = {
        {bamboo_workload::gpt2, 74, 1, 18035, 12.709759452056943, 15.346344433851568, 11.56588110137182, 1.1576604408426132,
         9.495548961424332, 97.92},
        {bamboo_workload::bert, 74, 1, 5097, 12.709743541705302, 35.78132877226948, 11.565866622951827, 2.683947309959,
         105.1792828685259, 61.2},
        {bamboo_workload::resnet, 74, 2, 6939, 12.63677378004777, 70.17173875315628, 11.499464139843473, 5.826083400090221,
         295.38461538461536, 61.2},
        {bamboo_workload::gnmt, 74, 3, 17683, 12.613667143907444, 133.7036191076349, 11.478437100955775, 11.315278942685703,
         320.0, 48.96},
        {bamboo_workload::vgg, 74, 3, 5991, 12.633234192326935, 60.556358702739516, 11.496243115017512, 5.106899855835086,
         174.54545454545453, 48.96},
        {bamboo_workload::alexnet, 74, 3, 9443, 12.613755528640585, 95.20090419688655, 11.478517531062932, 7.988381685726982,
         240.0, 48.96},
    };
    for (const auto& [trace, rows] : {std::pair{&p3(), &p3_rows}, std::pair{&g4dn(), &g4dn_rows}}) {
        for (const reference_row& row : *rows) {
            INFO(to_string(row.workload) << (trace == &p3() ? " on p3" : " on g4dn"));
            const bamboo_run r = simulate_bamboo(*trace, options_for(row.workload));
            REQUIRE(r.status == bamboo_status::completed);
            CHECK(r.preemptions == row.preemptions);
            CHECK(r.fatal_failures == row.fatal_failures);
            CHECK(r.steps == row.steps);
            check_close(r.average_instances, row.average_instances);
            check_close(r.samples_per_s, row.samples_per_s);
            check_close(r.usd_per_h, row.usd_per_h);
            check_close(r.value, row.value);
            check_close(r.on_demand_samples_per_s, row.on_demand_samples_per_s);
            check_close(r.on_demand_usd_per_h, row.on_demand_usd_per_h);
        }
    }
}

TEST_CASE("six-stage workloads on p3 form five pipelines: a status, or the last row by choice", "[preemption][bamboo]") {
    // Bamboo's simulator raises NotImplementedError here (no step time for P = 5).
    for (const bamboo_workload m : {bamboo_workload::gnmt, bamboo_workload::vgg, bamboo_workload::alexnet}) {
        INFO(to_string(m));
        auto o = options_for(m);
        const bamboo_run stopped = simulate_bamboo(p3(), o);
        CHECK(stopped.status == bamboo_status::no_step_time);
        CHECK_THAT(stopped.reason, Catch::Contains("5 pipelines"));
        o.beyond_table = beyond_step_table::use_last_row;
        const bamboo_run extended = simulate_bamboo(p3(), o);
        CHECK(extended.status == bamboo_status::completed);
        CHECK(extended.preemptions == 167);
        CHECK(extended.fatal_failures == 10);
    }
    // GNMT with P = 4's time for P >= 5 (docs/models/bamboo.md, "Beyond the step table").
    auto o = options_for(bamboo_workload::gnmt);
    o.beyond_table = beyond_step_table::use_last_row;
    const bamboo_run r = simulate_bamboo(p3(), o);
    CHECK(r.steps == 33003);
    check_close(r.samples_per_s, 220.41863628786595);
    check_close(r.value, 10.34125962835881);
}

TEST_CASE("closed-form step runs give the one-by-one loop's run", "[preemption][bamboo]") {
    for (const bamboo_workload m : {bamboo_workload::gpt2, bamboo_workload::bert, bamboo_workload::resnet, bamboo_workload::gnmt,
                                 bamboo_workload::vgg, bamboo_workload::alexnet}) {
        INFO(to_string(m));
        auto o = options_for(m);
        o.beyond_table = beyond_step_table::use_last_row;
        for (const instance_trace* trace : {&p3(), &g4dn()}) {
            o.closed_form_steps = true;
            const bamboo_run fast = simulate_bamboo(*trace, o);
            o.closed_form_steps = false;
            const bamboo_run slow = simulate_bamboo(*trace, o);
            CHECK(slow.closed_form_steps == 0);
            CHECK(fast.steps == slow.steps);
            CHECK(fast.fatal_failures == slow.fatal_failures);
            CHECK(fast.last_event_ms == slow.last_event_ms);
            check_close(fast.samples_per_s, slow.samples_per_s);
            check_close(fast.value, slow.value);
            CHECK(fast.average_instances == slow.average_instances);
            CHECK(fast.usd_per_h == slow.usd_per_h);
        }
    }
}

TEST_CASE("random mode reproduces Bamboo's runs seed for seed", "[preemption][bamboo][random]") {
    // Bamboo's random mode with GPT-2, capacity 48, start hour 0, the addition probabilities
    // drawn, removal probability 0.05 per hour, 12 h: Python's figures for seeds 1-3.
    const bamboo_random_options random{.capacity = 48, .start_hour = 0, .removal_probability = 0.05};
    const auto o = options_for(bamboo_workload::gpt2);
    const bamboo_run s1 = simulate_bamboo(random, 1, o);
    CHECK(s1.preemptions == 26);
    CHECK(s1.fatal_failures == 0);
    CHECK(s1.steps == 33761);
    check_close(s1.average_instances, 40.73581226249641);
    check_close(s1.samples_per_s, 27.30845361335776);
    check_close(s1.usd_per_h, 37.06958915887173);
    check_close(s1.value, 0.7214681329247353);
    const bamboo_run s2 = simulate_bamboo(random, 2, o);
    CHECK(s2.preemptions == 29);
    CHECK(s2.steps == 38388);
    check_close(s2.value, 0.6797214257678649);
    const bamboo_run s3 = simulate_bamboo(random, 3, o);
    CHECK(s3.preemptions == 29);
    CHECK(s3.steps == 36381);
    check_close(s3.samples_per_s, 28.72355016439757);
    check_close(s3.usd_per_h, 34.6754513129572);
}

TEST_CASE("the simulation never has more live instances than were added", "[preemption][bamboo]") {
    // Conservation: removals never exceed additions, and the instance average stays within the
    // trace's live counts.
    for (const instance_trace* trace : {&p3(), &g4dn()}) {
        std::int64_t live = 0, most = 0, adds = 0;
        for (const auto& e : trace->events) {
            live += e.kind == instance_event_kind::add ? 1 : -1;
            adds += e.kind == instance_event_kind::add ? 1 : 0;
            most = std::max(most, live);
            REQUIRE(live >= 0);
        }
        for (const bamboo_workload m : {bamboo_workload::gpt2, bamboo_workload::bert, bamboo_workload::resnet, bamboo_workload::gnmt,
                                     bamboo_workload::vgg, bamboo_workload::alexnet}) {
            auto o = options_for(m);
            o.beyond_table = beyond_step_table::use_last_row;
            const bamboo_run r = simulate_bamboo(*trace, o);
            CHECK(r.preemptions <= adds);
            CHECK(r.average_instances <= static_cast<double>(most));
            CHECK(r.average_instances > 0.0);
            CHECK(r.usd_per_h == Approx(r.average_instances * o.spot_usd_per_h).epsilon(1e-12));
        }
    }
}

TEST_CASE("bad simulation options are rejected naming the field", "[preemption][bamboo][errors]") {
    auto o = options_for(bamboo_workload::gpt2);
    o.workload.step_ms.clear();
    CHECK(dnnplan_test::field_of([&] { (void)simulate_bamboo(p3(), o); }) == "options.workload.step_ms");
    o = options_for(bamboo_workload::gpt2);
    o.duration_ms.reset();
    CHECK(dnnplan_test::field_of([&] { (void)simulate_bamboo(p3(), o); }) == "options.duration_ms");
    o = options_for(bamboo_workload::gpt2);
    o.slowdown = 0.5;
    CHECK(dnnplan_test::field_of([&] { (void)simulate_bamboo(p3(), o); }) == "options.slowdown");
    const bamboo_random_options bad{.capacity = 48, .start_hour = 24};
    CHECK(dnnplan_test::field_of([&] { (void)simulate_bamboo(bad, 1, options_for(bamboo_workload::gpt2)); }) == "random.start_hour");
    instance_trace t;
    t.events = {{0, instance_event_kind::remove, "node1"}};
    CHECK(dnnplan_test::field_of([&] { (void)simulate_bamboo(t, options_for(bamboo_workload::gpt2)); }) == "trace.events[0].node");
    // Too few instances to form a pipeline: a status, not an exception.
    t.events = {{0, instance_event_kind::add, "a"}, {0, instance_event_kind::add, "b"}};
    const bamboo_run r = simulate_bamboo(t, options_for(bamboo_workload::gpt2));
    CHECK(r.status == bamboo_status::never_trained);
    CHECK(r.steps == 0);
}

TEST_CASE("random mode over seeds: every seed's run, the means and the intervals of the means", "[preemption][bamboo][random]") {
    // Seeds 1-3 of the case above: 26, 29 and 29 preemptions.
    const bamboo_random_options random{.capacity = 48, .start_hour = 0, .removal_probability = 0.05};
    const auto o = options_for(bamboo_workload::gpt2);
    const bamboo_seed_summary s = simulate_bamboo_seeds(random, 1, 3, o);
    REQUIRE(s.runs.size() == 3);
    CHECK(s.completed == 3);
    CHECK(s.runs[0].steps == simulate_bamboo(random, 1, o).steps);
    CHECK(s.runs[2].steps == simulate_bamboo(random, 3, o).steps);
    const run_figure_summary& p = s.figure("preemptions");
    CHECK(*p.mean == 28.0);
    // s = sqrt(((26 - 28)^2 + 1 + 1) / 2) = sqrt(3); with 2 degrees of freedom Student's t has the
    // quantile t_p = (2p - 1) / sqrt(2 p (1 - p)): 4.3027 at p = 0.975.
    const double t = 0.95 / std::sqrt(2.0 * 0.975 * 0.025);
    CHECK(*p.upper - 28.0 == Approx(t * std::sqrt(3.0) / std::sqrt(3.0)).epsilon(1e-12));
    CHECK(28.0 - *p.lower == Approx(*p.upper - 28.0).epsilon(1e-12));
    CHECK(*s.figure("steps").mean == Approx((33761.0 + 38388.0 + 36381.0) / 3.0).epsilon(1e-15));
    std::vector<std::pair<std::int64_t, std::int64_t>> reports;  // after each run
    const bamboo_seed_summary heard = simulate_bamboo_seeds(random, 1, 3, o, 0.95, [&](std::int64_t d, std::int64_t n) { reports.emplace_back(d, n); });
    CHECK(reports == std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 3}, {2, 3}, {3, 3}});
    REQUIRE(heard.runs.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK((heard.runs[i].steps == s.runs[i].steps && heard.runs[i].preemptions == s.runs[i].preemptions));
    const bamboo_seed_summary one = simulate_bamboo_seeds(random, 7, 7, o);
    CHECK(one.figure("value").mean);
    CHECK_FALSE(one.figure("value").lower);  // one run: no interval
    CHECK_THROWS_AS(s.figure("speed"), invalid_input);
}

TEST_CASE("random mode over seeds: bad arguments name the field", "[preemption][bamboo][random][errors]") {
    const bamboo_random_options random{.capacity = 48, .removal_probability = 0.05};
    using dnnplan_test::field_of;
    CHECK(field_of([&] { (void)simulate_bamboo_seeds(random, 5, 4); }) == "last_seed");
    CHECK(field_of([&] { (void)simulate_bamboo_seeds(random, 0, max_bamboo_seeds); }) == "last_seed");
    CHECK(field_of([&] { (void)simulate_bamboo_seeds(random, 1, 2, {}, 1.0); }) == "confidence");
    CHECK(field_of([&] { (void)simulate_bamboo_seeds(bamboo_random_options{.capacity = 0}, 1, 2); }) == "random.capacity");
}
