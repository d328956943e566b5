#pragma once
// The machinery every JSON header of io/ shares (the only place, with them, that includes
// nlohmann/json): paths in errors, strict scalar readers, field tables, enum text, finite-number
// checks on writing, and the text parser. The per-domain headers (io/spot_provision_json.hpp, ...) declare,
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
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
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
    std::string out(path);
    out += '[';
    out += std::to_string(index);
    out += ']';
    return out;
}

/// The field name of a path: the path, or "(root)" for the document itself.
[[nodiscard]] inline std::string field_of(std::string_view path) {
    return path.empty() ? std::string(root_field) : std::string(path);
}

[[noreturn]] inline void fail(std::string_view path, std::string value, std::string expected) {
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

// ---- scalar and container readers ------------------------------------------------------------

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
        if (!(d >= 0.0 && d < 18446744073709551616.0 && std::trunc(d) == d)) fail(path, value_text(j), integer_expected<Int>());
        value = static_cast<std::uint64_t>(d);
    } else {
        fail(path, value_text(j), integer_expected<Int>());
    }
    if (value > max) fail(path, value_text(j), integer_expected<Int>());
    out = static_cast<Int>(value);
}

/// An integer that may be negative (degrees of freedom of a fit with more parameters than samples).
struct signed_integer {
    std::int64_t& value;
};

