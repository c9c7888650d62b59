#include "check/checker.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <unordered_map>

#include "check/instruction_set.h"
#include "check/qualifiers.h"
#include "check/requirements.h"
#include "check/special_registers.h"
#include "check/targets.h"
#include "check/tensor_memory.h"

namespace xcuda::ptx {
namespace {

// Instructions whose data operands may be wider registers than the instruction type.
bool allows_wider_registers(std::string_view opcode) {
  return opcode == "ld" || opcode == "ldu" || opcode == "st" || opcode == "cvt";
}

bool is_compatible(ScalarType register_type, ScalarType instruction_type, bool relaxed) {
  TypeKind register_kind = kind_of(register_type);
  TypeKind instruction_kind = kind_of(instruction_type);
  if ((register_kind == TypeKind::predicate) != (instruction_kind == TypeKind::predicate)) return false;
  if (register_kind == TypeKind::predicate) return true;
  bool register_float = register_kind == TypeKind::floating;
  bool instruction_float = instruction_kind == TypeKind::floating;
  if (register_kind != TypeKind::bits && instruction_kind != TypeKind::bits &&
      register_float != instruction_float)
    return false;
  uint32_t register_bits = bit_width(register_type);
  uint32_t instruction_bits = bit_width(instruction_type);
  if (register_bits == instruction_bits) return true;
  return relaxed && register_bits > instruction_bits && !register_float;
}

ScalarType widened(ScalarType type) {
  switch (type) {
    case ScalarType::u16: return ScalarType::u32;
    case ScalarType::u32: return ScalarType::u64;
    case ScalarType::s16: return ScalarType::s32;
    case ScalarType::s32: return ScalarType::s64;
    case ScalarType::b16: return ScalarType::b32;
    case ScalarType::b32: return ScalarType::b64;
    case ScalarType::f32: return ScalarType::f64;
    default: return type;
  }
}

class ModuleChecker {
 public:
  ModuleChecker(Module& module, DiagnosticSink& diagnostics) : module_(module), diagnostics_(diagnostics) {}

  void run();
  void check_target();
  void resolve_alias(const FunctionAlias& alias);
  void check_masked_address(const VariableDeclaration& variable, const InitialValue& value);

  DiagnosticSink& diagnostics() { return diagnostics_; }
  const Module& module() const { return module_; }
  const ModuleLevel& level() const { return level_; }

  std::optional<uint32_t> variable(const std::string& name) const {
    auto found = variables_.find(name);
    if (found == variables_.end()) return std::nullopt;
    return found->second;
  }
  std::optional<uint32_t> function(const std::string& name) const {
    auto found = functions_.find(name);
    if (found == functions_.end()) return std::nullopt;
    return found->second;
  }

 private:
  Module& module_;
  DiagnosticSink& diagnostics_;
  ModuleLevel level_ = module_level(module_);
  std::unordered_map<std::string, uint32_t> variables_;
  std::unordered_map<std::string, uint32_t> functions_;
};

class FunctionChecker {
 public:
  FunctionChecker(ModuleChecker& module, Function& function) : module_(module), function_(function) {}

  void run() {
    scopes_.emplace_back();
    for (auto& declaration : function_.returns) declare(declaration);
    for (auto& declaration : function_.parameters) declare(declaration);
    for (auto& statement : function_.body) {
      if (auto* label = std::get_if<Label>(&statement)) define_label(label->name, label->location);
    }
    for (const CallPrototype& prototype : function_.call_prototypes) define_label(prototype.name, prototype.location);
    for (const TargetList& list : function_.target_lists) define_label(list.name, list.location);
    for (TargetList& list : function_.target_lists) check_targets(list);
    for (auto& statement : function_.body) {
      if (auto* declaration = std::get_if<VariableDeclaration>(&statement)) {
        declare(*declaration);
      } else if (std::holds_alternative<ScopeBegin>(statement)) {
        scopes_.emplace_back();
      } else if (std::holds_alternative<ScopeEnd>(statement)) {
        scopes_.pop_back();
      } else if (auto* instruction = std::get_if<Instruction>(&statement)) {
        check(*instruction);
      }
    }
  }

