#pragma once
// JSON checks shared by the io tests: a value written, read back and written again gives the same
// document through both document types and through text; a document is rejected naming `field`.
// Only the JSON machinery is included here (io/detail/json_core.hpp): each test file includes the
// io header of its own domain, so that it compiles only what it tests.

#include <dnnplan/core/error.hpp>
#include <dnnplan/io/detail/json_core.hpp>

#include <catch2/catch.hpp>

#include <concepts>
#include <optional>
#include <string>
#include <string_view>

namespace dnnplan_test {

/// Written, read back and written again: the same document (every field survives), through
/// both document types and through text (to_json_text / parse_json<T>); for a type with ==, the
/// value read back equals the original.
template <class T>
void check_round_trip(const T& value) {
    using nlohmann::ordered_json;
    if constexpr (dnnplan::named_enum<T>) CHECK(dnnplan::to_json_text(value) == '"' + std::string(to_string(value)) + '"');
    {
        const nlohmann::json plain = value;
        const ordered_json ordered = value;
        INFO(ordered.dump());
        CHECK(nlohmann::json(plain.get<T>()) == plain);
        CHECK(ordered_json(ordered.get<T>()) == ordered);
        CHECK(ordered_json(ordered_json::parse(ordered.dump()).get<T>()) == ordered);
        const std::string text = dnnplan::to_json_text(value);
        CHECK(dnnplan::to_json_text(dnnplan::parse_json<T>(text)) == text);
        const std::string line = dnnplan::to_json_text(value, -1);
        CHECK(line == ordered.dump());  // to_json_text is the ordered document, keys in documented order
        CHECK(dnnplan::to_json_text(dnnplan::parse_json<T>(line), -1) == line);
        if constexpr (std::equality_comparable<T>) {
            CHECK(plain.get<T>() == value);
            CHECK(ordered.get<T>() == value);
            CHECK(dnnplan::parse_json<T>(text) == value);
        }
    }
}

/// The invalid_input that reading `j` as a T throws (none: accepted).
template <class T, class Json>
std::optional<dnnplan::invalid_input> rejection_of(const Json& j) {
    try {
        static_cast<void>(j.template get<T>());
    } catch (const dnnplan::invalid_input& e) {
        return e;
    }
    return std::nullopt;
}

/// The invalid_input that parse_json<T>(text) throws (none: accepted).
template <class T>
std::optional<dnnplan::invalid_input> text_rejection_of(std::string_view text) {
    try {
        static_cast<void>(dnnplan::parse_json<T>(text));
    } catch (const dnnplan::invalid_input& e) {
        return e;
    }
    return std::nullopt;
}

/// Reading `j` as a T throws invalid_input naming `field` (and containing `text`, if given), from
/// the document and from its text (when the text says the same: no NaN or infinity in `j`).
/// Returns the error (of the document).
template <class T>
dnnplan::invalid_input check_rejected(const nlohmann::ordered_json& j, const std::string& field, const std::string& text = "") {
    INFO(j.dump());
    const auto e = rejection_of<T>(j);
    if (!e) {
        FAIL_CHECK("accepted");
        return {"(accepted)", "", ""};
    }
    CHECK(e->field() == field);
    CHECK_FALSE(e->expected().empty());
    if (!text.empty()) CHECK_THAT(e->what(), Catch::Matchers::Contains(text));
    const std::string dumped = j.dump();
    if (nlohmann::ordered_json::parse(dumped) == j) {
        const auto from_text = text_rejection_of<T>(dumped);
        REQUIRE(from_text.has_value());
        CHECK(from_text->field() == e->field());
        CHECK(std::string(from_text->what()) == e->what());
    }
    return *e;
}

/// parse_json<T>(text) throws parse_error; returns its place ("byte N"), or "(no parse_error)".
template <class T>
std::string parse_error_where(std::string_view text) {
    try {
        static_cast<void>(dnnplan::parse_json<T>(text));
    } catch (const dnnplan::parse_error& e) {
        return e.where();
    } catch (const dnnplan::invalid_input& e) {
        return "(invalid_input " + e.field() + ")";
    }
    return "(no parse_error)";
}

}  // namespace dnnplan_test
