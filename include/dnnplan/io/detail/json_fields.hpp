#pragma once
// The field tables (io/detail/json_core.hpp has the rules): each record type of a domain header
// says its fields once (json_fields<T>), with their rule (required, optional, unbounded, ...) and
// older spellings; the record reader, the writer (io/detail/json_writers.hpp) and the list of
// allowed keys all come from that table.

#include <dnnplan/io/detail/json_expected.hpp>
#include <dnnplan/io/detail/json_object.hpp>
#include <dnnplan/io/detail/json_paths.hpp>
#include <dnnplan/io/detail/json_readers.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace dnnplan::detail::json_io {

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

template <document Json, custom_json_value T>
void read_value(tag, const Json& j, const std::string& path, T& out) {
    json_value_io<T>::read(j, path, out);
}

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

}  // namespace dnnplan::detail::json_io
