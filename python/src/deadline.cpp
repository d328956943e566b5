// The runtime deadline policy: simulate, compare and decide on their JSON documents
// (io/deadline_policy_json.hpp), and the two public trace formats read from text (module.hpp).

#include "module.hpp"

#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/spot_market_csv.hpp>
#include <dnnplan/solve/deadline_policy/solve.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace py = pybind11;

namespace dnnplan_python {

namespace {

dnnplan::availability_polarity polarity_of(const std::string& text) {
    return dnnplan::parse_enum<dnnplan::availability_polarity>(text, "polarity");
}

/// The region's JSON text, in io's spot_market_trace layout (the regions of the simulate document).
std::string trace_json(const dnnplan::spot_market_trace& t) { return nlohmann::ordered_json(t).dump(); }

}  // namespace

void bind_deadline(py::module_& m) {
    m.def(
        "deadline_simulate",
        [](const std::string& document) {
            const dnnplan::deadline_simulation s = dnnplan::parse_deadline_simulation(document);
            return dnnplan::simulation_json(s, dnnplan::simulate(s)).dump();
        },
        py::arg("document"), py::call_guard<py::gil_scoped_release>(), "deadline_policy simulate --json: the windows' JSON text");
    m.def(
        "deadline_compare",
        [](const std::string& document) {
            return nlohmann::ordered_json(dnnplan::compare(dnnplan::parse_deadline_simulation(document))).dump();
        },
        py::arg("document"), py::call_guard<py::gil_scoped_release>(), "deadline_policy compare --json: the comparison's JSON text");
    m.def(
        "deadline_decide",
        [](const std::string& state) {
            const dnnplan::deadline_observation o = dnnplan::parse_deadline_observation(state);
            return dnnplan::decision_json(o, dnnplan::solve(o)).dump();
        },
        py::arg("state"), py::call_guard<py::gil_scoped_release>(), "deadline_policy decide STATE.json: the decision's JSON text");
    m.def(
        "read_trace_json",
        [](const std::string& text, const std::string& name, const std::string& polarity) {
            return trace_json(dnnplan::parse_spot_market_json(text, name, polarity_of(polarity)));
        },
        py::arg("text"), py::arg("name"), py::arg("polarity"), py::call_guard<py::gil_scoped_release>(),
        "Can't Be Late's JSON trace as the JSON text of a region (name, gap_s, available, spot_usd_per_h, on_demand_usd_per_h)");
    m.def(
        "read_trace_csv",
        [](const std::string& text, const std::string& name, const std::string& polarity) {
            const dnnplan::spot_market_csv csv = dnnplan::parse_spot_market_csv(text, name, polarity_of(polarity));
            return py::make_tuple(trace_json(csv.trace), csv.median_gap_s, csv.min_gap_s, csv.max_gap_s);
        },
        py::arg("text"), py::arg("name"), py::arg("polarity"),
        "SkyNomad's CSV trace: (the region's JSON text, median gap s, least gap s, largest gap s)");
}

}  // namespace dnnplan_python
