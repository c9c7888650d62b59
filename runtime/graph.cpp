#include "runtime/graph.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

namespace xcuda::runtime {

HandleRegistry<Graph>& live_graphs() {
  static auto& registry = *new HandleRegistry<Graph>;
  return registry;
}

HandleRegistry<Node>& live_graph_nodes() {
  static auto& registry = *new HandleRegistry<Node>;
  return registry;
}

HandleRegistry<GraphExec>& live_graph_execs() {
  static auto& registry = *new HandleRegistry<GraphExec>;
  return registry;
}

Node::Node(Graph& graph, NodeKind kind, NodeWork work, std::any parameters)
    : graph_(graph), kind_(kind), work_(std::move(work)), parameters_(std::move(parameters)) {}

void Node::set_work(NodeWork work, std::any parameters) {
  work_ = std::move(work);
  parameters_ = std::move(parameters);
}

void Node::copy_work_from(const Node& other) {
  work_ = other.work_;
  parameters_ = other.parameters_;
}

void Node::set_child(std::unique_ptr<Graph> child) {
  child_ = std::move(child);
  if (child_) child_->owner_ = this;
}

void Node::enqueue(Stream& stream) const {
  if (work_) work_(stream);
}

Graph::Graph() { live_graphs().add(this); }

Graph::~Graph() {
  live_graphs().remove(this);
  for (const auto& node : nodes_) live_graph_nodes().remove(node.get());
}

Node& Graph::add(NodeKind kind, NodeWork work, std::any parameters,
                 std::span<Node* const> dependencies) {
  nodes_.push_back(std::make_unique<Node>(*this, kind, std::move(work), std::move(parameters)));
  Node& node = *nodes_.back();
  for (Node* dependency : dependencies) {
    // A dependency listed twice is one edge, as the driver treats it.
    if (std::find(node.dependencies_.begin(), node.dependencies_.end(), dependency) !=
        node.dependencies_.end())
      continue;
    node.dependencies_.push_back(dependency);
    dependency->dependents_.push_back(&node);
  }
  live_graph_nodes().add(&node);
  return node;
}

Status Graph::add_edge(Node& from, Node& to) {
  if (&from == &to) return make_error(ErrorCode::invalid_value, "an edge from a node to itself");
  if (std::find(to.dependencies_.begin(), to.dependencies_.end(), &from) != to.dependencies_.end())
    return make_error(ErrorCode::invalid_value, "the edge exists already");
  to.dependencies_.push_back(&from);
  from.dependents_.push_back(&to);
  return {};
}

Status Graph::remove_edge(Node& from, Node& to) {
  auto found = std::find(to.dependencies_.begin(), to.dependencies_.end(), &from);
  if (found == to.dependencies_.end())
    return make_error(ErrorCode::invalid_value, "there is no such edge");
  to.dependencies_.erase(found);
  std::erase(from.dependents_, &to);
  return {};
}

void Graph::destroy(Node& node) {
  for (Node* dependency : node.dependencies_) std::erase(dependency->dependents_, &node);
  for (Node* dependent : node.dependents_) std::erase(dependent->dependencies_, &node);
  std::erase_if(clones_, [&](const auto& entry) { return entry.second == &node; });
  live_graph_nodes().remove(&node);
  std::erase_if(nodes_, [&](const auto& owned) { return owned.get() == &node; });
}

std::vector<Node*> Graph::roots() const {
  std::vector<Node*> result;
  for (const auto& node : nodes_)
    if (node->dependencies_.empty()) result.push_back(node.get());
  return result;
}

size_t Graph::edge_count() const {
  size_t count = 0;
  for (const auto& node : nodes_) count += node->dependencies_.size();
  return count;
}

Expected<std::vector<Node*>> Graph::topological_order() const {
  // Kahn's algorithm, seeded in creation order so the order is the same on every call.
  std::unordered_map<const Node*, size_t> waiting;
  std::deque<Node*> ready;
  for (const auto& node : nodes_) {
    waiting[node.get()] = node->dependencies_.size();
    if (node->dependencies_.empty()) ready.push_back(node.get());
  }
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    Node* node = ready.front();
    ready.pop_front();
    order.push_back(node);
    for (Node* dependent : node->dependents_)
      if (--waiting[dependent] == 0) ready.push_back(dependent);
  }
  if (order.size() != nodes_.size())
    return make_error(ErrorCode::invalid_value,
                      fmt::format("the graph has a cycle through {} of its {} nodes",
                                  nodes_.size() - order.size(), nodes_.size()));
  return order;
}

std::unique_ptr<Graph> Graph::clone() const {
  auto copy = std::make_unique<Graph>();
  for (const auto& node : nodes_) {
    Node& cloned = copy->add(node->kind_, node->work_, node->parameters_, {});
    if (node->child_) cloned.set_child(node->child_->clone());
    copy->clones_[node.get()] = &cloned;
  }
  for (const auto& node : nodes_)
    for (Node* dependency : node->dependencies_)
      (void)copy->add_edge(*copy->clones_.at(dependency), *copy->clones_.at(node.get()));
  return copy;
}

Node* Graph::find_clone(const Node& original) const {
  auto found = clones_.find(&original);
  return found == clones_.end() ? nullptr : found->second;
}

