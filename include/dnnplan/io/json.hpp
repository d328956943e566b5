#pragma once
// JSON conversion of every public input and result type. The only dnnplan header that includes
// nlohmann/json: to_json/from_json live in namespace dnnplan and are found by ADL, so
// `nlohmann::json j = problem;` and `j.get<dnnplan::spot_request>()` work, for nlohmann::json
// and for nlohmann::ordered_json (which keeps keys in the order they were written or read).
//
// Reading is strict. Every failure is a dnnplan::invalid_input (or, for malformed text, a
// dnnplan::parse_error); no nlohmann exception leaves this header. The field of an invalid_input
// is the path from the document root: "catalog.instances[2].quota",
// "profile.per_instance.p3.2xlarge.samples_per_s", "options.pricing"; a problem with the root
// value itself is named "(root)".
//   - unknown keys are rejected (expected: the allowed keys); required keys that are missing are
//     named, with the value "missing";
//   - numbers must be JSON numbers (not strings) and finite; integral fields take integers that
//     fit their type and are >= 0 (10 and 10.0 are read, 2.5, -1 and 1e20 are not);
//   - enums are their names: price_kind "spot" | "on_demand", spot_method "exact" | "exhaustive"
//     | "sliding_window", search_objective "minimize_cost" | "minimize_time", solve_status as
//     to_string(solve_status);
//   - after the structure, the type's validate() runs with the same path naming, so semantic
//     rules (positive prices, unique names, existing <= quota, ...) give the same errors.
//   - a workload_profile read on its own has no catalog: its per_instance names are checked
//     against the catalog only when it is read inside a spot_problem or spot_request. Types
//     without a validate() (instance_type, instance_profile, the coefficient structs, the result
//     types, cluster_goals, sliding_window_options, the worker types, affine_in_batch,
//     batch_memory_fit) get the structural checks only; their rules are enforced by the
//     containing type or the model that uses them. exact_options has no validate() either: its
//     reader checks the ranges spot_options::validate checks for the same fields.
// Reading from a nlohmann value gives the strong guarantee: on failure the target is unchanged.
//
// The problem file (spot_request):
//   { "catalog":  {"instances": [{"name", "gpus", "quota", "spot_usd_per_h", "on_demand_usd_per_h",
//                                 "gpu_memory_bytes"?}], "parameter_server_usd_per_h"?},
//     "profile":  {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
//                  "pcie_bandwidth_bytes_per_s", "per_instance": {NAME: {"per_gpu_batch", "samples_per_s"}},
//                  "contention": {"alpha1", "beta1"}, "loss": {"gamma1", "gamma2", "gamma3", "gamma4"?, "gamma5"}},
//     "goals":    {"target_loss", "deadline_s"},
//     "existing"?: {NAME: count},
//     "options"?:  {"pricing"?, "billing_increment_s"?, "objective"?, "method"?, "cap_at_n_upper"?,
//                   "sliding_window_paper_bounds"?, "sliding_window_wrap_around"?, "node_budget"?,
//                   "time_budget_s"?, "relative_gap"?} }
// ("?": optional; absent options take the defaults of spot_options. Only "gpu_memory_bytes" and
// "gamma4" may also be null, meaning absent. A key given twice in one object is an error.)
//
// The result (spot_result):
//   { "status", "reason", "counts": {NAME: count, ...},
//     "workers", "training_time_s", "cost_usd", "normalized_iterations", "wa_batch",
//     "convergence_coefficient", "samples_per_s", "iterations_per_s", "expected_iteration_time_s",
//     "usd_per_h", "billed_s",            <- the prediction, flattened; all null without a plan
//     "lower_bound",                      <- null means +infinity (JSON has no infinity)
//     "fastest_training_time_s",          <- null when absent
//     "counters": {"nodes", "clusters_evaluated", "pruned_by_bound", "pruned_by_deadline"} }
// nlohmann::json sorts object keys; to_json_text() prints with nlohmann::ordered_json, in the
// order above and with "counts" in catalog order, and parse_spot_result() keeps the document
// order of "counts".
//
// The generic search and model layers (same rules; types indexed by position, not by name):
//   cluster_space:          {"lower": [count], "upper": [count], "min_workers"?, "max_workers"?}
//                           max_workers null or absent: no cap (written null when it is the int64
//                           max); then cluster_space::validate (lower[k] <= upper[k], ...)
//   cluster_goals:          {"target_loss", "deadline_s"?, "objective"?}  deadline null or absent: +inf
//   exact_options:          {"node_budget"?, "time_budget_s"?, "relative_gap"?}  budgets >= 0, gap in [0, 1)
//   sliding_window_options: {"paper_bounds"?, "n_upper"?, "wrap_around"?}  n_upper null or absent: none
//   search_outcome:         {"status", "reason", "counts": [count] ([] without a plan),
//                            "prediction": {cluster_prediction} or null, "lower_bound" (null: +inf),
//                            "fastest_training_time_s"? (number or null), "counters"}
//   affine_in_batch:        {"intercept", "slope"}
//   pipedream_result:       {"time_per_minibatch_s" (null: no partition, +inf), "num_states",
//                            "stages": [{"first_state", "end_state", "replicas", "compute_s", "layers"}]}
//   ps_network:             {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
//                            "pcie_bandwidth_bytes_per_s", "contention": {"alpha1", "beta1"}}, then validate
//   ps_worker_type:         {"gpus", "worker_batch", "compute_s"}
//   measured_worker_type:   {"name", "gpus", "worker_batch", "samples_per_s"}
//   batch_memory_fit:       {"alpha2_samples_per_byte", "beta2_samples"}
//
// The layer graph (core/layer_graph.hpp; read PipeDream's graph.txt with io/pipedream_graph.hpp):
//   layer:                  {"id", "description", "forward_s", "backward_s", "activation_bytes",
//                            "parameter_bytes", "optimizer_state_bytes"?}  (null or absent: not
//                            profiled; written only when present)
//   layer_graph:            {"layers": [layer], "edges": [{"from": ID, "to": ID}]}
//                           edges name layers by id, not by index: an id that no layer has is
//                           rejected at "edges[k].from" / "edges[k].to"; then layer_graph's
//                           constructor checks the rest (unique ids, sizes >= 0, acyclic), with
//                           the same field names. layer_edge has no JSON form of its own (it
//                           holds indices, which only the graph can turn into ids).
// Here null is accepted wherever the layout says so (it is also what the writers emit).

#include <dnnplan/core/catalog.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/layer_graph.hpp>
#include <dnnplan/core/prediction.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/core/workload.hpp>
#include <dnnplan/detail/validate.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/heterogeneous_ps.hpp>
#include <dnnplan/model/memory.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/search/cluster_space.hpp>
#include <dnnplan/search/exact.hpp>
#include <dnnplan/search/outcome.hpp>
#include <dnnplan/search/sliding_window.hpp>
#include <dnnplan/solve/hybrid_parallel.hpp>
#include <dnnplan/solve/spot_provision.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan::detail::json_io {

/// The two nlohmann document types we convert to and from.
template <class Json>
concept document = std::same_as<Json, nlohmann::json> || std::same_as<Json, nlohmann::ordered_json>;

/// Passed first to every read_value() overload so that calls from templates defined above an
/// overload still find it (argument-dependent lookup at instantiation includes this namespace).
struct tag {};

inline constexpr std::string_view root_field = "(root)";

[[nodiscard]] inline std::string member_path(std::string_view path, std::string_view key) {
    std::string out(path);
    if (!out.empty()) out += '.';
    out += key;
    return out;
}

[[nodiscard]] inline std::string element_path(std::string_view path, std::size_t index) {
    return std::string(path) + "[" + std::to_string(index) + "]";
}

/// The field name of a path: the path, or "(root)" for the document itself.
[[nodiscard]] inline std::string field_of(const std::string& path) {
    return path.empty() ? std::string(root_field) : path;
}

[[noreturn]] inline void fail(const std::string& path, std::string value, std::string expected) {
    throw invalid_input(field_of(path), std::move(value), std::move(expected));
}

/// The offending value as short text: scalars as JSON, containers summarised (never dumped:
/// an unknown key may hold anything, of any size or depth).
template <document Json>
[[nodiscard]] std::string value_text(const Json& j) {
    if (j.is_object()) return j.empty() ? "{}" : "{...}";
    if (j.is_array()) return j.empty() ? "[]" : "[...]";
    if (j.is_number_float()) {
        const double value = j.template get<double>();
        if (!std::isfinite(value)) return format_number(value);  // dump() would print null
    }
    std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
    constexpr std::size_t limit = 60;
    if (text.size() > limit) {
        std::size_t cut = limit;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;  // UTF-8 boundary
        text.resize(cut);
        text += "...";
    }
    return text;
}

// ---- enums -----------------------------------------------------------------------------------

template <class Enum>
struct enum_entry {
    std::string_view name;
    Enum value;
};

/// Names of each enum's values; specialised below.
template <class Enum>
struct enum_names;

template <>
struct enum_names<price_kind> {
    static constexpr std::array<enum_entry<price_kind>, 2> entries{{
        {to_string(price_kind::spot), price_kind::spot},
        {to_string(price_kind::on_demand), price_kind::on_demand},
    }};
};

template <>
struct enum_names<spot_method> {
    static constexpr std::array<enum_entry<spot_method>, 3> entries{{
        {to_string(spot_method::exact), spot_method::exact},
        {to_string(spot_method::exhaustive), spot_method::exhaustive},
        {to_string(spot_method::sliding_window), spot_method::sliding_window},
    }};
};

template <>
struct enum_names<search_objective> {
    static constexpr std::array<enum_entry<search_objective>, 2> entries{{
        {to_string(search_objective::minimize_cost), search_objective::minimize_cost},
        {to_string(search_objective::minimize_time), search_objective::minimize_time},
    }};
};

template <>
struct enum_names<solve_status> {
    static constexpr std::array<enum_entry<solve_status>, 5> entries{{
        {to_string(solve_status::optimal), solve_status::optimal},
        {to_string(solve_status::feasible), solve_status::feasible},
        {to_string(solve_status::infeasible), solve_status::infeasible},
        {to_string(solve_status::not_found), solve_status::not_found},
        {to_string(solve_status::budget_exhausted), solve_status::budget_exhausted},
    }};
};

template <class Enum>
concept named_enum = std::is_enum_v<Enum> && requires { enum_names<Enum>::entries; };

template <named_enum Enum>
[[nodiscard]] std::string_view enum_name(Enum value) noexcept {
    for (const auto& entry : enum_names<Enum>::entries)
        if (entry.value == value) return entry.name;
    return "unknown";  // a value outside the enumerators; it does not read back
}

template <named_enum Enum>
[[nodiscard]] std::string enum_expected() {
    std::string out = "one of ";
    bool first = true;
    for (const auto& entry : enum_names<Enum>::entries) {
        if (!first) out += ", ";
        first = false;
        out += '"';
        out += entry.name;
        out += '"';
    }
    return out;
}

// ---- what each C++ type expects ------------------------------------------------------------

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class Int>
concept json_integer = std::integral<Int> && !std::same_as<Int, bool>;

/// Integral fields are counts and budgets: non-negative, and they must fit their type.
template <json_integer Int>
[[nodiscard]] std::string integer_expected() {
    return "an integer in [0, " + std::to_string(std::numeric_limits<Int>::max()) + "]";
}

template <class T>
[[nodiscard]] std::string expected_of() {
    if constexpr (std::same_as<T, bool>) return "true or false";
    else if constexpr (named_enum<T>) return enum_expected<T>();
    else if constexpr (json_integer<T>) return integer_expected<T>();
    else if constexpr (std::floating_point<T>) return "a number";
    else if constexpr (std::same_as<T, std::string>) return "a string";
    else if constexpr (is_optional<T>::value) return expected_of<typename T::value_type>() + " or null";
    else if constexpr (is_vector<T>::value) return "an array";
    else return "an object";
}

// ---- scalar readers --------------------------------------------------------------------------

template <document Json>
void read_value(tag, const Json& j, const std::string& path, double& out) {
    if (!j.is_number()) fail(path, value_text(j), "a number");
    const double value = j.template get<double>();
    if (!std::isfinite(value)) fail(path, format_number(value), "a finite number");
    out = value;
}

template <document Json, json_integer Int>
void read_value(tag, const Json& j, const std::string& path, Int& out) {
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
    std::uint64_t value = 0;
    if (j.is_number_unsigned()) {
        value = j.template get<std::uint64_t>();
    } else if (j.is_number_integer()) {
        const auto signed_value = j.template get<std::int64_t>();
        if (signed_value < 0) fail(path, value_text(j), integer_expected<Int>());
        value = static_cast<std::uint64_t>(signed_value);
    } else if (j.is_number_float()) {
        // 10.0 is the integer 10 (some writers print every number as a float); 2^64 is the first
        // double outside uint64.
        const double d = j.template get<double>();
        if (!(d >= 0.0 && d < 18446744073709551616.0 && std::trunc(d) == d))
            fail(path, value_text(j), integer_expected<Int>());
        value = static_cast<std::uint64_t>(d);
    } else {
        fail(path, value_text(j), integer_expected<Int>());
    }
    if (value > max) fail(path, value_text(j), integer_expected<Int>());
    out = static_cast<Int>(value);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, bool& out) {
    if (!j.is_boolean()) fail(path, value_text(j), "true or false");
    out = j.template get<bool>();
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, std::string& out) {
    if (!j.is_string()) fail(path, value_text(j), "a string");
    out = j.template get_ref<const typename Json::string_t&>();
}

template <document Json, named_enum Enum>
void read_value(tag, const Json& j, const std::string& path, Enum& out) {
    if (j.is_string()) {
        const auto& text = j.template get_ref<const typename Json::string_t&>();
        for (const auto& entry : enum_names<Enum>::entries) {
            if (entry.name == text) {
                out = entry.value;
                return;
            }
        }
    }
    fail(path, value_text(j), enum_expected<Enum>());
}

