// Fuzzes the fitted-model readers (io/fit_json.hpp; the first byte picks the format): an accepted
// fit round-trips and predicts with an interval whose bounds are numbers or none, never a crash
// or a non-library error.
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/sync_data_parallel.hpp>
#include <dnnplan/io/fit_json.hpp>

#include "fuzz_support.hpp"

#include <cmath>
#include <vector>

namespace {

void check_interval(const dnnplan::interval& i) {
    if (!std::isfinite(i.value)) dnnplan_fuzz::violated("a prediction is finite", std::to_string(i.value));
    if (std::isnan(i.lower) || std::isnan(i.upper) || !(i.lower <= i.value && i.value <= i.upper))
        dnnplan_fuzz::violated("a prediction lies in its interval",
                               std::to_string(i.lower) + " <= " + std::to_string(i.value) + " <= " + std::to_string(i.upper));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view text = dnnplan_fuzz::text_of(data + 1, size - 1);
    switch (data[0] % 3) {
        case 0: {
            dnnplan::sync_fit_result fit;
            if (!dnnplan_fuzz::accepted([&] { fit = dnnplan::parse_sync_fit_result(text); })) return 0;
            dnnplan_fuzz::check_round_trip(fit);
            const dnnplan::sync_shape shape{.replicas = 8, .nodes = 2, .local_batch = 64};
            dnnplan::interval i;
            if (dnnplan_fuzz::accepted([&] { i = dnnplan::predict_step_time_with_interval(fit, shape); })) check_interval(i);
            break;
        }
        case 1: {
            dnnplan::ps_async_fit_result fit;
            if (!dnnplan_fuzz::accepted([&] { fit = dnnplan::parse_ps_async_fit_result(text); })) return 0;
            dnnplan_fuzz::check_round_trip(fit);
            const std::vector<std::int32_t> one_each(fit.types.size(), 1);
            dnnplan::interval i;
            if (dnnplan_fuzz::accepted([&] { i = dnnplan::predict_ps_async(fit, one_each); })) check_interval(i);
            break;
        }
        default: {
            dnnplan::ps_cluster_set set;
            if (dnnplan_fuzz::accepted([&] { set = dnnplan::parse_ps_cluster_set(text); })) dnnplan_fuzz::check_round_trip(set);
            break;
        }
    }
    return 0;
}
