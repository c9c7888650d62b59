// CUDA graphs: nodes of work with dependencies between them, built explicitly (cuGraphAdd*) or
// by capturing a stream, then instantiated into an executable graph that a stream runs as one
// unit of work.
//
// A node's work is opaque here: the API layer describes it with a closure that enqueues it on
// a stream, plus the parameters it was given (kept for the node's getters). An executable graph
// runs its nodes in one topological order on the launching stream's queue, which keeps every
// dependency and orders the whole graph with the stream's other work. Each launch runs the
// executable graph as it stood when it was launched, however it changes before the stream
// reaches the launch.
#pragma once

#include <any>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/context.h"
#include "runtime/event.h"
#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Graph;

// The node types of CUgraphNodeType that xcuda builds.
enum class NodeKind {
  kernel,
  memcpy,
  memset,
  host,
  child_graph,
  empty,
  event_wait,
  event_record,
  memory_allocation,
  memory_free,
  conditional,
};

// The condition of conditional nodes (cuGraphConditionalHandleCreate). The graph and every copy
// made of it (clones, executable graphs) share one value, so two executable graphs of one graph
// running at once share it too. The CUgraphConditionalHandle is the object's address, which is
// also the address of the 32-bit value: device code compiled for a GPU sets the condition
// (cudaGraphSetConditional) by storing there.
struct ConditionalHandle {
  ~ConditionalHandle();  // leaves live_conditional_handles()
  std::atomic<uint32_t> value{0};
  uint32_t default_value = 0;
  bool assign_default = false;  // CU_GRAPH_COND_ASSIGN_DEFAULT: reset at every launch
};

// cudaGraphSetConditional called by a kernel: stores `value` for the conditional nodes that run
// after the kernel. False, storing nothing, when `handle` is no live conditional handle.
bool set_conditional_from_device(uint64_t handle, uint32_t value);

// CUgraphConditionalNodeType, in its order.
enum class ConditionalKind { if_then, while_loop, switch_on };

// A conditional node's parameters: at run time, when the stream reaches the node, `if_then`
// runs its first body when the value is not 0 (and a second body, if there is one, when it is
// 0), `while_loop` runs its body for as long as the value is not 0, `switch_on` runs body
// number `value` if there is one.
struct Conditional {
  std::shared_ptr<ConditionalHandle> handle;
  ConditionalKind kind = ConditionalKind::if_then;
};

// References to a CUuserObject: the destructor runs where the last one is released.
class UserObject {
 public:
  UserObject(void* pointer, void (*destroy)(void*), unsigned references);
  void retain(unsigned count);
  void release(unsigned count);

 private:
  void* pointer_;
  void (*destroy_)(void*);
  std::atomic<uint64_t> references_;
};

// Enqueues a node's work on the stream running the graph. Runs once per launch, so it must
// leave what it holds intact.
using NodeWork = std::function<void(Stream&)>;

class Node {
 public:
  Node(Graph& graph, NodeKind kind, NodeWork work, std::any parameters);

  Graph& graph() const { return graph_; }
  NodeKind kind() const { return kind_; }
  const std::any& parameters() const { return parameters_; }
  void set_work(NodeWork work, std::any parameters);
  // Takes another node's work and parameters, leaving that node unchanged.
  void copy_work_from(const Node& other);
  // Child-graph nodes embed their own copy of the graph they were given.
  Graph* child() const { return child_.get(); }
  void set_child(std::unique_ptr<Graph> child);
  const NodeWork& work() const { return work_; }
  // A conditional node's bodies, which the node owns: the graphs cuGraphAddNode hands out, in
  // an array of its own.
  const std::vector<std::unique_ptr<Graph>>& bodies() const { return bodies_; }
  Graph* const* body_array() const { return body_array_.data(); }
  Graph& add_body(std::unique_ptr<Graph> body);
  // Of a node of an executable graph: whether its launches run it (cuGraphNodeSetEnabled).
  bool enabled() const { return enabled_; }
  void set_enabled(bool enabled) { enabled_ = enabled; }

  // In the order the edges were added, as cuGraphNodeGetDependencies reports them.
  const std::vector<Node*>& dependencies() const { return dependencies_; }
  const std::vector<Node*>& dependents() const { return dependents_; }

 private:
  friend class Graph;
  Graph& graph_;
  NodeKind kind_;
  NodeWork work_;
  std::any parameters_;
  std::unique_ptr<Graph> child_;
  std::vector<std::unique_ptr<Graph>> bodies_;
  std::vector<Graph*> body_array_;
  bool enabled_ = true;
  std::vector<Node*> dependencies_;
  std::vector<Node*> dependents_;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Every node of `dependencies` must belong to this graph (check with owns()).
  Node& add(NodeKind kind, NodeWork work, std::any parameters, std::span<Node* const> dependencies);
  bool owns(const Node& node) const { return &node.graph() == this; }
  // invalid_value for an edge that exists already or joins a node to itself.
  Status add_edge(Node& from, Node& to);
  // invalid_value when there is no such edge.
  Status remove_edge(Node& from, Node& to);
  void destroy(Node& node);

  // In creation order: the order cuGraphGetNodes reports and cuGraphExecUpdate pairs nodes in.
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  std::vector<Node*> roots() const;
  size_t edge_count() const;
  // Every node after all of its dependencies; invalid_value naming a node when there is a cycle.
  Expected<std::vector<Node*>> topological_order() const;

  // A deep copy. Each node of the copy remembers the node it was copied from (find_clone).
  std::unique_ptr<Graph> clone() const;
  Node* find_clone(const Node& original) const;

