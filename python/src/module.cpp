// dnnplan._dnnplan: the exceptions and the module (module.hpp).

#include "module.hpp"

#include <pybind11/eval.h>

#include <dnnplan/core/error.hpp>
#include <dnnplan/version.hpp>

#include <exception>
#include <string>

namespace py = pybind11;

namespace {

/// Raises `type` with the message and the attributes `set` adds to the instance.
template <class Set>
void raise(const py::object& type, const char* message, Set set) {
    py::object instance = type(message);
    set(instance);
    PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

PYBIND11_MODULE(_dnnplan, m) {
    m.doc() = "dnnplan's planners (the C++ half of the dnnplan package; use `import dnnplan`)";
    m.attr("__version__") = std::to_string(dnnplan::version_major) + "." + std::to_string(dnnplan::version_minor) + "." +
                            std::to_string(dnnplan::version_patch);

    // The classes live as long as the module (the module's attributes keep them); the translator
    // reads them from there, so it holds no Python object of its own past the interpreter's end.
    const py::object builtins = py::module_::import("builtins");
    py::dict scope;
    scope["ValueError"] = builtins.attr("ValueError");
    scope["RuntimeError"] = builtins.attr("RuntimeError");
    py::exec(R"(
class Error(RuntimeError):
    """A dnnplan error that is not the input's (a model's own limit, an internal check)."""

class InvalidInput(ValueError):
    """A field of the input is invalid: .field (its path, e.g. "catalog.instances[0].quota"),
    .value (as read) and .expected."""
    field = value = expected = None

class ParseError(ValueError):
    """The input is not well-formed (JSON or CSV): .where (e.g. "byte 13" or "line 2")."""
    where = None
)", scope);
    for (const char* name : {"Error", "InvalidInput", "ParseError"}) {
        scope[name].attr("__module__") = "dnnplan";
        m.attr(name) = scope[name];
    }

    py::register_exception_translator([](std::exception_ptr p) {
        if (!p) return;
        const py::module_ self = py::module_::import("dnnplan._dnnplan");
        try {
            std::rethrow_exception(p);
        } catch (const dnnplan::invalid_input& e) {
            raise(self.attr("InvalidInput"), e.what(), [&](py::object& x) {
                x.attr("field") = e.field();
                x.attr("value") = e.value();
                x.attr("expected") = e.expected();
            });
        } catch (const dnnplan::parse_error& e) {
            raise(self.attr("ParseError"), e.what(), [&](py::object& x) { x.attr("where") = e.where(); });
        } catch (const dnnplan::error& e) {
            raise(self.attr("Error"), e.what(), [](py::object&) {});
        }
    });

    dnnplan_python::bind_spot_and_vm(m);
    dnnplan_python::bind_resilience(m);
    dnnplan_python::bind_deadline(m);
    dnnplan_python::bind_partition(m);
    dnnplan_python::bind_fit_and_elastic(m);
}
