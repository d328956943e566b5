// spot_provision, vm_recommend and resilience_plan: JSON text in, the result's JSON text out, as
// `spot_provision PROBLEM --json`, `vm_recommend PROBLEM --json [--pareto]` and
// `resilience_plan plan PROBLEM --json` print it (module.hpp).

#include "module.hpp"

#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/io/vm_recommend_json.hpp>
#include <dnnplan/solve/resilience_plan/solve.hpp>
#include <dnnplan/solve/spot_provision/solve.hpp>
#include <dnnplan/solve/vm_recommend/solve.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace py = pybind11;

namespace dnnplan_python {

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
        "instance_trace_events",
        [](const std::string& csv) {
            return nlohmann::ordered_json(dnnplan::parse_instance_trace(csv).events).dump();  // io's instance_event layout
        },
        py::arg("csv"), py::call_guard<py::gil_scoped_release>(),
        "A Bamboo trace (time_ms,add|remove,node rows) as the JSON text of its events, the resilience problem's trace.events");
}

}  // namespace dnnplan_python