  // The child-graph or conditional node embedding this graph, or nullptr for a graph of its
  // own.
  Node* owner() const { return owner_; }
  // Holds a node of a kind whose graphs the driver restricts (cannot be cloned, embedded or
  // instantiated twice at once): memory allocation and free nodes.
  bool has_memory_nodes() const;

  // Conditional handles made for this graph: they live as long as it, or a node using them.
  ConditionalHandle& add_conditional_handle(uint32_t default_value, bool assign_default);
  // Whether `handle` was made for this graph or a graph embedding it.
  bool knows_conditional_handle(const ConditionalHandle* handle) const;
  std::shared_ptr<ConditionalHandle> conditional_handle(const ConditionalHandle* handle) const;
  // Whether a conditional node uses `handle` already, anywhere in the graph that made it (this
  // one or one embedding it): each handle serves one node (NVIDIA's driver 580 refuses a second).
  bool conditional_handle_in_use(const ConditionalHandle* handle) const;

  // References this graph holds on user objects (cuGraphRetainUserObject), released when the
  // graph is destroyed. Clones and executable graphs hold their own.
  void retain_user_object(UserObject& object, unsigned count, bool move);
  // invalid_value when the graph holds fewer than `count`.
  Status release_user_object(UserObject& object, unsigned count);

  // An executable graph exists for this graph (the driver allows one at a time for graphs with
  // memory nodes): a token the executable graph owns.
  bool has_live_instantiation() const { return !instantiation_.expired(); }
  void set_instantiation(const std::shared_ptr<const void>& token) { instantiation_ = token; }

  // Graphviz text describing the graph, for cuGraphDebugDotPrint. `describe` labels a node.
  std::string dot(const std::function<std::string(const Node&)>& describe) const;

 private:
  friend class Node;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<const Node*, Node*> clones_;  // original node -> node of this copy
  Node* owner_ = nullptr;
  std::vector<std::shared_ptr<ConditionalHandle>> conditional_handles_;
  std::unordered_map<UserObject*, unsigned> user_objects_;
  std::weak_ptr<const void> instantiation_;
};

// What cuGraphExecUpdate reports when the graphs differ in shape.
struct UpdateFailure {
  enum class Reason {
    topology_changed,
    node_type_changed,
    function_changed,
    parameters_changed,  // a conditional node's handle or kind
  } reason;
  const Node* node;  // the node of the new graph where the difference was found
  std::string message;
};

// `compatible` decides whether two kernel nodes may replace one another (same function).
using KernelCompatibility = std::function<bool(const Node& current, const Node& replacement)>;

class GraphExec {
 public:
  // invalid_value when the graph has a cycle.
  // Takes a copy of `graph`, which remembers that it was instantiated.
  static Expected<std::unique_ptr<GraphExec>> instantiate(Graph& graph, Context& context,
                                                          uint64_t flags);

  Context& context() const { return context_; }
  uint64_t flags() const { return flags_; }
  // The executable copy, with every change applied.
  const Graph& graph() const { return *graph_; }
  // Enqueues every node on `stream`, after the previous launch of this graph has finished, as
  // the nodes stand now: later changes leave this launch alone. What the launch runs lives until
  // it has finished, even if this is destroyed first.
  void launch(Stream& stream);
  // The executable copy of `original`, a node of the graph this was instantiated from.
  const Node* find(const Node& original) const;

  // Changes to the executable copy's nodes, for the launches made after them. Every change goes
  // through these, which keep the launches made before as they were.
  // `node` is a node of graph() that is not a conditional or child-graph node.
  void set_work(const Node& node, NodeWork work, std::any parameters);
  void set_enabled(const Node& node, bool enabled);
  // Takes every node's parameters from `graph`, which must have the same shape; nothing
  // changes when it does not.
  std::optional<UpdateFailure> update(const Graph& graph, const KernelCompatibility& compatible);

 private:
  struct Plan;
  struct Step;
  using Route = std::vector<std::pair<size_t, size_t>>;
  // Where a node's step lies: the conditional nodes' bodies it is in, outermost first, each as
  // (the conditional node's step, the body's number), then its step in the innermost plan.
  struct Location {
    Node* node;
    Route route;
    size_t step;
  };

  GraphExec(std::shared_ptr<Graph> graph, Context& context, uint64_t flags);
  Status build(const Graph& graph, Plan& plan, Route& route);
  // The step at `location`, in plans no launch holds (see plan_).
  Step& writable_step(const Location& location);

  std::shared_ptr<Graph> graph_;
  // The order nodes run in, child graphs' nodes inlined, with what conditional nodes need: what
  // the next launch runs. A launch holds the plan it ran until it has finished; a change copies
  // what launches hold before changing it (copy on write), so only the plans of later launches
  // change.
  std::shared_ptr<Plan> plan_;
  // Where each node of graph_ that does work has its step in plan_.
  std::unordered_map<const Node*, Location> locations_;
  // Conditional handles set to their default value at the start of every launch.
  std::vector<ConditionalHandle*> defaults_;
  Context& context_;
  uint64_t flags_;
  Event previous_launch_;
  std::shared_ptr<const void> instantiation_;  // see Graph::set_instantiation
};

HandleRegistry<Graph>& live_graphs();
HandleRegistry<Node>& live_graph_nodes();
HandleRegistry<GraphExec>& live_graph_execs();
HandleRegistry<ConditionalHandle>& live_conditional_handles();
HandleRegistry<UserObject>& live_user_objects();

}  // namespace xcuda::runtime
