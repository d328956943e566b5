#pragma once
// JSON of the layer graph, the pipeline models and the partitioning planners
// (partition/, model/pipeline_1f1b.hpp, solve/pipeline_plan/solve.hpp). The rules of every JSON
// header are in io/detail/json_core.hpp; "?": optional (absent: the struct's default).
//   layer:               {"id", "description", "forward_s", "backward_s", "activation_bytes",
//                         "parameter_bytes", "optimizer_state_bytes"? (null: not profiled)}
//   layer_graph:         {"layers": [layer], "edges": [{"from": ID, "to": ID}]}; edges name layers
//                        by id; then layer_graph's constructor checks the rest (unique ids, sizes
//                        >= 0, acyclic) with the same field names
//   batch_time_sample:   {"batch", "time_s"}
//   chain_layer:         {"layer", "forward", "backward", "activation_bytes_per_sample",
//                         "parameter_bytes", "optimizer_state_bytes"}
//   layer_chain:         {"layers", "cut_bytes_per_sample" (one per layer), "removed_layers"}
//   batch_profile:       {"batch_size", "graph"}                                          then validate
//   layer_chain_options: {"optimizer_state_ratio"?}                                       then validate
//   pipeline_config:     {"micro_batch_size"?, "micro_batches"?, "bandwidth_bytes_per_s"?,
//                         "sync_overlap_ratio"?, "device_memory_bytes"?, "speed_ratio"?}  then validate
//   stage_breakdown:     {"samples_per_replica", "in_flight", "forward_s", "backward_s", "compute_s",
//                         "transfer_s", "allreduce_s", "exposed_sync_s", "memory_bytes", "fits",
//                         "stage_time_s" (null: +inf, the stage does not fit)}
//   pipedream_options:   {"machines", "bandwidths_bytes_per_s"?, "activation_compression_ratio"? (null:
//                         none), "straight_pipeline"?, "use_memory_constraint"?, "memory_bytes"?,
//                         "use_fewer_machines"?, "budget"?}                               then validate
//   pipedream_request:   {"graph", "options"}                                             then validate
//   pipedream_result:    the result shape; plan {"time_per_minibatch_s", "stages": [{"first_state",
//                         "end_state", "replicas", "compute_s", "layers"}]}; details {"num_states",
//                         "work": {"state_pairs", "cells", "swept_cells", "plain_candidates",
//                         "searches_retried", "threshold_decisions"}}
//   pipeline_dp_options: {"max_devices"?, "max_stages"?, "budget"?}                       then validate
//   pipeline_dp_request: {"options"}
//   pipeline_dp_result:  the result shape; plan {"time_s", "slowest_stage_s", "devices", "stages":
//                         [{"first_state", "end_state", "replicas", "stage_time_s"}]}; details
//                         {"by_devices": [plan or null]}

#include <dnnplan/core/affine_time.hpp>
#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/detail/json_core.hpp>
#include <dnnplan/model/concepts.hpp>
#include <dnnplan/model/pipeline_1f1b.hpp>
#include <dnnplan/fit/layer_chain.hpp>
#include <dnnplan/workload/layer_graph.hpp>
#include <dnnplan/partition/pipedream.hpp>
#include <dnnplan/partition/pipeline_dp.hpp>
#include <dnnplan/solve/pipeline_plan/solve.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan::detail::json_io {

template <>
struct json_fields<layer> {
    static constexpr auto fields = std::tuple{
        required("id", &layer::id),
        required("description", &layer::description),
        required("forward_s", &layer::forward_s),
        required("backward_s", &layer::backward_s),
        required("activation_bytes", &layer::activation_bytes),
        required("parameter_bytes", &layer::parameter_bytes),
        optional("optimizer_state_bytes", &layer::optimizer_state_bytes),
    };
};

/// The graph is validated while it is read: a layer_graph exists only validated. Its
/// constructor's fields ("layers[3].forward_s", "edges") are put under `path`.
template <document Json>
void read_value(tag, const Json& j, const std::string& path, layer_graph& out) {
    const object_reader<Json> in(j, path, {"layers", "edges"});
    std::vector<layer> layers;
    in.required("layers", layers);
    const auto rethrow_under_path = [&](const invalid_input& e) {
        if (path.empty()) throw e;
        throw invalid_input(member_path(path, e.field()), e.value(), e.expected());
    };
    // Ids are checked (unique, non-empty) before edges are mapped to indices through them.
    try {
        static_cast<void>(layer_graph(layers, {}));
    } catch (const invalid_input& e) {
        rethrow_under_path(e);
    }
    std::unordered_map<std::string_view, std::size_t> index_of;
    for (std::size_t i = 0; i < layers.size(); ++i) index_of.emplace(layers[i].id, i);

    const std::string edges_path = in.path_of("edges");
    const Json& edges_json = in.at("edges", "an array");
    if (!edges_json.is_array()) fail(edges_path, value_text(edges_json), "an array");
    std::vector<layer_edge> edges;
    edges.reserve(edges_json.size());
    for (std::size_t k = 0; k < edges_json.size(); ++k) {
        const object_reader<Json> edge(edges_json[k], element_path(edges_path, k), {"from", "to"});
        std::string from, to;
        edge.required("from", from);
        edge.required("to", to);
        const auto index = [&](std::string_view key, const std::string& id) {
            const auto it = index_of.find(id);
            if (it == index_of.end()) fail(edge.path_of(key), value_text(*edge.find(key)), "the id of a layer in layers");
            return it->second;
        };
        const std::size_t a = index("from", from), b = index("to", to);
        if (a == b)  // named by id here; the constructor would print the index
            fail(edge.path_of("to"), value_text(*edge.find("to")), "a layer other than its source " + from + " (no self-loops)");
        edges.push_back({.from = a, .to = b});
    }
    try {
        out = layer_graph(std::move(layers), std::move(edges));
    } catch (const invalid_input& e) {
        rethrow_under_path(e);
    }
}

