#pragma once
// JSON of the resilience planner (solve/resilience_plan/problem.hpp) and of the preemption processes
// (preemption/). The rules of every JSON header are in io/detail/json_core.hpp; "?": optional
// (absent: the struct's default).
//   instance_event:      {"time_ms", "event" ("add" | "remove"), "node"}
//   preemption_process_variant: exactly one of
//                        {"poisson": {"rate_per_instance_h", "replacement_delay_ms"?}},
//                        {"bamboo_random": {"capacity"?, "start_hour"?, "removal_probability"? (null:
//                         Bamboo's table by hour), "generate_addition_probabilities"?}},
//                        {"trace": {"events": [instance_event], "end_ms"? (null: the last event)}}
//   bamboo_workload_spec: a preset's name ("gpt2" | "bert" | "resnet" | "gnmt" | "vgg" | "alexnet") or
//                        {"name", "samples_per_step", "stages", "local_rendezvous_ms", "step_ms": [ms],
//                         "on_demand_instances", "on_demand_step_s", "random_capacity"?}; written as the object
//   resilience_job:      {"workload" (deprecated spelling, still read: "model"), "work_samples", "deadline_h",
//                         "probability"?, "checkpoint_h", "restart_h"?}
//   resilience_offer:    {"name", "spot_usd_per_h", "on_demand_usd_per_h", "speed"?, "max_instances"?, "preemption"}
//   resilience_options:  {"samples"?, "horizon_deadlines"?, "instance_ready_ms"?, "fallback_tick_s"?,
//                         "checkpoint_restart"?, "redundant_computation"?, "spot_with_fallback"?,
//                         "budget"?: search_budget}
//   resilience_request:  {"job", "offers": [resilience_offer], "options"?}            then validate
//   resilience_result:   the result shape; plan resilience_candidate {"strategy", "offer", "instances",
//                        "pipelines", "checkpoint_interval_h" (null: not checkpointing), "p_meet_deadline",
//                        "p_error", "expected_h" (null: beyond the horizon), "time_h": {"lower", "upper"}
//                        (null: beyond the horizon), "expected_usd", "usd": {"lower", "upper"},
//                        "samples_per_usd", "meets_probability", "note"}; details {"strategies":
//                        [resilience_candidate], "best_probability", "simulations"}
// A trace is written inline; the resilience_plan example reads {"trace_csv": FILE} in a problem
// file and puts the trace it reads there (the library opens no files).
// checkpoint_result (what `resilience_plan checkpoint --json` prints; written only):
//                        {"status", "reason", "note", "expected_h" (null: none, or beyond a double),
//                        "p_meet_deadline", "p_error_bound", "segments" (null without a plan),
//                        "young_interval_h", "daly_interval_h" (null: no preemptions)}

#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/problem.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<instance_event> {
    static constexpr auto fields = std::tuple{required("time_ms", &instance_event::time_ms),
                                              required("event", &instance_event::kind), required("node", &instance_event::node)};
};

template <>
struct json_fields<poisson_preemption> {
    static constexpr auto fields = std::tuple{required("rate_per_instance_h", &poisson_preemption::rate_per_instance_h),
                                              optional("replacement_delay_ms", &poisson_preemption::replacement_delay_ms)};
};

template <>
struct json_fields<bamboo_random_options> {
    static constexpr auto fields = std::tuple{
        optional("capacity", &bamboo_random_options::capacity),
        optional("start_hour", &bamboo_random_options::start_hour),
        optional("removal_probability", &bamboo_random_options::removal_probability),
        optional("generate_addition_probabilities", &bamboo_random_options::generate_addition_probabilities),
    };
};

/// One process of the three, under its key.
template <>
struct json_value_io<preemption_process_variant> {
    static constexpr std::array<std::string_view, 3> keys{"poisson", "bamboo_random", "trace"};