template <document Json>
void read_value(tag, const Json& j, const std::string& path, signed_integer out) {
    constexpr std::string_view expected = "an integer in [-9223372036854775808, 9223372036854775807]";
    if (j.is_number_integer() && !j.is_number_unsigned()) {
        out.value = j.template get<std::int64_t>();
    } else if (j.is_number_unsigned()) {
        if (j.template get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            fail(path, value_text(j), std::string(expected));
        out.value = static_cast<std::int64_t>(j.template get<std::uint64_t>());
    } else {
        fail(path, value_text(j), std::string(expected));
    }
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, bool& out) {
    if (!j.is_boolean()) fail(path, value_text(j), "true or false");
    out = j.template get<bool>();
}

/// JSON text is valid UTF-8 (the parser rejects anything else), so strings need no check here.
template <document Json>
void read_value(tag, const Json& j, const std::string& path, std::string& out) {
    if (!j.is_string()) fail(path, value_text(j), "a string");
    out = j.template get_ref<const typename Json::string_t&>();
}

template <document Json, named_enum Enum>
void read_value(tag, const Json& j, const std::string& path, Enum& out) {
    if (j.is_string())
        if (const std::optional<Enum> value = enum_from_string<Enum>(j.template get_ref<const typename Json::string_t&>())) {
            out = *value;
            return;
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
    /// `keys`: every key read; `shown`: the ones an error lists (the current spellings; by default
    /// all). Empty entries are ignored.
    object_reader(const Json& j, std::string path, std::span<const std::string_view> keys,
                  std::span<const std::string_view> shown = {})
        : object_(j), path_(std::move(path)) {
        if (!j.is_object()) fail(path_, value_text(j), "an object");
        if (shown.empty()) shown = keys;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!it.key().empty() && std::find(keys.begin(), keys.end(), std::string_view(it.key())) != keys.end()) continue;
            std::string allowed = "one of the keys ";
            bool first = true;
            for (const std::string_view key : shown) {
                if (key.empty()) continue;
                if (!first) allowed += ", ";
                first = false;
                allowed += key;
            }
            fail(member_path(path_, it.key()), value_text(it.value()), std::move(allowed));
        }
    }
    object_reader(const Json& j, std::string path, std::initializer_list<std::string_view> keys)
        : object_reader(j, std::move(path), std::span<const std::string_view>(keys.begin(), keys.size())) {}

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
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

// ---- field tables ----------------------------------------------------------------------------

enum class field_rule {
    required,   ///< must be present
    optional,   ///< absent: the struct's default (always written)
    unbounded,  ///< null or absent: no limit (+inf, or the type's largest integer); written as null then
    unbounded_below,  ///< null or absent: -inf; written as null then
    signed_required,  ///< must be present; an integer that may be negative
};

template <class Owner, class Member>
struct field {
    std::string_view key;
    Member Owner::*member;
    field_rule rule = field_rule::required;
    std::string_view old_key{};  ///< the key's spelling in an older version, still read (never written)

    /// The same field, also read under its older name `old` (not both in one object).
    [[nodiscard]] constexpr field formerly(std::string_view old) const {
        field f = *this;
        f.old_key = old;
        return f;
    }
};

/// A field of a member: a request writes its problem's fields beside its "options".
template <class Owner, class Outer, class Inner>
struct nested_field {
    std::string_view key;
    Outer Owner::*outer;
    Inner Outer::*inner;
    field_rule rule = field_rule::required;
};

/// A key of an older version, still read (never written): its value goes to `outer.inner`. It may
/// not be given together with the key that replaced it (`replacement`).
template <class Owner, class Outer, class Inner>
struct deprecated_field {
    std::string_view key;
    Outer Owner::*outer;
    Inner Outer::*inner;
    std::string_view replacement;
};

template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> required(std::string_view key, Member Owner::*member) {
    return {key, member, field_rule::required};
}
template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> optional(std::string_view key, Member Owner::*member) {
    return {key, member, field_rule::optional};
}
template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> unbounded(std::string_view key, Member Owner::*member) {
    return {key, member, field_rule::unbounded};
}
template <class Owner>
[[nodiscard]] constexpr field<Owner, std::int64_t> signed_required(std::string_view key, std::int64_t Owner::*member) {
    return {key, member, field_rule::signed_required};
}
template <class Owner, class Member>
[[nodiscard]] constexpr field<Owner, Member> unbounded_below(std::string_view key, Member Owner::*member) {
    return {key, member, field_rule::unbounded_below};
}
template <class Owner, class Outer, class Inner>
[[nodiscard]] constexpr nested_field<Owner, Outer, Inner> required(std::string_view key, Outer Owner::*outer, Inner Outer::*inner) {
    return {key, outer, inner, field_rule::required};
}
template <class Owner, class Outer, class Inner>
[[nodiscard]] constexpr nested_field<Owner, Outer, Inner> optional(std::string_view key, Outer Owner::*outer, Inner Outer::*inner) {
    return {key, outer, inner, field_rule::optional};
}
template <class Owner, class Outer, class Inner>
[[nodiscard]] constexpr deprecated_field<Owner, Outer, Inner> deprecated(std::string_view key, Outer Owner::*outer,
                                                                         Inner Outer::*inner, std::string_view replacement) {
    return {key, outer, inner, replacement};
}

/// Specialised by each domain header for its record types: `static constexpr auto fields =
/// std::tuple{required("name", &T::name), ...};` in the order they are written. Optionally
/// `static void check(const object_reader<Json>&, const T&)` for rules between fields that the
/// structure alone decides (sizes that must agree).
template <class T>
struct json_fields;

template <class T>
concept json_record = requires { json_fields<T>::fields; };

/// A key whose value is fixed (a document's kind, e.g. "model": "ps-async"): written always, and
/// when read (optional) it must be that value.
struct constant_field {
    std::string_view key;
    std::string_view value;
};

[[nodiscard]] constexpr constant_field constant(std::string_view key, std::string_view value) { return {key, value}; }

/// Specialised for a value type that is neither a record nor a container of them (a matrix):
/// `template <class Json> static void read(const Json&, const std::string& path, T&)` and
/// `template <class Json> static Json write(const T&, std::string_view path)`.
template <class T>
struct json_value_io;

template <class T>
concept custom_json_value = requires { sizeof(json_value_io<T>); };

template <class T>
[[nodiscard]] constexpr T unbounded_value() noexcept {
    if constexpr (std::floating_point<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
}

template <class F>
struct is_deprecated_field : std::false_type {};
template <class Owner, class Outer, class Inner>
struct is_deprecated_field<deprecated_field<Owner, Outer, Inner>> : std::true_type {};

template <class F>
struct is_nested_field : std::false_type {};
template <class Owner, class Outer, class Inner>
struct is_nested_field<nested_field<Owner, Outer, Inner>> : std::true_type {};

template <class F>
[[nodiscard]] constexpr std::string_view old_key_of(const F& f) {
    if constexpr (requires { f.old_key; }) return f.old_key;
    else return {};
}

/// Every key a record's table reads (its fields, their older names, deprecated keys); entries
/// without an older name are empty (object_reader ignores them).
template <class Tuple>
[[nodiscard]] constexpr auto keys_of(const Tuple& fields) {
    return std::apply(
        [](const auto&... f) { return std::array<std::string_view, 2 * sizeof...(f)>{f.key..., old_key_of(f)...}; }, fields);
}

template <document Json, class Owner, class Member>
void read_field(const object_reader<Json>& in, const field<Owner, Member>& f, Owner& out) {
    if (!f.old_key.empty()) {
        if (const Json* old = in.find(f.old_key)) {
            if (in.find(f.key) != nullptr)
                fail(in.path_of(f.old_key), value_text(*old),
                     "no value here when " + in.path_of(f.key) + " is given (" + std::string(f.old_key) +
                         " is its deprecated spelling)");
            read_value(tag{}, *old, in.path_of(f.old_key), out.*f.member);
            return;
        }
    }
    switch (f.rule) {
        case field_rule::required: in.required(f.key, out.*f.member); break;
        case field_rule::optional: in.optional(f.key, out.*f.member); break;
        case field_rule::signed_required:
            if constexpr (std::is_same_v<Member, std::int64_t>)
                read_value(tag{}, in.at(f.key, "an integer"), in.path_of(f.key), signed_integer{out.*f.member});
            break;
        case field_rule::unbounded:
        case field_rule::unbounded_below:
            if constexpr (std::is_arithmetic_v<Member> && !std::is_same_v<Member, bool>) {
                std::optional<Member> value;
                in.optional(f.key, value);
                const Member none = f.rule == field_rule::unbounded ? unbounded_value<Member>() : -unbounded_value<Member>();
                out.*f.member = value ? *value : none;
            }
            break;
    }
}

template <document Json, class Owner>
void read_field(const object_reader<Json>& in, const constant_field& f, Owner&) {
    if (const Json* value = in.find(f.key))
        if (!value->is_string() || value->template get_ref<const typename Json::string_t&>() != f.value)
            fail(in.path_of(f.key), value_text(*value), '"' + std::string(f.value) + '"');
}

template <document Json, custom_json_value T>
void read_value(tag, const Json& j, const std::string& path, T& out) {
    json_value_io<T>::read(j, path, out);
}

template <document Json, class Owner, class Outer, class Inner>
void read_field(const object_reader<Json>& in, const nested_field<Owner, Outer, Inner>& f, Owner& out) {
    if (f.rule == field_rule::required) in.required(f.key, (out.*f.outer).*f.inner);
    else in.optional(f.key, (out.*f.outer).*f.inner);
}

template <document Json, class Owner, class Outer, class Inner>
void read_field(const object_reader<Json>& in, const deprecated_field<Owner, Outer, Inner>& f, Owner& out) {
    const Json* value = in.find(f.key);
    if (value == nullptr) return;
    if (in.find(f.replacement) != nullptr)
        fail(in.path_of(f.key), value_text(*value),
             "no value here when " + in.path_of(f.replacement) + " is given (" + std::string(f.key) +
                 " is its deprecated spelling)");
    read_value(tag{}, *value, in.path_of(f.key), (out.*f.outer).*f.inner);
}

/// The keys an error lists: the current spellings (deprecated keys left out).
template <class Tuple>
[[nodiscard]] constexpr auto current_keys_of(const Tuple& fields) {
    return std::apply(
        [](const auto&... f) {
            return std::array<std::string_view, sizeof...(f)>{
                (is_deprecated_field<std::remove_cvref_t<decltype(f)>>::value ? std::string_view() : f.key)...};
        },
        fields);
}

template <document Json, json_record T>
void read_value(tag, const Json& j, const std::string& path, T& out) {
    static constexpr auto keys = keys_of(json_fields<T>::fields);
    static constexpr auto shown = current_keys_of(json_fields<T>::fields);
    const object_reader<Json> in(j, path, std::span<const std::string_view>(keys), std::span<const std::string_view>(shown));
    std::apply([&](const auto&... f) { (read_field(in, f, out), ...); }, json_fields<T>::fields);
    if constexpr (requires { json_fields<T>::check(in, out); }) json_fields<T>::check(in, out);
}

// ---- writers ---------------------------------------------------------------------------------

/// A value as JSON. Doubles must be finite: JSON has no infinity, and nlohmann would write null,
/// which does not read back as the number; results say "none" with an empty optional instead.
template <document Json, class T>
[[nodiscard]] Json write_value(const T& value, std::string_view path);

template <document Json, class T>
void write_fields(Json& j, const T& value, std::string_view path) {
    std::apply(
        [&](const auto&... f) {
            const auto write_one = [&](const auto& fd) {
                if constexpr (std::is_same_v<std::remove_cvref_t<decltype(fd)>, constant_field>) {
                    j[std::string(fd.key)] = std::string(fd.value);
                } else if constexpr (is_nested_field<std::remove_cvref_t<decltype(fd)>>::value) {
                    j[std::string(fd.key)] = write_value<Json>((value.*fd.outer).*fd.inner, member_path(path, fd.key));
                } else if constexpr (!is_deprecated_field<std::remove_cvref_t<decltype(fd)>>::value) {
                    using member_type = std::remove_cvref_t<decltype(value.*fd.member)>;
                    const auto& member = value.*fd.member;
                    bool none = false;
                    if constexpr (std::is_arithmetic_v<member_type> && !std::is_same_v<member_type, bool>)
                        none = (fd.rule == field_rule::unbounded && member == unbounded_value<member_type>()) ||
                               (fd.rule == field_rule::unbounded_below && member == -unbounded_value<member_type>());
                    if (none) j[std::string(fd.key)] = nullptr;
                    else j[std::string(fd.key)] = write_value<Json>(member, member_path(path, fd.key));
                }
            };
            (write_one(f), ...);
        },
        json_fields<T>::fields);
}

template <document Json, class T>
[[nodiscard]] Json write_value(const T& value, std::string_view path) {
    if constexpr (std::same_as<T, bool> || std::same_as<T, std::string> || json_integer<T>) {
        return Json(value);
    } else if constexpr (std::floating_point<T>) {
        if (!std::isfinite(value))
            throw error("cannot write " + field_of(path) + " = " + format_number(value) +
                        " as JSON (no infinity or NaN): a result must say none with null instead");
        return Json(value);
    } else if constexpr (named_enum<T>) {
        return Json(std::string(to_string(value)));
    } else if constexpr (is_optional<T>::value) {
        return value ? write_value<Json>(*value, path) : Json(nullptr);
    } else if constexpr (is_vector<T>::value) {
        Json out = Json::array();
        for (std::size_t i = 0; i < value.size(); ++i) out.push_back(write_value<Json>(value[i], element_path(path, i)));
        return out;
    } else if constexpr (requires { value.begin()->first; value.begin()->second; }) {  // a map by name
        Json out = Json::object();
        for (const auto& [key, element] : value) out[key] = write_value<Json>(element, member_path(path, key));
        return out;
    } else if constexpr (json_record<T>) {
        Json out = Json::object();
        write_fields(out, value, path);
        return out;
    } else if constexpr (custom_json_value<T>) {
        return json_value_io<T>::template write<Json>(value, path);
    } else {
        Json out;
        to_json(out, value);  // a type with its own writer, found by argument-dependent lookup
        return out;
    }
}

// ---- text ------------------------------------------------------------------------------------

/// Builds the document from nlohmann's SAX events, so that a malformed text (including a number
/// too large for a double, which nlohmann reports as out_of_range) becomes one parse_error with
/// its byte position, and no nlohmann exception is thrown at all. Iterative: nesting depth is
/// not limited by the stack. A key given twice in one object is found in O(1) per key.
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
        keys_.emplace_back();
        return true;
    }
    bool key(string_t& name) {
        Json& object = *stack_.back();
        if (!keys_.back().insert(name).second) {  // strict: a key twice in one object is an error
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
        keys_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        stack_.push_back(add(Json::value_t::array));
        keys_.emplace_back();
        return true;
    }
    bool end_array() {
        stack_.pop_back();
        keys_.pop_back();
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
    std::vector<std::unordered_set<string_t>> keys_;  // the keys of each open container (empty for arrays)
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
        if (!builder.duplicate_key().empty()) throw invalid_input(builder.duplicate_key(), "given twice", "each key once in its object");
        throw dnnplan::parse_error("byte " + std::to_string(builder.error_position()), parse_message(builder.error_message()));
    }
    return document;
}

[[nodiscard]] inline nlohmann::ordered_json parse_text(std::string_view text) {
    // A pointer range: nlohmann reads exactly these bytes (no terminating NUL needed).
    return parse_document(text.data(), text.data() + text.size());
}

/// The fields renamed since dnnplan 0.1 (the field tables' formerly() and deprecated() keys), as
/// (current path suffix, key of 0.1): a validate() error on a field the document spells the old
/// way names it as written.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 7> renamed_fields{{
    {"fixed_s", "alpha_c_s"},
    {"per_sample_s", "beta_c_s"},
    {"budget.max_nodes", "node_budget"},
    {"budget.max_evaluations", "evaluation_budget"},
    {"budget.max_time_s", "time_budget_s"},
    {"sliding_window.paper_bounds", "sliding_window_paper_bounds"},
    {"sliding_window.wrap_around", "sliding_window_wrap_around"},
}};