 private:
  // Registers with a range (%r<10>) are found by prefix; the map keeps both kinds.
  struct Scope {
    std::map<std::string, uint32_t, std::less<>> names;
    std::map<std::string, uint32_t, std::less<>> register_ranges;
  };

  void error(SourceLocation location, std::string message) { module_.diagnostics().error(location, std::move(message)); }

  void define_label(const std::string& name, SourceLocation location) {
    if (!labels_.emplace(name, location).second) error(location, "label '" + name + "' is defined twice");
  }

  // A .branchtargets list names labels of this function, a .calltargets list functions.
  void check_targets(TargetList& list) {
    for (Operand& target : list.targets) {
      if (list.functions) {
        if (auto index = module_.function(target.name)) {
          target.resolution = Operand::Resolution::function;
          target.declaration = *index;
        } else {
          error(target.location, "unknown function '" + target.name + "'");
        }
      } else if (labels_.contains(target.name)) {
        target.resolution = Operand::Resolution::label;
      } else {
        error(target.location, "unknown label '" + target.name + "'");
      }
    }
  }

  void declare(VariableDeclaration& declaration) {
    uint32_t index = static_cast<uint32_t>(function_.declarations.size());
    function_.declarations.push_back(&declaration);
    Scope& scope = scopes_.back();
    auto& table = declaration.register_count != 0 ? scope.register_ranges : scope.names;
    if (!table.emplace(declaration.name, index).second)
      error(declaration.location, "'" + declaration.name + "' is declared twice in the same scope");
    if (declaration.unsized_array && !(declaration.space == StateSpace::shared && declaration.is_extern))
      error(declaration.location, "only .extern .shared arrays may leave their size out");
    if (declaration.type == ScalarType::pred && declaration.space != StateSpace::reg)
      error(declaration.location, "a predicate can only be a register");
    for (std::string& message : unmet_requirements(declaration, module_.level())) error(declaration.location, std::move(message));
  }

