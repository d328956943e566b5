// Fuzzes from_json of every input and model-layer type of io/ (the first byte picks the type, the
// rest is the document): an accepted document round-trips (fuzz_support.hpp).
#include <dnnplan/io/json.hpp>

#include "fuzz_support.hpp"

#include <tuple>

namespace {

using types = std::tuple<dnnplan::instance_catalog, dnnplan::search_budget, dnnplan::spot_options, dnnplan::spot_problem,
                         dnnplan::spot_request, dnnplan::workload_profile, dnnplan::training_goals, dnnplan::cluster_space,
                         dnnplan::cluster_goals, dnnplan::exact_options, dnnplan::sliding_window_options, dnnplan::ps_network,
                         dnnplan::measured_worker_type, dnnplan::batch_memory_fit, dnnplan::affine_in_batch, dnnplan::layer_graph,
                         dnnplan::batch_profile, dnnplan::layer_chain, dnnplan::pipeline_config, dnnplan::pipedream_options,
                         dnnplan::pipedream_request, dnnplan::pipeline_dp_options, dnnplan::container_catalog,
                         dnnplan::hybrid_problem, dnnplan::hybrid_options, dnnplan::hybrid_request, dnnplan::vm_problem,
                         dnnplan::vm_options, dnnplan::vm_constraints, dnnplan::vm_work, dnnplan::sync_vm_workload,
                         dnnplan::vm_request, dnnplan::ring_allreduce, dnnplan::pollux_params, dnnplan::affine_time,
                         dnnplan::ps_cluster_set>;

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