/// The value at `path` in the document (object keys joined with '.', which a key may itself
/// contain: the longest key that fits is taken; array elements as [i]); nullptr when absent.
template <document Json>
[[nodiscard]] const Json* value_at(const Json& root, std::string_view path) {
    const Json* node = &root;
    while (!path.empty()) {
        if (path.front() == '[') {
            const auto close = path.find(']');
            if (close == std::string_view::npos || !node->is_array()) return nullptr;
            std::size_t index = 0;
            for (const char c : path.substr(1, close - 1)) {
                if (c < '0' || c > '9') return nullptr;
                index = index * 10 + static_cast<std::size_t>(c - '0');
            }
            if (index >= node->size()) return nullptr;
            node = &(*node)[index];
            path.remove_prefix(close + 1);
        } else {
            if (!node->is_object()) return nullptr;
            const Json* next = nullptr;
            std::size_t used = 0;
            for (auto it = node->begin(); it != node->end(); ++it) {
                const std::string_view key = it.key();
                const bool fits = path.starts_with(key) && (path.size() == key.size() || path[key.size()] == '.' || path[key.size()] == '[');
                if (fits && key.size() >= used) {
                    next = &it.value();
                    used = key.size();
                }
            }
            if (next == nullptr) return nullptr;
            node = next;
            path.remove_prefix(used);
        }
        if (!path.empty() && path.front() == '.') path.remove_prefix(1);
    }
    return node;
}