  // Finds a name in the innermost scope that declares it.
  bool resolve_local(Operand& operand) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      if (auto found = scope->names.find(operand.name); found != scope->names.end()) {
        const VariableDeclaration& declaration = *function_.declarations[found->second];
        operand.resolution = declaration.space == StateSpace::reg ? Operand::Resolution::register_
                                                                  : Operand::Resolution::local_variable;
        operand.declaration = found->second;
        operand.register_index = 0;
        return true;
      }
      size_t digits = operand.name.find_last_not_of("0123456789") + 1;
      if (digits == operand.name.size() || digits == 0) continue;
      std::string_view prefix = std::string_view(operand.name).substr(0, digits);
      auto found = scope->register_ranges.find(prefix);
      if (found == scope->register_ranges.end()) continue;
      std::string_view number = std::string_view(operand.name).substr(digits);
      if (number.size() > 1 && number[0] == '0') continue;  // %r01 is not %r1
      uint64_t index = 0;
      auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), index);
      if (error != std::errc() || index >= function_.declarations[found->second]->register_count) continue;
      operand.resolution = Operand::Resolution::register_;
      operand.declaration = found->second;
      operand.register_index = static_cast<uint32_t>(index);
      return true;
    }
    return false;
  }

  // Resolves any name: local declarations first, then special registers, module variables,
  // functions and labels. Reports names that are nothing.
  bool resolve(Operand& operand) {
    if (resolve_local(operand)) return true;
    if (operand.name[0] == '%') {
      if (const SpecialRegister* special = find_special_register(operand.name.substr(1))) {
        operand.resolution = Operand::Resolution::special_register;
        bool component_ok = operand.component == "x" || operand.component == "y" || operand.component == "z";
        if (special->has_components && !component_ok) {
          error(operand.location, "'" + operand.name + "' needs a component .x, .y or .z");
          return false;
        }
        if (!special->has_components && !operand.component.empty()) {
          error(operand.location, "'" + operand.name + "' has no components");
          return false;
        }
        return true;
      }
    }
    if (auto index = module_.variable(operand.name)) {
      operand.resolution = Operand::Resolution::module_variable;
      operand.declaration = *index;
      return true;
    }
    if (auto index = module_.function(operand.name)) {
      operand.resolution = Operand::Resolution::function;
      operand.declaration = *index;
      return true;
    }
    if (labels_.contains(operand.name)) {
      operand.resolution = Operand::Resolution::label;
      return true;
    }
    error(operand.location, "unknown name '" + operand.name + "'");
    return false;
  }

  const VariableDeclaration& declaration_of(const Operand& operand) const {
    if (operand.resolution == Operand::Resolution::module_variable)
      return module_.module().variables[operand.declaration];
    return *function_.declarations[operand.declaration];
  }

  void check(Instruction& instruction) {
    const InstructionSignature* signature = find_instruction(instruction.opcode);
    if (signature == nullptr) {
      error(instruction.location, is_later_ptx_instruction(instruction.opcode)
                                      ? "'" + instruction.opcode + "' is not supported yet"
                                      : "unknown instruction '" + instruction.opcode + "'");
      return;
    }
    if (instruction.guard) {
      Operand& predicate = instruction.guard->predicate;
      if (resolve(predicate) && !is_predicate_register(predicate))
        error(predicate.location, "'" + predicate.name + "' is not a predicate register");
    }
    if (!decode_qualifiers(instruction, *signature, module_.diagnostics())) return;
    for (std::string& message : unmet_requirements(instruction, module_.level())) error(instruction.location, std::move(message));
    if (instruction.opcode == "call") {
      check_call(instruction);
      return;
    }
    std::string_view shape = signature->operands;
    // st.bulk [a], size, initval (sm_100) stores no typed value.
    const auto& words = instruction.qualifiers.other;
    if (instruction.opcode == "st" && std::find(words.begin(), words.end(), "bulk") != words.end()) shape = "a**";
    size_t required = shape.find('?');
    size_t letters = shape.size() - (required == std::string_view::npos ? 0 : 1);
    if (required == std::string_view::npos) required = shape.size();
    size_t count = instruction.operands.size();
    if (count < required || count > letters) {
      std::string expected = required == letters ? std::to_string(required)
                                                 : std::to_string(required) + " to " + std::to_string(letters);
      error(instruction.location, "'" + instruction.opcode + "' takes " + expected + " operands, found " +
                                      std::to_string(count));
      return;
    }
    bool needs_type = shape.find_first_of("tws") != std::string_view::npos;
    if (needs_type && instruction.qualifiers.types.empty()) {
      error(instruction.location, "'" + instruction.opcode + "' needs a type modifier such as .b32");
      return;
    }
    size_t operand_index = 0;
    for (char letter : shape) {
      if (letter == '?') continue;
      if (operand_index == count) break;
      check_operand(instruction, instruction.operands[operand_index], letter, operand_index == 0);
      ++operand_index;
    }
    if (instruction.opcode == "brx") check_branch_targets(instruction.operands[1]);
    if (instruction.opcode == "tcgen05")
      if (std::optional<FormProblem> problem = tcgen05_form_problem(instruction)) error(problem->location, problem->message);
  }

  bool is_predicate_register(const Operand& operand) const {
    return operand.resolution == Operand::Resolution::register_ &&
           declaration_of(operand).type == ScalarType::pred;
  }

  std::optional<ScalarType> expected_type(const Instruction& instruction, char letter) const {
    const auto& types = instruction.qualifiers.types;
    switch (letter) {
      case 't': return types[0];
      case 'w': return instruction.qualifiers.wide ? widened(types[0]) : types[0];
      case 's': return types.size() > 1 ? types[1] : types[0];
      case 'u': return ScalarType::u32;
      case 'p': case 'P': case 'c': return ScalarType::pred;
      default: return std::nullopt;
    }
  }

  void check_operand(Instruction& instruction, Operand& operand, char letter, bool is_first) {
    using Kind = Operand::Kind;
    if (operand.minus && (instruction.opcode != "vmad" || is_first)) {
      error(operand.location, "'-' before a register is only valid on vmad's sources");
      return;
    }
    if (letter == 'a') {
      if (operand.kind != Kind::address || !operand.elements.empty()) {
        error(operand.location, "expected an address [...]");
        return;
      }
      if (!operand.name.empty() && resolve(operand)) check_address_base(operand);
      return;
    }
    if (letter == 'l') {
      if (operand.kind != Kind::name || !labels_.contains(operand.name)) {
        error(operand.location, "expected a label" + (operand.kind == Kind::name ? ", found '" + operand.name + "'" : std::string()));
        return;
      }
      operand.resolution = Operand::Resolution::label;
      return;
    }
    if (letter == '*') {
      resolve_all(operand);
      return;
    }
    std::optional<ScalarType> type = expected_type(instruction, letter);
    bool is_destination = is_first && letter != 'c';
    if (operand.kind == Kind::predicate_pair) {
      if (letter != 'P') {
        error(operand.location, "a p|q pair is only valid as setp's destination");
        return;
      }
      for (Operand& element : operand.elements) check_value(instruction, element, *type, true);
      return;
    }
    if (operand.kind == Kind::vector) {
      uint32_t width = instruction.qualifiers.vector_width;
      // cvt.rs into a packed four (.e4m3x4 ...) takes its four .f32 sources as {a, b, e, f}.
      if (instruction.opcode == "cvt" && !is_first && packs_four(instruction.qualifiers)) width = 4;
      bool packs = instruction.opcode == "mov";
      if (!packs && width != operand.elements.size()) {
        error(operand.location, "expected " + std::to_string(width) + " elements for ." +
                                    std::string(name_of(*type)) + (width > 1 ? " with .v" + std::to_string(width) : "") +
                                    ", found " + std::to_string(operand.elements.size()));
        return;
      }
      for (Operand& element : operand.elements) {
        if (element.kind == Kind::sink) continue;
        if (packs) resolve_all(element);
        else check_value(instruction, element, *type, is_destination);
      }
      return;
    }
    if (instruction.qualifiers.vector_width > 1 && (letter == 't') && instruction.opcode != "mov") {
      error(operand.location, "expected a vector {...} of " + std::to_string(instruction.qualifiers.vector_width) + " elements");
      return;
    }
    if (letter == 'c' && operand.negated) {
      check_value(instruction, operand, *type, false);
      return;
    }
    if (operand.negated) {
      error(operand.location, "'!' is only valid on a predicate source");
      return;
    }
    check_value(instruction, operand, *type, is_destination);
  }

  void resolve_all(Operand& operand) {
    if (operand.kind == Operand::Kind::name) resolve(operand);
    if (operand.kind == Operand::Kind::address && !operand.name.empty()) resolve(operand);
    for (Operand& element : operand.elements) resolve_all(element);
  }

  void check_address_base(const Operand& operand) {
    using Resolution = Operand::Resolution;
    if (operand.resolution == Resolution::register_) {
      ScalarType type = declaration_of(operand).type;
      if (is_float(type) || type == ScalarType::pred || bit_width(type) < 32)
        error(operand.location, "'" + operand.name + "' cannot hold an address");
    } else if (operand.resolution != Resolution::local_variable && operand.resolution != Resolution::module_variable) {
      error(operand.location, "'" + operand.name + "' is not a register or variable");
    }
  }

  void check_value(const Instruction& instruction, Operand& operand, ScalarType type, bool is_destination) {
    using Kind = Operand::Kind;
    using Resolution = Operand::Resolution;
    if (operand.kind == Kind::sink && is_destination) return;
    if (operand.kind != Kind::name) {
      if (is_destination) error(operand.location, "the destination must be a register");
      else if (operand.kind != Kind::integer && operand.kind != Kind::floating)
        error(operand.location, "expected a register or a constant");
      else if (type == ScalarType::pred)
        error(operand.location, "expected a predicate register");
      return;
    }
    if (!resolve(operand)) return;
    bool address_of = instruction.opcode == "mov" || instruction.opcode == "cvta";
    switch (operand.resolution) {
      case Resolution::register_: {
        ScalarType register_type = declaration_of(operand).type;
        if (!is_compatible(register_type, type, allows_wider_registers(instruction.opcode)))
          error(operand.location, "'" + operand.name + "' is a ." + std::string(name_of(register_type)) +
                                      " register, expected ." + std::string(name_of(type)));
        return;
      }
      case Resolution::special_register:
        if (is_destination) error(operand.location, "'" + operand.name + "' is read-only");
        else if (instruction.opcode != "mov" && instruction.opcode != "cvt")
          error(operand.location, "special registers can only be read by mov or cvt");
        return;
      case Resolution::local_variable:
      case Resolution::module_variable:
      case Resolution::function:
        if (is_destination || !address_of)
          error(operand.location, "'" + operand.name + "' is not a register");
        return;
      case Resolution::label:
      case Resolution::unresolved:
        error(operand.location, "'" + operand.name + "' is not a register");
        return;
    }
  }

  // `call (results), f, (arguments)`, or through a pointer register: `call (results), %pointer,
  // (arguments), signature`, the signature being a .callprototype or .calltargets label of this
  // function. Results and arguments are optional.
  void check_call(Instruction& instruction) {
    auto& operands = instruction.operands;
    size_t position = 0;
    bool has_results = !operands.empty() && operands[0].kind == Operand::Kind::list;
    if (has_results) ++position;
    if (position >= operands.size() || operands[position].kind != Operand::Kind::name) {
      error(instruction.location, "expected the function to call");
      return;
    }
    Operand& callee = operands[position];
    bool has_arguments = position + 1 < operands.size() && operands[position + 1].kind == Operand::Kind::list;
    size_t after_arguments = position + (has_arguments ? 2 : 1);
    std::optional<Signature> signature = callee_signature(callee, operands, after_arguments);
    if (!signature) return;
    size_t expected_count = after_arguments + (callee.resolution == Operand::Resolution::function ? 0 : 1);
    if (operands.size() > expected_count) {
      error(operands[expected_count].location, "unexpected operand after the argument list");
      return;
    }
    std::vector<Operand> none;
    auto& results = has_results ? operands[0].elements : none;
    auto& arguments = has_arguments ? operands[position + 1].elements : none;
    check_call_values(results, *signature->returns, callee.name, "results");
    check_call_values(arguments, *signature->parameters, callee.name, "arguments");
  }

  struct Signature {
    const std::vector<VariableDeclaration>* returns;
    const std::vector<VariableDeclaration>* parameters;
  };

  // Resolves the callee and finds the signature its results and arguments must match: a
  // function's own, or for an indirect call the prototype's or the first call target's.
  std::optional<Signature> callee_signature(Operand& callee, std::vector<Operand>& operands, size_t prototype_position) {
    if (auto index = module_.function(callee.name)) {
      callee.resolution = Operand::Resolution::function;
      callee.declaration = *index;
      const Function& target = module_.module().functions[*index];
      if (target.is_entry) {
        error(callee.location, "'" + callee.name + "' is a kernel and cannot be called");
        return std::nullopt;
      }
      return Signature{&target.returns, &target.parameters};
    }
    if (!resolve_local(callee)) {
      error(callee.location, "unknown function '" + callee.name + "'");
      return std::nullopt;
    }
    if (callee.resolution != Operand::Resolution::register_ || bit_width(declaration_of(callee).type) != 64 ||
        is_float(declaration_of(callee).type)) {
      error(callee.location, "'" + callee.name + "' is neither a function nor a 64-bit register holding one");
      return std::nullopt;
    }
    if (prototype_position >= operands.size() || operands[prototype_position].kind != Operand::Kind::name) {
      error(callee.location, "an indirect call needs a .callprototype or .calltargets label after its arguments");
      return std::nullopt;
    }
    Operand& prototype = operands[prototype_position];
    prototype.resolution = Operand::Resolution::label;
    for (const CallPrototype& candidate : function_.call_prototypes)
      if (candidate.name == prototype.name) return Signature{&candidate.returns, &candidate.parameters};
    for (const TargetList& list : function_.target_lists) {
      if (list.name != prototype.name || !list.functions) continue;
      if (list.targets.empty() || list.targets[0].resolution != Operand::Resolution::function) return std::nullopt;
      const Function& first = module_.module().functions[list.targets[0].declaration];
      return Signature{&first.returns, &first.parameters};
    }
    error(prototype.location, "'" + prototype.name + "' is not a .callprototype or .calltargets label of this function");
    return std::nullopt;
  }

  // brx.idx's second operand names a .branchtargets list.
  void check_branch_targets(const Operand& operand) {
    for (const TargetList& list : function_.target_lists)
      if (list.name == operand.name && !list.functions) return;
    error(operand.location, "'" + operand.name + "' is not a .branchtargets label of this function");
  }

  void check_call_values(std::vector<Operand>& values, const std::vector<VariableDeclaration>& formals,
                         const std::string& callee, std::string_view what) {
    if (values.size() != formals.size()) {
      SourceLocation location = values.empty() ? SourceLocation{} : values[0].location;
      error(location, "'" + callee + "' takes " + std::to_string(formals.size()) + " " + std::string(what) +
                          ", found " + std::to_string(values.size()));
      return;
    }
    for (size_t i = 0; i < values.size(); ++i) {
      Operand& value = values[i];
      if (value.kind != Operand::Kind::name) {
        error(value.location, "call " + std::string(what) + " must be .param variables");
        continue;
      }
      if (!resolve(value)) continue;
      const VariableDeclaration* declaration =
          value.resolution == Operand::Resolution::local_variable ? function_.declarations[value.declaration] : nullptr;
      if (declaration == nullptr || declaration->space != StateSpace::param) {
        error(value.location, "call " + std::string(what) + " must be .param variables");
        continue;
      }
      if (declaration->size_in_bytes() < formals[i].size_in_bytes())
        error(value.location, "'" + value.name + "' is smaller than the parameter '" + formals[i].name + "'");
    }
  }

  ModuleChecker& module_;
  Function& function_;
  std::vector<Scope> scopes_;
  std::unordered_map<std::string, SourceLocation> labels_;
};

