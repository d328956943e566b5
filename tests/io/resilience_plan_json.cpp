// JSON of the resilience planner and of the preemption processes (io/resilience_plan_json.hpp): round
// trips of requests with each process and of a solved result (with its estimate), presets read by
// name, the deprecated key "model" read as "workload", and every rejection naming its field.

#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>

#include <catch2/catch.hpp>

#include "../support/json_checks.hpp"

#include <string>
#include <string_view>
#include <variant>

using Catch::Contains;

namespace {

constexpr std::string_view resilience_request_text = R"({
  "job": {"workload": "gpt2", "work_samples": 200000, "deadline_h": 6, "probability": 0.9, "checkpoint_h": 0.05},
  "offers": [
    {"name": "p3.poisson", "spot_usd_per_h": 0.91, "on_demand_usd_per_h": 3.06,
     "preemption": {"poisson": {"rate_per_instance_h": 0.6, "replacement_delay_ms": 120000}}},
    {"name": "p3.random", "spot_usd_per_h": 0.91, "on_demand_usd_per_h": 3.06, "max_instances": 32,
     "preemption": {"bamboo_random": {"removal_probability": 0.1}}},
    {"name": "p3.trace", "spot_usd_per_h": 0.91, "on_demand_usd_per_h": 3.06, "speed": 1.5,
     "preemption": {"trace": {"events": [{"time_ms": 0, "event": "add", "node": "a"},
                                         {"time_ms": 0, "event": "add", "node": "b"},
                                         {"time_ms": 60000, "event": "remove", "node": "a"}],
                              "end_ms": 3600000}}}
  ],
  "options": {"samples": 20, "fallback_tick_s": 30, "budget": {"max_evaluations": 5000}}
})";

/// The field a malformed request names.
std::string field_of_request(const std::string& text) {
    try {
        (void)dnnplan::parse_resilience_request(text);
    } catch (const dnnplan::invalid_input& e) {
        return e.field();
    }
    return "(accepted)";
}

std::string with(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

}  // namespace

