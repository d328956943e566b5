#pragma once
// The states of PipeDream's partitioning optimizer: the antichain DAG of a layer graph
// (Narayanan et al., "PipeDream", SOSP 2019; its optimizer's graph.py, as described in the
// reference note, sections 1-2). A state is a cut of the DNN: everything up to and including an
// antichain of layers. Pipeline stages are ranges between states.

#include <dnnplan/core/error.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail {

/// Rows of bits: row r, column c. Used for layer and state sets.
class bitset_rows {
public:
    bitset_rows() = default;
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
    /// Whether `row` and row `other_row` of `other` (as many columns) share a set column.
    [[nodiscard]] bool intersects(std::size_t row, const bitset_rows& other, std::size_t other_row) const noexcept {
        for (std::size_t w = 0; w < words_; ++w)
            if ((bits_[row * words_ + w] & other.bits_[other_row * words_ + w]) != 0) return true;
        return false;
    }
    [[nodiscard]] std::size_t count(std::size_t row) const noexcept {
        std::size_t c = 0;
        for (std::size_t w = 0; w < words_; ++w) c += static_cast<std::size_t>(std::popcount(bits_[row * words_ + w]));
        return c;
    }
    /// Calls f(col) for every column set in both `row` and row `other_row` of `other`, in increasing order.
    template <class F>
    void for_each_common(std::size_t row, const bitset_rows& other, std::size_t other_row, F&& f) const {
        for (std::size_t w = 0; w < words_; ++w)
            for (std::uint64_t word = bits_[row * words_ + w] & other.bits_[other_row * words_ + w]; word != 0; word &= word - 1)
                f(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
    }
    /// Calls f(col) for every set column of `row`, in increasing order.
    template <class F>
    void for_each(std::size_t row, F&& f) const {
        for (std::size_t w = 0; w < words_; ++w)
            for (std::uint64_t word = bits_[row * words_ + w]; word != 0; word &= word - 1)
                f(w * 64 + static_cast<std::size_t>(std::countr_zero(word)));
    }

    [[nodiscard]] std::size_t words() const noexcept { return words_; }
    /// The highest set column of `row`, if any.
    [[nodiscard]] std::optional<std::size_t> last(std::size_t row) const noexcept {
        for (std::size_t w = words_; w-- > 0;)
            if (const std::uint64_t word = bits_[row * words_ + w]; word != 0)
                return w * 64 + 63 - static_cast<std::size_t>(std::countl_zero(word));
        return std::nullopt;
    }
    /// The words of `row` (words() of them).
    [[nodiscard]] const std::uint64_t* row_words(std::size_t row) const noexcept { return bits_.data() + row * words_; }
    [[nodiscard]] bool empty() const noexcept { return bits_.empty(); }

private:
    std::size_t words_ = 0;
    std::vector<std::uint64_t> bits_;
};

}  // namespace detail

/// One state of the antichain DAG.
struct antichain_state {
    std::vector<std::size_t> antichain{};  ///< augmented antichain X_s: layers live at the cut (layer indices)
    double compute_s = 0.0;                ///< sum of forward + backward time over D_s
    double activation_bytes = 0.0;         ///< sum of activation sizes over D_s
    double parameter_bytes = 0.0;          ///< sum of parameter sizes over D_s
    double output_activation_bytes = 0.0;  ///< sum of activation sizes over X_s
};

/// The states of a graph in a topological order of the antichain DAG.
///
/// A state's layers D_j and its transitive predecessor states are read through
/// state_precedes(), for_each_state_predecessor(), state_predecessor_count() and state_layers(),
/// which work for both of the forms the states are kept in:
/// - listed: one bit row per state for D_j (`layer_sets`, over layer indices) and one for its
///   predecessors (`predecessor_sets`, over state indices): S (n + S) bits, 5 MB for 5,000 states
///   of a 3,000-layer graph, where index lists would take 8 bytes per entry;
/// - linear, when the states form a path (always for a chain of layers, and for some graphs
///   with branches, vgg16's for one): the predecessors of state j are states 0..j-1 and D_j is
///   the first chain_layer_counts[j] layers of `chain_layers`; nothing quadratic is stored
///   (a 10,000-layer chain would need 25 MB of bits for no information).
struct antichain_states {
    std::vector<antichain_state> states{};
    std::vector<std::size_t> removed_layers{};  ///< "Input..." sources and "__getitem__..." sinks
    bool chain = false;                          ///< the states form a path (see above)
    std::vector<std::size_t> chain_layers{};     ///< when `chain`: the kept layers in the order the states reach them
    std::vector<std::size_t> chain_layer_counts{};  ///< when `chain`: |D_j| for every state j
    detail::bitset_rows layer_sets{};            ///< unless `chain`: row j holds D_j (columns: layer indices)
    detail::bitset_rows predecessor_sets{};      ///< unless `chain`: row j holds j's predecessor states
};

