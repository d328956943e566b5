#pragma once
// JSON checks shared by the io tests: a value written, read back and written again gives the same
// document through both document types; a document is rejected naming `field`.

#include <dnnplan/io/json.hpp>

#include <catch2/catch.hpp>

#include <string>

namespace dnnplan_test {

/// Written, read back and written again: the same document (every field survives), through
/// both document types.
template <class T>
void check_round_trip(const T& value) {
    using nlohmann::ordered_json;
    const nlohmann::json plain = value;
    const ordered_json ordered = value;
    CHECK(nlohmann::json(plain.get<T>()) == plain);
    CHECK(ordered_json(ordered.get<T>()) == ordered);
    CHECK(ordered_json(ordered_json::parse(ordered.dump()).get<T>()) == ordered);
}

/// Reading `j` as a T throws invalid_input naming `field` (and containing `text`, if given).
template <class T>
void check_rejected(const nlohmann::ordered_json& j, const std::string& field, const std::string& text = "") {
    INFO(j.dump());
    try {
        static_cast<void>(j.get<T>());
        FAIL("accepted");
    } catch (const dnnplan::invalid_input& e) {
        CHECK(e.field() == field);
        if (!text.empty()) CHECK_THAT(e.what(), Catch::Matchers::Contains(text));
    }
}

}  // namespace dnnplan_test
