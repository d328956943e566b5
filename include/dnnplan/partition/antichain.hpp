#pragma once
// The states of PipeDream's partitioning optimizer: the antichain DAG of a layer graph
// (Narayanan et al., "PipeDream", SOSP 2019; its optimizer's graph.py, as described in the
// reference note, sections 1-2). A state is a cut of the DNN: everything up to and including an
// antichain of layers. Pipeline stages are ranges between states.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/layer_graph.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <string>
#include <string_view>
#include <vector>

namespace dnnplan {

/// One state of the antichain DAG.
struct antichain_state {
    std::vector<std::size_t> antichain{};  ///< augmented antichain X_s: layers live at the cut (layer indices)
    std::vector<std::size_t> layers{};     ///< D_s: X_s and all their predecessors, in layer order (empty in a chain: see antichain_states::chain)
    double compute_s = 0.0;                ///< sum of forward + backward time over D_s
    double activation_bytes = 0.0;         ///< sum of activation sizes over D_s
    double parameter_bytes = 0.0;          ///< sum of parameter sizes over D_s
    double output_activation_bytes = 0.0;  ///< sum of activation sizes over X_s
    std::vector<std::size_t> predecessors{};  ///< transitive predecessor states, ascending (empty in a chain)
};

/// The states of a graph in a topological order of the antichain DAG.
///
/// When the states form a path (always for a chain of layers, and for some graphs with
/// branches, vgg16's for one), the predecessors of state j are states 0..j-1 and D_j is the
/// first chain_layer_counts[j] layers of `chain_layers`. Neither is listed per state then (both
/// would be quadratic in the number of states: 400 MB each for a 10,000-layer chain); read them
/// through state_precedes(), for_each_state_predecessor() and state_layers(), which work for
/// both forms.
struct antichain_states {
    std::vector<antichain_state> states{};
    std::vector<std::size_t> removed_layers{};  ///< "Input..." sources and "__getitem__..." sinks
    bool chain = false;                          ///< the states form a path (see above)
    std::vector<std::size_t> chain_layers{};     ///< when `chain`: the kept layers in the order the states reach them
    std::vector<std::size_t> chain_layer_counts{};  ///< when `chain`: |D_j| for every state j
};

/// Whether state k is a (transitive) predecessor of state j.
[[nodiscard]] inline bool state_precedes(const antichain_states& s, std::size_t k, std::size_t j) {
    if (s.chain) return k < j;
    const auto& p = s.states[j].predecessors;
    return std::binary_search(p.begin(), p.end(), k);
}

/// Calls f(k) for every predecessor state k of state j, ascending.
template <class F>
void for_each_state_predecessor(const antichain_states& s, std::size_t j, F&& f) {
    if (s.chain) {
        for (std::size_t k = 0; k < j; ++k) f(k);
        return;
    }
    for (const std::size_t k : s.states[j].predecessors) f(k);
}

/// D_j: the layers done at state j, in layer order for a DAG, in chain order for a chain.
[[nodiscard]] inline std::vector<std::size_t> state_layers(const antichain_states& s, std::size_t j) {
    if (s.chain) return {s.chain_layers.begin(), s.chain_layers.begin() + static_cast<std::ptrdiff_t>(s.chain_layer_counts[j])};
    return s.states[j].layers;
}

namespace detail {

class bitset_rows {
public:
    explicit bitset_rows(std::size_t n) : bitset_rows(n, n) {}
    bitset_rows(std::size_t rows, std::size_t columns) : words_((columns + 63) / 64), bits_(rows * words_, 0) {}
    [[nodiscard]] bool test(std::size_t row, std::size_t col) const noexcept {
        return (bits_[row * words_ + col / 64] >> (col % 64)) & 1U;
    }
    void set(std::size_t row, std::size_t col) noexcept { bits_[row * words_ + col / 64] |= std::uint64_t{1} << (col % 64); }
    void merge(std::size_t row, std::size_t from) noexcept {
        for (std::size_t w = 0; w < words_; ++w) bits_[row * words_ + w] |= bits_[from * words_ + w];
    }
    void clear(std::size_t row) noexcept { std::fill_n(bits_.begin() + static_cast<std::ptrdiff_t>(row * words_), words_, 0); }
    /// ORs row `from` of `other` (which has as many columns) into `row`.
    void merge_from(std::size_t row, const bitset_rows& other, std::size_t from) noexcept {
        for (std::size_t w = 0; w < words_; ++w) bits_[row * words_ + w] |= other.bits_[from * words_ + w];
    }
    [[nodiscard]] std::size_t count(std::size_t row) const noexcept {
        std::size_t c = 0;
        for (std::size_t w = 0; w < words_; ++w) c += static_cast<std::size_t>(std::popcount(bits_[row * words_ + w]));
        return c;
    }
    /// Calls f(col) for every set column of `row`, in increasing order.
    template <class F>
    void for_each(std::size_t row, F&& f) const {
        for (std::size_t w = 0; w < words_; ++w)
            for (std::uint64_t word = bits_[row * words_ + w]; word != 0; word &= word - 1)
                f(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
    }

private:
    std::size_t words_;
    std::vector<std::uint64_t> bits_;
};

/// PipeDream's preprocessing (reference note, section 1): [i] is whether layer i is dropped
/// before partitioning. First every source whose description starts with "Input", then every
/// sink (of the whole graph) among the remaining layers whose description starts with
/// "__getitem__". build_antichain_states and build_layer_chain (partition/layer_chain.hpp) both
/// apply it.
[[nodiscard]] inline std::vector<bool> pipedream_removed_layers(const layer_graph& graph) {
    const std::size_t n = graph.size();
    std::vector<bool> removed(n, false);
    for (std::size_t i = 0; i < n; ++i)
        if (graph.predecessors(i).empty() && std::string_view(graph.at(i).description).starts_with("Input")) removed[i] = true;
    // Sinks after the Input removal (an Input source is never a sink of interest here).
    for (std::size_t i = 0; i < n; ++i) {
        if (removed[i]) continue;
        const bool sink = graph.successors(i).empty();
        if (sink && std::string_view(graph.at(i).description).starts_with("__getitem__")) removed[i] = true;
    }
    return removed;
}

}  // namespace detail

/// Builds PipeDream's states. Preprocessing as PipeDream's optimizer: remove every source layer
/// whose description starts with "Input", then every sink whose description starts with
/// "__getitem__". The breadth-first construction, augment, deaugment and next-antichain rules
/// are PipeDream's; where PipeDream iterates a Python set (the order of the "extra" layers of an
/// augmented antichain, which varies between runs), layer order is used, so the result is
/// deterministic. Throws invalid_input when nothing is left to partition, and when a branching
/// graph has more than `max_states` states (the field "graph"): the state DAG's transitive
/// predecessors take O(S^2) memory (inception_v3's 221,564 states would need tens of GB;
/// PipeDream's own optimizer does not finish on it). A chain has no limit: it is built in
/// linear memory.
inline constexpr std::size_t default_max_antichain_states = 20000;

[[nodiscard]] inline antichain_states build_antichain_states(const layer_graph& graph,
                                                             std::size_t max_states = default_max_antichain_states) {
    const std::size_t n = graph.size();
    const std::vector<bool> removed = detail::pipedream_removed_layers(graph);
    antichain_states out;
    for (std::size_t i = 0; i < n; ++i)
        if (removed[i]) out.removed_layers.push_back(i);

    // Out-neighbours and in-neighbours among the kept layers, in edge order.
    std::vector<std::vector<std::size_t>> succ(n), pred(n);
    for (const auto& e : graph.edges()) {
        if (removed[e.from] || removed[e.to]) continue;
        succ[e.from].push_back(e.to);
        pred[e.to].push_back(e.from);
    }
    // Transitive closures, via a topological order of the kept layers.
    std::vector<std::size_t> order;
    {
        std::vector<std::size_t> indeg(n, 0);
        for (std::size_t i = 0; i < n; ++i) indeg[i] = pred[i].size();
        std::deque<std::size_t> ready;
        for (std::size_t i = 0; i < n; ++i)
            if (!removed[i] && indeg[i] == 0) ready.push_back(i);
        while (!ready.empty()) {
            const std::size_t i = ready.front();
            ready.pop_front();
            order.push_back(i);
            for (const std::size_t j : succ[i])
                if (--indeg[j] == 0) ready.push_back(j);
        }
    }
    if (order.empty()) throw invalid_input("graph", "no layers after removing Input and __getitem__ layers", "at least one layer to partition");

    // A chain: PipeDream's construction yields state j = {order[j]} (nothing else is live at a
    // cut of a chain), in chain order; build it directly, in linear time and memory.
    const bool is_chain = std::all_of(order.begin(), order.end(), [&](std::size_t i) {
        return pred[i].size() <= 1 && succ[i].size() <= 1;
    }) && std::count_if(order.begin(), order.end(), [&](std::size_t i) { return pred[i].empty(); }) == 1;
    if (is_chain) {
        out.chain = true;
        out.chain_layers = order;
        out.chain_layer_counts.resize(order.size());
        out.states.resize(order.size());
        double compute = 0.0, activation = 0.0, parameter = 0.0;
        for (std::size_t j = 0; j < order.size(); ++j) {
            const layer& l = graph.at(order[j]);
            compute += l.forward_s + l.backward_s;
            activation += l.activation_bytes;
            parameter += l.parameter_bytes;
            out.states[j] = {.antichain = {order[j]}, .compute_s = compute, .activation_bytes = activation,
                             .parameter_bytes = parameter, .output_activation_bytes = l.activation_bytes};
            out.chain_layer_counts[j] = j + 1;
        }
        return out;
    }
    detail::bitset_rows ancestors(n), descendants(n);
    for (const std::size_t i : order)
        for (const std::size_t p : pred[i]) {
            ancestors.set(i, p);
            ancestors.merge(i, p);
        }
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        for (const std::size_t s : succ[*it]) {
            descendants.set(*it, s);
            descendants.merge(*it, s);
        }

    using key_type = std::vector<std::size_t>;
    const auto key_of = [](std::vector<std::size_t> a) {
        std::sort(a.begin(), a.end());
        return a;
    };
    // augment(A): predecessors of some a in A with a direct out-neighbour that is neither a
    // predecessor of a nor a itself (tensors still live at the cut), then A.
    detail::bitset_rows extra(1, n);  // augment's scratch: the extra layers found so far
    const auto augment = [&](const std::vector<std::size_t>& a) {
        extra.clear(0);
        for (const std::size_t node : a)
            ancestors.for_each(node, [&](std::size_t p) {
                if (extra.test(0, p)) return;
                for (const std::size_t o : succ[p])
                    if (!ancestors.test(node, o) && o != node) {
                        extra.set(0, p);
                        break;
                    }
            });
        std::vector<std::size_t> x;
        x.reserve(a.size() + 4);
        extra.for_each(0, [&](std::size_t p) { x.push_back(p); });
        x.insert(x.end(), a.begin(), a.end());
        return x;
    };
    // deaugment(X): drop members with a successor in X, and duplicates; keep order.
    const auto deaugment = [&](const std::vector<std::size_t>& x) {
        std::vector<std::size_t> a;
        for (const std::size_t u : x) {
            bool drop = false;
            for (const std::size_t v : x)
                if (descendants.test(u, v)) {
                    drop = true;
                    break;
                }
            if (!drop && std::find(a.begin(), a.end(), u) == a.end()) a.push_back(u);
        }
        return a;
    };

    struct key_hash {
        std::size_t operator()(const key_type& k) const noexcept {
            std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the sorted layer indices
            for (const std::size_t v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL;
            return static_cast<std::size_t>(h);
        }
    };
    std::unordered_map<key_type, std::size_t, key_hash> index_of;
    std::vector<std::vector<std::size_t>> augmented;     // X_s per state (creation order)
    std::vector<std::vector<std::size_t>> dag_edges;     // state -> next states, in insertion order
    std::vector<std::size_t> insertion;                  // states in the order the DAG first saw them
    std::vector<bool> inserted;
    const auto add_state = [&](const std::vector<std::size_t>& a) {
        const key_type key = key_of(a);
        if (const auto it = index_of.find(key); it != index_of.end()) return it->second;
        const std::size_t id = augmented.size();
        if (id >= max_states)
            throw invalid_input("graph", "more than " + std::to_string(max_states) + " antichain states",
                                "a graph with at most max_states = " + std::to_string(max_states) +
                                    " states (their transitive predecessors need O(S^2) memory)");
        index_of.emplace(key, id);
        augmented.push_back(augment(a));
        dag_edges.emplace_back();
        inserted.push_back(false);
        return id;
    };
    const auto note_inserted = [&](std::size_t s) {
        if (!inserted[s]) {
            inserted[s] = true;
            insertion.push_back(s);
        }
    };

    std::size_t first_source = order.front();
    for (std::size_t i = 0; i < n; ++i)
        if (!removed[i] && pred[i].empty()) {
            first_source = i;
            break;
        }
    std::deque<std::pair<std::size_t, std::vector<std::size_t>>> queue;  // (state, its antichain)
    queue.emplace_back(add_state({first_source}), std::vector<std::size_t>{first_source});
    std::vector<bool> expanded;
    while (!queue.empty()) {
        const std::size_t from = queue.front().first;
        const std::vector<std::size_t> a = std::move(queue.front().second);
        queue.pop_front();
        if (expanded.size() < augmented.size()) expanded.resize(augmented.size(), false);
        if (expanded[from]) continue;
        expanded[from] = true;
        const std::vector<std::size_t> x = augmented[from];  // a copy: add_state() grows augmented
        for (const std::size_t u : x)
            for (const std::size_t v : succ[u]) {
                if (std::find(a.begin(), a.end(), v) != a.end()) continue;
                bool blocked = false;  // a member of X is a successor of v
                for (const std::size_t w : x)
                    if (descendants.test(v, w)) {
                        blocked = true;
                        break;
                    }
                if (blocked) continue;
                std::vector<std::size_t> replaced = x;
                for (auto& w : replaced)
                    if (w == u) w = v;
                const std::vector<std::size_t> next = deaugment(replaced);
                const std::size_t known = augmented.size();
                const std::size_t to = add_state(next);
                note_inserted(from);
                note_inserted(to);
                dag_edges[from].push_back(to);
                // PipeDream queues every successor and skips the expanded ones when popped;
                // queueing only new states expands the same states in the same order.
                if (to == known) queue.emplace_back(to, next);
            }
    }
    const std::size_t s_count = augmented.size();
    if (insertion.empty()) insertion.push_back(0);  // a single state: no edges

    // PipeDream's topological sort: depth-first from every node in insertion order, children
    // in edge order, each finished node put in front.
    std::vector<std::size_t> sorted;
    std::vector<int> mark(s_count, 0);
    std::vector<std::pair<std::size_t, std::size_t>> stack;
    for (const std::size_t root : insertion) {
        if (mark[root] != 0) continue;
        stack.emplace_back(root, 0);
        mark[root] = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            if (next < dag_edges[node].size()) {
                const std::size_t child = dag_edges[node][next++];
                if (mark[child] == 0) {
                    mark[child] = 1;
                    stack.emplace_back(child, 0);
                }
                continue;
            }
            mark[node] = 2;
            sorted.push_back(node);
            stack.pop_back();
        }
    }
    std::reverse(sorted.begin(), sorted.end());
    std::vector<std::size_t> position(s_count);
    for (std::size_t i = 0; i < s_count; ++i) position[sorted[i]] = i;

    // State figures and transitive predecessor states.
    detail::bitset_rows state_ancestors(s_count);
    for (const std::size_t s : sorted)
        for (const std::size_t t : dag_edges[s]) {
            state_ancestors.set(position[t], position[s]);
            state_ancestors.merge(position[t], position[s]);
        }
    out.states.resize(s_count);
    detail::bitset_rows closure(1, n);  // D_s of the state at hand
    for (std::size_t i = 0; i < s_count; ++i) {
        antichain_state& st = out.states[i];
        st.antichain = augmented[sorted[i]];
        closure.clear(0);
        for (const std::size_t u : st.antichain) {
            closure.set(0, u);
            closure.merge_from(0, ancestors, u);
            st.output_activation_bytes += graph.at(u).activation_bytes;
        }
        st.layers.reserve(closure.count(0));
        closure.for_each(0, [&](std::size_t p) {
            st.layers.push_back(p);
            st.compute_s += graph.at(p).forward_s + graph.at(p).backward_s;
            st.activation_bytes += graph.at(p).activation_bytes;
            st.parameter_bytes += graph.at(p).parameter_bytes;
        });
        st.predecessors.reserve(state_ancestors.count(i));
        state_ancestors.for_each(i, [&](std::size_t j) { st.predecessors.push_back(j); });
    }
    // States on a path: keep the linear form (see antichain_states).
    bool path = true;
    for (std::size_t i = 0; i < s_count && path; ++i) path = out.states[i].predecessors.size() == i;
    if (path) {
        out.chain = true;
        std::vector<bool> seen(n, false);
        for (auto& st : out.states) {
            for (const std::size_t l : st.layers)
                if (!seen[l]) {
                    seen[l] = true;
                    out.chain_layers.push_back(l);
                }
            out.chain_layer_counts.push_back(st.layers.size());
            st.layers.clear();
            st.layers.shrink_to_fit();
            st.predecessors.clear();
            st.predecessors.shrink_to_fit();
        }
    }
    return out;
}

}  // namespace dnnplan