/// `e` with its field named as the document spells it, when that is a key of 0.1 (renamed_fields).
template <document Json>
[[nodiscard]] invalid_input as_written(const Json& document, const invalid_input& e) {
    const std::string_view field = e.field();
    for (const auto& [current, old] : renamed_fields) {
        if (!field.ends_with(current)) continue;
        const std::size_t cut = field.size() - current.size();
        if (cut > 0 && field[cut - 1] != '.') continue;
        const std::string_view parent = cut > 0 ? field.substr(0, cut - 1) : std::string_view();
        const Json* object = value_at(document, parent);
        if (object == nullptr || !object->is_object()) continue;
        const std::string_view first = current.substr(0, current.find('.'));
        if (object->contains(std::string(first)) || !object->contains(std::string(old))) continue;
        std::string renamed(parent);
        if (!renamed.empty()) renamed += '.';
        renamed += old;
        return invalid_input(renamed, e.value(), e.expected() + " (" + std::string(old) + " is read as " + std::string(current) + ")");
    }
    return e;
}

/// Reads a whole document into `out` (unchanged on failure) and runs the type's validate() at the
/// document root (fields named without a prefix, as the document spells them).
template <document Json, class T>
void read_root(const Json& j, T& out) {
    T value{};
    try {
        read_value(tag{}, j, std::string(), value);
    } catch (const nlohmann::json::exception& e) {
        // Unreachable: every access above checks the value's type first. Should one not, the
        // caller still gets a dnnplan::error, as these headers promise.
        throw invalid_input(std::string(root_field), "?", std::string("a document the reader can access: ") + e.what());
    }
    if constexpr (requires { value.validate(std::string_view()); }) {
        try {
            value.validate("");
        } catch (const invalid_input& e) {
            throw as_written(j, e);
        }
    }
    out = std::move(value);
}

}  // namespace dnnplan::detail::json_io

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
