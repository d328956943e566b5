#pragma once
// The Python module's C++ half (`dnnplan._dnnplan`): each planner as a function from its JSON
// document (text) to its result's JSON (text), the same documents the command-line planners read
// and print (examples/*.cpp --json); dnnplan/__init__.py turns dicts into text and back. Every
// planner releases the GIL while it parses and plans (it touches no Python object), so Python
// threads and Dask workers in threads run alongside it (read_trace_csv, which builds a tuple,
// holds it: a trace file parses in milliseconds). The library's exceptions become Python
// exceptions in module.cpp: invalid_input -> dnnplan.InvalidInput (a ValueError, with .field,
// .value and .expected), parse_error -> dnnplan.ParseError (a ValueError, with .where), any other
// dnnplan::error -> dnnplan.Error (a RuntimeError).

#include <pybind11/pybind11.h>

namespace dnnplan_python {

void bind_spot_and_vm(pybind11::module_& m);   // spot_provision, vm_recommend
void bind_resilience(pybind11::module_& m);    // resilience_plan, instance traces
void bind_deadline(pybind11::module_& m);      // the runtime deadline policy and its traces
void bind_partition(pybind11::module_& m);     // pipeline_plan, hybrid_plan
void bind_fit_and_elastic(pybind11::module_& m);  // fit_model, elastic_advisor replay and advise

}  // namespace dnnplan_python
