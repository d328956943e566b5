// Fuzzes the readers of every planner's result (the first byte picks the type): an accepted result
// round-trips, with its numbers finite or none (fuzz_support.hpp).
#include <dnnplan/io/json.hpp>

#include "fuzz_support.hpp"

#include <tuple>

namespace {

using types = std::tuple<dnnplan::spot_result, dnnplan::search_outcome, dnnplan::vm_result, dnnplan::pipedream_result,
                         dnnplan::pipeline_dp_result, dnnplan::hybrid_result, dnnplan::replan_result>;

template <std::size_t... I>
void dispatch(std::size_t which, std::string_view text, std::index_sequence<I...>) {
    const auto one = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        if (which != K) return;
        using T = std::tuple_element_t<K, types>;
        T value{};
        if (dnnplan_fuzz::accepted([&] { value = dnnplan::parse_json<T>(text); })) dnnplan_fuzz::check_round_trip(value);
    };
    (one(std::integral_constant<std::size_t, I>{}), ...);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    constexpr std::size_t count = std::tuple_size_v<types>;
    dispatch(data[0] % count, dnnplan_fuzz::text_of(data + 1, size - 1), std::make_index_sequence<count>{});
    return 0;
}