    template <class Json>
    static void read(const Json& j, const std::string& path, preemption_process_variant& out) {
        const object_reader<Json> in(j, path, std::span<const std::string_view>(keys));
        if (j.size() != 1) fail(path, value_text(j), "exactly one of the keys poisson, bamboo_random, trace");
        if (in.find("poisson") != nullptr) {
            poisson_preemption p;
            in.required("poisson", p);
            out = p;
        } else if (in.find("bamboo_random") != nullptr) {
            bamboo_random_process p;
            in.required("bamboo_random", p.options);
            out = p;
        } else {
            const std::string trace_path = in.path_of("trace");
            const object_reader<Json> trace(in.at("trace", "an object"), trace_path, {"events", "end_ms"});
            instance_trace events;
            trace.required("events", events.events);
            std::optional<std::int64_t> end_ms;
            trace.optional("end_ms", end_ms);
            try {
                out = trace_replay(std::move(events), end_ms);
            } catch (const invalid_input& e) {  // "trace.events[i].node", "end_ms": named from the object
                std::string_view field = e.field();
                if (field.starts_with("trace.")) field.remove_prefix(6);
                throw invalid_input(member_path(trace_path, field), e.value(), e.expected());
            }
        }
    }

    template <class Json>
    static Json write(const preemption_process_variant& process, std::string_view path) {
        Json out = Json::object();
        if (const auto* p = std::get_if<poisson_preemption>(&process)) {
            out["poisson"] = write_value<Json>(*p, member_path(path, "poisson"));
        } else if (const auto* r = std::get_if<bamboo_random_process>(&process)) {
            out["bamboo_random"] = write_value<Json>(r->options, member_path(path, "bamboo_random"));
        } else if (std::holds_alternative<any_preemption_process>(process)) {
            throw error("cannot write " + field_of(path) + " as JSON: a preemption process of the caller's own has no JSON form");
        } else {
            const auto& t = std::get<trace_replay>(process);
            const std::string trace_path = member_path(path, "trace");
            Json trace = Json::object();
            trace["events"] = write_value<Json>(t.trace().events, member_path(trace_path, "events"));
            trace["end_ms"] = t.end_ms();
            out["trace"] = std::move(trace);
        }
        return out;
    }
};

/// A preset by name, or every constant of a workload of the user's own.
template <>
struct json_value_io<bamboo_workload_spec> {
    template <class Json>
    static void read(const Json& j, const std::string& path, bamboo_workload_spec& out) {
        if (j.is_string()) {
            bamboo_workload preset{};
            read_value(tag{}, j, path, preset);
            out = bamboo_workload_preset(preset);
            return;
        }
        if (!j.is_object()) fail(path, value_text(j), "a workload's name (" + enum_expected<bamboo_workload>() + ") or an object");
        const object_reader<Json> in(j, path,
                                     {"name", "samples_per_step", "stages", "local_rendezvous_ms", "step_ms",
                                      "on_demand_instances", "on_demand_step_s", "random_capacity"});
        bamboo_workload_spec m;
        in.required("name", m.name);
        in.required("samples_per_step", m.samples_per_step);
        in.required("stages", m.stages);
        in.required("local_rendezvous_ms", m.local_rendezvous_ms);
        in.required("step_ms", m.step_ms);
        in.required("on_demand_instances", m.on_demand_instances);
        in.required("on_demand_step_s", m.on_demand_step_s);
        in.optional("random_capacity", m.random_capacity);
        out = std::move(m);
    }

    template <class Json>
    static Json write(const bamboo_workload_spec& m, std::string_view path) {
        Json out = Json::object();
        out["name"] = m.name;
        out["samples_per_step"] = m.samples_per_step;
        out["stages"] = m.stages;
        out["local_rendezvous_ms"] = m.local_rendezvous_ms;
        out["step_ms"] = write_value<Json>(m.step_ms, member_path(path, "step_ms"));
        out["on_demand_instances"] = m.on_demand_instances;
        out["on_demand_step_s"] = write_value<Json>(m.on_demand_step_s, member_path(path, "on_demand_step_s"));
        out["random_capacity"] = m.random_capacity;
        return out;
    }
};

template <>
struct json_fields<resilience_job> {
    static constexpr auto fields = std::tuple{
        required("workload", &resilience_job::workload).formerly("model"),  // "model": dnnplan 0.1, read until 0.3
        required("work_samples", &resilience_job::work_samples),
        required("deadline_h", &resilience_job::deadline_h), optional("probability", &resilience_job::probability),
        required("checkpoint_h", &resilience_job::checkpoint_h), optional("restart_h", &resilience_job::restart_h),
    };
};