// .target names an architecture ptxas knows, one that the module's .version has ("PTX .version
// 7.4 does not support .target sm_89"). A .version newer than 9.0 passes: NVIDIA's driver refuses
// one newer than its own, but such a module may hold nothing PTX 9.0 lacks, and xcuda tries it.
//
// Its options as ptxas 13 takes them: the texturing mode, one of two; debug; and further
// architectures, of which the highest counts ("SM version specified by .target is higher than
// default SM version assumed" for `.target sm_80, sm_90` under -arch=sm_80). map_f64_to_f32,
// which makes .f64 arithmetic .f32, ptxas refuses from sm_13 on, and so every architecture of
// PTX 6.0 and later.
void ModuleChecker::check_target() {
  if (module_.target.empty()) return;
  std::optional<uint32_t> needed = minimum_version(module_.target);
  if (!needed) {
    diagnostics_.error(module_.target_location, "unknown .target '" + module_.target + "'");
    return;
  }
  std::string_view texturing_mode;
  for (const TargetOption& option : module_.target_options) {
    if (option.word == "texmode_unified" || option.word == "texmode_independent") {
      if (!texturing_mode.empty() && texturing_mode != option.word)
        diagnostics_.error(option.location, "conflicting .target option '" + option.word + "' after '" + std::string(texturing_mode) + "'");
      texturing_mode = option.word;
    } else if (option.word == "map_f64_to_f32") {
      diagnostics_.error(option.location, ".target option map_f64_to_f32 is not supported with sm_13 or higher");
    } else if (std::optional<uint32_t> also = minimum_version(option.word)) {
      if (target_name(option.word)->number > target_name(module_.target)->number) {
        module_.target = option.word;
        module_.target_location = option.location;
        needed = also;
      }
    } else if (option.word != "debug") {
      diagnostics_.error(option.location, "unsupported .target option '" + option.word + "'");
    }
  }
  std::optional<uint32_t> version = version_number(module_.version);
  if (version && *version < *needed)
    diagnostics_.error(module_.target_location, "PTX .version " + module_.version + " does not support .target " + module_.target +
                                                    ", which needs .version " + std::to_string(*needed / 10) + "." +
                                                    std::to_string(*needed % 10));
}