/// Absent keys are handled by the object reader; here null means "no value".
template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::optional<T>& out) {
    if (j.is_null()) {
        out.reset();
        return;
    }
    T value{};
    try {
        read_value(tag{}, j, path, value);
    } catch (const invalid_input& e) {
        if (e.field() != field_of(path)) throw;  // a fault inside the value, not the value itself
        throw invalid_input(e.field(), e.value(), e.expected() + " or null");
    }
    out = std::move(value);
}

template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::vector<T>& out) {
    if (!j.is_array()) fail(path, value_text(j), "an array");
    out.clear();
    out.reserve(j.size());
    std::size_t index = 0;
    for (const auto& element : j) {
        T value{};
        read_value(tag{}, element, element_path(path, index++), value);
        out.push_back(std::move(value));
    }
}

/// {NAME: value}; a NAME's path is joined with '.' even if it contains dots, as validate() does.
template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::map<std::string, T, std::less<>>& out) {
    if (!j.is_object()) fail(path, value_text(j), "an object");
    out.clear();
    for (auto it = j.begin(); it != j.end(); ++it) {
        T value{};
        read_value(tag{}, it.value(), member_path(path, it.key()), value);
        out.insert_or_assign(it.key(), std::move(value));
    }
}

// ---- objects ---------------------------------------------------------------------------------

/// An object with a fixed set of keys: rejects any other key on construction.
template <document Json>
class object_reader {
public:
    object_reader(const Json& j, std::string path, std::initializer_list<std::string_view> keys)
        : object_(j), path_(std::move(path)) {
        if (!j.is_object()) fail(path_, value_text(j), "an object");
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (std::find(keys.begin(), keys.end(), std::string_view(it.key())) != keys.end()) continue;
            std::string allowed = "one of the keys ";
            bool first = true;
            for (const std::string_view key : keys) {
                if (!first) allowed += ", ";
                first = false;
                allowed += key;
            }
            fail(member_path(path_, it.key()), value_text(it.value()), std::move(allowed));
        }
    }

    [[nodiscard]] std::string path_of(std::string_view key) const { return member_path(path_, key); }

    /// The value at `key`, or nullptr when the key is absent.
    [[nodiscard]] const Json* find(std::string_view key) const {
        const auto it = object_.find(std::string(key));
        return it == object_.end() ? nullptr : &*it;
    }

    /// The value at `key`; a missing key names what it should have held.
    [[nodiscard]] const Json& at(std::string_view key, std::string expected) const {
        const Json* value = find(key);
        if (value == nullptr) fail(path_of(key), "missing", std::move(expected));
        return *value;
    }

    template <class T>
    void required(std::string_view key, T& out) const {
        read_value(tag{}, at(key, expected_of<T>()), path_of(key), out);
    }

    /// Absent: `out` keeps its value (the default of its struct).
    template <class T>
    void optional(std::string_view key, T& out) const {
        if (const Json* value = find(key)) read_value(tag{}, *value, path_of(key), out);
    }

private:
    const Json& object_;
    std::string path_;
};

// ---- inputs ----------------------------------------------------------------------------------

