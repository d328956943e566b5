// spot_provision, vm_recommend and resilience_plan: JSON text in, the result's JSON text out, as
// `spot_provision PROBLEM --json`, `vm_recommend PROBLEM --json [--pareto]`,
// `resilience_plan plan PROBLEM --json` and `resilience_plan simulate ... --json` print it
// (module.hpp).

#include "module.hpp"

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/io/bamboo_run_json.hpp>
#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/resilience_plan/checkpoint.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace py = pybind11;

namespace dnnplan_python {

namespace {

/// Bamboo's simulation options: the workload's preset with Bamboo's defaults, up to target_steps
/// and duration_h when given (resilience_plan simulate's flags).
dnnplan::bamboo_options bamboo_options_of(const std::string& workload, std::optional<std::int64_t> target_steps,
                                          std::optional<double> duration_h) {
    dnnplan::bamboo_options options;
    options.workload = dnnplan::bamboo_workload_preset(dnnplan::parse_enum<dnnplan::bamboo_workload>(workload, "workload"));
    if (target_steps) {
        if (*target_steps < 1) throw dnnplan::invalid_input("target_steps", std::to_string(*target_steps), "an integer >= 1");
        options.target_steps = *target_steps;
    }
    if (duration_h) {
        if (!(*duration_h >= 0.0 && *duration_h <= 1e9))
            throw dnnplan::invalid_input("duration_h", dnnplan::detail::format_number(*duration_h), "a number of hours in [0, 1e9]");
        options.duration_ms = std::llround(*duration_h * 3.6e6);
    }
    return options;
}

/// Bamboo's random mode at a removal probability, checked (the seeds too: last >= first).
struct bamboo_setting {
    dnnplan::bamboo_options options;
    dnnplan::bamboo_random_options random;
};

bamboo_setting bamboo_setting_of(const std::string& workload, double removal_probability, std::uint64_t first_seed, std::uint64_t last_seed,
                                 std::optional<std::int64_t> target_steps, std::optional<double> duration_h) {
    bamboo_setting s{.options = bamboo_options_of(workload, target_steps, duration_h), .random = {}};
    if (!(removal_probability >= 0.0 && removal_probability <= 1.0))
        throw dnnplan::invalid_input("removal_probability", dnnplan::detail::format_number(removal_probability), "a probability in [0, 1]");
    if (last_seed < first_seed)
        throw dnnplan::invalid_input("seeds[1]", std::to_string(last_seed), "a seed >= the first, " + std::to_string(first_seed));
    s.random = {.capacity = s.options.workload.random_capacity, .removal_probability = removal_probability};
    s.random.validate();
    s.options.validate();
    return s;
}

/// `resilience_plan simulate --removal-probability P --seeds A-B ... --json`.
std::string bamboo_seeds(const std::string& workload, double removal_probability, std::uint64_t first_seed, std::uint64_t last_seed,
                         std::optional<std::int64_t> target_steps, std::optional<double> duration_h) {
    const bamboo_setting s = bamboo_setting_of(workload, removal_probability, first_seed, last_seed, target_steps, duration_h);
    const auto summary = dnnplan::simulate_bamboo_seeds(s.random, first_seed, last_seed, s.options);
    return dnnplan::bamboo_seeds_json(summary, s.options.workload.name, removal_probability, first_seed, last_seed).dump();
}

}  // namespace

void bind_spot_and_vm(py::module_& m) {
    m.def(
        "spot_provision",
        [](const std::string& problem) {
            const dnnplan::spot_request request = dnnplan::parse_spot_request(problem);
            (void)dnnplan::make_spotdnn_setup(request);  // model-level checks, as the command line makes them
            return dnnplan::to_json_text(dnnplan::solve(request));
        },
        py::arg("problem"), py::call_guard<py::gil_scoped_release>(), "spot_provision PROBLEM --json: the result's JSON text");
    m.def(
        "vm_recommend",
        [](const std::string& problem, bool pareto) {
            dnnplan::vm_request request = dnnplan::parse_vm_request(problem);
            if (pareto) request.options.pareto = true;
            return dnnplan::to_json_text(dnnplan::solve(request));
        },
        py::arg("problem"), py::arg("pareto"), py::call_guard<py::gil_scoped_release>(),
        "vm_recommend PROBLEM --json [--pareto]: the result's JSON text");
}

void bind_resilience(py::module_& m) {
    m.def(
        "resilience_plan",
        [](const std::string& problem) { return dnnplan::to_json_text(dnnplan::solve(dnnplan::parse_resilience_request(problem))); },
        py::arg("problem"), py::call_guard<py::gil_scoped_release>(),
        "resilience_plan plan PROBLEM --json, every trace given as {\"trace\": {\"events\": [...]}}: the result's JSON text");
    m.def(
        "bamboo_check",
        [](const std::string& workload, double removal_probability, std::uint64_t first_seed, std::uint64_t last_seed,
           std::optional<std::int64_t> target_steps, std::optional<double> duration_h) {
            (void)bamboo_setting_of(workload, removal_probability, first_seed, last_seed, target_steps, duration_h);
        },
        py::arg("workload"), py::arg("removal_probability"), py::arg("first_seed"), py::arg("last_seed"), py::arg("target_steps"),
        py::arg("duration_h"), "bamboo_seeds' checks of its inputs, without simulating (a sweep's, before its tasks)");
    m.def(
        "checkpoint_restart",
        [](double work_h, double interval_h, double checkpoint_h, double restart_h, double preemptions_per_h, double deadline_h) {
            // One instance preempted as a Poisson process at preemptions_per_h: the command line's request.
            const dnnplan::checkpoint_request request{.work_h = work_h, .checkpoint_h = checkpoint_h, .restart_h = restart_h,
                                                      .preemption = dnnplan::poisson_preemption{.rate_per_instance_h = preemptions_per_h},
                                                      .deadline_h = deadline_h, .interval_h = interval_h};
            try {
                return dnnplan::checkpoint_json(dnnplan::solve(request)).dump();
            } catch (const dnnplan::invalid_input& e) {  // the library names the member; the caller gave preemptions_per_h
                if (e.field() != "preemption.rate_per_instance_h") throw;
                throw dnnplan::invalid_input("preemptions_per_h", e.value(), e.expected());
            }
        },
        py::arg("work_h"), py::arg("interval_h"), py::arg("checkpoint_h"), py::arg("restart_h"), py::arg("preemptions_per_h"),
        py::arg("deadline_h"), py::call_guard<py::gil_scoped_release>(),
        "resilience_plan checkpoint --work-h W --interval-h TAU ... --json: the document's JSON text");
    m.def("bamboo_seeds", &bamboo_seeds, py::arg("workload"), py::arg("removal_probability"), py::arg("first_seed"), py::arg("last_seed"),
          py::arg("target_steps"), py::arg("duration_h"), py::call_guard<py::gil_scoped_release>(),
          "resilience_plan simulate --removal-probability P --seeds A-B --workload W --json: the document's JSON text");
    m.def(
        "bamboo_trace",
        [](const std::string& csv, const std::string& workload, std::optional<std::int64_t> target_steps, std::optional<double> duration_h) {
            const dnnplan::bamboo_options options = bamboo_options_of(workload, target_steps, duration_h);
            return dnnplan::bamboo_run_json(dnnplan::simulate_bamboo(dnnplan::parse_instance_trace(csv), options)).dump();
        },
        py::arg("csv"), py::arg("workload"), py::arg("target_steps"), py::arg("duration_h"), py::call_guard<py::gil_scoped_release>(),
        "resilience_plan simulate --trace FILE --workload W --json, on the trace's CSV text: the run's JSON text");
    m.def(
        "instance_trace_events",
        [](const std::string& csv) {
            return nlohmann::ordered_json(dnnplan::parse_instance_trace(csv).events).dump();  // io's instance_event layout
        },
        py::arg("csv"), py::call_guard<py::gil_scoped_release>(),
        "A Bamboo trace (time_ms,add|remove,node rows) as the JSON text of its events, the resilience problem's trace.events");
}

}  // namespace dnnplan_python
