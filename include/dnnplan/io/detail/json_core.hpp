#pragma once
// The machinery every JSON header of io/ shares (the only place, with them and the parts below,
// that includes nlohmann/json), one concern per part: paths in errors (json_paths.hpp), what each
// type expects (json_expected.hpp), strict scalar and container readers (json_readers.hpp),
// objects (json_object.hpp), field tables (json_fields.hpp), writers with finite-number checks
// (json_writers.hpp), the text parser (json_text.hpp) and reading a whole document
// (json_root.hpp); here, the entry points to_json, from_json, to_json_text and parse_json, and
// enums through nlohmann's own API. The per-domain headers (io/spot_provision_json.hpp, ...) declare,
// for each of their types, its fields once in a table (json_fields<T>) from which the reader, the
// writer and the list of allowed keys all come; a type whose layout a table cannot say (a result
// flattened for readability, a matrix) has its own pair of functions in its domain header.
//
// Rules (every domain header follows them):
//   - unknown keys are rejected (expected: the allowed keys); a missing required key is named with
//     the value "missing"; a key given twice in one object is an error;
//   - numbers must be JSON numbers and finite; integral fields take integers that fit their type
//     and are >= 0 (10 and 10.0 are read, 2.5, -1 and 1e20 are not);
//   - enums are their names (core/enum_text.hpp), deprecated spellings read too;
//   - "none" is null: an optional value that is absent, or a limit that is not set (+inf, or the
//     largest integer); a number a result cannot write finitely is a library bug and throws;
//   - after the structure, the type's validate() runs at the document root, so semantic rules give
//     the same errors as from C++;
//   - every failure is a dnnplan::invalid_input naming the field by its path from the document root
//     ("catalog.instances[2].quota"), or, for malformed text, a dnnplan::parse_error("byte N");
//     no nlohmann exception leaves these headers.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/io/detail/json_expected.hpp>
#include <dnnplan/io/detail/json_fields.hpp>
#include <dnnplan/io/detail/json_object.hpp>
#include <dnnplan/io/detail/json_paths.hpp>
#include <dnnplan/io/detail/json_readers.hpp>
#include <dnnplan/io/detail/json_root.hpp>
#include <dnnplan/io/detail/json_text.hpp>
#include <dnnplan/io/detail/json_writers.hpp>

#include <nlohmann/json.hpp>

#include <istream>
#include <string>
#include <string_view>

namespace dnnplan {

/// Every record type of the field tables, written and read through its table (found by
/// argument-dependent lookup: `nlohmann::json j = problem;`, `j.get<dnnplan::spot_request>()`).
template <detail::json_io::document Json, detail::json_io::json_record T>
void to_json(Json& j, const T& value) {
    j = detail::json_io::write_value<Json>(value, "");
}

template <detail::json_io::document Json, detail::json_io::json_record T>
void from_json(const Json& j, T& out) {
    detail::json_io::read_root(j, out);
}

/// Any type of these headers as JSON text, keys in their documented order. indent < 0: one line.
template <class T>
[[nodiscard]] std::string to_json_text(const T& value, int indent = 2) {
    nlohmann::ordered_json j;
    nlohmann::adl_serializer<T>::to_json(j, value);
    return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

/// A T read from a whole document: a stream or text. Malformed JSON: parse_error("byte N", ...);
/// anything else wrong: invalid_input naming the field.
template <class T>
[[nodiscard]] T parse_json(std::istream& in) {
    T out;
    nlohmann::adl_serializer<T>::from_json(detail::json_io::parse_document(in), out);
    return out;
}

template <class T>
[[nodiscard]] T parse_json(std::string_view text) {
    T out;
    nlohmann::adl_serializer<T>::from_json(detail::json_io::parse_text(text), out);
    return out;
}

}  // namespace dnnplan

/// Enums as their names, through nlohmann's own API too (`nlohmann::json j = solve_status::optimal`):
/// nlohmann converts every enum to its integer with an unconstrained template of its own, which a
/// to_json found by argument-dependent lookup could only tie with; a serializer specialised for
/// dnnplan's named enums is chosen instead.
namespace nlohmann {
template <class Enum>
    requires dnnplan::named_enum<Enum>
struct adl_serializer<Enum, void> {
    template <class Json>
    static void to_json(Json& j, Enum value) {
        j = std::string(dnnplan::to_string(value));
    }
    template <class Json>
    static void from_json(const Json& j, Enum& out) {
        dnnplan::detail::json_io::read_root(j, out);
    }
};
}  // namespace nlohmann
