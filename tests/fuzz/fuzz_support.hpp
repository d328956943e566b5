#pragma once
// What every fuzz harness of tests/fuzz/ checks, beyond "no crash" (which the sanitizers and
// libFuzzer's own limits check: -timeout, -rss_limit_mb):
//   - a reader either accepts its input or throws one of the library's errors (dnnplan::error):
//     anything else escaping is a bug;
//   - an accepted input writes to JSON, reads back, and writes again to the same text (a round
//     trip changes nothing): what the library accepts, it can store;
//   - every number a result holds is finite or explicitly none: writing one that is not throws
//     (io/detail/json_core.hpp), which fails the harness;
//   - a planner given a search budget stays within it (counters) and says so in its status.
// A property that fails aborts, so that libFuzzer keeps the input.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/result.hpp>
#include <dnnplan/core/status.hpp>
#include <dnnplan/io/detail/json_core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace dnnplan_fuzz {

[[noreturn]] inline void violated(const char* property, const std::string& detail) {
    std::fprintf(stderr, "fuzz property violated: %s\n%s\n", property, detail.c_str());
    std::abort();
}

[[nodiscard]] inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

/// value -> JSON text -> T -> JSON text: the two texts are equal.
template <class T>
void check_round_trip(const T& value) {
    std::string first;
    try {
        first = dnnplan::to_json_text(value, -1);
    } catch (const std::exception& e) {
        violated("an accepted value writes to JSON (finite numbers or none)", e.what());
    }
    T back;
    try {
        back = dnnplan::parse_json<T>(first);
    } catch (const std::exception& e) {
        violated("what the library writes, it reads back", first + "\n" + e.what());
    }
    const std::string second = dnnplan::to_json_text(back, -1);
    if (first != second) violated("a round trip changes nothing", first + "\n" + second);
}

/// Runs `read` on the input: a dnnplan::error is an accepted rejection (returns false), anything
/// else escaping is a bug.
template <class Read>
bool accepted(Read&& read) {
    try {
        read();
        return true;
    } catch (const dnnplan::error&) {
        return false;
    } catch (const std::exception& e) {
        violated("readers throw only dnnplan::error", e.what());
    }
}

/// A planner's result under `budget`: within it (by the granularity of one check), keeping the
/// rules of the one result shape, and everything writable.
template <class Plan, class Details>
void check_result(const dnnplan::solve_result<Plan, Details>& r, const dnnplan::search_budget& budget) {
    if (budget.max_nodes > 0 && r.counters.nodes > budget.max_nodes + 1)
        violated("nodes within the budget", std::to_string(r.counters.nodes) + " > " + std::to_string(budget.max_nodes));
    if (budget.max_evaluations > 0 && r.counters.evaluations > budget.max_evaluations + 1)
        violated("evaluations within the budget",
                 std::to_string(r.counters.evaluations) + " > " + std::to_string(budget.max_evaluations));
    if (const dnnplan::result_violation broken = dnnplan::result_shape_violation(r))
        violated("the one result shape (core/result.hpp)", broken.field + ": " + broken.rule + "; " + r.reason);
    check_round_trip(r);
}

/// A small budget for the planners under fuzzing: every search ends in well under a second.
inline constexpr dnnplan::search_budget small_budget{.max_nodes = 20'000, .max_evaluations = 20'000, .max_time_s = 0.0};

}  // namespace dnnplan_fuzz