TEST_CASE("a resilience request reads every process kind and a preset by name, and round-trips", "[io][json][resilience]") {
    const auto r = dnnplan::parse_resilience_request(resilience_request_text);
    CHECK(r.job.workload.name == dnnplan::bamboo_workload_preset(dnnplan::bamboo_workload::gpt2).name);
    CHECK(r.job.workload.step_ms == dnnplan::bamboo_workload_preset(dnnplan::bamboo_workload::gpt2).step_ms);
    CHECK(r.job.restart_h == 0.0);
    REQUIRE(r.offers.size() == 3);
    const auto& poisson = std::get<dnnplan::poisson_preemption>(r.offers[0].preemption);
    CHECK(poisson.rate_per_instance_h == 0.6);
    CHECK(poisson.replacement_delay_ms == 120'000);
    const auto& random = std::get<dnnplan::bamboo_random_process>(r.offers[1].preemption);
    CHECK(random.options.removal_probability == 0.1);
    CHECK(r.offers[1].max_instances == 32);
    const auto& trace = std::get<dnnplan::trace_replay>(r.offers[2].preemption);
    CHECK(trace.trace().events.size() == 3);
    CHECK(trace.end_ms() == 3'600'000);
    CHECK(trace.removals() == 1);
    CHECK(r.options.samples == 20);
    CHECK(r.options.fallback_tick_s == 30.0);
    CHECK(r.options.budget.max_evaluations == 5000);

    const auto back = dnnplan::parse_resilience_request(dnnplan::to_json_text(r));
    CHECK(dnnplan::to_json_text(back) == dnnplan::to_json_text(r));
    CHECK(back.job.workload.step_ms == r.job.workload.step_ms);
    CHECK(std::get<dnnplan::trace_replay>(back.offers[2].preemption).trace() == trace.trace());
}

TEST_CASE("a solved resilience result round-trips through text", "[io][json][resilience]") {
    auto request = dnnplan::parse_resilience_request(resilience_request_text);
    request.offers.resize(1);
    request.job.workload = {.name = "small", .samples_per_step = 8, .stages = 2, .local_rendezvous_ms = 5'000,
                         .step_ms = {1'000, 600}, .on_demand_instances = 2, .on_demand_step_s = 1.0, .random_capacity = 0};
    request.job.work_samples = 8.0 * 1800.0;
    request.job.deadline_h = 1.0;
    const auto result = dnnplan::solve(request);
    REQUIRE(result.plan);
    CHECK(!dnnplan::result_shape_violation(result));
    const auto back = dnnplan::parse_resilience_result(dnnplan::to_json_text(result));
    CHECK(back.status == result.status);
    CHECK(back.figures == result.figures);
    CHECK(back.estimate == result.estimate);
    CHECK(back.plan == result.plan);
    CHECK(back.details == result.details);
    CHECK(back.objective_value == result.objective_value);

    // Nothing met: no plan, and intervals beyond the horizon are null, not infinities.
    request.job.deadline_h = 0.01;
    request.options.horizon_deadlines = 1.0;
    const auto none = dnnplan::solve(request);
    CHECK_FALSE(none.plan);
    CHECK(!dnnplan::result_shape_violation(none));
    const auto text = dnnplan::to_json_text(none);
    const auto none_back = dnnplan::parse_resilience_result(text);
    CHECK(none_back.details == none.details);
    CHECK(none_back.status == none.status);
    CHECK(none_back.best_effort == none.best_effort);
}

TEST_CASE("the deprecated key \"model\" of a job is read as \"workload\" and written in the current spelling",
          "[io][json][resilience]") {
    const std::string old = with(std::string(resilience_request_text), R"("workload": "gpt2")", R"("model": "vgg")");
    const auto r = dnnplan::parse_resilience_request(old);
    CHECK(r.job.workload == dnnplan::bamboo_workload_preset(dnnplan::bamboo_workload::vgg));
    const std::string written = dnnplan::to_json_text(r);
    CHECK_THAT(written, Contains("\"workload\""));
    CHECK_THAT(written, !Contains("\"model\""));
}

TEST_CASE("malformed resilience requests name the field", "[io][json][resilience][errors]") {
    const std::string text(resilience_request_text);
    CHECK(field_of_request(with(text, R"("workload": "gpt2")", R"("workload": "gpt5")")) == "job.workload");
    CHECK(field_of_request(with(text, R"("workload": "gpt2")", R"("workload": 3)")) == "job.workload");
    // The deprecated key names itself, and may not come with its replacement.
    CHECK(field_of_request(with(text, R"("workload": "gpt2")", R"("model": "gpt5")")) == "job.model");
    CHECK(field_of_request(with(text, R"("workload": "gpt2")", R"("workload": "gpt2", "model": "bert")")) == "job.model");
    CHECK(field_of_request(with(text, R"("probability": 0.9)", R"("probability": 1.5)")) == "job.probability");
    CHECK(field_of_request(with(text, R"("probability": 0.9)", R"("probability": 0)")) == "job.probability");
    CHECK(field_of_request(with(text, R"("rate_per_instance_h": 0.6)", R"("rate_per_instance_h": -0.6)")) ==
          "offers[0].preemption.rate_per_instance_h");
    CHECK(field_of_request(with(text, R"({"poisson": {"rate_per_instance_h": 0.6, "replacement_delay_ms": 120000}})",
                                R"({"poisson": {"rate_per_instance_h": 0.6}, "bamboo_random": {}})")) ==
          "offers[0].preemption");
    CHECK(field_of_request(with(text, R"({"poisson": {"rate_per_instance_h": 0.6, "replacement_delay_ms": 120000}})",
                                R"({"weibull": {}})")) == "offers[0].preemption.weibull");
    CHECK(field_of_request(with(text, R"({"poisson": {"rate_per_instance_h": 0.6, "replacement_delay_ms": 120000}})", "{}")) ==
          "offers[0].preemption");
    CHECK(field_of_request(with(text, R"("removal_probability": 0.1)", R"("removal_probability": 2)")) ==
          "offers[1].preemption.removal_probability");
    CHECK(field_of_request(with(text, R"("event": "remove")", R"("event": "start")")) ==
          "offers[2].preemption.trace.events[2].event");
    CHECK(field_of_request(with(text, R"("event": "remove", "node": "a")", R"("event": "remove", "node": "c")")) ==
          "offers[2].preemption.trace.events[2].node");
    CHECK(field_of_request(with(text, R"("time_ms": 60000)", R"("time_ms": -1)")) == "offers[2].preemption.trace.events[2].time_ms");
    CHECK(field_of_request(with(text, R"("end_ms": 3600000)", R"("end_ms": 1)")) == "offers[2].preemption.trace.end_ms");
    CHECK(field_of_request(with(text, R"("samples": 20)", R"("samples": 0)")) == "options.samples");
    CHECK(field_of_request(with(text, R"("samples": 20)", R"("sample": 20)")) == "options.sample");
    CHECK(field_of_request(with(text, R"("fallback_tick_s": 30)", R"("fallback_tick_s": 0)")) == "options.fallback_tick_s");
    CHECK(field_of_request(with(text, R"("offers": [)", R"("offers": [], "x": [)")) == "x");
    CHECK_THROWS_AS(dnnplan::parse_resilience_request(std::string_view("{\"job\": ")), dnnplan::parse_error);
}

namespace {
struct never_preempted {  // a process of the test's own
    double preemptions_per_instance_h() const noexcept { return 0.0; }
    dnnplan::instance_trace events(std::int32_t capacity, std::int64_t, std::uint64_t) const {
        dnnplan::instance_trace out;
        for (std::int32_t i = 0; i < capacity; ++i) out.events.push_back({0, dnnplan::instance_event_kind::add, "n" + std::to_string(i)});
        return out;
    }
};
}  // namespace

TEST_CASE("a request holding a process of the caller's own says it has no JSON form", "[io][json][resilience][errors]") {
    auto r = dnnplan::parse_resilience_request(resilience_request_text);
    r.offers[1].preemption = dnnplan::any_preemption_process(never_preempted{});
    try {
        (void)dnnplan::to_json_text(r);
        FAIL("written");
    } catch (const dnnplan::invalid_input& e) {
        FAIL("an invalid_input: " << e.what());
    } catch (const dnnplan::error& e) {
        CHECK_THAT(e.what(), Contains("offers[1].preemption") && Contains("no JSON form"));
    }
}