void ModuleChecker::run() {
  check_target();
  // Host code addresses memory with 64-bit pointers, which 32-bit PTX registers cannot hold.
  if (module_.address_size != 64)
    diagnostics_.error(module_.address_size_location, ".address_size " + std::to_string(module_.address_size) +
                                                         " is not supported yet: host addresses have 64 bits");
  for (uint32_t index = 0; index < module_.variables.size(); ++index) {
    VariableDeclaration& variable = module_.variables[index];
    if (variable.space == StateSpace::reg || variable.space == StateSpace::param)
      diagnostics_.error(variable.location, "." + std::string(name_of(variable.space)) +
                                                " variables cannot be declared at module scope");
    if (!variables_.emplace(variable.name, index).second)
      diagnostics_.error(variable.location, "'" + variable.name + "' is declared twice");
    if (variable.unsized_array && !(variable.space == StateSpace::shared && variable.is_extern))
      diagnostics_.error(variable.location, "only .extern .shared arrays may leave their size out");
    if (variable.type == ScalarType::pred)
      diagnostics_.error(variable.location, "a predicate can only be a register");
    for (std::string& message : unmet_requirements(variable, level_)) diagnostics_.error(variable.location, std::move(message));
    // A .v4 element takes four initial values.
    uint32_t scalar_bytes = std::max(1u, variable.element_bytes() / variable.vector_width);
    if (!variable.initializer.empty() && variable.initializer.size() > variable.size_in_bytes() / scalar_bytes)
      diagnostics_.error(variable.initializer.front().location, "too many initial values for '" + variable.name + "'");
  }
  for (uint32_t index = 0; index < module_.functions.size(); ++index) {
    const Function& function = module_.functions[index];
    auto [existing, inserted] = functions_.emplace(function.name, index);
    if (inserted) continue;
    const Function& previous = module_.functions[existing->second];
    if (previous.has_body && function.has_body) {
      diagnostics_.error(function.location, "'" + function.name + "' is defined twice");
    } else if (function.has_body) {
      existing->second = index;  // a definition after its prototype
    }
    if (previous.parameters.size() != function.parameters.size() || previous.returns.size() != function.returns.size())
      diagnostics_.error(function.location, "'" + function.name + "' does not match its earlier declaration");
  }
  for (const FunctionAlias& alias : module_.aliases) resolve_alias(alias);
  for (auto& variable : module_.variables) {
    for (auto& value : variable.initializer) {
      if (value.kind != InitialValue::Kind::address) continue;
      if (!variables_.contains(value.symbol) && !functions_.contains(value.symbol))
        diagnostics_.error(value.location, "unknown name '" + value.symbol + "'");
      else if (value.mask != 0)
        check_masked_address(variable, value);
    }
  }
  for (auto& function : module_.functions) {
    if (!function.has_body) continue;
    FunctionChecker(*this, function).run();
  }
}