std::string Graph::dot(const std::function<std::string(const Node&)>& describe) const {
  std::unordered_map<const Node*, size_t> index;
  std::string text;
  // Child graphs become clusters; every node is named by a number unique in the whole text.
  std::function<void(const Graph&, int)> emit = [&](const Graph& graph, int depth) {
    std::string indent(size_t(depth) * 2 + 2, ' ');
    for (const auto& node : graph.nodes_) {
      size_t number = index.size();
      index[node.get()] = number;
      text += fmt::format("{}node{} [label=\"{}\"];\n", indent, number, describe(*node));
      if (node->child_) {
        text += fmt::format("{}subgraph cluster_{} {{\n", indent, number);
        emit(*node->child_, depth + 1);
        text += indent + "}\n";
      }
    }
    for (const auto& node : graph.nodes_)
      for (Node* dependency : node->dependencies_)
        text += fmt::format("{}node{} -> node{};\n", indent, index.at(dependency),
                            index.at(node.get()));
  };
  text += "digraph xcuda_graph {\n";
  emit(*this, 0);
  text += "}\n";
  return text;
}

namespace {

// The executable order: the graph's topological order with each child graph's nodes in place
// of the node embedding it.
Status flatten(const Graph& graph, std::vector<Node*>& order) {
  auto sorted = graph.topological_order();
  if (!sorted) return sorted.error();
  for (Node* node : *sorted) {
    if (node->child()) {
      if (Status inner = flatten(*node->child(), order); !inner) return inner;
    } else {
      order.push_back(node);
    }
  }
  return {};
}

}  // namespace

GraphExec::GraphExec(std::unique_ptr<Graph> graph, std::vector<Node*> order, Context& context,
                     uint64_t flags)
    : graph_(std::move(graph)),
      order_(std::move(order)),
      context_(context),
      flags_(flags),
      previous_launch_(context, false) {}

Expected<std::unique_ptr<GraphExec>> GraphExec::instantiate(const Graph& graph, Context& context,
                                                            uint64_t flags) {
  auto copy = graph.clone();
  std::vector<Node*> order;
  if (Status flattened = flatten(*copy, order); !flattened) return flattened.error();
  return std::unique_ptr<GraphExec>(new GraphExec(std::move(copy), std::move(order), context, flags));
}

void GraphExec::launch(Stream& stream) {
  previous_launch_.make_stream_wait(stream);
  for (Node* node : order_) node->enqueue(stream);
  previous_launch_.record(stream);
}

Node* GraphExec::find(const Node& original) const { return graph_->find_clone(original); }

namespace {

// Pairs the nodes of two graphs in creation order and checks that they match in kind and edges.
std::optional<UpdateFailure> compare(const Graph& current, const Graph& replacement,
                                     const KernelCompatibility& compatible) {
  const auto& old_nodes = current.nodes();
  const auto& new_nodes = replacement.nodes();
  if (old_nodes.size() != new_nodes.size())
    return UpdateFailure{UpdateFailure::Reason::topology_changed, nullptr,
                         fmt::format("the graph has {} nodes, the executable graph {}",
                                     new_nodes.size(), old_nodes.size())};
  std::unordered_map<const Node*, size_t> old_index, new_index;
  for (size_t i = 0; i < old_nodes.size(); ++i) {
    old_index[old_nodes[i].get()] = i;
    new_index[new_nodes[i].get()] = i;
  }
  for (size_t i = 0; i < old_nodes.size(); ++i) {
    const Node& old_node = *old_nodes[i];
    const Node& new_node = *new_nodes[i];
    if (old_node.kind() != new_node.kind())
      return UpdateFailure{UpdateFailure::Reason::node_type_changed, &new_node,
                           fmt::format("node {} changed its type", i)};
    std::vector<size_t> old_edges, new_edges;
    for (Node* dependency : old_node.dependencies()) old_edges.push_back(old_index.at(dependency));
    for (Node* dependency : new_node.dependencies()) new_edges.push_back(new_index.at(dependency));
    std::sort(old_edges.begin(), old_edges.end());
    std::sort(new_edges.begin(), new_edges.end());
    if (old_edges != new_edges)
      return UpdateFailure{UpdateFailure::Reason::topology_changed, &new_node,
                           fmt::format("the dependencies of node {} changed", i)};
    if (old_node.kind() == NodeKind::kernel && !compatible(old_node, new_node))
      return UpdateFailure{UpdateFailure::Reason::function_changed, &new_node,
                           fmt::format("kernel node {} runs a function it may not change to", i)};
    if (old_node.child())
      if (auto inner = compare(*old_node.child(), *new_node.child(), compatible)) return inner;
  }
  return std::nullopt;
}

void take_parameters(const Graph& current, const Graph& replacement) {
  for (size_t i = 0; i < current.nodes().size(); ++i) {
    Node& target = *current.nodes()[i];
    const Node& source = *replacement.nodes()[i];
    if (target.child()) {
      take_parameters(*target.child(), *source.child());
    } else {
      target.copy_work_from(source);
    }
  }
}

}  // namespace

std::optional<UpdateFailure> GraphExec::update(const Graph& graph,
                                               const KernelCompatibility& compatible) {
  if (auto failure = compare(*graph_, graph, compatible)) return failure;
  take_parameters(*graph_, graph);
  return std::nullopt;
}

}  // namespace xcuda::runtime
