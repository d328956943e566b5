// Instance events and traces (preemption/events.hpp) and their readers (io/bamboo_trace.hpp):
// Bamboo's event CSV, the GCP availability counts, lifetime.csv; every malformed input names its
// line and field.

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/events.hpp>

#include <catch2/catch.hpp>

#include "../support/checks.hpp"
#include "../support/instance_events.hpp"

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace dnnplan;

namespace {

using dnnplan_test::add;
using dnnplan_test::contains;
using dnnplan_test::remove;

/// The parse_error's where() and message of reading `text`, "(no exception)" when it reads.
template <class Read>
std::string failure(Read&& read, const std::string& text) {
    try {
        (void)read(std::string_view(text));
    } catch (const parse_error& e) {
        return e.where() + ": " + e.what();
    }
    return "(no exception)";
}

std::string trace_failure(const std::string& text) {
    return failure([](std::string_view t) { return parse_instance_trace(t); }, text);
}
std::string availability_failure(const std::string& text) {
    return failure([](std::string_view t) { return parse_availability_trace(t); }, text);
}
std::string lifetime_failure(const std::string& text) {
    return failure([](std::string_view t) { return parse_lifetimes(t); }, text);
}

std::string invalid_field(const instance_trace& trace, std::string_view path = "") {
    try {
        trace.validate(path);
    } catch (const invalid_input& e) {
        return e.field() + " | " + e.expected();
    }
    return "(valid)";
}

std::ifstream trace_file(const std::string& name) {
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/preemption/" + name, std::ios::binary);
    REQUIRE(in.good());
    return in;
}

}  // namespace

TEST_CASE("instance_event_kind reads and writes add and remove", "[preemption][events]") {
    CHECK(to_string(instance_event_kind::add) == "add");
    CHECK(to_string(instance_event_kind::remove) == "remove");
    CHECK(enum_from_string<instance_event_kind>("remove") == instance_event_kind::remove);
    CHECK_FALSE(enum_from_string<instance_event_kind>("Add"));
}

TEST_CASE("instance_trace::validate names the event and the field", "[preemption][events]") {
    instance_trace ok{{add(0, "a"), add(0, "b"), remove(10, "a"), add(10, "a"), remove(20, "b")}};
    CHECK(invalid_field(ok) == "(valid)");  // a name may be added again once removed

    CHECK(contains(invalid_field({{add(-1, "a")}}), "events[0].time_ms | an integer >= 0"));
    CHECK(contains(invalid_field({{add(5, "a"), add(4, "b")}}), "events[1].time_ms | an integer >= 5"));
    CHECK(contains(invalid_field({{add(0, "")}}), "events[0].node | a non-empty name"));
    CHECK(contains(invalid_field({{add(0, "n\xff")}}), "events[0].node | UTF-8"));
    CHECK(invalid_field({{add(0, "a"), add(1, "b"), add(2, "a")}}) ==
          "events[2].node | a node that is not live (it was added by events[0] and not removed since)");
    CHECK(contains(invalid_field({{add(0, "a"), remove(1, "b")}}), "events[1].node | a live node"));
    CHECK(contains(invalid_field({{add(0, "a"), remove(1, "a"), remove(2, "a")}}), "events[2].node | a live node"));
    CHECK(contains(invalid_field({{add(0, "a"), remove(1, "b")}}, "trace"), "trace.events[1].node"));
    instance_trace bad_kind{{{0, static_cast<instance_event_kind>(7), "a"}}};
    CHECK(contains(invalid_field(bad_kind), "events[0].kind | one of \"add\", \"remove\""));
}