/// Whether state k is a (transitive) predecessor of state j.
[[nodiscard]] inline bool state_precedes(const antichain_states& s, std::size_t k, std::size_t j) {
    if (s.chain) return k < j;
    return s.predecessor_sets.test(j, k);
}

/// Calls f(k) for every predecessor state k of state j, ascending.
template <class F>
void for_each_state_predecessor(const antichain_states& s, std::size_t j, F&& f) {
    if (s.chain) {
        for (std::size_t k = 0; k < j; ++k) f(k);
        return;
    }
    s.predecessor_sets.for_each(j, f);
}

/// The number of predecessor states of state j.
[[nodiscard]] inline std::size_t state_predecessor_count(const antichain_states& s, std::size_t j) {
    return s.chain ? j : s.predecessor_sets.count(j);
}

/// D_j: the layers done at state j, in layer order for a DAG, in chain order for a chain.
[[nodiscard]] inline std::vector<std::size_t> state_layers(const antichain_states& s, std::size_t j) {
    if (s.chain) return {s.chain_layers.begin(), s.chain_layers.begin() + static_cast<std::ptrdiff_t>(s.chain_layer_counts[j])};
    std::vector<std::size_t> layers;
    layers.reserve(s.layer_sets.count(j));
    s.layer_sets.for_each(j, [&](std::size_t l) { layers.push_back(l); });
    return layers;
}

