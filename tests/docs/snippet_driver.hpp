#pragma once
// What tests/docs/extract_snippets.cmake generates and tests/docs/snippets.cpp runs: every
// program among the C++ snippets of README.md and docs/.

#include <vector>

namespace dnnplan_doc_snippets {

struct program {
    const char* name;       ///< "docs/architecture.md (snippet 3)"
    int (*run)();           ///< the snippet's main()
    int has_expected;       ///< 1 when the page shows what it prints
    const char* expected;   ///< that output, exactly
};

/// Every program snippet, in page order (defined in the generated translation unit).
const std::vector<program>& programs();

}  // namespace dnnplan_doc_snippets