template <document Json>
void read_value(tag, const Json& j, const std::string& path, instance_type& out) {
    const object_reader<Json> in(j, path,
                                 {"name", "gpus", "quota", "spot_usd_per_h", "on_demand_usd_per_h", "gpu_memory_bytes"});
    in.required("name", out.name);
    in.required("gpus", out.gpus);
    in.required("quota", out.quota);
    in.required("spot_usd_per_h", out.spot_usd_per_h);
    in.required("on_demand_usd_per_h", out.on_demand_usd_per_h);
    in.optional("gpu_memory_bytes", out.gpu_memory_bytes);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, instance_catalog& out) {
    const object_reader<Json> in(j, path, {"instances", "parameter_server_usd_per_h"});
    in.required("instances", out.instances);
    in.optional("parameter_server_usd_per_h", out.parameter_server_usd_per_h);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, instance_profile& out) {
    const object_reader<Json> in(j, path, {"per_gpu_batch", "samples_per_s"});
    in.required("per_gpu_batch", out.per_gpu_batch);
    in.required("samples_per_s", out.samples_per_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, contention_coefficients& out) {
    const object_reader<Json> in(j, path, {"alpha1", "beta1"});
    in.required("alpha1", out.alpha1);
    in.required("beta1", out.beta1);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, loss_coefficients& out) {
    const object_reader<Json> in(j, path, {"gamma1", "gamma2", "gamma3", "gamma4", "gamma5"});
    in.required("gamma1", out.gamma1);
    in.required("gamma2", out.gamma2);
    in.required("gamma3", out.gamma3);
    in.optional("gamma4", out.gamma4);
    in.required("gamma5", out.gamma5);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, workload_profile& out) {
    const object_reader<Json> in(j, path,
                                 {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
                                  "pcie_bandwidth_bytes_per_s", "per_instance", "contention", "loss"});
    in.required("parameter_bytes", out.parameter_bytes);
    in.required("required_bandwidth_bytes_per_s", out.required_bandwidth_bytes_per_s);
    in.required("ps_bandwidth_bytes_per_s", out.ps_bandwidth_bytes_per_s);
    in.required("pcie_bandwidth_bytes_per_s", out.pcie_bandwidth_bytes_per_s);
    in.required("per_instance", out.per_instance);
    in.required("contention", out.contention);
    in.required("loss", out.loss);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, training_goals& out) {
    const object_reader<Json> in(j, path, {"target_loss", "deadline_s"});
    in.required("target_loss", out.target_loss);
    in.required("deadline_s", out.deadline_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, spot_options& out) {
    const object_reader<Json> in(j, path,
                                 {"pricing", "billing_increment_s", "objective", "method", "cap_at_n_upper",
                                  "sliding_window_paper_bounds", "sliding_window_wrap_around", "node_budget",
                                  "time_budget_s", "relative_gap"});
    in.optional("pricing", out.pricing);
    in.optional("billing_increment_s", out.billing_increment_s);
    in.optional("objective", out.objective);
    in.optional("method", out.method);
    in.optional("cap_at_n_upper", out.cap_at_n_upper);
    in.optional("sliding_window_paper_bounds", out.sliding_window_paper_bounds);
    in.optional("sliding_window_wrap_around", out.sliding_window_wrap_around);
    in.optional("node_budget", out.node_budget);
    in.optional("time_budget_s", out.time_budget_s);
    in.optional("relative_gap", out.relative_gap);
}

template <document Json>
void read_problem_members(const object_reader<Json>& in, spot_problem& out) {
    in.required("catalog", out.catalog);
    in.required("profile", out.profile);
    in.required("goals", out.goals);
    in.optional("existing", out.existing);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, spot_problem& out) {
    const object_reader<Json> in(j, path, {"catalog", "profile", "goals", "existing"});
    read_problem_members(in, out);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, spot_request& out) {
    const object_reader<Json> in(j, path, {"catalog", "profile", "goals", "existing", "options"});
    read_problem_members(in, out.problem);
    in.optional("options", out.options);
}

// ---- results ---------------------------------------------------------------------------------

template <document Json>
void read_value(tag, const Json& j, const std::string& path, type_count& out) {
    const object_reader<Json> in(j, path, {"name", "count"});
    in.required("name", out.name);
    in.required("count", out.count);
}

/// Calls f(key, member pointer) for every field of cluster_prediction, in the order they are
/// written (the most useful first).
template <class F>
void for_each_prediction_field(F&& f) {
    f("workers", &cluster_prediction::workers);
    f("training_time_s", &cluster_prediction::training_time_s);
    f("cost_usd", &cluster_prediction::cost_usd);
    f("normalized_iterations", &cluster_prediction::normalized_iterations);
    f("wa_batch", &cluster_prediction::wa_batch);
    f("convergence_coefficient", &cluster_prediction::convergence_coefficient);
    f("samples_per_s", &cluster_prediction::samples_per_s);
    f("iterations_per_s", &cluster_prediction::iterations_per_s);
    f("expected_iteration_time_s", &cluster_prediction::expected_iteration_time_s);
    f("usd_per_h", &cluster_prediction::usd_per_h);
    f("billed_s", &cluster_prediction::billed_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, cluster_prediction& out) {
    const object_reader<Json> in(j, path,
                                 {"workers", "training_time_s", "cost_usd", "normalized_iterations", "wa_batch",
                                  "convergence_coefficient", "samples_per_s", "iterations_per_s",
                                  "expected_iteration_time_s", "usd_per_h", "billed_s"});
    for_each_prediction_field([&](std::string_view key, auto member) { in.required(key, out.*member); });
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, search_counters& out) {
    const object_reader<Json> in(j, path, {"nodes", "clusters_evaluated", "pruned_by_bound", "pruned_by_deadline"});
    in.required("nodes", out.nodes);
    in.required("clusters_evaluated", out.clusters_evaluated);
    in.required("pruned_by_bound", out.pruned_by_bound);
    in.required("pruned_by_deadline", out.pruned_by_deadline);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, spot_result& out) {
    const object_reader<Json> in(j, path,
                                 {"status", "reason", "counts", "workers", "training_time_s", "cost_usd",
                                  "normalized_iterations", "wa_batch", "convergence_coefficient", "samples_per_s",
                                  "iterations_per_s", "expected_iteration_time_s", "usd_per_h", "billed_s",
                                  "lower_bound", "fastest_training_time_s", "counters"});
    in.required("status", out.status);
    in.required("reason", out.reason);

    // {NAME: count} in document order (the catalog order when read with ordered_json).
    const Json& counts = in.at("counts", "an object");
    if (!counts.is_object()) fail(in.path_of("counts"), value_text(counts), "an object");
    out.counts.clear();
    for (auto it = counts.begin(); it != counts.end(); ++it) {
        type_count count{.name = it.key(), .count = 0};
        read_value(tag{}, it.value(), member_path(in.path_of("counts"), it.key()), count.count);
        out.counts.push_back(std::move(count));
    }

    // The prediction's fields: all null (no plan) or all numbers; "workers" decides which.
    const bool has_plan = !in.at("workers", expected_of<std::optional<std::int64_t>>()).is_null();
    cluster_prediction prediction;
    for_each_prediction_field([&](std::string_view key, auto member) {
        using field_type = std::remove_reference_t<decltype(prediction.*member)>;
        const Json& value = in.at(key, expected_of<std::optional<field_type>>());
        if (has_plan && value.is_null())
            fail(in.path_of(key), "null", expected_of<field_type>() + " (workers is not null: there is a plan)");
        if (!has_plan && !value.is_null())
            fail(in.path_of(key), value_text(value), "null (workers is null: there is no plan)");
        if (has_plan) read_value(tag{}, value, in.path_of(key), prediction.*member);
    });
    out.prediction = has_plan ? std::optional<cluster_prediction>(prediction) : std::nullopt;

    std::optional<double> lower_bound;
    in.required("lower_bound", lower_bound);
    out.lower_bound = lower_bound.value_or(std::numeric_limits<double>::infinity());
    out.fastest_training_time_s.reset();
    in.optional("fastest_training_time_s", out.fastest_training_time_s);
    in.required("counters", out.counters);
}

// ---- the search and model layers ---------------------------------------------------------------

template <document Json>
void read_value(tag, const Json& j, const std::string& path, cluster_space& out) {
    const object_reader<Json> in(j, path, {"lower", "upper", "min_workers", "max_workers"});
    in.required("lower", out.lower);
    in.required("upper", out.upper);
    in.optional("min_workers", out.min_workers);
    std::optional<std::int64_t> max_workers;  // null or absent: no cap
    in.optional("max_workers", max_workers);
    out.max_workers = max_workers.value_or(std::numeric_limits<std::int64_t>::max());
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, cluster_goals& out) {
    const object_reader<Json> in(j, path, {"target_loss", "deadline_s", "objective"});
    in.required("target_loss", out.target_loss);
    std::optional<double> deadline_s;  // null or absent: no deadline
    in.optional("deadline_s", deadline_s);
    out.deadline_s = deadline_s.value_or(std::numeric_limits<double>::infinity());
    in.optional("objective", out.objective);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, exact_options& out) {
    const object_reader<Json> in(j, path, {"node_budget", "time_budget_s", "relative_gap"});
    in.optional("node_budget", out.node_budget);
    in.optional("time_budget_s", out.time_budget_s);
    in.optional("relative_gap", out.relative_gap);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, sliding_window_options& out) {
    const object_reader<Json> in(j, path, {"paper_bounds", "n_upper", "wrap_around"});
    in.optional("paper_bounds", out.paper_bounds);  // absent keys keep the struct's defaults,
    in.optional("n_upper", out.n_upper);            // as for every options type
    in.optional("wrap_around", out.wrap_around);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, search_outcome& out) {
    const object_reader<Json> in(j, path,
                                 {"status", "reason", "counts", "prediction", "lower_bound", "fastest_training_time_s",
                                  "counters"});
    in.required("status", out.status);
    in.required("reason", out.reason);
    in.required("counts", out.counts);
    in.required("prediction", out.prediction);
    if (!out.prediction && !out.counts.empty())
        fail(in.path_of("counts"), value_text(*in.find("counts")), "[] (prediction is null: there is no plan)");
    std::optional<double> lower_bound;
    in.required("lower_bound", lower_bound);
    out.lower_bound = lower_bound.value_or(std::numeric_limits<double>::infinity());
    out.fastest_training_time_s.reset();
    in.optional("fastest_training_time_s", out.fastest_training_time_s);
    in.required("counters", out.counters);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipedream_stage& out) {
    const object_reader<Json> in(j, path, {"first_state", "end_state", "replicas", "compute_s", "layers"});
    in.required("first_state", out.first_state);
    in.required("end_state", out.end_state);
    in.required("replicas", out.replicas);
    in.required("compute_s", out.compute_s);
    in.required("layers", out.layers);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipedream_result& out) {
    const object_reader<Json> in(j, path, {"time_per_minibatch_s", "num_states", "stages"});
    std::optional<double> time;
    in.required("time_per_minibatch_s", time);
    out.time_per_minibatch_s = time.value_or(std::numeric_limits<double>::infinity());
    in.required("num_states", out.num_states);
    in.required("stages", out.stages);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, affine_in_batch& out) {
    const object_reader<Json> in(j, path, {"intercept", "slope"});
    in.required("intercept", out.intercept);
    in.required("slope", out.slope);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ps_network& out) {
    const object_reader<Json> in(j, path,
                                 {"parameter_bytes", "required_bandwidth_bytes_per_s", "ps_bandwidth_bytes_per_s",
                                  "pcie_bandwidth_bytes_per_s", "contention"});
    in.required("parameter_bytes", out.parameter_bytes);
    in.required("required_bandwidth_bytes_per_s", out.required_bandwidth_bytes_per_s);
    in.required("ps_bandwidth_bytes_per_s", out.ps_bandwidth_bytes_per_s);
    in.required("pcie_bandwidth_bytes_per_s", out.pcie_bandwidth_bytes_per_s);
    in.required("contention", out.contention);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ps_worker_type& out) {
    const object_reader<Json> in(j, path, {"gpus", "worker_batch", "compute_s"});
    in.required("gpus", out.gpus);
    in.required("worker_batch", out.worker_batch);
    in.required("compute_s", out.compute_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, measured_worker_type& out) {
    const object_reader<Json> in(j, path, {"name", "gpus", "worker_batch", "samples_per_s"});
    in.required("name", out.name);
    in.required("gpus", out.gpus);
    in.required("worker_batch", out.worker_batch);
    in.required("samples_per_s", out.samples_per_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, batch_memory_fit& out) {
    const object_reader<Json> in(j, path, {"alpha2_samples_per_byte", "beta2_samples"});
    in.required("alpha2_samples_per_byte", out.alpha2_samples_per_byte);
    in.required("beta2_samples", out.beta2_samples);
}

// ---- the layer graph -------------------------------------------------------------------------

template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer& out) {
    const object_reader<Json> in(j, path,
                                 {"id", "description", "forward_s", "backward_s", "activation_bytes",
                                  "parameter_bytes", "optimizer_state_bytes"});
    in.required("id", out.id);
    in.required("description", out.description);
    in.required("forward_s", out.forward_s);
    in.required("backward_s", out.backward_s);
    in.required("activation_bytes", out.activation_bytes);
    in.required("parameter_bytes", out.parameter_bytes);
    in.optional("optimizer_state_bytes", out.optimizer_state_bytes);
}

/// The graph is validated while it is read: a layer_graph exists only validated. Its
/// constructor's fields ("layers[3].forward_s", "edges") are put under `path`.
template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer_graph& out) {
    const object_reader<Json> in(j, path, {"layers", "edges"});
    std::vector<layer> layers;
    in.required("layers", layers);
    const auto rethrow_under_path = [&](const invalid_input& e) {
        if (path.empty()) throw e;
        throw invalid_input(member_path(path, e.field()), e.value(), e.expected());
    };
    // Ids are checked (unique, non-empty) before edges are mapped to indices through them.
    try {
        static_cast<void>(layer_graph(layers, {}));
    } catch (const invalid_input& e) {
        rethrow_under_path(e);
    }
    std::unordered_map<std::string_view, std::size_t> index_of;
    for (std::size_t i = 0; i < layers.size(); ++i) index_of.emplace(layers[i].id, i);

    const std::string edges_path = in.path_of("edges");
    const Json& edges_json = in.at("edges", "an array");
    if (!edges_json.is_array()) fail(edges_path, value_text(edges_json), "an array");
    std::vector<layer_edge> edges;
    edges.reserve(edges_json.size());
    for (std::size_t k = 0; k < edges_json.size(); ++k) {
        const object_reader<Json> edge(edges_json[k], element_path(edges_path, k), {"from", "to"});
        std::string from, to;
        edge.required("from", from);
        edge.required("to", to);
        const auto index = [&](std::string_view key, const std::string& id) {
            const auto it = index_of.find(id);
            if (it == index_of.end()) fail(edge.path_of(key), value_text(*edge.find(key)), "the id of a layer in layers");
            return it->second;
        };
        const std::size_t a = index("from", from), b = index("to", to);
        if (a == b)  // named by id here; the constructor would print the index
            fail(edge.path_of("to"), value_text(*edge.find("to")), "a layer other than its source " + from + " (no self-loops)");
        edges.push_back({.from = a, .to = b});
    }
    try {
        out = layer_graph(std::move(layers), std::move(edges));
    } catch (const invalid_input& e) {
        rethrow_under_path(e);
    }
}

// ---- semantic validation at the document root (every validate() member names its fields
// relative to its path argument, with no prefix for "") -------------------------------------

/// Types without a validate(): the structural checks are all there is. Every type with one has
/// its overload below, declared before read_root() (which finds them by ordinary lookup only).
template <class T>
void validate_root(const T&) {}

inline void validate_root(const instance_catalog& catalog) {
    catalog.validate("");
}

inline void validate_root(const workload_profile& profile) {
    // No catalog to check the per_instance names against (a spot_problem checks them).
    profile.validate("");
}

inline void validate_root(const training_goals& goals) {
    goals.validate("");
}

inline void validate_root(const spot_options& options) {
    options.validate("");
}

inline void validate_root(const spot_problem& problem) { problem.validate(""); }

inline void validate_root(const spot_request& request) {
    request.problem.validate("");
    request.options.validate("options");
}

inline void validate_root(const cluster_space& space) { space.validate(""); }

/// exact_options has no validate(): the ranges of the same fields of spot_options::validate.
inline void validate_root(const exact_options& options) {
    require_at_least("node_budget", options.node_budget, 0);
    require_non_negative("time_budget_s", options.time_budget_s);
    if (!(options.relative_gap >= 0.0 && options.relative_gap < 1.0))
        throw invalid_input("relative_gap", format_number(options.relative_gap), "a number in [0, 1)");
}

inline void validate_root(const ps_network& network) { network.validate(""); }

/// Reads a whole document into `out` (unchanged on failure) and validates it.
template <document Json, class T>
void read_root(const Json& j, T& out) {
    T value{};
    try {
        read_value(tag{}, j, std::string(), value);
    } catch (const nlohmann::json::exception& e) {
        // Unreachable: every access above checks the value's type first. Should one not, the
        // caller still gets a dnnplan::error, as this header promises.
        throw invalid_input(std::string(root_field), "?", std::string("a document the reader can access: ") + e.what());
    }
    validate_root(value);
    out = std::move(value);
}

// ---- writers shared by the to_json overloads -------------------------------------------------

template <document Json>
void write_prediction_fields(Json& j, const std::optional<cluster_prediction>& prediction) {
    for_each_prediction_field([&](std::string_view key, auto member) {
        if (prediction) j[std::string(key)] = (*prediction).*member;
        else j[std::string(key)] = nullptr;
    });
}

// ---- text ------------------------------------------------------------------------------------

/// Builds the document from nlohmann's SAX events, so that a malformed text (including a number
/// too large for a double, which nlohmann reports as out_of_range) becomes one parse_error with
/// its byte position, and no nlohmann exception is thrown at all. Iterative: nesting depth is
/// not limited by the stack.
template <document Json>
class document_builder {
public:
    using number_integer_t = typename Json::number_integer_t;
    using number_unsigned_t = typename Json::number_unsigned_t;
    using number_float_t = typename Json::number_float_t;
    using string_t = typename Json::string_t;
    using binary_t = typename Json::binary_t;

    explicit document_builder(Json& root) : root_(root) {}

    bool null() { return add(nullptr) != nullptr; }
    bool boolean(bool value) { return add(value) != nullptr; }
    bool number_integer(number_integer_t value) { return add(value) != nullptr; }
    bool number_unsigned(number_unsigned_t value) { return add(value) != nullptr; }
    bool number_float(number_float_t value, const string_t&) { return add(value) != nullptr; }
    bool string(string_t& value) { return add(value) != nullptr; }
    bool binary(binary_t&) { return false; }  // JSON text has no binary values
    bool start_object(std::size_t) {
        stack_.push_back(add(Json::value_t::object));
        return true;
    }
    bool key(string_t& name) {
        Json& object = *stack_.back();
        if (object.contains(name)) {  // strict: a key twice in one object is an error
            duplicate_ = path_to(object);
            if (!duplicate_.empty()) duplicate_ += '.';
            duplicate_ += name;
            return false;
        }
        member_ = &object[name];
        return true;
    }
    bool end_object() {
        stack_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        stack_.push_back(add(Json::value_t::array));
        return true;
    }
    bool end_array() {
        stack_.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const typename Json::exception& e) {
        error_position_ = position;
        error_message_ = e.what();
        return false;
    }

    [[nodiscard]] std::size_t error_position() const noexcept { return error_position_; }
    /// The path of a key given twice in one object, or empty.
    [[nodiscard]] const std::string& duplicate_key() const noexcept { return duplicate_; }
    [[nodiscard]] const std::string& error_message() const noexcept { return error_message_; }

private:
    // The path from the root to `target`, one of the open containers (only built on an error).
    [[nodiscard]] std::string path_to(const Json& target) const {
        std::string path;
        const Json* parent = &root_;
        for (std::size_t level = 1; level < stack_.size() && parent != &target; ++level) {
            const Json* child = stack_[level];
            // Appends only: GCC 12 at -O3 warns falsely (-Wrestrict) on string operator+ here.
            if (parent->is_array()) {
                for (std::size_t i = 0; i < parent->size(); ++i) {
                    if (&(*parent)[i] != child) continue;
                    path += '[';
                    path += std::to_string(i);
                    path += ']';
                }
            } else {
                for (auto it = parent->begin(); it != parent->end(); ++it) {
                    if (&it.value() != child) continue;
                    if (!path.empty()) path += '.';
                    path += it.key();
                }
            }
            parent = child;
        }
        return path;
    }

    template <class Value>
    Json* add(Value&& value) {
        if (stack_.empty()) {
            root_ = Json(std::forward<Value>(value));
            return &root_;
        }
        Json& parent = *stack_.back();
        if (parent.is_array()) {
            parent.push_back(Json(std::forward<Value>(value)));
            return &parent.back();
        }
        *member_ = Json(std::forward<Value>(value));
        return member_;
    }

    Json& root_;
    std::vector<Json*> stack_;
    Json* member_ = nullptr;
    std::size_t error_position_ = 0;
    std::string error_message_ = "unsupported value";
    std::string duplicate_;
};

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error
/// ..." -> "line 1, column 5: syntax error ..." (our parse_error says "parse error at byte N").
[[nodiscard]] inline std::string parse_message(std::string message) {
    if (message.starts_with("[json.exception.")) {
        const auto end = message.find("] ");
        if (end != std::string::npos) message.erase(0, end + 2);
    }
    constexpr std::string_view prefix = "parse error at ";
    if (message.starts_with(prefix)) message.erase(0, prefix.size());
    return message;
}

/// Parses `input` (a std::istream&, or an iterator pair) as one JSON document.
template <class... Input>
[[nodiscard]] nlohmann::ordered_json parse_document(Input&&... input) {
    nlohmann::ordered_json document;
    document_builder<nlohmann::ordered_json> builder(document);
    if (!nlohmann::ordered_json::sax_parse(std::forward<Input>(input)..., &builder)) {
        if (!builder.duplicate_key().empty())
            throw invalid_input(builder.duplicate_key(), "given twice", "each key once in its object");
        throw dnnplan::parse_error("byte " + std::to_string(builder.error_position()),
                                   parse_message(builder.error_message()));
    }
    return document;
}

[[nodiscard]] inline nlohmann::ordered_json parse_text(std::string_view text) {
    // A pointer range: nlohmann reads exactly these bytes (no terminating NUL needed).
    return parse_document(text.data(), text.data() + text.size());
}

/// A T read with its from_json (found by ADL) from a whole document: a stream, or text.
template <class T>
[[nodiscard]] T read_document(std::istream& in) {
    T out;
    from_json(parse_document(in), out);
    return out;
}
template <class T>
[[nodiscard]] T read_text(std::string_view text) {
    T out;
    from_json(parse_text(text), out);
    return out;
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

// ---- enums -----------------------------------------------------------------------------------

template <detail::json_io::document Json>
void to_json(Json& j, price_kind value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, price_kind& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, spot_method value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, spot_method& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, search_objective value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, search_objective& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, solve_status value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, solve_status& out) { detail::json_io::read_root(j, out); }

// ---- inputs ----------------------------------------------------------------------------------

template <detail::json_io::document Json>
void to_json(Json& j, const instance_type& t) {
    j = Json::object();
    j["name"] = t.name;
    j["gpus"] = t.gpus;
    j["quota"] = t.quota;
    j["spot_usd_per_h"] = t.spot_usd_per_h;
    j["on_demand_usd_per_h"] = t.on_demand_usd_per_h;
    if (t.gpu_memory_bytes) j["gpu_memory_bytes"] = *t.gpu_memory_bytes;
}
template <detail::json_io::document Json>
void from_json(const Json& j, instance_type& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const instance_catalog& c) {
    j = Json::object();
    j["instances"] = c.instances;
    j["parameter_server_usd_per_h"] = c.parameter_server_usd_per_h;
}
template <detail::json_io::document Json>
void from_json(const Json& j, instance_catalog& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const instance_profile& p) {
    j = Json::object();
    j["per_gpu_batch"] = p.per_gpu_batch;
    j["samples_per_s"] = p.samples_per_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, instance_profile& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const contention_coefficients& c) {
    j = Json::object();
    j["alpha1"] = c.alpha1;
    j["beta1"] = c.beta1;
}
template <detail::json_io::document Json>
void from_json(const Json& j, contention_coefficients& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const loss_coefficients& l) {
    j = Json::object();
    j["gamma1"] = l.gamma1;
    j["gamma2"] = l.gamma2;
    j["gamma3"] = l.gamma3;
    if (l.gamma4) j["gamma4"] = *l.gamma4;
    j["gamma5"] = l.gamma5;
}
template <detail::json_io::document Json>
void from_json(const Json& j, loss_coefficients& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const workload_profile& p) {
    j = Json::object();
    j["parameter_bytes"] = p.parameter_bytes;
    j["required_bandwidth_bytes_per_s"] = p.required_bandwidth_bytes_per_s;
    j["ps_bandwidth_bytes_per_s"] = p.ps_bandwidth_bytes_per_s;
    j["pcie_bandwidth_bytes_per_s"] = p.pcie_bandwidth_bytes_per_s;
    Json per_instance = Json::object();
    for (const auto& [name, measured] : p.per_instance) per_instance[name] = measured;
    j["per_instance"] = std::move(per_instance);
    j["contention"] = p.contention;
    j["loss"] = p.loss;
}
/// Per_instance names are not checked against a catalog here (see the top of this header).
template <detail::json_io::document Json>
void from_json(const Json& j, workload_profile& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const training_goals& g) {
    j = Json::object();
    j["target_loss"] = g.target_loss;
    j["deadline_s"] = g.deadline_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, training_goals& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const spot_options& o) {
    j = Json::object();
    j["pricing"] = o.pricing;
    j["billing_increment_s"] = o.billing_increment_s;
    j["objective"] = o.objective;
    j["method"] = o.method;
    j["cap_at_n_upper"] = o.cap_at_n_upper;
    j["sliding_window_paper_bounds"] = o.sliding_window_paper_bounds;
    j["sliding_window_wrap_around"] = o.sliding_window_wrap_around;
    j["node_budget"] = o.node_budget;
    j["time_budget_s"] = o.time_budget_s;
    j["relative_gap"] = o.relative_gap;
}
template <detail::json_io::document Json>
void from_json(const Json& j, spot_options& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const spot_problem& p) {
    j = Json::object();
    j["catalog"] = p.catalog;
    j["profile"] = p.profile;
    j["goals"] = p.goals;
    Json existing = Json::object();
    for (const auto& [name, count] : p.existing) existing[name] = count;
    j["existing"] = std::move(existing);
}
template <detail::json_io::document Json>
void from_json(const Json& j, spot_problem& out) { detail::json_io::read_root(j, out); }

/// The problem file: the members of spot_problem and "options", side by side.
template <detail::json_io::document Json>
void to_json(Json& j, const spot_request& r) {
    to_json(j, r.problem);
    j["options"] = r.options;
}
template <detail::json_io::document Json>
void from_json(const Json& j, spot_request& out) { detail::json_io::read_root(j, out); }

// ---- results ---------------------------------------------------------------------------------

template <detail::json_io::document Json>
void to_json(Json& j, const type_count& c) {
    j = Json::object();
    j["name"] = c.name;
    j["count"] = c.count;
}
template <detail::json_io::document Json>
void from_json(const Json& j, type_count& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const cluster_prediction& p) {
    j = Json::object();
    detail::json_io::write_prediction_fields(j, std::optional<cluster_prediction>(p));
}
template <detail::json_io::document Json>
void from_json(const Json& j, cluster_prediction& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const search_counters& c) {
    j = Json::object();
    j["nodes"] = c.nodes;
    j["clusters_evaluated"] = c.clusters_evaluated;
    j["pruned_by_bound"] = c.pruned_by_bound;
    j["pruned_by_deadline"] = c.pruned_by_deadline;
}
template <detail::json_io::document Json>
void from_json(const Json& j, search_counters& out) { detail::json_io::read_root(j, out); }

/// Layout at the top of this header. A lower_bound that is not finite is written as null and
/// read back as +infinity (the solvers report no other non-finite bound). Duplicate names in
/// `counts` keep the last count.
template <detail::json_io::document Json>
void to_json(Json& j, const spot_result& r) {
    j = Json::object();
    j["status"] = r.status;
    j["reason"] = r.reason;
    Json counts = Json::object();
    for (const auto& c : r.counts) counts[c.name] = c.count;
    j["counts"] = std::move(counts);
    detail::json_io::write_prediction_fields(j, r.prediction);
    if (std::isfinite(r.lower_bound)) j["lower_bound"] = r.lower_bound;
    else j["lower_bound"] = nullptr;
    if (r.fastest_training_time_s) j["fastest_training_time_s"] = *r.fastest_training_time_s;
    else j["fastest_training_time_s"] = nullptr;
    j["counters"] = r.counters;
}
template <detail::json_io::document Json>
void from_json(const Json& j, spot_result& out) { detail::json_io::read_root(j, out); }

// ---- the search and model layers (layouts at the top of this header) -----------------------------

/// A max_workers of the int64 max (no cap) is written as null.
template <detail::json_io::document Json>
void to_json(Json& j, const cluster_space& s) {
    j = Json::object();
    j["lower"] = s.lower;
    j["upper"] = s.upper;
    j["min_workers"] = s.min_workers;
    if (s.max_workers == std::numeric_limits<std::int64_t>::max()) j["max_workers"] = nullptr;
    else j["max_workers"] = s.max_workers;
}
template <detail::json_io::document Json>
void from_json(const Json& j, cluster_space& out) { detail::json_io::read_root(j, out); }

/// A deadline that is not finite is written as null and read back as +infinity (no deadline).
template <detail::json_io::document Json>
void to_json(Json& j, const cluster_goals& g) {
    j = Json::object();
    j["target_loss"] = g.target_loss;
    if (std::isfinite(g.deadline_s)) j["deadline_s"] = g.deadline_s;
    else j["deadline_s"] = nullptr;
    j["objective"] = g.objective;
}
template <detail::json_io::document Json>
void from_json(const Json& j, cluster_goals& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const exact_options& o) {
    j = Json::object();
    j["node_budget"] = o.node_budget;
    j["time_budget_s"] = o.time_budget_s;
    j["relative_gap"] = o.relative_gap;
}
template <detail::json_io::document Json>
void from_json(const Json& j, exact_options& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const sliding_window_options& o) {
    j = Json::object();
    j["paper_bounds"] = o.paper_bounds;
    if (o.n_upper) j["n_upper"] = *o.n_upper;
    else j["n_upper"] = nullptr;
    j["wrap_around"] = o.wrap_around;
}
template <detail::json_io::document Json>
void from_json(const Json& j, sliding_window_options& out) { detail::json_io::read_root(j, out); }

/// As spot_result: a lower_bound that is not finite is written as null and read back as
/// +infinity. The prediction is one nested object (null without a plan).
template <detail::json_io::document Json>
void to_json(Json& j, const search_outcome& o) {
    j = Json::object();
    j["status"] = o.status;
    j["reason"] = o.reason;
    j["counts"] = o.counts;
    if (o.prediction) j["prediction"] = *o.prediction;
    else j["prediction"] = nullptr;
    if (std::isfinite(o.lower_bound)) j["lower_bound"] = o.lower_bound;
    else j["lower_bound"] = nullptr;
    if (o.fastest_training_time_s) j["fastest_training_time_s"] = *o.fastest_training_time_s;
    else j["fastest_training_time_s"] = nullptr;
    j["counters"] = o.counters;
}
template <detail::json_io::document Json>
void from_json(const Json& j, search_outcome& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipedream_stage& st) {
    j = Json::object();
    j["first_state"] = st.first_state;
    j["end_state"] = st.end_state;
    j["replicas"] = st.replicas;
    j["compute_s"] = st.compute_s;
    j["layers"] = st.layers;
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipedream_stage& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipedream_result& r) {
    j = Json::object();
    if (std::isfinite(r.time_per_minibatch_s)) j["time_per_minibatch_s"] = r.time_per_minibatch_s;
    else j["time_per_minibatch_s"] = nullptr;
    j["num_states"] = r.num_states;
    j["stages"] = Json::array();
    for (const auto& st : r.stages) j["stages"].push_back(st);
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipedream_result& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const affine_in_batch& a) {
    j = Json::object();
    j["intercept"] = a.intercept;
    j["slope"] = a.slope;
}
template <detail::json_io::document Json>
void from_json(const Json& j, affine_in_batch& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const ps_network& n) {
    j = Json::object();
    j["parameter_bytes"] = n.parameter_bytes;
    j["required_bandwidth_bytes_per_s"] = n.required_bandwidth_bytes_per_s;
    j["ps_bandwidth_bytes_per_s"] = n.ps_bandwidth_bytes_per_s;
    j["pcie_bandwidth_bytes_per_s"] = n.pcie_bandwidth_bytes_per_s;
    j["contention"] = n.contention;
}
template <detail::json_io::document Json>
void from_json(const Json& j, ps_network& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const ps_worker_type& t) {
    j = Json::object();
    j["gpus"] = t.gpus;
    j["worker_batch"] = t.worker_batch;
    j["compute_s"] = t.compute_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, ps_worker_type& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const measured_worker_type& t) {
    j = Json::object();
    j["name"] = t.name;
    j["gpus"] = t.gpus;
    j["worker_batch"] = t.worker_batch;
    j["samples_per_s"] = t.samples_per_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, measured_worker_type& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const batch_memory_fit& f) {
    j = Json::object();
    j["alpha2_samples_per_byte"] = f.alpha2_samples_per_byte;
    j["beta2_samples"] = f.beta2_samples;
}
template <detail::json_io::document Json>
void from_json(const Json& j, batch_memory_fit& out) { detail::json_io::read_root(j, out); }

// ---- the layer graph (layout at the top of this header) ----------------------------------------

template <detail::json_io::document Json>
void to_json(Json& j, const layer& l) {
    j = Json::object();
    j["id"] = l.id;
    j["description"] = l.description;
    j["forward_s"] = l.forward_s;
    j["backward_s"] = l.backward_s;
    j["activation_bytes"] = l.activation_bytes;
    j["parameter_bytes"] = l.parameter_bytes;
    if (l.optimizer_state_bytes) j["optimizer_state_bytes"] = *l.optimizer_state_bytes;
}
/// Structural checks only: the rules on a layer's figures are layer_graph's.
template <detail::json_io::document Json>
void from_json(const Json& j, layer& out) { detail::json_io::read_root(j, out); }

/// Edges are written by id: {"from": "node1", "to": "node2"}.
template <detail::json_io::document Json>
void to_json(Json& j, const layer_graph& g) {
    j = Json::object();
    j["layers"] = g.layers();
    Json edges = Json::array();
    for (const auto& e : g.edges()) {
        Json edge = Json::object();
        edge["from"] = g.at(e.from).id;
        edge["to"] = g.at(e.to).id;
        edges.push_back(std::move(edge));
    }
    j["edges"] = std::move(edges);
}
template <detail::json_io::document Json>
void from_json(const Json& j, layer_graph& out) { detail::json_io::read_root(j, out); }

// ---- text ------------------------------------------------------------------------------------

/// The result as JSON text, keys in the order documented at the top of this header and "counts"
/// in catalog order. indent < 0: one line. Invalid UTF-8 in names or the reason is replaced by
/// U+FFFD rather than thrown.
[[nodiscard]] inline std::string to_json_text(const spot_result& result, int indent = 2) {
    nlohmann::ordered_json j;
    to_json(j, result);
    return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

/// The problem file as JSON text, keys in declaration order (the format of parse_spot_request).
[[nodiscard]] inline std::string to_json_text(const spot_request& request, int indent = 2) {
    nlohmann::ordered_json j;
    to_json(j, request);
    return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

/// Reads a problem file. Malformed JSON: parse_error("byte N", ...); anything else wrong:
/// invalid_input naming the field.
[[nodiscard]] inline spot_request parse_spot_request(std::istream& in) {
    return detail::json_io::read_document<spot_request>(in);
}

[[nodiscard]] inline spot_request parse_spot_request(std::string_view text) {
    return detail::json_io::read_text<spot_request>(text);
}

/// Reads a result written by to_json_text(); "counts" keep the document's order.
[[nodiscard]] inline spot_result parse_spot_result(std::istream& in) {
    return detail::json_io::read_document<spot_result>(in);
}

[[nodiscard]] inline spot_result parse_spot_result(std::string_view text) {
    return detail::json_io::read_text<spot_result>(text);
}

// =============================================================================================
// ---- pipeline models, the pipeline partitioner and the hybrid-parallel planner -------------
// (fit/linear_time.hpp, partition/layer_chain.hpp, model/pipeline_1f1b.hpp,
//  partition/pipeline_dp.hpp, solve/hybrid_parallel.hpp)
//
// Same rules as the rest of this header (strict keys, finite numbers, non-negative integers,
// the field path from the document root). Types with a validate() run it after the structure,
// at the document root with no prefix (so "catalog.containers[1].gpus" inside a hybrid_problem,
// "containers[1].gpus" for a container_catalog read on its own). "?": optional (absent: the
// struct's default). Non-finite results are written as null and read back as +infinity.
//   linear_time_model:     {"fixed_s", "per_sample_s"}                            then validate
//   batch_time_sample:     {"batch", "time_s"}
//   chain_layer:           {"layer", "forward": linear_time_model, "backward": linear_time_model,
//                           "activation_bytes_per_sample", "parameter_bytes", "optimizer_state_bytes"}
//   layer_chain:           {"layers": [chain_layer], "cut_bytes_per_sample": [number] (one per
//                           layer), "removed_layers": [index]}
//   batch_profile:         {"batch_size", "graph": layer_graph}                   then validate
//   layer_chain_options:   {"optimizer_state_ratio"?}                              then validate
//   pipeline_1f1b_options: {"micro_batch_size"?, "micro_batches"?, "bandwidth_bytes_per_s"?,
//                           "sync_overlap_ratio"?, "device_memory_bytes"?, "speed_ratio"?}  then validate
//   pipeline_dp_options:   {"max_devices"?, "max_stages"?}                         then validate
//   container_type:        {"name", "gpu_type", "gpus", "vcpus", "memory_gib", "gpu_usd_per_s",
//                           "vcpu_usd_per_s", "gib_usd_per_s", "max_containers",
//                           "gpu_memory_bytes"?, "network_bandwidth_bytes_per_s"?, "speed_ratio"?}
//                                                                                  then validate
//   container_catalog:     {"containers": [container_type]}                        then validate
//   hybrid_objective:      "max_samples_per_usd" | "max_samples_per_s" | "min_usd_per_h"
//   hybrid_problem:        {"profiles": [batch_profile], "catalog", "max_workers", "global_batch_sizes"}
//                                                                                  then validate
//   hybrid_options:        {"objective"?, "budget_usd_per_h"? (null or absent: no budget),
//                           "target_samples_per_s"?, "max_micro_batches"?, "max_stages"?,
//                           "sync_overlap_ratio"?, "optimizer_state_ratio"?}       then validate
//   stage_breakdown:       {"samples_per_replica", "in_flight", "forward_s", "backward_s",
//                           "compute_s", "transfer_s", "allreduce_s", "exposed_sync_s",
//                           "memory_bytes", "fits", "stage_time_s" (null: +inf, does not fit)}
//   pipeline_dp_stage:     {"first_state", "end_state", "replicas", "stage_time_s"}
//   pipeline_dp_plan:      {"time_s" (null: no plan), "slowest_stage_s" (null), "devices", "stages"}
//   pipeline_dp_result:    {"status", "reason", "best", "by_devices", "stage_evaluations"}
//   hybrid_stage:          {"first_state", "end_state", "replicas", "layers", "figures": stage_breakdown}
//   hybrid_plan:           {"container", "containers", "workers", "global_batch_size",
//                           "micro_batch_size", "micro_batches", "time_per_minibatch_s",
//                           "samples_per_s", "usd_per_h", "samples_per_usd", "stages"}
//   hybrid_result:         {"status", "reason", "plan" (null: none), "configurations", "stage_evaluations"}
//   layer_move:            {"layer", "id", "from_stage" (null: in no stage), "to_stage" (null), "bytes"}
//   replan_result:         {"result": hybrid_result, "moves", "bytes_in_by_stage",
//                           "bytes_out_by_stage", "bytes_moved"}
// =============================================================================================

namespace detail::json_io {

template <>
struct enum_names<hybrid_objective> {
    static constexpr std::array<enum_entry<hybrid_objective>, 3> entries{{
        {to_string(hybrid_objective::max_samples_per_usd), hybrid_objective::max_samples_per_usd},
        {to_string(hybrid_objective::max_samples_per_s), hybrid_objective::max_samples_per_s},
        {to_string(hybrid_objective::min_usd_per_h), hybrid_objective::min_usd_per_h},
    }};
};

/// read_root() for the types of this section: the structure, then the type's validate() at the
/// root (read_root's validate_root overloads are declared above it and do not see these types).
template <document Json, class T>
void read_validated_root(const Json& j, T& out) {
    T value{};
    read_root(j, value);
    if constexpr (requires { value.validate(std::string_view()); }) value.validate("");
    out = std::move(value);
}

/// A number that may be +infinity: written as null.
template <document Json>
void write_number_or_null(Json& j, std::string_view key, double value) {
    if (std::isfinite(value)) j[std::string(key)] = value;
    else j[std::string(key)] = nullptr;
}

/// Reads a number written by write_number_or_null: null is +infinity.
template <document Json>
void read_number_or_infinity(const object_reader<Json>& in, std::string_view key, double& out, bool required) {
    std::optional<double> value;
    if (required) in.required(key, value);
    else if (in.find(key) == nullptr) return;
    else in.optional(key, value);
    out = value.value_or(std::numeric_limits<double>::infinity());
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, linear_time_model& out) {
    const object_reader<Json> in(j, path, {"fixed_s", "per_sample_s"});
    in.required("fixed_s", out.fixed_s);
    in.required("per_sample_s", out.per_sample_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, batch_time_sample& out) {
    const object_reader<Json> in(j, path, {"batch", "time_s"});
    in.required("batch", out.batch);
    in.required("time_s", out.time_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, chain_layer& out) {
    const object_reader<Json> in(j, path,
                                 {"layer", "forward", "backward", "activation_bytes_per_sample", "parameter_bytes",
                                  "optimizer_state_bytes"});
    in.required("layer", out.layer);
    in.required("forward", out.forward);
    in.required("backward", out.backward);
    in.required("activation_bytes_per_sample", out.activation_bytes_per_sample);
    in.required("parameter_bytes", out.parameter_bytes);
    in.required("optimizer_state_bytes", out.optimizer_state_bytes);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer_chain& out) {
    const object_reader<Json> in(j, path, {"layers", "cut_bytes_per_sample", "removed_layers"});
    in.required("layers", out.layers);
    in.required("cut_bytes_per_sample", out.cut_bytes_per_sample);
    in.required("removed_layers", out.removed_layers);
    if (out.cut_bytes_per_sample.size() != out.layers.size())
        fail(in.path_of("cut_bytes_per_sample"), std::to_string(out.cut_bytes_per_sample.size()) + " values",
             "one value per layer (" + std::to_string(out.layers.size()) + ")");
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, batch_profile& out) {
    const object_reader<Json> in(j, path, {"batch_size", "graph"});
    in.required("batch_size", out.batch_size);
    in.required("graph", out.graph);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer_chain_options& out) {
    const object_reader<Json> in(j, path, {"optimizer_state_ratio"});
    in.optional("optimizer_state_ratio", out.optimizer_state_ratio);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipeline_1f1b_options& out) {
    const object_reader<Json> in(j, path,
                                 {"micro_batch_size", "micro_batches", "bandwidth_bytes_per_s", "sync_overlap_ratio",
                                  "device_memory_bytes", "speed_ratio"});
    in.optional("micro_batch_size", out.micro_batch_size);
    in.optional("micro_batches", out.micro_batches);
    in.optional("bandwidth_bytes_per_s", out.bandwidth_bytes_per_s);
    in.optional("sync_overlap_ratio", out.sync_overlap_ratio);
    in.optional("device_memory_bytes", out.device_memory_bytes);
    in.optional("speed_ratio", out.speed_ratio);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipeline_dp_options& out) {
    const object_reader<Json> in(j, path, {"max_devices", "max_stages"});
    in.optional("max_devices", out.max_devices);
    in.optional("max_stages", out.max_stages);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, container_type& out) {
    const object_reader<Json> in(j, path,
                                 {"name", "gpu_type", "gpus", "vcpus", "memory_gib", "gpu_usd_per_s", "vcpu_usd_per_s",
                                  "gib_usd_per_s", "max_containers", "gpu_memory_bytes", "network_bandwidth_bytes_per_s",
                                  "speed_ratio"});
    in.required("name", out.name);
    in.required("gpu_type", out.gpu_type);
    in.required("gpus", out.gpus);
    in.required("vcpus", out.vcpus);
    in.required("memory_gib", out.memory_gib);
    in.required("gpu_usd_per_s", out.gpu_usd_per_s);
    in.required("vcpu_usd_per_s", out.vcpu_usd_per_s);
    in.required("gib_usd_per_s", out.gib_usd_per_s);
    in.required("max_containers", out.max_containers);
    in.optional("gpu_memory_bytes", out.gpu_memory_bytes);
    in.optional("network_bandwidth_bytes_per_s", out.network_bandwidth_bytes_per_s);
    in.optional("speed_ratio", out.speed_ratio);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, container_catalog& out) {
    const object_reader<Json> in(j, path, {"containers"});
    in.required("containers", out.containers);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, hybrid_problem& out) {
    const object_reader<Json> in(j, path, {"profiles", "catalog", "max_workers", "global_batch_sizes"});
    in.required("profiles", out.profiles);
    in.required("catalog", out.catalog);
    in.required("max_workers", out.max_workers);
    in.required("global_batch_sizes", out.global_batch_sizes);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, hybrid_options& out) {
    const object_reader<Json> in(j, path,
                                 {"objective", "budget_usd_per_h", "target_samples_per_s", "max_micro_batches",
                                  "max_stages", "sync_overlap_ratio", "optimizer_state_ratio"});
    in.optional("objective", out.objective);
    read_number_or_infinity(in, "budget_usd_per_h", out.budget_usd_per_h, false);
    in.optional("target_samples_per_s", out.target_samples_per_s);
    in.optional("max_micro_batches", out.max_micro_batches);
    in.optional("max_stages", out.max_stages);
    in.optional("sync_overlap_ratio", out.sync_overlap_ratio);
    in.optional("optimizer_state_ratio", out.optimizer_state_ratio);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, stage_breakdown& out) {
    const object_reader<Json> in(j, path,
                                 {"samples_per_replica", "in_flight", "forward_s", "backward_s", "compute_s", "transfer_s",
                                  "allreduce_s", "exposed_sync_s", "memory_bytes", "fits", "stage_time_s"});
    in.required("samples_per_replica", out.samples_per_replica);
    in.required("in_flight", out.in_flight);
    in.required("forward_s", out.forward_s);
    in.required("backward_s", out.backward_s);
    in.required("compute_s", out.compute_s);
    in.required("transfer_s", out.transfer_s);
    in.required("allreduce_s", out.allreduce_s);
    in.required("exposed_sync_s", out.exposed_sync_s);
    in.required("memory_bytes", out.memory_bytes);
    in.required("fits", out.fits);
    read_number_or_infinity(in, "stage_time_s", out.stage_time_s, true);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipeline_dp_stage& out) {
    const object_reader<Json> in(j, path, {"first_state", "end_state", "replicas", "stage_time_s"});
    in.required("first_state", out.first_state);
    in.required("end_state", out.end_state);
    in.required("replicas", out.replicas);
    read_number_or_infinity(in, "stage_time_s", out.stage_time_s, true);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipeline_dp_plan& out) {
    const object_reader<Json> in(j, path, {"time_s", "slowest_stage_s", "devices", "stages"});
    read_number_or_infinity(in, "time_s", out.time_s, true);
    read_number_or_infinity(in, "slowest_stage_s", out.slowest_stage_s, true);
    in.required("devices", out.devices);
    in.required("stages", out.stages);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pipeline_dp_result& out) {
    const object_reader<Json> in(j, path, {"status", "reason", "best", "by_devices", "stage_evaluations"});
    in.required("status", out.status);
    in.required("reason", out.reason);
    in.required("best", out.best);
    in.required("by_devices", out.by_devices);
    in.required("stage_evaluations", out.stage_evaluations);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, hybrid_stage& out) {
    const object_reader<Json> in(j, path, {"first_state", "end_state", "replicas", "layers", "figures"});
    in.required("first_state", out.first_state);
    in.required("end_state", out.end_state);
    in.required("replicas", out.replicas);
    in.required("layers", out.layers);
    in.required("figures", out.figures);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, hybrid_plan& out) {
    const object_reader<Json> in(j, path,
                                 {"container", "containers", "workers", "global_batch_size", "micro_batch_size",
                                  "micro_batches", "time_per_minibatch_s", "samples_per_s", "usd_per_h",
                                  "samples_per_usd", "stages"});
    in.required("container", out.container);
    in.required("containers", out.containers);
    in.required("workers", out.workers);
    in.required("global_batch_size", out.global_batch_size);
    in.required("micro_batch_size", out.micro_batch_size);
    in.required("micro_batches", out.micro_batches);
    in.required("time_per_minibatch_s", out.time_per_minibatch_s);
    in.required("samples_per_s", out.samples_per_s);
    in.required("usd_per_h", out.usd_per_h);
    in.required("samples_per_usd", out.samples_per_usd);
    in.required("stages", out.stages);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, hybrid_result& out) {
    const object_reader<Json> in(j, path, {"status", "reason", "plan", "configurations", "stage_evaluations"});
    in.required("status", out.status);
    in.required("reason", out.reason);
    in.required("plan", out.plan);
    in.required("configurations", out.configurations);
    in.required("stage_evaluations", out.stage_evaluations);
}

/// A stage index that may be -1 (in no stage): null.
template <document Json>
void read_stage_index(const object_reader<Json>& in, std::string_view key, std::int32_t& out) {
    std::optional<std::int32_t> value;
    in.required(key, value);
    out = value.value_or(-1);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer_move& out) {
    const object_reader<Json> in(j, path, {"layer", "id", "from_stage", "to_stage", "bytes"});
    in.required("layer", out.layer);
    in.required("id", out.id);
    read_stage_index(in, "from_stage", out.from_stage);
    read_stage_index(in, "to_stage", out.to_stage);
    in.required("bytes", out.bytes);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, replan_result& out) {
    const object_reader<Json> in(j, path, {"result", "moves", "bytes_in_by_stage", "bytes_out_by_stage", "bytes_moved"});
    in.required("result", out.result);
    in.required("moves", out.moves);
    in.required("bytes_in_by_stage", out.bytes_in_by_stage);
    in.required("bytes_out_by_stage", out.bytes_out_by_stage);
    in.required("bytes_moved", out.bytes_moved);
}

}  // namespace detail::json_io

template <detail::json_io::document Json>
void to_json(Json& j, hybrid_objective value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_objective& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const linear_time_model& m) {
    j = Json::object();
    j["fixed_s"] = m.fixed_s;
    j["per_sample_s"] = m.per_sample_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, linear_time_model& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const batch_time_sample& s) {
    j = Json::object();
    j["batch"] = s.batch;
    j["time_s"] = s.time_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, batch_time_sample& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const chain_layer& l) {
    j = Json::object();
    j["layer"] = l.layer;
    j["forward"] = l.forward;
    j["backward"] = l.backward;
    j["activation_bytes_per_sample"] = l.activation_bytes_per_sample;
    j["parameter_bytes"] = l.parameter_bytes;
    j["optimizer_state_bytes"] = l.optimizer_state_bytes;
}
/// Structural checks only: pipeline_1f1b_model's constructor checks a chain's figures.
template <detail::json_io::document Json>
void from_json(const Json& j, chain_layer& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const layer_chain& c) {
    j = Json::object();
    j["layers"] = c.layers;
    j["cut_bytes_per_sample"] = c.cut_bytes_per_sample;
    j["removed_layers"] = c.removed_layers;
}
template <detail::json_io::document Json>
void from_json(const Json& j, layer_chain& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const batch_profile& p) {
    j = Json::object();
    j["batch_size"] = p.batch_size;
    j["graph"] = p.graph;
}
template <detail::json_io::document Json>
void from_json(const Json& j, batch_profile& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const layer_chain_options& o) {
    j = Json::object();
    j["optimizer_state_ratio"] = o.optimizer_state_ratio;
}
template <detail::json_io::document Json>
void from_json(const Json& j, layer_chain_options& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipeline_1f1b_options& o) {
    j = Json::object();
    j["micro_batch_size"] = o.micro_batch_size;
    j["micro_batches"] = o.micro_batches;
    j["bandwidth_bytes_per_s"] = o.bandwidth_bytes_per_s;
    j["sync_overlap_ratio"] = o.sync_overlap_ratio;
    j["device_memory_bytes"] = o.device_memory_bytes;
    j["speed_ratio"] = o.speed_ratio;
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipeline_1f1b_options& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipeline_dp_options& o) {
    j = Json::object();
    j["max_devices"] = o.max_devices;
    j["max_stages"] = o.max_stages;
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipeline_dp_options& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const container_type& c) {
    j = Json::object();
    j["name"] = c.name;
    j["gpu_type"] = c.gpu_type;
    j["gpus"] = c.gpus;
    j["vcpus"] = c.vcpus;
    j["memory_gib"] = c.memory_gib;
    j["gpu_usd_per_s"] = c.gpu_usd_per_s;
    j["vcpu_usd_per_s"] = c.vcpu_usd_per_s;
    j["gib_usd_per_s"] = c.gib_usd_per_s;
    j["max_containers"] = c.max_containers;
    j["gpu_memory_bytes"] = c.gpu_memory_bytes;
    j["network_bandwidth_bytes_per_s"] = c.network_bandwidth_bytes_per_s;
    j["speed_ratio"] = c.speed_ratio;
}
template <detail::json_io::document Json>
void from_json(const Json& j, container_type& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const container_catalog& c) {
    j = Json::object();
    j["containers"] = c.containers;
}
template <detail::json_io::document Json>
void from_json(const Json& j, container_catalog& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const hybrid_problem& p) {
    j = Json::object();
    j["profiles"] = p.profiles;
    j["catalog"] = p.catalog;
    j["max_workers"] = p.max_workers;
    j["global_batch_sizes"] = p.global_batch_sizes;
}
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_problem& out) { detail::json_io::read_validated_root(j, out); }

/// A budget that is not finite (no budget) is written as null.
template <detail::json_io::document Json>
void to_json(Json& j, const hybrid_options& o) {
    j = Json::object();
    j["objective"] = o.objective;
    detail::json_io::write_number_or_null(j, "budget_usd_per_h", o.budget_usd_per_h);
    j["target_samples_per_s"] = o.target_samples_per_s;
    j["max_micro_batches"] = o.max_micro_batches;
    j["max_stages"] = o.max_stages;
    j["sync_overlap_ratio"] = o.sync_overlap_ratio;
    j["optimizer_state_ratio"] = o.optimizer_state_ratio;
}
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_options& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const stage_breakdown& b) {
    j = Json::object();
    j["samples_per_replica"] = b.samples_per_replica;
    j["in_flight"] = b.in_flight;
    j["forward_s"] = b.forward_s;
    j["backward_s"] = b.backward_s;
    j["compute_s"] = b.compute_s;
    j["transfer_s"] = b.transfer_s;
    j["allreduce_s"] = b.allreduce_s;
    j["exposed_sync_s"] = b.exposed_sync_s;
    j["memory_bytes"] = b.memory_bytes;
    j["fits"] = b.fits;
    detail::json_io::write_number_or_null(j, "stage_time_s", b.stage_time_s);
}
template <detail::json_io::document Json>
void from_json(const Json& j, stage_breakdown& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipeline_dp_stage& s) {
    j = Json::object();
    j["first_state"] = s.first_state;
    j["end_state"] = s.end_state;
    j["replicas"] = s.replicas;
    detail::json_io::write_number_or_null(j, "stage_time_s", s.stage_time_s);
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipeline_dp_stage& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipeline_dp_plan& p) {
    j = Json::object();
    detail::json_io::write_number_or_null(j, "time_s", p.time_s);
    detail::json_io::write_number_or_null(j, "slowest_stage_s", p.slowest_stage_s);
    j["devices"] = p.devices;
    j["stages"] = Json::array();
    for (const auto& s : p.stages) j["stages"].push_back(s);
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipeline_dp_plan& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const pipeline_dp_result& r) {
    j = Json::object();
    j["status"] = r.status;
    j["reason"] = r.reason;
    j["best"] = r.best;
    j["by_devices"] = Json::array();
    for (const auto& p : r.by_devices) j["by_devices"].push_back(p);
    j["stage_evaluations"] = r.stage_evaluations;
}
template <detail::json_io::document Json>
void from_json(const Json& j, pipeline_dp_result& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const hybrid_stage& s) {
    j = Json::object();
    j["first_state"] = s.first_state;
    j["end_state"] = s.end_state;
    j["replicas"] = s.replicas;
    j["layers"] = s.layers;
    j["figures"] = s.figures;
}
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_stage& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const hybrid_plan& p) {
    j = Json::object();
    j["container"] = p.container;
    j["containers"] = p.containers;
    j["workers"] = p.workers;
    j["global_batch_size"] = p.global_batch_size;
    j["micro_batch_size"] = p.micro_batch_size;
    j["micro_batches"] = p.micro_batches;
    j["time_per_minibatch_s"] = p.time_per_minibatch_s;
    j["samples_per_s"] = p.samples_per_s;
    j["usd_per_h"] = p.usd_per_h;
    j["samples_per_usd"] = p.samples_per_usd;
    j["stages"] = Json::array();
    for (const auto& s : p.stages) j["stages"].push_back(s);
}
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_plan& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const hybrid_result& r) {
    j = Json::object();
    j["status"] = r.status;
    j["reason"] = r.reason;
    if (r.plan) j["plan"] = *r.plan;
    else j["plan"] = nullptr;
    j["configurations"] = r.configurations;
    j["stage_evaluations"] = r.stage_evaluations;
}
template <detail::json_io::document Json>
void from_json(const Json& j, hybrid_result& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const layer_move& m) {
    j = Json::object();
    j["layer"] = m.layer;
    j["id"] = m.id;
    if (m.from_stage >= 0) j["from_stage"] = m.from_stage;
    else j["from_stage"] = nullptr;
    if (m.to_stage >= 0) j["to_stage"] = m.to_stage;
    else j["to_stage"] = nullptr;
    j["bytes"] = m.bytes;
}
template <detail::json_io::document Json>
void from_json(const Json& j, layer_move& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const replan_result& r) {
    j = Json::object();
    j["result"] = r.result;
    j["moves"] = Json::array();
    for (const auto& m : r.moves) j["moves"].push_back(m);
    j["bytes_in_by_stage"] = r.bytes_in_by_stage;
    j["bytes_out_by_stage"] = r.bytes_out_by_stage;
    j["bytes_moved"] = r.bytes_moved;
}
template <detail::json_io::document Json>
void from_json(const Json& j, replan_result& out) { detail::json_io::read_root(j, out); }

/// Reads a container catalog (e.g. examples/data/containers.json). Malformed JSON:
/// parse_error("byte N", ...); anything else wrong: invalid_input naming the field.
[[nodiscard]] inline container_catalog parse_container_catalog(std::istream& in) {
    return detail::json_io::read_document<container_catalog>(in);
}

[[nodiscard]] inline container_catalog parse_container_catalog(std::string_view text) {
    return detail::json_io::read_text<container_catalog>(text);
}

// ---- end of the pipeline models, partitioner and hybrid-parallel planner section -------------

}  // namespace dnnplan

// ---- the synchronous data-parallel model and its fit (model/sync_data_parallel.hpp,
// fit/sync_data_parallel.hpp) ---------------------------------------------------------------
//   pollux_params:   {"alpha_c_s", "beta_c_s", "alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s", "gamma",
//                     "delta_n_s"? (0), "batch_exponent"? (1)}; the two variant fields are written
//                    only when they differ from Pollux's form; then pollux_params::validate
//   sync_fit_result: {"model": "sync-data-parallel"?, "variant"? ("pollux" | "node-term" |
//                     "batch-power" | "node-term+batch-power"; absent = "pollux"; always written),
//                     "params": pollux_params, "pinned": [name],
//                     "quality": {"samples", "rmse", "median_ape_ratio", "p90_ape_ratio", "r_squared"},
//                     "covariance": [[P numbers] x P] (P = 7, 8 or 9 by variant), "residual_variance", "degrees_of_freedom",
//                     "status": "converged" | "max_iterations", "iterations"}
//                    r_squared null = NaN, residual_variance null = +inf; then sync_fit_result::validate.
//                    degrees_of_freedom may be negative (an integer); "model" is written and, when
//                    present, must be "sync-data-parallel".
// Included here, not at the top, so that this section is one contiguous block.
#include <dnnplan/fit/sync_data_parallel.hpp>

namespace dnnplan::detail::json_io {

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pollux_params& out) {
    const object_reader<Json> in(j, path,
                                 {"alpha_c_s", "beta_c_s", "alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s", "gamma",
                                  "delta_n_s", "batch_exponent"});
    in.required("alpha_c_s", out.alpha_c_s);
    in.required("beta_c_s", out.beta_c_s);
    in.required("alpha_n_s", out.alpha_n_s);
    in.required("beta_n_s", out.beta_n_s);
    in.required("alpha_r_s", out.alpha_r_s);
    in.required("beta_r_s", out.beta_r_s);
    in.required("gamma", out.gamma);
    in.optional("delta_n_s", out.delta_n_s);
    in.optional("batch_exponent", out.batch_exponent);
}

/// A number, or null for `when_null` (JSON has no NaN or infinity).
template <document Json>
void read_number_or_null(const object_reader<Json>& in, std::string_view key, double when_null, double& out) {
    std::optional<double> value;
    in.required(key, value);
    out = value ? *value : when_null;
}

/// Any integer (degrees of freedom may be negative); the unsigned reader does not take those.
template <document Json>
void read_signed(const object_reader<Json>& in, std::string_view key, std::int64_t& out) {
    const Json& v = in.at(key, "an integer");
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(in.path_of(key), value_text(v), "an integer");
    if (v.is_number_unsigned() && v.template get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(in.path_of(key), value_text(v), "an integer");
    out = v.template get<std::int64_t>();
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, sync_fit_result& out) {
    const object_reader<Json> in(j, path,
                                 {"model", "variant", "params", "pinned", "quality", "covariance", "residual_variance",
                                  "degrees_of_freedom", "status", "iterations"});
    if (const Json* model = in.find("model")) {
        std::string name;
        read_value(tag{}, *model, in.path_of("model"), name);
        if (name != "sync-data-parallel") fail(in.path_of("model"), value_text(*model), "\"sync-data-parallel\"");
    }
    if (const Json* variant = in.find("variant")) {
        std::string name;
        read_value(tag{}, *variant, in.path_of("variant"), name);
        out.variant = parse_sync_variant(name, in.path_of("variant"));
    }
    in.required("params", out.params);
    in.required("pinned", out.pinned);
    {
        const object_reader<Json> q(in.at("quality", "an object"), in.path_of("quality"),
                                    {"samples", "rmse", "median_ape_ratio", "p90_ape_ratio", "r_squared"});
        read_signed(q, "samples", out.quality.samples);
        q.required("rmse", out.quality.rmse);
        q.required("median_ape_ratio", out.quality.median_ape_ratio);
        q.required("p90_ape_ratio", out.quality.p90_ape_ratio);
        read_number_or_null(q, "r_squared", std::numeric_limits<double>::quiet_NaN(), out.quality.r_squared);
    }
    std::vector<std::vector<double>> rows;
    in.required("covariance", rows);
    const auto count = static_cast<std::size_t>(sync_param_count(out.variant));
    const std::string size = std::to_string(count);
    if (rows.size() != count)
        fail(in.path_of("covariance"), std::to_string(rows.size()) + " rows", size + " rows of " + size + " numbers");
    out.covariance = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(count), static_cast<Eigen::Index>(count));
    for (std::size_t r = 0; r < count; ++r) {
        if (rows[r].size() != count)
            fail(element_path(in.path_of("covariance"), r), std::to_string(rows[r].size()) + " numbers", size + " numbers");
        for (std::size_t c = 0; c < count; ++c)
            out.covariance(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
    }
    read_number_or_null(in, "residual_variance", std::numeric_limits<double>::infinity(), out.residual_variance);
    read_signed(in, "degrees_of_freedom", out.degrees_of_freedom);
    std::string status;
    in.required("status", status);
    if (status == to_string(fit_status::converged)) out.status = fit_status::converged;
    else if (status == to_string(fit_status::max_iterations)) out.status = fit_status::max_iterations;
    else fail(in.path_of("status"), value_text(in.at("status", "")), "\"converged\" or \"max_iterations\"");
    in.required("iterations", out.iterations);
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

template <detail::json_io::document Json>
void to_json(Json& j, const pollux_params& p) {
    j = Json::object();
    j["alpha_c_s"] = p.alpha_c_s;
    j["beta_c_s"] = p.beta_c_s;
    j["alpha_n_s"] = p.alpha_n_s;
    j["beta_n_s"] = p.beta_n_s;
    j["alpha_r_s"] = p.alpha_r_s;
    j["beta_r_s"] = p.beta_r_s;
    j["gamma"] = p.gamma;
    if (p.delta_n_s != 0.0) j["delta_n_s"] = p.delta_n_s;
    if (p.batch_exponent != 1.0) j["batch_exponent"] = p.batch_exponent;
}
/// Strict read, then pollux_params::validate (fields named from the root: "gamma").
template <detail::json_io::document Json>
void from_json(const Json& j, pollux_params& out) {
    pollux_params value;
    detail::json_io::read_root(j, value);
    value.validate("");
    out = value;
}

template <detail::json_io::document Json>
void to_json(Json& j, const sync_fit_result& r) {
    const auto number_or_null = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
    j = Json::object();
    j["model"] = "sync-data-parallel";
    j["variant"] = std::string(to_string(r.variant));
    j["params"] = r.params;
    j["pinned"] = r.pinned;
    Json quality = Json::object();
    quality["samples"] = r.quality.samples;
    quality["rmse"] = r.quality.rmse;
    quality["median_ape_ratio"] = r.quality.median_ape_ratio;
    quality["p90_ape_ratio"] = r.quality.p90_ape_ratio;
    quality["r_squared"] = number_or_null(r.quality.r_squared);
    j["quality"] = std::move(quality);
    Json rows = Json::array();
    for (Eigen::Index row = 0; row < r.covariance.rows(); ++row) {
        Json values = Json::array();
        for (Eigen::Index col = 0; col < r.covariance.cols(); ++col) values.push_back(r.covariance(row, col));
        rows.push_back(std::move(values));
    }
    j["covariance"] = std::move(rows);
    j["residual_variance"] = number_or_null(r.residual_variance);
    j["degrees_of_freedom"] = r.degrees_of_freedom;
    j["status"] = std::string(to_string(r.status));
    j["iterations"] = r.iterations;
}
/// Strict read, then sync_fit_result::validate (fields named from the root: "params.gamma").
template <detail::json_io::document Json>
void from_json(const Json& j, sync_fit_result& out) {
    sync_fit_result value;
    detail::json_io::read_root(j, value);
    value.validate("");
    out = std::move(value);
}

/// The fit as text, keys in the order of the comment above.
[[nodiscard]] inline std::string to_json_text(const sync_fit_result& result, int indent = 2) {
    const nlohmann::ordered_json j = result;
    return j.dump(indent);
}

/// Reads a fit written by to_json_text (the params JSON of `fit_model predict`). Malformed JSON:
/// parse_error("byte N", ...); anything else wrong: invalid_input naming the field.
[[nodiscard]] inline sync_fit_result parse_sync_fit_result(std::istream& in) {
    return detail::json_io::read_document<sync_fit_result>(in);
}

[[nodiscard]] inline sync_fit_result parse_sync_fit_result(std::string_view text) {
    return detail::json_io::read_text<sync_fit_result>(text);
}

}  // namespace dnnplan

// ---- end of the synchronous data-parallel section -------------------------------------------

// ---- the asynchronous parameter-server fit (fit/ps_async.hpp) --------------------------------
//   ps_cluster_set:      {"per_worker_batch", "parameter_bytes"?, "samples": [{"counts": {NAME: count},
//                         "iterations_per_s"?, "parameter_servers"? (default 1)}]}, then validate
//   ps_async_fit_result: {"model": "ps-async"?, "contention_model"?: "spotdnn" (default) | "load",
//                         "types": [{"name", "gpus", "worker_batch"}],
//                         "network": ps_network (B_ps per PS), "compute_s": [s per type],
//                         "pinned": [{"name", "value", "reason"}], "free_names": [name],
//                         "covariance": [[p numbers] x p], "residual_variance" (null = +inf),
//                         "degrees_of_freedom", "quality": {...}, "status", "iterations"}, then validate
// Included here, not at the top, so that this section is one contiguous block.
#include <dnnplan/fit/ps_async.hpp>

namespace dnnplan::detail::json_io {

template <document Json>
void read_value(tag, const Json& j, const std::string& path, named_cluster_sample& out) {
    const object_reader<Json> in(j, path, {"counts", "iterations_per_s", "parameter_servers"});
    in.required("counts", out.counts);
    in.optional("iterations_per_s", out.iterations_per_s);
    in.optional("parameter_servers", out.parameter_servers);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ps_cluster_set& out) {
    const object_reader<Json> in(j, path, {"per_worker_batch", "parameter_bytes", "samples"});
    in.required("per_worker_batch", out.per_worker_batch);
    in.optional("parameter_bytes", out.parameter_bytes);
    in.required("samples", out.samples);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ps_async_worker_type& out) {
    const object_reader<Json> in(j, path, {"name", "gpus", "worker_batch"});
    in.required("name", out.name);
    in.required("gpus", out.gpus);
    in.required("worker_batch", out.worker_batch);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, pinned_parameter& out) {
    const object_reader<Json> in(j, path, {"name", "value", "reason"});
    in.required("name", out.name);
    in.required("value", out.value);
    in.required("reason", out.reason);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ps_async_fit_result& out) {
    const object_reader<Json> in(j, path,
                                 {"model", "contention_model", "types", "network", "compute_s", "pinned", "free_names",
                                  "covariance", "residual_variance", "degrees_of_freedom", "quality", "status",
                                  "iterations"});
    if (const Json* model = in.find("model")) {
        if (!model->is_string() || model->template get<std::string>() != "ps-async")
            fail(in.path_of("model"), value_text(*model), "\"ps-async\"");
    }
    if (const Json* contention = in.find("contention_model")) {
        if (!contention->is_string()) fail(in.path_of("contention_model"), value_text(*contention), "\"spotdnn\" or \"load\"");
        out.contention_model =
            parse_ps_contention_model(contention->template get<std::string>(), in.path_of("contention_model"));
    }
    in.required("types", out.types);
    in.required("network", out.network);
    in.required("compute_s", out.compute_s);
    in.required("pinned", out.pinned);
    in.required("free_names", out.free_names);
    std::vector<std::vector<double>> rows;
    in.required("covariance", rows);
    const std::size_t p = out.free_names.size();
    if (rows.size() != p)
        fail(in.path_of("covariance"), std::to_string(rows.size()) + " rows", "one row per entry of free_names");
    out.covariance = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(p), static_cast<Eigen::Index>(p));
    for (std::size_t r = 0; r < p; ++r) {
        if (rows[r].size() != p)
            fail(element_path(in.path_of("covariance"), r), std::to_string(rows[r].size()) + " numbers",
                 "one number per entry of free_names");
        for (std::size_t c = 0; c < p; ++c) out.covariance(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
    }
    std::optional<double> variance;
    in.required("residual_variance", variance);
    out.residual_variance = variance ? *variance : std::numeric_limits<double>::infinity();
    const Json& dof = in.at("degrees_of_freedom", "an integer");
    if (!dof.is_number_integer() && !dof.is_number_unsigned())
        fail(in.path_of("degrees_of_freedom"), value_text(dof), "an integer");
    out.degrees_of_freedom = dof.template get<std::int64_t>();
    {
        const object_reader<Json> q(in.at("quality", "an object"), in.path_of("quality"),
                                    {"samples", "rmse", "median_ape_ratio", "p90_ape_ratio", "r_squared"});
        std::int64_t samples = 0;
        q.required("samples", samples);
        out.quality.samples = samples;
        q.required("rmse", out.quality.rmse);
        q.required("median_ape_ratio", out.quality.median_ape_ratio);
        q.required("p90_ape_ratio", out.quality.p90_ape_ratio);
        std::optional<double> r2;
        q.required("r_squared", r2);
        out.quality.r_squared = r2 ? *r2 : std::numeric_limits<double>::quiet_NaN();
    }
    std::string status;
    in.required("status", status);
    if (status == to_string(fit_status::converged)) out.status = fit_status::converged;
    else if (status == to_string(fit_status::max_iterations)) out.status = fit_status::max_iterations;
    else fail(in.path_of("status"), value_text(in.at("status", "")), "\"converged\" or \"max_iterations\"");
    in.required("iterations", out.iterations);
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

template <detail::json_io::document Json>
void to_json(Json& j, const ps_async_fit_result& r) {
    const auto number_or_null = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
    j = Json::object();
    j["model"] = "ps-async";
    j["contention_model"] = std::string(to_string(r.contention_model));
    Json types = Json::array();
    for (const auto& t : r.types) {
        Json e = Json::object();
        e["name"] = t.name;
        e["gpus"] = t.gpus;
        e["worker_batch"] = t.worker_batch;
        types.push_back(std::move(e));
    }
    j["types"] = std::move(types);
    j["network"] = r.network;
    j["compute_s"] = r.compute_s;
    Json pinned = Json::array();
    for (const auto& p : r.pinned) {
        Json e = Json::object();
        e["name"] = p.name;
        e["value"] = p.value;
        e["reason"] = p.reason;
        pinned.push_back(std::move(e));
    }
    j["pinned"] = std::move(pinned);
    j["free_names"] = r.free_names;
    Json rows = Json::array();
    for (Eigen::Index row = 0; row < r.covariance.rows(); ++row) {
        Json values = Json::array();
        for (Eigen::Index col = 0; col < r.covariance.cols(); ++col) values.push_back(r.covariance(row, col));
        rows.push_back(std::move(values));
    }
    j["covariance"] = std::move(rows);
    j["residual_variance"] = number_or_null(r.residual_variance);
    j["degrees_of_freedom"] = r.degrees_of_freedom;
    Json quality = Json::object();
    quality["samples"] = r.quality.samples;
    quality["rmse"] = r.quality.rmse;
    quality["median_ape_ratio"] = r.quality.median_ape_ratio;
    quality["p90_ape_ratio"] = r.quality.p90_ape_ratio;
    quality["r_squared"] = number_or_null(r.quality.r_squared);
    j["quality"] = std::move(quality);
    j["status"] = std::string(to_string(r.status));
    j["iterations"] = r.iterations;
}
/// Strict read, then ps_async_fit_result::validate (fields named from the root).
template <detail::json_io::document Json>
void from_json(const Json& j, ps_async_fit_result& out) {
    ps_async_fit_result value;
    detail::json_io::read_value(detail::json_io::tag{}, j, std::string(), value);
    value.validate("");
    out = std::move(value);
}

/// The fit as text (the params JSON of `fit_model fit --model ps-async`).
[[nodiscard]] inline std::string to_json_text(const ps_async_fit_result& result, int indent = 2) {
    const nlohmann::ordered_json j = result;
    return j.dump(indent);
}

[[nodiscard]] inline ps_async_fit_result parse_ps_async_fit_result(std::istream& in) {
    return detail::json_io::read_document<ps_async_fit_result>(in);
}

[[nodiscard]] inline ps_async_fit_result parse_ps_async_fit_result(std::string_view text) {
    return detail::json_io::read_text<ps_async_fit_result>(text);
}

/// A clusters file. Malformed JSON: parse_error("byte N", ...); anything else wrong:
/// invalid_input naming the field ("samples[2].counts.v100").
[[nodiscard]] inline ps_cluster_set parse_ps_cluster_set(std::istream& in) {
    ps_cluster_set set;
    detail::json_io::read_value(detail::json_io::tag{}, detail::json_io::parse_document(in), std::string(), set);
    set.validate("");
    return set;
}

[[nodiscard]] inline ps_cluster_set parse_ps_cluster_set(std::string_view text) {
    ps_cluster_set set;
    detail::json_io::read_value(detail::json_io::tag{}, detail::json_io::parse_text(text), std::string(), set);
    set.validate("");
    return set;
}

}  // namespace dnnplan

// ---- end of the asynchronous parameter-server fit section -------------------------------------

// ---- the VM recommender (solve/vm_recommend.hpp, solve/vm_request.hpp) ------------------------
// Same rules as the rest of this header. "?": optional (absent: the struct's default).
//   vm_objective:     "min_cost" | "max_throughput" | "max_samples_per_usd"
//   vm_method:        "branch_and_bound" | "exhaustive"
//   batch_policy:     "equal" | "balanced";  batch_basis: "per_replica" | "global"
//   vm_work:          {"samples"?, "epochs"?, "dataset_samples"?}                    then validate
//   vm_constraints:   {"max_usd_per_h"? (null: no budget), "min_samples_per_s"?,
//                      "deadline_s"? (null: none), "max_instances"?, "max_distinct_types"?,
//                      "allowed_types"? [name], "allowed_price_kinds"? [price_kind]}
//                     read on its own: validate with the allowed names as the catalog and work
//                     assumed given (the catalog and work checks run inside a vm_problem)
//   vm_problem:       {"catalog", "work"?, "constraints"?, "objective"?}               then validate
//   vm_options:       {"method"?, "pareto"?, "node_budget"?, "evaluation_budget"?, "relative_gap"?}
//                                                                                      then validate
//   gpu_compute:      {"alpha_c_s", "beta_c_s"}                                        then validate
//   ring_allreduce:   {"parameter_bytes", "intra_node_bytes_per_s", "inter_node_bytes_per_s",
//                      "latency_s"?}                                                   then validate
//   sync_vm_workload: {"gpu_types": {GPU: gpu_compute}, "instance_gpu_types": {INSTANCE: GPU},
//                      "network": {"alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s", "gamma"},
//                      "ring"? (null: none), "policy"?, "basis"?, "batch", "accumulation_steps"?}
//                     read on its own: structure and the fields' ranges, no catalog check
//   vm_request:       the members of vm_problem side by side with "workload" and "options"?:
//                     {"catalog", "work"?, "constraints"?, "objective"?, "workload", "options"?}
//                     then vm_request::validate ("workload.instance_gpu_types.p3.2xlarge", ...)
//   vm_offer_count:   {"type", "kind": price_kind, "count"}
//   vm_figures:       {"instances", "gpus", "samples_per_s", "usd_per_h", "samples_per_usd",
//                      "time_s" (null: no work), "cost_usd" (null: no work)}
//   vm_configuration: {"offers": [vm_offer_count], "figures": vm_figures}
//   vm_result:        {"status", "reason", "method", "best" (null: no plan), "objective_value"
//                      and "objective_bound" (each a number, "inf" or "-inf"; null: NaN, e.g. no
//                      plan), "counters", "frontier": [vm_configuration], "frontier_status" (null:
//                      no frontier asked), "frontier_counters"}
// The network's alpha_c_s and beta_c_s are not written (the model does not use them: each GPU
// type brings its own) and read back as 0.
// Included here, not at the top, so that this section is one contiguous block.
#include <dnnplan/solve/vm_recommend.hpp>
#include <dnnplan/solve/vm_request.hpp>

namespace dnnplan::detail::json_io {

template <>
struct enum_names<vm_objective> {
    static constexpr std::array<enum_entry<vm_objective>, 3> entries{{
        {to_string(vm_objective::min_cost), vm_objective::min_cost},
        {to_string(vm_objective::max_throughput), vm_objective::max_throughput},
        {to_string(vm_objective::max_samples_per_usd), vm_objective::max_samples_per_usd},
    }};
};

template <>
struct enum_names<vm_method> {
    static constexpr std::array<enum_entry<vm_method>, 2> entries{{
        {to_string(vm_method::branch_and_bound), vm_method::branch_and_bound},
        {to_string(vm_method::exhaustive), vm_method::exhaustive},
    }};
};

template <>
struct enum_names<batch_policy> {
    static constexpr std::array<enum_entry<batch_policy>, 2> entries{{
        {to_string(batch_policy::equal), batch_policy::equal},
        {to_string(batch_policy::balanced), batch_policy::balanced},
    }};
};

template <>
struct enum_names<batch_basis> {
    static constexpr std::array<enum_entry<batch_basis>, 2> entries{{
        {"per_replica", batch_basis::per_replica},
        {"global", batch_basis::global},
    }};
};

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_work& out) {
    const object_reader<Json> in(j, path, {"samples", "epochs", "dataset_samples"});
    in.optional("samples", out.samples);
    in.optional("epochs", out.epochs);
    in.optional("dataset_samples", out.dataset_samples);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_constraints& out) {
    const object_reader<Json> in(j, path,
                                 {"max_usd_per_h", "min_samples_per_s", "deadline_s", "max_instances",
                                  "max_distinct_types", "allowed_types", "allowed_price_kinds"});
    read_number_or_infinity(in, "max_usd_per_h", out.max_usd_per_h, false);
    in.optional("min_samples_per_s", out.min_samples_per_s);
    read_number_or_infinity(in, "deadline_s", out.deadline_s, false);
    in.optional("max_instances", out.max_instances);
    in.optional("max_distinct_types", out.max_distinct_types);
    in.optional("allowed_types", out.allowed_types);
    in.optional("allowed_price_kinds", out.allowed_price_kinds);
}

template <document Json>
void read_vm_problem_members(const object_reader<Json>& in, vm_problem& out) {
    in.required("catalog", out.catalog);
    in.optional("work", out.work);
    in.optional("constraints", out.constraints);
    in.optional("objective", out.objective);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_problem& out) {
    const object_reader<Json> in(j, path, {"catalog", "work", "constraints", "objective"});
    read_vm_problem_members(in, out);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_options& out) {
    const object_reader<Json> in(j, path, {"method", "pareto", "node_budget", "evaluation_budget", "relative_gap"});
    in.optional("method", out.method);
    in.optional("pareto", out.pareto);
    in.optional("node_budget", out.node_budget);
    in.optional("evaluation_budget", out.evaluation_budget);
    in.optional("relative_gap", out.relative_gap);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, gpu_compute& out) {
    const object_reader<Json> in(j, path, {"alpha_c_s", "beta_c_s"});
    in.required("alpha_c_s", out.alpha_c_s);
    in.required("beta_c_s", out.beta_c_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, ring_allreduce& out) {
    const object_reader<Json> in(j, path,
                                 {"parameter_bytes", "intra_node_bytes_per_s", "inter_node_bytes_per_s", "latency_s"});
    in.required("parameter_bytes", out.parameter_bytes);
    in.required("intra_node_bytes_per_s", out.intra_node_bytes_per_s);
    in.required("inter_node_bytes_per_s", out.inter_node_bytes_per_s);
    in.optional("latency_s", out.latency_s);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, sync_vm_workload& out) {
    const object_reader<Json> in(j, path,
                                 {"gpu_types", "instance_gpu_types", "network", "ring", "policy", "basis", "batch",
                                  "accumulation_steps"});
    in.required("gpu_types", out.gpu_types);
    in.required("instance_gpu_types", out.instance_gpu_types);
    {
        const object_reader<Json> n(in.at("network", "an object"), in.path_of("network"),
                                    {"alpha_n_s", "beta_n_s", "alpha_r_s", "beta_r_s", "gamma"});
        out.network = pollux_params{};
        n.required("alpha_n_s", out.network.alpha_n_s);
        n.required("beta_n_s", out.network.beta_n_s);
        n.required("alpha_r_s", out.network.alpha_r_s);
        n.required("beta_r_s", out.network.beta_r_s);
        n.required("gamma", out.network.gamma);
    }
    in.optional("ring", out.ring);
    in.optional("policy", out.policy);
    in.optional("basis", out.basis);
    in.required("batch", out.batch);
    in.optional("accumulation_steps", out.accumulation_steps);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_request& out) {
    const object_reader<Json> in(j, path, {"catalog", "work", "constraints", "objective", "workload", "options"});
    read_vm_problem_members(in, out.problem);
    in.required("workload", out.workload);
    in.optional("options", out.options);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_offer_count& out) {
    const object_reader<Json> in(j, path, {"type", "kind", "count"});
    in.required("type", out.type);
    in.required("kind", out.kind);
    in.required("count", out.count);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_figures& out) {
    const object_reader<Json> in(j, path,
                                 {"instances", "gpus", "samples_per_s", "usd_per_h", "samples_per_usd", "time_s",
                                  "cost_usd"});
    in.required("instances", out.instances);
    in.required("gpus", out.gpus);
    in.required("samples_per_s", out.samples_per_s);
    in.required("usd_per_h", out.usd_per_h);
    in.required("samples_per_usd", out.samples_per_usd);
    in.required("time_s", out.time_s);
    in.required("cost_usd", out.cost_usd);
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_configuration& out) {
    const object_reader<Json> in(j, path, {"offers", "figures"});
    in.required("offers", out.offers);
    in.required("figures", out.figures);
}

/// A number that may be NaN (null) or infinite ("inf", "-inf": the sign matters, JSON has none).
template <document Json>
void read_extended_number(const object_reader<Json>& in, std::string_view key, double& out) {
    const Json& v = in.at(key, "a number, \"inf\", \"-inf\" or null");
    if (v.is_null()) {
        out = std::numeric_limits<double>::quiet_NaN();
    } else if (v.is_string() && v.template get_ref<const typename Json::string_t&>() == "inf") {
        out = std::numeric_limits<double>::infinity();
    } else if (v.is_string() && v.template get_ref<const typename Json::string_t&>() == "-inf") {
        out = -std::numeric_limits<double>::infinity();
    } else if (v.is_number()) {
        read_value(tag{}, v, in.path_of(key), out);
    } else {
        fail(in.path_of(key), value_text(v), "a number, \"inf\", \"-inf\" or null");
    }
}

template <document Json>
void write_extended_number(Json& j, std::string_view key, double value) {
    if (std::isnan(value)) j[std::string(key)] = nullptr;
    else if (std::isinf(value)) j[std::string(key)] = value > 0 ? "inf" : "-inf";
    else j[std::string(key)] = value;
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, vm_result& out) {
    const object_reader<Json> in(j, path,
                                 {"status", "reason", "method", "best", "objective_value", "objective_bound", "counters",
                                  "frontier", "frontier_status", "frontier_counters"});
    in.required("status", out.status);
    in.required("reason", out.reason);
    in.required("method", out.method);
    in.required("best", out.best);
    read_extended_number(in, "objective_value", out.objective_value);
    read_extended_number(in, "objective_bound", out.objective_bound);
    in.required("counters", out.counters);
    in.required("frontier", out.frontier);
    in.required("frontier_status", out.frontier_status);
    in.required("frontier_counters", out.frontier_counters);
}

/// vm_constraints on its own: what can be checked without the catalog and the work.
inline void validate_vm_constraints_alone(const vm_constraints& c) {
    instance_catalog names;
    for (const auto& name : c.allowed_types) names.instances.push_back({.name = name});
    c.validate(names, true, "");
}

/// sync_vm_workload on its own: the fields' ranges, no catalog.
inline void validate_vm_workload_alone(const sync_vm_workload& w) {
    instance_catalog catalog;
    for (const auto& [instance, gpu] : w.instance_gpu_types) {
        static_cast<void>(gpu);
        catalog.instances.push_back({.name = instance});
    }
    w.validate(catalog, "");
}

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

template <detail::json_io::document Json>
void to_json(Json& j, vm_objective value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, vm_objective& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, vm_method value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, vm_method& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, batch_policy value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, batch_policy& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, batch_basis value) { j = std::string(detail::json_io::enum_name(value)); }
template <detail::json_io::document Json>
void from_json(const Json& j, batch_basis& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_work& w) {
    j = Json::object();
    j["samples"] = w.samples;
    j["epochs"] = w.epochs;
    j["dataset_samples"] = w.dataset_samples;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_work& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_constraints& c) {
    j = Json::object();
    detail::json_io::write_number_or_null(j, "max_usd_per_h", c.max_usd_per_h);
    j["min_samples_per_s"] = c.min_samples_per_s;
    detail::json_io::write_number_or_null(j, "deadline_s", c.deadline_s);
    j["max_instances"] = c.max_instances;
    j["max_distinct_types"] = c.max_distinct_types;
    j["allowed_types"] = c.allowed_types;
    j["allowed_price_kinds"] = c.allowed_price_kinds;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_constraints& out) {
    vm_constraints value;
    detail::json_io::read_root(j, value);
    detail::json_io::validate_vm_constraints_alone(value);
    out = std::move(value);
}

namespace detail::json_io {
template <document Json>
void write_vm_problem_members(Json& j, const vm_problem& p) {
    j["catalog"] = p.catalog;
    j["work"] = p.work;
    j["constraints"] = p.constraints;
    j["objective"] = p.objective;
}
}  // namespace detail::json_io

template <detail::json_io::document Json>
void to_json(Json& j, const vm_problem& p) {
    j = Json::object();
    detail::json_io::write_vm_problem_members(j, p);
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_problem& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_options& o) {
    j = Json::object();
    j["method"] = o.method;
    j["pareto"] = o.pareto;
    j["node_budget"] = o.node_budget;
    j["evaluation_budget"] = o.evaluation_budget;
    j["relative_gap"] = o.relative_gap;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_options& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const gpu_compute& c) {
    j = Json::object();
    j["alpha_c_s"] = c.alpha_c_s;
    j["beta_c_s"] = c.beta_c_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, gpu_compute& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const ring_allreduce& r) {
    j = Json::object();
    j["parameter_bytes"] = r.parameter_bytes;
    j["intra_node_bytes_per_s"] = r.intra_node_bytes_per_s;
    j["inter_node_bytes_per_s"] = r.inter_node_bytes_per_s;
    j["latency_s"] = r.latency_s;
}
template <detail::json_io::document Json>
void from_json(const Json& j, ring_allreduce& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const sync_vm_workload& w) {
    j = Json::object();
    Json gpus = Json::object();
    for (const auto& [name, compute] : w.gpu_types) gpus[name] = compute;
    j["gpu_types"] = std::move(gpus);
    Json instances = Json::object();
    for (const auto& [instance, gpu] : w.instance_gpu_types) instances[instance] = gpu;
    j["instance_gpu_types"] = std::move(instances);
    Json network = Json::object();
    network["alpha_n_s"] = w.network.alpha_n_s;
    network["beta_n_s"] = w.network.beta_n_s;
    network["alpha_r_s"] = w.network.alpha_r_s;
    network["beta_r_s"] = w.network.beta_r_s;
    network["gamma"] = w.network.gamma;
    j["network"] = std::move(network);
    if (w.ring) j["ring"] = *w.ring;
    else j["ring"] = nullptr;
    j["policy"] = w.policy;
    j["basis"] = w.basis;
    j["batch"] = w.batch;
    j["accumulation_steps"] = w.accumulation_steps;
}
template <detail::json_io::document Json>
void from_json(const Json& j, sync_vm_workload& out) {
    sync_vm_workload value;
    detail::json_io::read_root(j, value);
    detail::json_io::validate_vm_workload_alone(value);
    out = std::move(value);
}

/// The problem file: the members of vm_problem, "workload" and "options", side by side.
template <detail::json_io::document Json>
void to_json(Json& j, const vm_request& r) {
    j = Json::object();
    detail::json_io::write_vm_problem_members(j, r.problem);
    j["workload"] = r.workload;
    j["options"] = r.options;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_request& out) { detail::json_io::read_validated_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_offer_count& c) {
    j = Json::object();
    j["type"] = c.type;
    j["kind"] = c.kind;
    j["count"] = c.count;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_offer_count& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_figures& f) {
    j = Json::object();
    j["instances"] = f.instances;
    j["gpus"] = f.gpus;
    j["samples_per_s"] = f.samples_per_s;
    j["usd_per_h"] = f.usd_per_h;
    j["samples_per_usd"] = f.samples_per_usd;
    if (f.time_s) j["time_s"] = *f.time_s;
    else j["time_s"] = nullptr;
    if (f.cost_usd) j["cost_usd"] = *f.cost_usd;
    else j["cost_usd"] = nullptr;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_figures& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_configuration& c) {
    j = Json::object();
    j["offers"] = Json::array();
    for (const auto& o : c.offers) j["offers"].push_back(o);
    j["figures"] = c.figures;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_configuration& out) { detail::json_io::read_root(j, out); }

template <detail::json_io::document Json>
void to_json(Json& j, const vm_result& r) {
    j = Json::object();
    j["status"] = r.status;
    j["reason"] = r.reason;
    j["method"] = r.method;
    if (r.best) j["best"] = *r.best;
    else j["best"] = nullptr;
    detail::json_io::write_extended_number(j, "objective_value", r.objective_value);
    detail::json_io::write_extended_number(j, "objective_bound", r.objective_bound);
    j["counters"] = r.counters;
    j["frontier"] = Json::array();
    for (const auto& c : r.frontier) j["frontier"].push_back(c);
    if (r.frontier_status) j["frontier_status"] = *r.frontier_status;
    else j["frontier_status"] = nullptr;
    j["frontier_counters"] = r.frontier_counters;
}
template <detail::json_io::document Json>
void from_json(const Json& j, vm_result& out) { detail::json_io::read_root(j, out); }

/// The result as text, keys in the order of the layout above.
[[nodiscard]] inline std::string to_json_text(const vm_result& result, int indent = 2) {
    const nlohmann::ordered_json j = result;
    return j.dump(indent);
}

/// Reads a problem file (examples/data/vm_problem.json). Malformed JSON: parse_error("byte N",
/// ...); anything else wrong: invalid_input naming the field ("workload.gpu_types.T4.beta_c_s").
[[nodiscard]] inline vm_request parse_vm_request(std::istream& in) {
    return detail::json_io::read_document<vm_request>(in);
}

[[nodiscard]] inline vm_request parse_vm_request(std::string_view text) {
    return detail::json_io::read_text<vm_request>(text);
}

[[nodiscard]] inline vm_result parse_vm_result(std::string_view text) {
    return detail::json_io::read_text<vm_result>(text);
}

}  // namespace dnnplan

// ---- end of the VM recommender section ----------------------------------------------------------