namespace detail {

/// The layers PipeDream's optimizer keeps (`removed`: the others), their out- and in-neighbours
/// among themselves, in edge order, and a topological order of them (breadth first from the
/// sources, in layer order).
struct kept_layers {
    std::vector<bool> removed{};
    std::vector<std::vector<std::size_t>> succ{}, pred{};
    std::vector<std::size_t> order{};
};

[[nodiscard]] inline kept_layers keep_pipedream_layers(const layer_graph& graph) {
    const std::size_t n = graph.size();
    kept_layers kept;
    kept.removed = pipedream_removed_layers(graph);
    kept.succ.resize(n);
    kept.pred.resize(n);
    for (const auto& e : graph.edges()) {
        if (kept.removed[e.from] || kept.removed[e.to]) continue;
        kept.succ[e.from].push_back(e.to);
        kept.pred[e.to].push_back(e.from);
    }
    std::vector<std::size_t> indeg(n, 0);
    for (std::size_t i = 0; i < n; ++i) indeg[i] = kept.pred[i].size();
    std::deque<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (!kept.removed[i] && indeg[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
        const std::size_t i = ready.front();
        ready.pop_front();
        kept.order.push_back(i);
        for (const std::size_t j : kept.succ[i])
            if (--indeg[j] == 0) ready.push_back(j);
    }
    return kept;
}

/// Whether the kept layers form one chain: a single source, and no layer with more than one
/// in- or out-neighbour.
[[nodiscard]] inline bool kept_layers_form_chain(const kept_layers& kept) {
    const auto& order = kept.order;
    return std::all_of(order.begin(), order.end(),
                       [&](std::size_t i) { return kept.pred[i].size() <= 1 && kept.succ[i].size() <= 1; }) &&
           std::count_if(order.begin(), order.end(), [&](std::size_t i) { return kept.pred[i].empty(); }) == 1;
}

/// The states of a chain. PipeDream's construction yields state j = {order[j]} (nothing else is
/// live at a cut of a chain), in chain order; built directly, in linear time and memory.
inline void build_chain_states(const layer_graph& graph, const std::vector<std::size_t>& order, antichain_states& out) {
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
}

/// The transitive closures of the kept layers: row i of `ancestors` holds i's predecessors, of
/// `descendants` its successors.
struct layer_closures {
    bitset_rows ancestors{}, descendants{};
};

[[nodiscard]] inline layer_closures close_layers(const kept_layers& kept) {
    const std::size_t n = kept.removed.size();
    layer_closures closures{.ancestors = bitset_rows(n), .descendants = bitset_rows(n)};
    for (const std::size_t i : kept.order)
        for (const std::size_t p : kept.pred[i]) {
            closures.ancestors.set(i, p);
            closures.ancestors.merge(i, p);
        }
    for (auto it = kept.order.rbegin(); it != kept.order.rend(); ++it)
        for (const std::size_t s : kept.succ[*it]) {
            closures.descendants.set(*it, s);
            closures.descendants.merge(*it, s);
        }
    return closures;
}

/// The first source among the kept layers, in layer order.
[[nodiscard]] inline std::size_t first_kept_source(const kept_layers& kept) {
    for (std::size_t i = 0; i < kept.removed.size(); ++i)
        if (!kept.removed[i] && kept.pred[i].empty()) return i;
    return kept.order.front();
}

/// PipeDream's augment(A) (graph.py): the predecessors of some a in A with a direct
/// out-neighbour that is neither a predecessor of a nor a itself (tensors still live at the cut),
/// in layer order, then A. `branching` (one row) marks the layers with two or more kept
/// out-neighbours, the only ones that can be extra; `extra` (one row) is scratch.
[[nodiscard]] inline std::vector<std::size_t> augment_antichain(const kept_layers& kept, const layer_closures& closures,
                                                                const bitset_rows& branching, const std::vector<std::size_t>& a,
                                                                bitset_rows& extra) {
    extra.clear(0);
    for (const std::size_t node : a)
        closures.ancestors.for_each_common(node, branching, 0, [&](std::size_t p) {
            if (extra.test(0, p)) return;
            for (const std::size_t o : kept.succ[p])
                if (!closures.ancestors.test(node, o) && o != node) {
                    extra.set(0, p);
                    break;
                }
        });
    std::vector<std::size_t> x;
    x.reserve(a.size() + 4);
    extra.for_each(0, [&](std::size_t p) { x.push_back(p); });
    x.insert(x.end(), a.begin(), a.end());
    return x;
}

/// Row 0 marks the kept layers with two or more kept out-neighbours.
[[nodiscard]] inline bitset_rows branching_layers(const kept_layers& kept) {
    bitset_rows branching(1, kept.removed.size());
    for (std::size_t i = 0; i < kept.removed.size(); ++i)
        if (kept.succ[i].size() >= 2) branching.set(0, i);
    return branching;
}

/// The antichain DAG as PipeDream's breadth-first construction finds it, its states numbered in
/// creation order.
struct antichain_dag {
    std::vector<std::vector<std::size_t>> augmented{};  ///< X_s per state
    std::vector<std::vector<std::size_t>> edges{};      ///< state -> next states, in insertion order
    std::vector<std::size_t> insertion{};               ///< states in the order the DAG first saw them
};

/// PipeDream's construction of the antichain DAG (graph.py: augment, deaugment, next antichains),
/// with layer order where PipeDream iterates a Python set.
class antichain_dag_builder {
public:
    antichain_dag_builder(const kept_layers& kept, const layer_closures& closures, std::size_t max_states)
        // Only a layer with two or more out-neighbours can be an extra layer of augment(): one
        // out-neighbour lies on its path to the member, so a single out-neighbour is always a
        // predecessor of it or it.
        : kept_(kept), closures_(closures), max_states_(max_states), branching_(branching_layers(kept)),
          extra_(1, kept.removed.size()), members_(1, kept.removed.size()) {}

    /// Breadth first over the states from the antichain {source}. PipeDream queues every
    /// successor and skips the expanded ones when popped; queueing only new states expands the
    /// same states in the same order, and states are numbered in creation order, so the queue is
    /// the range [from, states).
    /// None when the graph has more than max_states states (the search stops at the first one over).
    [[nodiscard]] std::optional<antichain_dag> build(std::size_t source) {
        add_state({source});
        for (std::size_t from = 0; from < dag_.augmented.size() && !overflowed_; ++from) expand(from);
        if (overflowed_) return std::nullopt;
        if (dag_.insertion.empty()) dag_.insertion.push_back(0);  // a single state: no edges
        return std::move(dag_);
    }

private:
    using key_type = std::vector<std::size_t>;
    struct key_hash {
        std::size_t operator()(const key_type& k) const noexcept {
            std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the sorted layer indices
            for (const std::size_t v : k) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL;
            return static_cast<std::size_t>(h);
        }
    };

    [[nodiscard]] std::vector<std::size_t> augment(const std::vector<std::size_t>& a) {
        return augment_antichain(kept_, closures_, branching_, a, extra_);
    }

    // deaugment(X): drop members with a successor in X, and duplicates; keep order. `members_`
    // holds X as a bit row, so "u has a successor in X" is a word-wise AND.
    void deaugment(const std::vector<std::size_t>& x, std::vector<std::size_t>& a) {
        members_.clear(0);
        for (const std::size_t u : x) members_.set(0, u);
        a.clear();
        for (const std::size_t u : x)
            if (!closures_.descendants.intersects(u, members_, 0) && std::find(a.begin(), a.end(), u) == a.end())
                a.push_back(u);
    }

    // The state of antichain `a`, created (with its augmented antichain) if it is new.
    std::size_t add_state(const std::vector<std::size_t>& a) {
        key_.assign(a.begin(), a.end());
        std::sort(key_.begin(), key_.end());
        if (const auto it = index_of_.find(key_); it != index_of_.end()) return it->second;
        const std::size_t id = dag_.augmented.size();
        if (id >= max_states_) {  // build() gives up; the caller decides (try_build_antichain_states)
            overflowed_ = true;
            return 0;
        }
        index_of_.emplace(key_, id);
        dag_.augmented.push_back(augment(a));
        antichain_of_.push_back(a);
        dag_.edges.emplace_back();
        inserted_.push_back(false);
        return id;
    }

    void note_inserted(std::size_t s) {
        if (!inserted_[s]) {
            inserted_[s] = true;
            dag_.insertion.push_back(s);
        }
    }

    // Whether a member of X is a successor of layer v.
    [[nodiscard]] bool precedes_member(std::size_t v, const std::vector<std::size_t>& x) const {
        return std::any_of(x.begin(), x.end(), [&](std::size_t w) { return closures_.descendants.test(v, w); });
    }

    // The next antichains of state `from`: a member u of X replaced by an out-neighbour v of u
    // that is not in the antichain and precedes no member of X, then deaugmented.
    void expand(std::size_t from) {
        x_ = dag_.augmented[from];  // copies: add_state() grows both tables
        a_ = antichain_of_[from];
        for (const std::size_t u : x_)
            for (const std::size_t v : kept_.succ[u]) {
                if (std::find(a_.begin(), a_.end(), v) != a_.end() || precedes_member(v, x_)) continue;
                replaced_ = x_;
                for (auto& w : replaced_)
                    if (w == u) w = v;
                deaugment(replaced_, reached_);
                const std::size_t to = add_state(reached_);
                if (overflowed_) return;
                note_inserted(from);
                note_inserted(to);
                dag_.edges[from].push_back(to);
            }
    }

    const kept_layers& kept_;
    const layer_closures& closures_;
    std::size_t max_states_;
    bool overflowed_ = false;
    bitset_rows branching_, extra_, members_;  // extra_: augment's scratch, the extra layers found so far
    std::unordered_map<key_type, std::size_t, key_hash> index_of_;
    std::vector<std::vector<std::size_t>> antichain_of_;  // the state's antichain, as reached first
    std::vector<bool> inserted_;
    antichain_dag dag_;
    key_type key_;  // scratch: the sorted antichain being looked up
    std::vector<std::size_t> x_, a_, replaced_, reached_;
};

/// PipeDream's topological sort of the state DAG: depth-first from every state in insertion
/// order, children in edge order, each finished state put in front.
[[nodiscard]] inline std::vector<std::size_t> pipedream_topological_sort(const antichain_dag& dag) {
    std::vector<std::size_t> sorted;
    std::vector<int> mark(dag.augmented.size(), 0);
    std::vector<std::pair<std::size_t, std::size_t>> stack;
    for (const std::size_t root : dag.insertion) {
        if (mark[root] != 0) continue;
        stack.emplace_back(root, 0);
        mark[root] = 1;
        while (!stack.empty()) {
            auto& [node, next] = stack.back();
            if (next < dag.edges[node].size()) {
                const std::size_t child = dag.edges[node][next++];
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
    return sorted;
}

/// The transitive predecessor states, numbered by their place in `sorted`: row i holds those of
/// the state sorted[i].
[[nodiscard]] inline bitset_rows sorted_state_predecessors(const antichain_dag& dag, const std::vector<std::size_t>& sorted) {
    const std::size_t s_count = sorted.size();
    std::vector<std::size_t> position(s_count);
    for (std::size_t i = 0; i < s_count; ++i) position[sorted[i]] = i;
    bitset_rows predecessors(s_count);
    for (const std::size_t s : sorted)
        for (const std::size_t t : dag.edges[s]) {
            predecessors.set(position[t], position[s]);
            predecessors.merge(position[t], position[s]);
        }
    return predecessors;
}

/// Per-layer figures side by side (compute: forward + backward).
struct layer_figures {
    std::vector<double> compute{}, activation{}, parameter{};

    explicit layer_figures(const layer_graph& graph)
        : compute(graph.size()), activation(graph.size()), parameter(graph.size()) {
        for (std::size_t i = 0; i < graph.size(); ++i) {
            const layer& l = graph.at(i);
            compute[i] = l.forward_s + l.backward_s;
            activation[i] = l.activation_bytes;
            parameter[i] = l.parameter_bytes;
        }
    }
};

/// The states in topological order (`sorted`), their augmented antichains moved out of `dag`,
/// with their figures; returns their layer sets D_s (row i: the state sorted[i]). A state's
/// figures are those of one of its predecessors (whose layers it contains) plus the sums over the
/// layers it adds: sums over D_s in another order than PipeDream's, which itself varies with
/// Python's set order (a few ulps).
[[nodiscard]] inline bitset_rows fill_state_figures(const layer_graph& graph, const bitset_rows& ancestors, antichain_dag& dag,
                                                    const std::vector<std::size_t>& sorted, const bitset_rows& predecessors,
                                                    std::vector<antichain_state>& states) {
    const std::size_t s_count = sorted.size();
    const layer_figures figures(graph);
    states.resize(s_count);
    bitset_rows layer_sets(s_count, graph.size());
    const std::size_t layer_words = layer_sets.words();
    for (std::size_t i = 0; i < s_count; ++i) {
        antichain_state& st = states[i];
        st.antichain = std::move(dag.augmented[sorted[i]]);
        double output = 0.0;
        for (const std::size_t u : st.antichain) {
            layer_sets.set(i, u);
            layer_sets.merge_from(i, ancestors, u);
            output += figures.activation[u];
        }
        st.output_activation_bytes = output;
        double compute = 0.0, activation = 0.0, parameter = 0.0;
        const std::uint64_t* mine = layer_sets.row_words(i);
        const std::size_t base = predecessors.last(i).value_or(i);  // the last predecessor, or none
        if (base != i) {
            const antichain_state& b = states[base];
            compute = b.compute_s;
            activation = b.activation_bytes;
            parameter = b.parameter_bytes;
        }
        const std::uint64_t* theirs = base != i ? layer_sets.row_words(base) : nullptr;
        for (std::size_t w = 0; w < layer_words; ++w)
            for (std::uint64_t word = mine[w] & (theirs ? ~theirs[w] : ~std::uint64_t{0}); word != 0; word &= word - 1) {
                const std::size_t p = w * 64 + static_cast<std::size_t>(std::countr_zero(word));
                compute += figures.compute[p];
                activation += figures.activation[p];
                parameter += figures.parameter[p];
            }
        st.compute_s = compute;
        st.activation_bytes = activation;
        st.parameter_bytes = parameter;
    }
    return layer_sets;
}

/// Whether the states form a path: each has every state before it as a predecessor.
[[nodiscard]] inline bool states_form_path(const bitset_rows& predecessors, std::size_t s_count) {
    for (std::size_t i = 0; i < s_count; ++i)
        if (predecessors.count(i) != i) return false;
    return true;
}

/// The linear form of states on a path (see antichain_states), from their layer sets.
inline void keep_linear_form(const bitset_rows& layer_sets, std::size_t s_count, std::size_t n, antichain_states& out) {
    out.chain = true;
    std::vector<bool> seen(n, false);
    for (std::size_t i = 0; i < s_count; ++i) {
        std::size_t count = 0;
        layer_sets.for_each(i, [&](std::size_t l) {
            ++count;
            if (!seen[l]) {
                seen[l] = true;
                out.chain_layers.push_back(l);
            }
        });
        out.chain_layer_counts.push_back(count);
    }
}

}  // namespace detail

/// Builds PipeDream's states. Preprocessing as PipeDream's optimizer: remove every source layer
/// whose description starts with "Input", then every sink whose description starts with
/// "__getitem__". The breadth-first construction, augment, deaugment and next-antichain rules
/// are PipeDream's; where PipeDream iterates a Python set (the order of the "extra" layers of an
/// augmented antichain, which varies between runs), layer order is used, so the result is
/// deterministic. None when a branching graph has more than `max_states` states: the state DAG's
/// transitive predecessors take S^2 bits and the solver's pairs O(S^2) time (inception_v3's
/// 221,564 states would need 6 GB of bits; PipeDream's own optimizer does not finish on it);
/// pipedream_partition() then takes the wide path (partition/pipedream_wide.hpp), which needs no
/// states. A chain has no limit: it is built in linear memory. Throws invalid_input when nothing
/// is left to partition.
inline constexpr std::size_t default_max_antichain_states = 20000;

[[nodiscard]] inline std::optional<antichain_states> try_build_antichain_states(
    const layer_graph& graph, std::size_t max_states = default_max_antichain_states) {
    const detail::kept_layers kept = detail::keep_pipedream_layers(graph);
    antichain_states out;
    for (std::size_t i = 0; i < graph.size(); ++i)
        if (kept.removed[i]) out.removed_layers.push_back(i);
    if (kept.order.empty()) throw invalid_input("graph", "no layers after removing Input and __getitem__ layers", "at least one layer to partition");
    if (detail::kept_layers_form_chain(kept)) {
        detail::build_chain_states(graph, kept.order, out);
        return out;
    }
    const detail::layer_closures closures = detail::close_layers(kept);
    std::optional<detail::antichain_dag> dag =
        detail::antichain_dag_builder(kept, closures, max_states).build(detail::first_kept_source(kept));
    if (!dag) return std::nullopt;
    const std::vector<std::size_t> sorted = detail::pipedream_topological_sort(*dag);
    detail::bitset_rows predecessors = detail::sorted_state_predecessors(*dag, sorted);
    detail::bitset_rows layer_sets = detail::fill_state_figures(graph, closures.ancestors, *dag, sorted, predecessors, out.states);
    if (detail::states_form_path(predecessors, sorted.size())) {
        detail::keep_linear_form(layer_sets, sorted.size(), graph.size(), out);
        return out;
    }
    out.layer_sets = std::move(layer_sets);
    out.predecessor_sets = std::move(predecessors);
    return out;
}

namespace detail {

/// The refusal of a graph over max_states states where no other path answers.
[[nodiscard]] inline invalid_input too_many_antichain_states(std::size_t max_states) {
    return invalid_input("graph", "more than " + std::to_string(max_states) + " antichain states",
                         "a graph with at most max_states = " + std::to_string(max_states) +
                             " states (their transitive predecessors need O(S^2) memory)");
}

}  // namespace detail

/// try_build_antichain_states, throwing invalid_input (the field "graph") where it has none.
[[nodiscard]] inline antichain_states build_antichain_states(const layer_graph& graph,
                                                             std::size_t max_states = default_max_antichain_states) {
    std::optional<antichain_states> built = try_build_antichain_states(graph, max_states);
    if (!built) throw detail::too_many_antichain_states(max_states);
    return std::move(*built);
}

}  // namespace dnnplan
