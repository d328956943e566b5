#pragma once
// The contract between pipeline partitioners and the models that price a stage.
//
// A partition space is an ordered list of S states (cut points of the DNN: PipeDream's
// antichain states, or the prefixes of a topological order of the layers). State s stands for
// "every layer of D_s done", with D_0 ⊂ ... along any path of the state DAG. A stage holds the
// states [first_state, end_state): the layers of D_(end_state-1) that are not in
// D_(first_state-1) (none before the first state). A pipeline is a sequence of stages whose
// ranges chain (each stage's first_state - 1 is a predecessor state of its end_state - 1), each
// on `replicas` devices.
//
// A stage-cost model answers one question: how long does this stage take, in its place in the
// pipeline, per unit of work (PipeDream: per minibatch; the 1F1B model: per micro-batch)? It
// answers +inf when the stage is not allowed there (it does not fit in memory). The partitioner
// minimises the model's pipeline time over every partition; the model decides how the slowest
// stage and the number of stages make the time per minibatch.

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace dnnplan {

/// A candidate stage in its place in a pipeline, as a partitioner asks a stage-cost model about
/// it. Fields the partitioner cannot know (the stage count, for a partitioner that does not fix
/// it) are 0, and a model that needs them says so (`needs_stage_count`).
struct stage_candidate {
    std::size_t first_state = 0;      ///< the stage holds states [first_state, end_state)
    std::size_t end_state = 0;        ///< exclusive; == the space's size for the last stage
    std::int32_t replicas = 1;        ///< devices running this stage (data parallel within it)
    std::int32_t devices_before = 0;  ///< devices of the stages before this one
    std::int32_t devices_total = 0;   ///< devices of the whole pipeline (PipeDream's M)
    std::int32_t stage_index = 0;     ///< 0-based position; 0 when stage_count is 0
    std::int32_t stage_count = 0;     ///< stages in the pipeline; 0 when the partitioner leaves it free
};

/// A model that prices one stage (stage_time_s, +inf: not allowed) and turns the slowest stage
/// and the number of stages into the time per minibatch (pipeline_time_s). `needs_stage_count`:
/// whether stage_time_s reads stage_index / stage_count (then only a partitioner that fixes the
/// stage count may use it). `num_states()`: the size of the space the model was built for.
template <class Model>
concept stage_cost_model = requires(const Model& model, const stage_candidate& stage, double slowest_s, std::int32_t stages) {
    { model.num_states() } -> std::convertible_to<std::size_t>;
    { model.stage_time_s(stage) } -> std::convertible_to<double>;
    { model.pipeline_time_s(slowest_s, stages) } -> std::convertible_to<double>;
    { Model::needs_stage_count } -> std::convertible_to<bool>;
};

/// A stage-cost model whose stage_time_s depends on the stage's place only through
/// stage_count - stage_index (the stages from it to the end), never through devices_before or
/// devices_total. It says so with `static constexpr bool depends_only_on_remaining_stages = true`,
/// which lets a partitioner build the pipeline from the back (pipeline_dp_partition's suffix
/// recurrence, partition/pipeline_dp.hpp).
template <class Model>
concept remaining_stages_cost_model = stage_cost_model<Model> && requires {
    { Model::depends_only_on_remaining_stages } -> std::convertible_to<bool>;
} && static_cast<bool>(Model::depends_only_on_remaining_stages);

}  // namespace dnnplan
