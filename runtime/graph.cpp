#include "runtime/graph.h"

#include <algorithm>
#include <cstddef>
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

HandleRegistry<ConditionalHandle>& live_conditional_handles() {
  static auto& registry = *new HandleRegistry<ConditionalHandle>;
  return registry;
}

HandleRegistry<UserObject>& live_user_objects() {
  static auto& registry = *new HandleRegistry<UserObject>;
  return registry;
}

ConditionalHandle::~ConditionalHandle() { live_conditional_handles().remove(this); }

static_assert(offsetof(ConditionalHandle, value) == 0 && sizeof(ConditionalHandle::value) == 4 &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "a GPU stores a plain 32-bit word at the handle's address");

bool set_conditional_from_device(uint64_t handle, uint32_t value) {
  auto* condition = reinterpret_cast<ConditionalHandle*>(handle);
  if (!live_conditional_handles().contains(condition)) return false;
  // Release: the conditional node reads the value with acquire after the kernel has ended.
  condition->value.store(value, std::memory_order_release);
  return true;
}

UserObject::UserObject(void* pointer, void (*destroy)(void*), unsigned references)
    : pointer_(pointer), destroy_(destroy), references_(references) {
  live_user_objects().add(this);
}

void UserObject::retain(unsigned count) {
  references_.fetch_add(count, std::memory_order_relaxed);
}

void UserObject::release(unsigned count) {
  if (references_.fetch_sub(count, std::memory_order_acq_rel) != count) return;
  live_user_objects().remove(this);
  destroy_(pointer_);
  delete this;
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

Graph& Node::add_body(std::unique_ptr<Graph> body) {
  body->owner_ = this;
  body_array_.push_back(body.get());
  bodies_.push_back(std::move(body));
  return *bodies_.back();
}

Graph::Graph() { live_graphs().add(this); }

Graph::~Graph() {
  live_graphs().remove(this);
  for (const auto& node : nodes_) live_graph_nodes().remove(node.get());
  for (auto [object, count] : user_objects_) object->release(count);
}

bool Graph::has_memory_nodes() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](const auto& node) {
    return node->kind() == NodeKind::memory_allocation || node->kind() == NodeKind::memory_free;
  });
}

ConditionalHandle& Graph::add_conditional_handle(uint32_t default_value, bool assign_default) {
  auto handle = std::make_shared<ConditionalHandle>();
  handle->default_value = default_value;
  handle->assign_default = assign_default;
  handle->value = assign_default ? default_value : 0;
  conditional_handles_.push_back(handle);
  live_conditional_handles().add(handle.get());
  return *handle;
}

std::shared_ptr<ConditionalHandle> Graph::conditional_handle(
    const ConditionalHandle* handle) const {
  for (const Graph* graph = this; graph; graph = graph->owner_ ? &graph->owner_->graph() : nullptr)
    for (const auto& known : graph->conditional_handles_)
      if (known.get() == handle) return known;
  return nullptr;
}

bool Graph::knows_conditional_handle(const ConditionalHandle* handle) const {
  return conditional_handle(handle) != nullptr;
}

namespace {

bool uses_conditional_handle(const Graph& graph, const ConditionalHandle* handle) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(), [handle](const auto& node) {
    if (node->kind() == NodeKind::conditional &&
        std::any_cast<const Conditional&>(node->parameters()).handle.get() == handle)
      return true;
    if (node->child() && uses_conditional_handle(*node->child(), handle)) return true;
    return std::any_of(node->bodies().begin(), node->bodies().end(),
                       [handle](const auto& body) { return uses_conditional_handle(*body, handle); });
  });
}

}  // namespace

bool Graph::conditional_handle_in_use(const ConditionalHandle* handle) const {
  const Graph* maker = this;
  while (maker->owner_ && maker->owner_->graph().knows_conditional_handle(handle)) maker = &maker->owner_->graph();
  return uses_conditional_handle(*maker, handle);
}

void Graph::retain_user_object(UserObject& object, unsigned count, bool move) {
  if (!move) object.retain(count);
  user_objects_[&object] += count;
}