template <>
struct json_fields<batch_time_sample> {
    static constexpr auto fields = std::tuple{required("batch", &batch_time_sample::batch), required("time_s", &batch_time_sample::time_s)};
};

template <>
struct json_fields<chain_layer> {
    static constexpr auto fields = std::tuple{
        required("layer", &chain_layer::layer),
        required("forward", &chain_layer::forward),
        required("backward", &chain_layer::backward),
        required("activation_bytes_per_sample", &chain_layer::activation_bytes_per_sample),
        required("parameter_bytes", &chain_layer::parameter_bytes),
        required("optimizer_state_bytes", &chain_layer::optimizer_state_bytes),
    };
};

template <>
struct json_fields<layer_chain> {
    static constexpr auto fields = std::tuple{
        required("layers", &layer_chain::layers),
        required("cut_bytes_per_sample", &layer_chain::cut_bytes_per_sample),
        required("removed_layers", &layer_chain::removed_layers),
    };
    template <class Json>
    static void check(const object_reader<Json>& in, const layer_chain& c) {
        if (c.cut_bytes_per_sample.size() != c.layers.size())
            fail(in.path_of("cut_bytes_per_sample"), std::to_string(c.cut_bytes_per_sample.size()) + " values",
                 "one value per layer (" + std::to_string(c.layers.size()) + ")");
    }
};

template <>
struct json_fields<batch_profile> {
    static constexpr auto fields = std::tuple{required("batch_size", &batch_profile::batch_size), required("graph", &batch_profile::graph)};
};

template <>
struct json_fields<layer_chain_options> {
    static constexpr auto fields = std::tuple{optional("optimizer_state_ratio", &layer_chain_options::optimizer_state_ratio)};
};

template <>
struct json_fields<pipeline_config> {
    static constexpr auto fields = std::tuple{
        optional("micro_batch_size", &pipeline_config::micro_batch_size),
        optional("micro_batches", &pipeline_config::micro_batches),
        optional("bandwidth_bytes_per_s", &pipeline_config::bandwidth_bytes_per_s),
        optional("sync_overlap_ratio", &pipeline_config::sync_overlap_ratio),
        optional("device_memory_bytes", &pipeline_config::device_memory_bytes),
        optional("speed_ratio", &pipeline_config::speed_ratio),
    };
};

template <>
struct json_fields<stage_breakdown> {
    static constexpr auto fields = std::tuple{
        required("samples_per_replica", &stage_breakdown::samples_per_replica),
        required("in_flight", &stage_breakdown::in_flight),
        required("forward_s", &stage_breakdown::forward_s),
        required("backward_s", &stage_breakdown::backward_s),
        required("compute_s", &stage_breakdown::compute_s),
        required("transfer_s", &stage_breakdown::transfer_s),
        required("allreduce_s", &stage_breakdown::allreduce_s),
        required("exposed_sync_s", &stage_breakdown::exposed_sync_s),
        required("memory_bytes", &stage_breakdown::memory_bytes),
        required("fits", &stage_breakdown::fits),
        unbounded("stage_time_s", &stage_breakdown::stage_time_s),
    };
};

template <>
struct json_fields<pipedream_options> {
    static constexpr auto fields = std::tuple{
        required("machines", &pipedream_options::machines),
        optional("bandwidths_bytes_per_s", &pipedream_options::bandwidths_bytes_per_s),
        optional("activation_compression_ratio", &pipedream_options::activation_compression_ratio),
        optional("straight_pipeline", &pipedream_options::straight_pipeline),
        optional("use_memory_constraint", &pipedream_options::use_memory_constraint),
        optional("memory_bytes", &pipedream_options::memory_bytes),
        optional("use_fewer_machines", &pipedream_options::use_fewer_machines),
        optional("budget", &pipedream_options::budget),
        optional("max_states", &pipedream_options::max_states),
    };
};