template <>
struct json_fields<resilience_offer> {
    static constexpr auto fields = std::tuple{
        required("name", &resilience_offer::name),
        required("spot_usd_per_h", &resilience_offer::spot_usd_per_h),
        required("on_demand_usd_per_h", &resilience_offer::on_demand_usd_per_h),
        optional("speed", &resilience_offer::speed),
        optional("max_instances", &resilience_offer::max_instances),
        required("preemption", &resilience_offer::preemption),
    };
};

template <>
struct json_fields<resilience_options> {
    static constexpr auto fields = std::tuple{
        optional("samples", &resilience_options::samples),
        optional("horizon_deadlines", &resilience_options::horizon_deadlines),
        optional("instance_ready_ms", &resilience_options::instance_ready_ms),
        optional("fallback_tick_s", &resilience_options::fallback_tick_s),
        optional("checkpoint_restart", &resilience_options::checkpoint_restart),
        optional("redundant_computation", &resilience_options::redundant_computation),
        optional("spot_with_fallback", &resilience_options::spot_with_fallback),
        optional("budget", &resilience_options::budget),
    };
};

template <>
struct json_fields<resilience_request> {
    static constexpr auto fields = std::tuple{required("job", &resilience_request::job), required("offers", &resilience_request::offers),
                                              optional("options", &resilience_request::options)};
};

template <>
struct json_fields<estimate_interval> {
    static constexpr auto fields = std::tuple{required("lower", &estimate_interval::lower), required("upper", &estimate_interval::upper)};
};

template <>
struct json_fields<resilience_candidate> {
    static constexpr auto fields = std::tuple{
        required("strategy", &resilience_candidate::strategy),
        required("offer", &resilience_candidate::offer),
        required("instances", &resilience_candidate::instances),
        required("pipelines", &resilience_candidate::pipelines),
        required("checkpoint_interval_h", &resilience_candidate::checkpoint_interval_h),
        required("p_meet_deadline", &resilience_candidate::p_meet_deadline),
        required("p_error", &resilience_candidate::p_error),
        required("expected_h", &resilience_candidate::expected_h),
        required("time_h", &resilience_candidate::time_h),
        required("expected_usd", &resilience_candidate::expected_usd),
        required("usd", &resilience_candidate::usd),
        required("samples_per_usd", &resilience_candidate::samples_per_usd),
        required("meets_probability", &resilience_candidate::meets_probability),
        required("note", &resilience_candidate::note),
    };
};

template <>
struct json_fields<resilience_details> {
    static constexpr auto fields = std::tuple{required("strategies", &resilience_details::strategies),
                                              required("best_probability", &resilience_details::best_probability),
                                              required("simulations", &resilience_details::simulations)};
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// A resilience request from JSON text or a stream (io/detail/json_core.hpp's rules).
[[nodiscard]] inline resilience_request parse_resilience_request(std::istream& in) { return parse_json<resilience_request>(in); }
[[nodiscard]] inline resilience_request parse_resilience_request(std::string_view text) {
    return parse_json<resilience_request>(text);
}
[[nodiscard]] inline resilience_result parse_resilience_result(std::string_view text) { return parse_json<resilience_result>(text); }

/// Checkpoint-restart at one interval (solve(checkpoint_request)), as `resilience_plan checkpoint
/// --json` prints it (the layout at the top of this header).
[[nodiscard]] inline nlohmann::ordered_json checkpoint_json(const checkpoint_result& r) {
    const auto number_or_null = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(); };
    nlohmann::ordered_json out;
    out["status"] = std::string(to_string(r.status));
    out["reason"] = r.reason;
    out["note"] = r.details.note;
    out["expected_h"] = r.plan && std::isfinite(r.plan->expected_h) ? nlohmann::ordered_json(r.plan->expected_h) : nlohmann::ordered_json();
    out["p_meet_deadline"] = r.plan ? nlohmann::ordered_json(r.plan->p_meet_deadline) : nlohmann::ordered_json();
    out["p_error_bound"] = r.plan ? nlohmann::ordered_json(r.plan->p_error_bound) : nlohmann::ordered_json();
    out["segments"] = r.plan ? nlohmann::ordered_json(r.plan->segments) : nlohmann::ordered_json();
    out["young_interval_h"] = number_or_null(r.details.young_interval_h);
    out["daly_interval_h"] = number_or_null(r.details.daly_interval_h);
    return out;
}

}  // namespace dnnplan