Status Graph::release_user_object(UserObject& object, unsigned count) {
  auto found = user_objects_.find(&object);
  if (found == user_objects_.end() || found->second < count)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("the graph holds {} references to the user object, not {}",
                                  found == user_objects_.end() ? 0 : found->second, count));
  if ((found->second -= count) == 0) user_objects_.erase(found);
  object.release(count);
  return {};
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
  copy->conditional_handles_ = conditional_handles_;
  for (auto [object, count] : user_objects_) copy->retain_user_object(*object, count, false);
  for (const auto& node : nodes_) {
    Node& cloned = copy->add(node->kind_, node->work_, node->parameters_, {});
    if (node->child_) cloned.set_child(node->child_->clone());
    for (const auto& body : node->bodies_) cloned.add_body(body->clone());
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
      std::vector<const Graph*> inner;
      if (node->child_) inner.push_back(node->child_.get());
      for (const auto& body : node->bodies_) inner.push_back(body.get());
      for (size_t which = 0; which < inner.size(); ++which) {
        text += fmt::format("{}subgraph cluster_{}_{} {{\n", indent, number, which);
        emit(*inner[which], depth + 1);
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

// How an executable graph runs: its nodes in order, child graphs' nodes inlined, each with
// what it enqueues. A conditional node cannot be decided before the stream reaches it, so it
// becomes a host function that runs the plan of the body its condition picks on a stream of its
// own and waits for it, holding back the launching stream meanwhile.
//
// A plan a launch holds is read by the stream running it, so it never changes: see plan_.
struct GraphExec::Step {
  NodeWork work;
  bool enabled = true;
  // Of a conditional node. The body stream is shared by the copies of the step: launches of an
  // executable graph run one after another, and the step waits for each body it runs.
  std::optional<Conditional> conditional;
  std::vector<std::shared_ptr<Plan>> bodies;
  std::shared_ptr<Stream> body_stream;
};

struct GraphExec::Plan {
  std::vector<Step> steps;

  void enqueue(Stream& stream) const;
  static void run_conditional(void* step);
};

Status GraphExec::build(const Graph& graph, Plan& plan, Route& route) {
  auto sorted = graph.topological_order();
  if (!sorted) return sorted.error();
  for (Node* node : *sorted) {
    if (node->child()) {
      if (Status inner = build(*node->child(), plan, route); !inner) return inner;
      continue;
    }
    size_t index = plan.steps.size();
    Step step;
    if (node->kind() != NodeKind::conditional) {
      step.work = node->work();
      locations_.emplace(node, Location{node, route, index});
      plan.steps.push_back(std::move(step));
      continue;
    }
    step.conditional = std::any_cast<const Conditional&>(node->parameters());
    if (step.conditional->handle->assign_default)
      defaults_.push_back(step.conditional->handle.get());
    for (size_t body = 0; body < node->bodies().size(); ++body) {
      step.bodies.push_back(std::make_shared<Plan>());
      route.emplace_back(index, body);
      Status inner = build(*node->bodies()[body], *step.bodies.back(), route);
      route.pop_back();
      if (!inner) return inner;
    }
    auto queue = backend().create_queue(context_.device());
    if (!queue)
      return make_error(ErrorCode::invalid_context, "the backend has no queue for the device");
    step.body_stream = std::make_shared<Stream>(context_, std::move(queue), false, 0);
    plan.steps.push_back(std::move(step));
  }
  return {};
}

void GraphExec::Plan::enqueue(Stream& stream) const {
  for (const Step& step : steps) {
    if (step.conditional)
      stream.queue().host_function(run_conditional, const_cast<Step*>(&step));
    else if (step.work && step.enabled)
      step.work(stream);
  }
}

void GraphExec::Plan::run_conditional(void* data) {
  const Step& step = *static_cast<const Step*>(data);
  const Conditional& conditional = *step.conditional;
  for (;;) {
    uint32_t value = conditional.handle->value.load(std::memory_order_acquire);
    const Plan* body = nullptr;
    if (conditional.kind == ConditionalKind::switch_on)
      body = value < step.bodies.size() ? step.bodies[value].get() : nullptr;
    else if (value != 0)
      body = step.bodies.front().get();
    else if (conditional.kind == ConditionalKind::if_then && step.bodies.size() == 2)
      body = step.bodies[1].get();
    if (!body) return;
    body->enqueue(*step.body_stream);
    if (Status finished = step.body_stream->queue().synchronize(); !finished) {
      step.body_stream->context().record_fault(finished.error());
      return;
    }
    if (conditional.kind != ConditionalKind::while_loop) return;
  }
}

GraphExec::GraphExec(std::shared_ptr<Graph> graph, Context& context, uint64_t flags)
    : graph_(std::move(graph)),
      plan_(std::make_shared<Plan>()),
      context_(context),
      flags_(flags),
      previous_launch_(context, false),
      instantiation_(std::make_shared<int>()) {}

Expected<std::unique_ptr<GraphExec>> GraphExec::instantiate(Graph& graph, Context& context,
                                                            uint64_t flags) {
  std::unique_ptr<GraphExec> exec(new GraphExec(graph.clone(), context, flags));
  Route route;
  if (Status built = exec->build(*exec->graph_, *exec->plan_, route); !built)
    return built.error();
  graph.set_instantiation(exec->instantiation_);
  return exec;
}

namespace {

// What a launch keeps alive until the stream has run it.
struct LaunchHold {
  std::shared_ptr<Graph> graph;
  std::shared_ptr<const void> plan;
};

// `plan`, replaced first by a copy of it when something else (a launch, another plan) holds it.
template <class Plan>
Plan& exclusive(std::shared_ptr<Plan>& plan) {
  if (plan.use_count() != 1) {
    plan = std::make_shared<Plan>(*plan);
  } else {
    // Whoever held it before (a stream ending a launch) released it with release ordering:
    // its reads of the plan happen before the writes that follow.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return *plan;
}

}  // namespace

void GraphExec::launch(Stream& stream) {
  previous_launch_.make_stream_wait(stream);
  if (!defaults_.empty()) {
    auto* handles = new std::vector<ConditionalHandle*>(defaults_);
    stream.queue().host_function(
        [](void* data) {
          std::unique_ptr<std::vector<ConditionalHandle*>> handles(
              static_cast<std::vector<ConditionalHandle*>*>(data));
          for (ConditionalHandle* handle : *handles)
            handle->value.store(handle->default_value, std::memory_order_release);
        },
        handles);
  }
  plan_->enqueue(stream);
  stream.queue().host_function(
      [](void* data) { delete static_cast<LaunchHold*>(data); },
      new LaunchHold{graph_, plan_});
  previous_launch_.record(stream);
}

const Node* GraphExec::find(const Node& original) const { return graph_->find_clone(original); }

GraphExec::Step& GraphExec::writable_step(const Location& location) {
  Plan* plan = &exclusive(plan_);
  for (auto [step, body] : location.route) plan = &exclusive(plan->steps[step].bodies[body]);
  return plan->steps[location.step];
}

void GraphExec::set_work(const Node& node, NodeWork work, std::any parameters) {
  const Location& location = locations_.at(&node);
  writable_step(location).work = work;
  location.node->set_work(std::move(work), std::move(parameters));
}

void GraphExec::set_enabled(const Node& node, bool enabled) {
  const Location& location = locations_.at(&node);
  writable_step(location).enabled = enabled;
  location.node->set_enabled(enabled);
}

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
    if (old_node.kind() == NodeKind::conditional) {
      const auto& old_conditional = std::any_cast<const Conditional&>(old_node.parameters());
      const auto& new_conditional = std::any_cast<const Conditional&>(new_node.parameters());
      if (old_conditional.handle != new_conditional.handle ||
          old_conditional.kind != new_conditional.kind)
        return UpdateFailure{UpdateFailure::Reason::parameters_changed, &new_node,
                             fmt::format("conditional node {} changed its handle or type", i)};
      if (old_node.bodies().size() != new_node.bodies().size())
        return UpdateFailure{UpdateFailure::Reason::topology_changed, &new_node,
                             fmt::format("conditional node {} changed its number of bodies", i)};
      for (size_t body = 0; body < old_node.bodies().size(); ++body)
        if (auto inner = compare(*old_node.bodies()[body], *new_node.bodies()[body], compatible))
          return inner;
    }
  }
  return std::nullopt;
}

void take_parameters(const Graph& current, const Graph& replacement) {
  for (size_t i = 0; i < current.nodes().size(); ++i) {
    Node& target = *current.nodes()[i];
    const Node& source = *replacement.nodes()[i];
    // compare() found the conditional node's own parameters equal: only its bodies change.
    if (target.kind() == NodeKind::conditional) {
      for (size_t body = 0; body < target.bodies().size(); ++body)
        take_parameters(*target.bodies()[body], *source.bodies()[body]);
      continue;
    }
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
  for (const auto& [node, location] : locations_) writable_step(location).work = node->work();
  return std::nullopt;
}

}  // namespace xcuda::runtime
