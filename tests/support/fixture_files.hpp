#pragma once
// The fixture files of a folder whose names start with a prefix, with their text (tests that
// check every file of a kind, e.g. that each fuzz seed is accepted by its reader).

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan_test {

/// (file name, text) of every file in tests/fixtures/<folder> whose name starts with `prefix`,
/// sorted by name; fails the test when there is none.
inline std::vector<std::pair<std::string, std::string>> fixture_files(std::string_view folder, std::string_view prefix) {
    std::vector<std::pair<std::string, std::string>> out;
    const std::filesystem::path dir = std::filesystem::path(DNNPLAN_TEST_FIXTURES_DIR) / folder;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || !name.starts_with(prefix)) continue;
        std::ifstream in(entry.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        out.emplace_back(name, text.str());
    }
    std::sort(out.begin(), out.end());
    INFO("tests/fixtures/" << folder << "/" << prefix << "*");
    REQUIRE_FALSE(out.empty());
    return out;
}

}  // namespace dnnplan_test