template <>
struct json_fields<pipedream_request> {
    static constexpr auto fields = std::tuple{required("graph", &pipedream_request::graph), required("options", &pipedream_request::options)};
};

template <>
struct json_fields<pipedream_stage> {
    static constexpr auto fields = std::tuple{
        required("first_state", &pipedream_stage::first_state), required("end_state", &pipedream_stage::end_state),
        required("replicas", &pipedream_stage::replicas), required("compute_s", &pipedream_stage::compute_s),
        required("layers", &pipedream_stage::layers),
    };
};

template <>
struct json_fields<pipedream_plan> {
    static constexpr auto fields = std::tuple{required("time_per_minibatch_s", &pipedream_plan::time_per_minibatch_s),
                                              required("stages", &pipedream_plan::stages)};
};

template <>
struct json_fields<pipedream_counters> {
    static constexpr auto fields = std::tuple{
        required("state_pairs", &pipedream_counters::state_pairs),
        required("cells", &pipedream_counters::cells),
        required("swept_cells", &pipedream_counters::swept_cells),
        required("plain_candidates", &pipedream_counters::plain_candidates),
        required("searches_retried", &pipedream_counters::searches_retried),
        required("threshold_decisions", &pipedream_counters::threshold_decisions),
    };
};

template <>
struct json_fields<pipedream_lattice_details> {
    static constexpr auto fields = std::tuple{
        required("kept_layers", &pipedream_lattice_details::kept_layers),
        required("lower_bound_s", &pipedream_lattice_details::lower_bound_s),
        required("gap_ratio", &pipedream_lattice_details::gap_ratio),
        required("compute_bound_s", &pipedream_lattice_details::compute_bound_s),
        required("machine_bound_s", &pipedream_lattice_details::machine_bound_s),
        required("window_bound_s", &pipedream_lattice_details::window_bound_s),
        optional("memory_bound_s", &pipedream_lattice_details::memory_bound_s),
        required("threshold_tests", &pipedream_lattice_details::threshold_tests),
        required("fills", &pipedream_lattice_details::fills),
        required("family_states", &pipedream_lattice_details::family_states),
        required("state_pairs", &pipedream_lattice_details::state_pairs),
    };
};

/// states_enumerated and lattice are optional when read (results written before the wide path
/// have neither: the exact path, nothing of the lattice's).
template <>
struct json_fields<pipedream_details> {
    static constexpr auto fields = std::tuple{required("num_states", &pipedream_details::num_states),
                                              required("work", &pipedream_details::work),
                                              optional("states_enumerated", &pipedream_details::states_enumerated),
                                              optional("lattice", &pipedream_details::lattice)};
};

template <>
struct json_fields<pipeline_dp_options> {
    static constexpr auto fields = std::tuple{optional("max_devices", &pipeline_dp_options::max_devices),
                                              optional("max_stages", &pipeline_dp_options::max_stages),
                                              optional("budget", &pipeline_dp_options::budget)};
};

template <>
struct json_fields<pipeline_dp_request> {
    static constexpr auto fields = std::tuple{required("options", &pipeline_dp_request::options)};
};

template <>
struct json_fields<pipeline_dp_stage> {
    static constexpr auto fields = std::tuple{
        required("first_state", &pipeline_dp_stage::first_state), required("end_state", &pipeline_dp_stage::end_state),
        required("replicas", &pipeline_dp_stage::replicas), unbounded("stage_time_s", &pipeline_dp_stage::stage_time_s),
    };
};

template <>
struct json_fields<pipeline_dp_plan> {
    static constexpr auto fields = std::tuple{
        unbounded("time_s", &pipeline_dp_plan::time_s), unbounded("slowest_stage_s", &pipeline_dp_plan::slowest_stage_s),
        required("devices", &pipeline_dp_plan::devices), required("stages", &pipeline_dp_plan::stages),
    };
};

template <>
struct json_fields<pipeline_dp_details> {
    static constexpr auto fields = std::tuple{required("by_devices", &pipeline_dp_details::by_devices)};
};

}  // namespace dnnplan::detail::json_io

namespace dnnplan {

/// Edges are written by id: {"from": "node1", "to": "node2"}.
template <detail::json_io::document Json>
void to_json(Json& j, const layer_graph& g) {
    // Built in a local and assigned once (see to_json of solve_result, io/core_json.hpp).
    Json out = Json::object();
    out["layers"] = detail::json_io::write_value<Json>(g.layers(), "layers");
    Json edges = Json::array();
    for (const auto& e : g.edges()) {
        Json edge = Json::object();
        edge["from"] = g.at(e.from).id;
        edge["to"] = g.at(e.to).id;
        edges.push_back(std::move(edge));
    }
    out["edges"] = std::move(edges);
    j = std::move(out);
}

template <detail::json_io::document Json>
void from_json(const Json& j, layer_graph& out) {
    detail::json_io::read_root(j, out);
}

}  // namespace dnnplan