// 0xFF00(symbol): one byte of the address, in a .u8, .u32 or .u64 element (ptxas refuses the
// other types and any other mask).
void ModuleChecker::check_masked_address(const VariableDeclaration& variable, const InitialValue& value) {
  bool one_byte = false;
  for (uint32_t shift = 0; shift < 64; shift += 8) one_byte |= value.mask == uint64_t{0xFF} << shift;
  if (!one_byte)
    diagnostics_.error(value.location, "an address mask picks one byte: 0xFF, 0xFF00, ... or 0xFF00000000000000");
  else if (variable.type != ScalarType::u8 && variable.type != ScalarType::u32 && variable.type != ScalarType::u64)
    diagnostics_.error(value.location, "a byte of an address needs a .u8, .u32 or .u64 element, not ." +
                                           std::string(name_of(variable.type)));
}

// `.alias a, b;` needs `a` declared without a body and `b` defined with the same signature; from
// then on every use of `a` is a use of `b`.
void ModuleChecker::resolve_alias(const FunctionAlias& alias) {
  auto alias_index = function(alias.alias);
  auto aliasee_index = function(alias.aliasee);
  if (!alias_index || !aliasee_index) {
    diagnostics_.error(alias.location, "unknown function '" + (alias_index ? alias.aliasee : alias.alias) + "'");
    return;
  }
  const Function& declared = module_.functions[*alias_index];
  const Function& defined = module_.functions[*aliasee_index];
  if (declared.has_body || declared.is_entry || defined.is_entry) {
    diagnostics_.error(alias.location, "'" + alias.alias + "' must be a .func declared without a body");
    return;
  }
  if (!defined.has_body) {
    diagnostics_.error(alias.location, "'" + alias.aliasee + "' must be a function defined in this module");
    return;
  }
  if (declared.parameters.size() != defined.parameters.size() || declared.returns.size() != defined.returns.size()) {
    diagnostics_.error(alias.location, "'" + alias.alias + "' and '" + alias.aliasee + "' have different signatures");
    return;
  }
  functions_[alias.alias] = *aliasee_index;
}

}  // namespace

void check_module(Module& module, DiagnosticSink& diagnostics) { ModuleChecker(module, diagnostics).run(); }

}  // namespace xcuda::ptx
