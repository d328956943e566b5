#pragma once
// Bamboo's discrete-event simulation of pipeline training with redundant computation (Thorpe et
// al., NSDI 2023; uclasystem/bamboo project_pactum/simulation/simulator.py), event for event:
// - P pipelines of S stages, one instance per stage; stage i also holds a shadow of stage
//   (i + 1) mod S. A lost instance's stage moves to its predecessor (then "overloaded": two
//   stages); losing an overloaded instance, or an instance whose predecessor is overloaded, is a
//   fatal failure: a global rendezvous (30 s) from scratch.
// - After a non-fatal loss while training, the step time is multiplied by 1.5 (truncated to a
//   whole ms) until the next rendezvous, and the step in flight is stretched by half of its rest.
// - After every step, a local rendezvous (S fixed) when, with O overloaded, W waiting and
//   A = P S - O active instances: O > 0 and W >= O; or O > 0 and 2 O / A > 0.05; or
//   floor((A + W) / S) > P. A rendezvous forms P = floor(ready / S) pipelines.
// - Every live instance is billed from its addition; the figures are Bamboo's time averages.
// The event queue is an emulation of CPython's heapq on (time, kind): events with equal time and
// kind come out in heapq's array order, which is neither FIFO nor file order, and which decides
// which of two simultaneous losses is fatal; it is reproduced exactly. Runs of steps between two
// events are advanced in closed form: the queue's layout under "push the smallest, pop it" reaches
// a fixed point after a cycle or two, after which the rest of the run changes only counters and
// sums. The pieces: the workloads (bamboo_workload.hpp), a run's options and figures
// (bamboo_run.hpp), random mode (bamboo_random.hpp), the queue and the engine (detail/).
// docs/models/bamboo.md has the rules with their sources and the reproduced figures.

#include <dnnplan/preemption/bamboo_random.hpp>
#include <dnnplan/preemption/bamboo_run.hpp>
#include <dnnplan/preemption/bamboo_workload.hpp>
#include <dnnplan/preemption/detail/bamboo_engine.hpp>
#include <dnnplan/preemption/events.hpp>
#include <dnnplan/preemption/python_random.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan {

/// Bamboo's simulation on a trace of additions and removals (trace mode): the events are queued
/// in trace order, so that simultaneous ones come out as in Bamboo. Throws invalid_input for bad
/// options or an inconsistent trace; every expected outcome is a status in the run.
[[nodiscard]] inline bamboo_run simulate_bamboo(const instance_trace& trace, const bamboo_options& options = {}) {
    options.validate();
    trace.validate("trace");
    // Every addition is a new instance (a name added again after its removal is a new one, as
    // in Bamboo's dict); a removal is of the name's live instance (validate() checked there is one).
    std::unordered_map<std::string_view, std::int64_t> live;
    std::vector<std::string> names;
    std::vector<std::int64_t> instance_of(trace.events.size());
    for (std::size_t k = 0; k < trace.events.size(); ++k) {
        const instance_event& e = trace.events[k];
        if (e.kind == instance_event_kind::add) {
            live[e.node] = static_cast<std::int64_t>(names.size());
            names.push_back(e.node);
        }
        instance_of[k] = live.at(e.node);
    }
    detail::bamboo::engine sim(options, std::move(names));
    for (std::size_t k = 0; k < trace.events.size(); ++k)
        sim.push(trace.events[k].time_ms,
                 trace.events[k].kind == instance_event_kind::add ? detail::bamboo::add : detail::bamboo::remove, instance_of[k]);
    return sim.run();
}

/// Bamboo's simulation in random mode: the arrivals and removals drawn hour by hour from
/// random.Random(seed) as Bamboo draws them, so that a seed reproduces Bamboo's run.
[[nodiscard]] inline bamboo_run simulate_bamboo(const bamboo_random_options& random, std::uint64_t seed,
                                                const bamboo_options& options = {}) {
    options.validate();
    random.validate();
    detail::bamboo::hourly_generator g{.rng = python_random(seed), .options = random};
    g.removal = random.removal_by_hour();
    g.addition = bamboo_random_options::default_addition_by_hour();
    if (random.generate_addition_probabilities)
        for (double& p : g.addition) p = g.rng.random();
    const double initial = g.addition[static_cast<std::size_t>(random.start_hour)];
    detail::bamboo::engine sim(options, {});
    for (std::int32_t k = 0; k < random.capacity; ++k)
        if (initial > g.rng.random()) sim.push(0, detail::bamboo::add, sim.new_instance("node" + std::to_string(g.next_id++)));
    sim.push(0, detail::bamboo::generate);
    sim.attach(std::move(g));
    return sim.run();
}

}  // namespace dnnplan