TEST_CASE("to_instance_trace turns count changes into adds and oldest-first removals", "[preemption][events]") {
    const availability_trace counts{{{1000, 3}, {1060, 4}, {1060, 5}, {1120, 2}, {1180, 2}, {1240, 3}}};
    const instance_trace trace = to_instance_trace(counts);
    const std::vector<instance_event> expected{
        add(0, "node1"),           add(0, "node2"),           add(0, "node3"),
        add(60000, "node4"),       add(60000, "node5"),  // 4 is superseded by the 5 at the same time
        remove(120000, "node1"),   remove(120000, "node2"),   remove(120000, "node3"),
        add(240000, "node6")};
    CHECK(trace.events == expected);
    CHECK_NOTHROW(trace.validate());
    CHECK(to_instance_trace(counts, "gcp-").events[0].node == "gcp-1");
    CHECK(to_instance_trace(availability_trace{}).events.empty());

    const auto field = [](const availability_trace& t) {
        try {
            (void)to_instance_trace(t);
        } catch (const invalid_input& e) {
            return e.field();
        }
        return std::string("(valid)");
    };
    CHECK(field({{{10, 1}, {5, 1}}}) == "samples[1].time_s");
    CHECK(field({{{10, 1}, {11, -1}}}) == "samples[1].available");
    CHECK(field({{{0, 1}, {std::int64_t{9'300'000'000'000'000}, 1}}}) == "samples[1].time_s");
}

TEST_CASE("Bamboo's CSV: events in file order, CRLF and blank lines accepted", "[preemption][io]") {
    const std::string text = "0,add,node1\r\n0,add,node2\n\n 60000 , remove , node1 \n60000,add,node1";
    const instance_trace trace = parse_instance_trace(std::string_view(text));
    const std::vector<instance_event> expected{add(0, "node1"), add(0, "node2"), remove(60000, "node1"),
                                               add(60000, "node1")};
    CHECK(trace.events == expected);
    std::istringstream in(text);
    CHECK(parse_instance_trace(in) == trace);
    CHECK(parse_instance_trace(std::string_view("")).events.empty());
}

TEST_CASE("Bamboo's CSV: every malformed line is named", "[preemption][io]") {
    CHECK(contains(trace_failure("0,add,a\n0,start,b\n"), "line 2: parse error at line 2: field event: expected one of \"add\", \"remove\", found \"start\""));
    CHECK(contains(trace_failure("0,add,a\nabc,add,b\n"), "line 2:"));
    CHECK(contains(trace_failure("0,add,a\nabc,add,b\n"), "field time_ms: expected an integer >= 0"));
    CHECK(contains(trace_failure("-5,add,a\n"), "line 1: parse error at line 1: field time_ms: expected an integer >= 0"));
    CHECK(contains(trace_failure("1.5,add,a\n"), "field time_ms"));
    CHECK(contains(trace_failure("+5,add,a\n"), "field time_ms"));
    CHECK(contains(trace_failure("99999999999999999999,add,a\n"), "field time_ms"));
    CHECK(contains(trace_failure("0,add,a\n\n10,add\n"), "line 3: parse error at line 3: expected 3 comma-separated fields (time_ms,event,node), found 2 (missing field node)"));
    CHECK(contains(trace_failure("0,add,a,b\n"), "found 4 (extra fields after node)"));
    CHECK(contains(trace_failure("0,add,\n"), "field node: expected a non-empty name"));
    CHECK(contains(trace_failure("0,add,a\n0,add,b\n0,add,n\xc3\x28\n"), "line 3: parse error at line 3: expected UTF-8 text, found a byte that is not UTF-8 at column 8"));
    const std::string unsorted = trace_failure("0,add,a\n5000,add,b\n\n4000,remove,a\n");
    CHECK(contains(unsorted, "line 4:"));
    CHECK(contains(unsorted, "unsorted"));
    CHECK(contains(unsorted, "a time >= 5000 (line 2's"));
    // instance_trace::validate's rules, with the line of the event
    CHECK(contains(trace_failure("0,add,a\n10,remove,b\n"), "line 2: parse error at line 2: field node: expected a live node (added before and not removed since), found \"b\""));
    CHECK(contains(trace_failure("0,add,a\n\n10,add,a\n"), "line 3: parse error at line 3: field node: expected a node that is not live (it was added by line 1 and not removed since)"));
}

TEST_CASE("Bamboo's p3 and g4dn traces read and validate", "[preemption][io]") {
    auto p3_file = trace_file("../bamboo/p3-trace.csv");
    const instance_trace p3 = parse_instance_trace(p3_file);
    REQUIRE(p3.events.size() == 344);
    CHECK(p3.events.front() == add(0, "node1"));
    CHECK(p3.events.back() == remove(40920000, "node172"));
    std::int64_t removals = 0;
    for (const auto& e : p3.events) removals += e.kind == instance_event_kind::remove ? 1 : 0;
    CHECK(removals == 167);  // Bamboo's worked example: 167 preemptions

    auto g4dn_file = trace_file("../bamboo/g4dn-trace.csv");
    const instance_trace g4dn = parse_instance_trace(g4dn_file);
    CHECK(g4dn.events.size() == 153);
    CHECK(g4dn.events.back() == remove(38760000, "node76"));
}

TEST_CASE("GCP availability files: UTC seconds, sorted stably, same-time samples kept in file order", "[preemption][io]") {
    const availability_trace small = parse_availability_trace(std::string_view(
        "2021-12-10, 13:07:45, 80\n2021-12-10, 13:08:45, 80\n2021-12-10, 13:08:45, 70\r\n\n2021-12-10, 13:07:50, 75\n"
        "2000-02-29, 00:00:00, 0\n"));
    const std::vector<availability_sample> expected{
        {951782400, 0}, {1639141665, 80}, {1639141670, 75}, {1639141725, 80}, {1639141725, 70}};
    CHECK(small.samples == expected);

    auto v100_file = trace_file("v100x1-east1c.txt");
    const availability_trace v100 = parse_availability_trace(v100_file);
    REQUIRE(v100.samples.size() == 1477);
    CHECK_NOTHROW(v100.validate());
    CHECK(v100.samples.front() == availability_sample{1639141665, 80});  // 2021-12-10 13:07:45
    CHECK(v100.samples.back().time_s == 1639228678);                       // 2021-12-11 13:17:58
    // The file's lines 2 and 4 share 13:08:45: both kept, in file order; the later (70) counts.
    CHECK(v100.samples[1] == availability_sample{1639141725, 80});
    CHECK(v100.samples[2] == availability_sample{1639141725, 70});
    const instance_trace v100_events = to_instance_trace(v100);
    std::int64_t adds = 0, removes = 0;
    for (const auto& e : v100_events.events) (e.kind == instance_event_kind::add ? adds : removes) += 1;
    CHECK(adds == 613);
    CHECK(removes == 533);

    auto a100_file = trace_file("a100x1-east1b.txt");
    const availability_trace a100 = parse_availability_trace(a100_file);
    CHECK(a100.samples.size() == 268);
    CHECK(a100.samples.front() == availability_sample{1639221090, 55});  // 2021-12-11 11:11:30
}

TEST_CASE("GCP availability files: every malformed line is named", "[preemption][io]") {
    const std::string good = "2021-12-10, 13:07:45, 80\n";
    CHECK(contains(availability_failure(good + "2021-13-10, 13:07:45, 80\n"), "line 2: parse error at line 2: field date: expected a date YYYY-MM-DD, found \"2021-13-10\""));
    CHECK(contains(availability_failure(good + "2021-02-29, 13:07:45, 80\n"), "line 2: parse error at line 2: field date"));
    CHECK(contains(availability_failure("21-12-10, 13:07:45, 80\n"), "field date"));
    CHECK(contains(availability_failure("2021/12/10, 13:07:45, 80\n"), "field date"));
    CHECK(contains(availability_failure(good + good + "2021-12-10, 24:00:00, 80\n"), "line 3: parse error at line 3: field time: expected a time HH:MM:SS"));
    CHECK(contains(availability_failure("2021-12-10, 13:7:45, 80\n"), "field time"));
    CHECK(contains(availability_failure("2021-12-10, 13:07:45, -1\n"), "field count: expected an integer in [0, 2147483647], found \"-1\""));
    CHECK(contains(availability_failure("2021-12-10, 13:07:45, 2147483648\n"), "field count"));
    CHECK(contains(availability_failure("2021-12-10, 13:07:45, x\n"), "field count"));
    CHECK(contains(availability_failure("2021-12-10, 13:07:45\n"), "line 1: parse error at line 1: expected 3 comma-separated fields (date,time,count), found 2 (missing field count)"));
    CHECK(contains(availability_failure(good + "\xe2\x82\n"), "line 2: parse error at line 2: expected UTF-8 text"));
}

TEST_CASE("lifetime.csv: the K80, P100 and V100 sections, up to the 2018 runs", "[preemption][io]") {
    auto file = trace_file("lifetime.csv");
    const std::vector<lifetime_group> groups = parse_lifetimes(file);
    REQUIRE(groups.size() == 3);
    CHECK(groups[0].name == "K80");
    CHECK(groups[1].name == "P100");
    CHECK(groups[2].name == "V100");
    CHECK(groups[0].vms.size() == 64);
    CHECK(groups[1].vms.size() == 40);
    CHECK(groups[2].vms.size() == 48);  // the V100 section has no header line
    const vm_lifetime& first = groups[0].vms[0];  // a-europe-west1-b-0,2/18/19 23:40,2/19/19 23:46
    CHECK(first.name == "a-europe-west1-b-0");
    CHECK(first.line == 3);
    CHECK(first.start_s == 1550533200);
    CHECK(first.duration_h() == Approx(24.1).epsilon(1e-12));
    CHECK(first.start_hour_of_day() == Approx(23.0 + 40.0 / 60.0).epsilon(1e-12));
    CHECK(groups[2].vms[0].line == 110);

    // Ended by the 24 h limit: censored; shorter: preempted. No duration in [23.66 h, 24.04 h).
    std::vector<std::int64_t> preempted;
    for (const auto& g : groups) {
        std::int64_t count = 0;
        for (const lifetime_observation& o : lifetime_observations(g.vms)) {
            count += o.preempted ? 1 : 0;
            CHECK((o.duration_h < 23.66 || o.duration_h >= 24.04));
            CHECK(o.start_hour_of_day.has_value());
        }
        preempted.push_back(count);
    }
    CHECK(preempted == std::vector<std::int64_t>{20, 8, 5});
    // The same split for any limit in the gap.
    for (const double limit_h : {23.66, 23.9, 24.04})
        for (const auto& g : groups) {
            const auto at_limit = lifetime_observations(g.vms, {.limit_h = limit_h});
            const auto at_24 = lifetime_observations(g.vms);
            for (std::size_t i = 0; i < at_24.size(); ++i) CHECK(at_limit[i].preempted == at_24[i].preempted);
        }
    CHECK_THROWS_AS(lifetime_observations(groups[0].vms, {.limit_h = 0.0}), invalid_input);
}

TEST_CASE("lifetime.csv: every malformed line is named", "[preemption][io]") {
    const std::string head = "K80,,\nVM name,Start,Terminate\n";
    CHECK(lifetime_failure(head + "a,2/18/19 23:40,2/19/19 1:46\n") == "(no exception)");
    CHECK(contains(lifetime_failure("a,2/18/19 23:40,2/19/19 23:46\n"), "line 1: parse error at line 1: expected a section line such as K80,, before the first VM"));
    CHECK(contains(lifetime_failure(head + "a,2/30/19 23:40,3/1/19 23:46\n"), "line 3: parse error at line 3: field Start: expected a date and time M/D/YY H:MM, found \"2/30/19 23:40\""));
    CHECK(contains(lifetime_failure(head + "a,2/18/19 23:40,2/19/19 23:60\n"), "line 3: parse error at line 3: field Terminate"));
    CHECK(contains(lifetime_failure(head + "a,2/18/19 23:40,2/18/19 23:39\n"), "field Terminate: expected a time at or after Start (2/18/19 23:40)"));
    CHECK(contains(lifetime_failure(head + "a,2/18/19 23:40\n"), "line 3: parse error at line 3: expected 3 comma-separated fields (VM name,Start,Terminate), found 2 (missing field Terminate)"));
    CHECK(contains(lifetime_failure(head + ",2/18/19 23:40,2/19/19 23:46\n"), "field VM name: expected a non-empty name"));
    CHECK(contains(lifetime_failure(head + "a,2/18/19 23:40,2/19/19 23:46\nVM name,Start,Terminate\n"), "line 4: parse error at line 4: expected the header VM name,Start,Terminate only after a section line"));
    CHECK(contains(lifetime_failure(head + "P100,,\nK80,,\n"), "line 4: parse error at line 4: field VM name: expected a section name not used before (line 1 has it)"));
    CHECK(contains(lifetime_failure(head + "a\xff,2/18/19 23:40,2/19/19 23:46\n"), "line 3: parse error at line 3: expected UTF-8 text"));
    // The reading stops at the 2018 section: what follows is not read.
    const auto groups = parse_lifetimes(std::string_view(head + "a,2/18/19 23:40,2/19/19 23:46\nPrevious experiments,,\n8-May,created,terminated\n"));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].vms.size() == 1);
}
