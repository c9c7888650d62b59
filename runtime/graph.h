// CUDA graphs: nodes of work with dependencies between them, built explicitly (cuGraphAdd*) or
// by capturing a stream, then instantiated into an executable graph that a stream runs as one
// unit of work.
//
// A node's work is opaque here: the API layer describes it with a closure that enqueues it on
// a stream, plus the parameters it was given (kept for the node's getters). An executable graph
// runs its nodes in one topological order on the launching stream's queue, which keeps every
// dependency and orders the whole graph with the stream's other work.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/context.h"
#include "runtime/event.h"
#include "runtime/handles.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Graph;

// The node types of CUgraphNodeType that xcuda builds.
enum class NodeKind { kernel, memcpy, memset, host, child_graph, empty, event_wait, event_record };

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
  void enqueue(Stream& stream) const;

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

  // The child-graph node embedding this graph, or nullptr for a graph of its own.
  Node* owner() const { return owner_; }

  // Graphviz text describing the graph, for cuGraphDebugDotPrint. `describe` labels a node.
  std::string dot(const std::function<std::string(const Node&)>& describe) const;

 private:
  friend class Node;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<const Node*, Node*> clones_;  // original node -> node of this copy
  Node* owner_ = nullptr;
};

// What cuGraphExecUpdate reports when the graphs differ in shape.
struct UpdateFailure {
  enum class Reason { topology_changed, node_type_changed, function_changed } reason;
  const Node* node;  // the node of the new graph where the difference was found
  std::string message;
};

// `compatible` decides whether two kernel nodes may replace one another (same function).
using KernelCompatibility = std::function<bool(const Node& current, const Node& replacement)>;

class GraphExec {
 public:
  // invalid_value when the graph has a cycle.
  static Expected<std::unique_ptr<GraphExec>> instantiate(const Graph& graph, Context& context,
                                                          uint64_t flags);

  Context& context() const { return context_; }
  uint64_t flags() const { return flags_; }
  // The executable copy, with every update applied.
  const Graph& graph() const { return *graph_; }
  // Enqueues every node on `stream`, after the previous launch of this graph has finished.
  void launch(Stream& stream);
  // The executable copy of `original`, a node of the graph this was instantiated from.
  Node* find(const Node& original) const;
  // Takes every node's parameters from `graph`, which must have the same shape; nothing
  // changes when it does not.
  std::optional<UpdateFailure> update(const Graph& graph, const KernelCompatibility& compatible);

 private:
  GraphExec(std::unique_ptr<Graph> graph, std::vector<Node*> order, Context& context,
            uint64_t flags);

  std::unique_ptr<Graph> graph_;
  std::vector<Node*> order_;  // child graphs' nodes inlined
  Context& context_;
  uint64_t flags_;
  Event previous_launch_;
};

HandleRegistry<Graph>& live_graphs();
HandleRegistry<Node>& live_graph_nodes();
HandleRegistry<GraphExec>& live_graph_execs();

}  // namespace xcuda::runtime
