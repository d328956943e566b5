// Runs every program among the C++ snippets of README.md and docs/ (the rest are compiled only;
// tests/docs/extract_snippets.cmake) and checks what it prints when the page shows it.

#include "snippet_driver.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define DNNPLAN_SNIPPETS_CAPTURE 1
#endif

namespace {

/// Runs `run` with its standard output (C and C++ streams) captured in a temporary file.
std::string captured_output(int (*run)(), int& code) {
#ifdef DNNPLAN_SNIPPETS_CAPTURE
    std::cout.flush();
    std::fflush(stdout);
    std::FILE* sink = std::tmpfile();
    REQUIRE(sink != nullptr);
    const int saved = dup(fileno(stdout));
    REQUIRE(dup2(fileno(sink), fileno(stdout)) >= 0);
    code = run();
    std::cout.flush();
    std::fflush(stdout);
    dup2(saved, fileno(stdout));
    close(saved);
    std::string text;
    std::rewind(sink);
    for (int c = std::fgetc(sink); c != EOF; c = std::fgetc(sink)) text += static_cast<char>(c);
    std::fclose(sink);
    return text;
#else
    code = run();
    return {};
#endif
}

}  // namespace

TEST_CASE("every C++ program in README.md and docs/ runs and prints what its page says") {
    const auto& programs = dnnplan_doc_snippets::programs();
    REQUIRE(!programs.empty());
    for (const auto& p : programs) {
        INFO(p.name);
        int code = -1;
        const std::string printed = captured_output(p.run, code);
        CHECK(code == 0);
#ifdef DNNPLAN_SNIPPETS_CAPTURE
        if (p.has_expected) CHECK(printed == std::string(p.expected));
#endif
    }
}
