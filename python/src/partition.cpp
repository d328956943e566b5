// pipeline_plan and hybrid_plan: a PipeDream profile (graph.txt text) and the planner's options as
// JSON text in, the result's JSON text out, as `pipeline_plan ... --json` and `hybrid_plan ...
// --json` print it (module.hpp).

#include "module.hpp"

#include <pybind11/stl.h>  // batch_sizes: a list of int

#include <dnnplan/io/hybrid_plan_json.hpp>
#include <dnnplan/io/pipedream_graph.hpp>
#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/solve/hybrid_plan/solve.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace py = pybind11;

namespace dnnplan_python {

void bind_partition(py::module_& m) {
    m.def(
        "pipeline_plan",
        [](const std::string& graph, const std::string& options_json) {
            dnnplan::pipedream_options options = dnnplan::parse_json<dnnplan::pipedream_options>(options_json);
            // PipeDream's default bandwidth, 1e9 bytes/s, for every level not given (as the command line).
            if (options.bandwidths_bytes_per_s.empty()) options.bandwidths_bytes_per_s.assign(options.machines.size(), 1e9);
            options.validate();
            const dnnplan::pipedream_request request{.graph = dnnplan::parse_pipedream_graph(graph), .options = options};
            return dnnplan::to_json_text(dnnplan::solve(request));
        },
        py::arg("graph"), py::arg("options"), py::call_guard<py::gil_scoped_release>(),
        "pipeline_plan --pipedream-graph FILE ... --json: the result's JSON text");
    m.def(
        "hybrid_plan",
        [](const std::string& graph, double profile_batch, const std::string& catalog, std::int32_t max_workers,
           const std::vector<std::int32_t>& batch_sizes, const std::string& options_json) {
            dnnplan::hybrid_request request{.problem = {}, .options = dnnplan::parse_json<dnnplan::hybrid_options>(options_json)};
            request.problem.profiles.push_back({.batch_size = profile_batch, .graph = dnnplan::parse_pipedream_graph(graph)});
            request.problem.catalog = dnnplan::parse_container_catalog(catalog);
            request.problem.max_workers = max_workers;
            request.problem.global_batch_sizes = batch_sizes;
            request.validate();
            dnnplan::hybrid_request data_parallel = request;  // the baseline the command line prints beside it
            data_parallel.options.max_stages = 1;
            nlohmann::ordered_json j;
            j["hybrid"] = dnnplan::solve(request);
            j["data_parallel"] = dnnplan::solve(data_parallel);
            return j.dump(2);
        },
        py::arg("graph"), py::arg("profile_batch"), py::arg("catalog"), py::arg("max_workers"), py::arg("batch_sizes"), py::arg("options"),
        py::call_guard<py::gil_scoped_release>(), "hybrid_plan PROFILE ... --json: {\"hybrid\", \"data_parallel\"} as JSON text");
}

}  // namespace dnnplan_python
