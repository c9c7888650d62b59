// printf and assert in kernels on AMDGPU, as HIP does them: ROCm's ockl (device library) sends a
// message to the host through the HIP runtime's hostcall buffer: a begin, then the format and each
// argument appended (a string as its bytes, anything else as 64 bits), the last one flagged; the
// runtime formats it with the host's printf. CUDA's vprintf gets the format and a buffer holding
// each argument at the next multiple of its size (4 or 8 bytes, floats promoted to double), so
// the arguments' sizes follow from the format, which vprintf here reads at run time: a
// conversion's letter and length modifier give the size, and `*` takes an int.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;

// HIP's own message for a failed device assert (hip/amd_detail/amd_device_functions.h).
constexpr const char* assert_format = "%s:%u: %s: Device-side assertion `%s' failed.\n";

// The ockl entry points, as ockl.bc defines them.
struct Messages {
  llvm::FunctionCallee printf_begin;    // i64 (i64 version)
  llvm::FunctionCallee stderr_begin;    // i64 ()
  llvm::FunctionCallee append_string;   // i64 (i64 message, ptr text, i64 bytes, i32 is_last)
  llvm::FunctionCallee append_values;   // i64 (i64 message, i32 count, i64 x 7, i32 is_last)
  llvm::Function* string_bytes;         // i64 (ptr): the bytes with the terminator; 0 for null

  explicit Messages(llvm::Module& module);

  Value* append_value(llvm::IRBuilder<>& builder, Value* message, Value* value, uint32_t count, bool last) const {
    std::vector<Value*> arguments = {message, builder.getInt32(count), value};
    arguments.resize(9, builder.getInt64(0));
    arguments.push_back(builder.getInt32(last));
    return builder.CreateCall(append_values, arguments);
  }
  Value* append_text(llvm::IRBuilder<>& builder, Value* message, Value* text, bool last) const {
    return builder.CreateCall(append_string, {message, text, builder.CreateCall(string_bytes, {text}), builder.getInt32(last)});
  }
};

// strlen + 1, or 0 for a null pointer, which ockl then sends as an empty string.
llvm::Function* define_string_bytes(llvm::Module& module) {
  constexpr const char* name = "xcuda.amdgpu.string_bytes";
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto* function = llvm::Function::Create(llvm::FunctionType::get(builder.getInt64Ty(), {builder.getPtrTy()}, false),
                                          llvm::GlobalValue::InternalLinkage, name, module);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", function);
  llvm::BasicBlock* scan = llvm::BasicBlock::Create(context, "scan", function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", function);
  builder.SetInsertPoint(entry);
  Value* text = function->getArg(0);
  builder.CreateCondBr(builder.CreateIsNull(text), done, scan);
  builder.SetInsertPoint(scan);
  llvm::PHINode* index = builder.CreatePHI(builder.getInt64Ty(), 2);
  index->addIncoming(builder.getInt64(0), entry);
  Value* next = builder.CreateAdd(index, builder.getInt64(1));
  index->addIncoming(next, scan);
  Value* character = builder.CreateLoad(builder.getInt8Ty(), builder.CreateGEP(builder.getInt8Ty(), text, index));
  builder.CreateCondBr(builder.CreateICmpEQ(character, builder.getInt8(0)), done, scan);
  builder.SetInsertPoint(done);
  llvm::PHINode* bytes = builder.CreatePHI(builder.getInt64Ty(), 2);
  bytes->addIncoming(builder.getInt64(0), entry);
  bytes->addIncoming(next, scan);
  builder.CreateRet(bytes);
  return function;
}

Messages::Messages(llvm::Module& module) {
  llvm::IRBuilder<> builder(module.getContext());
  auto* i64 = builder.getInt64Ty();
  auto* i32 = builder.getInt32Ty();
  printf_begin = module.getOrInsertFunction("__ockl_printf_begin", i64, i64);
  stderr_begin = module.getOrInsertFunction("__ockl_fprintf_stderr_begin", i64);
  append_string = module.getOrInsertFunction("__ockl_printf_append_string_n", i64, i64, builder.getPtrTy(), i64, i32);
  append_values = module.getOrInsertFunction("__ockl_printf_append_args", i64, i64, i32, i64, i64, i64, i64, i64, i64, i64, i32);
  string_bytes = define_string_bytes(module);
}

// The state of the format loop, kept in allocas that SROA turns into registers.
struct FormatState {
  llvm::AllocaInst* position;  // i64: the next character
  llvm::AllocaInst* offset;    // i64: the next byte of the argument buffer
  llvm::AllocaInst* in_conversion;
  llvm::AllocaInst* wide;      // a length modifier made the conversion's argument 64-bit
  llvm::AllocaInst* message;   // i64: ockl's descriptor
};

// vprintf(context, &result, &format, &arguments).
void define_vprintf(llvm::Function& function, const Messages& messages) {
  llvm::LLVMContext& context = function.getContext();
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(context, name, &function); };
  llvm::IRBuilder<> builder(block("entry"));
  auto* i64 = builder.getInt64Ty();
  auto* i8 = builder.getInt8Ty();
  Value* format = builder.CreateLoad(builder.getPtrTy(), function.getArg(2));
  Value* arguments = builder.CreateLoad(builder.getPtrTy(), function.getArg(3));
  FormatState state{builder.CreateAlloca(i64), builder.CreateAlloca(i64), builder.CreateAlloca(builder.getInt1Ty()),
                    builder.CreateAlloca(builder.getInt1Ty()), builder.CreateAlloca(i64)};
  builder.CreateStore(builder.getInt64(0), state.position);
  builder.CreateStore(builder.getInt64(0), state.offset);
  builder.CreateStore(builder.getFalse(), state.in_conversion);
  builder.CreateStore(builder.getFalse(), state.wide);
  Value* message = builder.CreateCall(messages.printf_begin, {builder.getInt64(0)});
  builder.CreateStore(messages.append_text(builder, message, format, false), state.message);
  llvm::BasicBlock* loop = block("loop");
  builder.CreateBr(loop);

  builder.SetInsertPoint(loop);
  Value* position = builder.CreateLoad(i64, state.position);
  Value* character = builder.CreateLoad(i8, builder.CreateGEP(i8, format, position));
  builder.CreateStore(builder.CreateAdd(position, builder.getInt64(1)), state.position);
  llvm::BasicBlock* finish = block("finish");
  llvm::BasicBlock* check = block("check");
  builder.CreateCondBr(builder.CreateICmpEQ(character, builder.getInt8(0)), finish, check);

  builder.SetInsertPoint(check);
  llvm::BasicBlock* text = block("text");
  llvm::BasicBlock* conversion = block("conversion");
  builder.CreateCondBr(builder.CreateLoad(builder.getInt1Ty(), state.in_conversion), conversion, text);

  builder.SetInsertPoint(text);
  builder.CreateStore(builder.CreateICmpEQ(character, builder.getInt8('%')), state.in_conversion);
  builder.CreateStore(builder.getFalse(), state.wide);
  builder.CreateBr(loop);

  // Each kind of argument: its size, whether it is a string, whether it ends the conversion.
  llvm::BasicBlock* take = block("take");
  builder.SetInsertPoint(take);
  llvm::PHINode* size = builder.CreatePHI(i64, 5);
  llvm::PHINode* is_string = builder.CreatePHI(builder.getInt1Ty(), 5);
  llvm::PHINode* ends = builder.CreatePHI(builder.getInt1Ty(), 5);
  auto kind = [&](const char* name, const std::string& letters, Value* bytes, bool string, bool last) {
    llvm::BasicBlock* kind_block = block(name);
    llvm::IRBuilder<> kind_builder(kind_block);
    Value* kind_size = bytes != nullptr ? bytes : kind_builder.CreateSelect(kind_builder.CreateLoad(kind_builder.getInt1Ty(), state.wide),
                                                                          kind_builder.getInt64(8), kind_builder.getInt64(4));
    kind_builder.CreateBr(take);
    size->addIncoming(kind_size, kind_block);
    is_string->addIncoming(kind_builder.getInt1(string), kind_block);
    ends->addIncoming(kind_builder.getInt1(last), kind_block);
    return std::pair{kind_block, letters};
  };
  builder.SetInsertPoint(conversion);
  llvm::BasicBlock* literal = block("literal");
  llvm::BasicBlock* widen = block("widen");
  llvm::SwitchInst* letter = builder.CreateSwitch(character, loop);  // flags, digits, '.', 'h'
  auto add_cases = [&](llvm::BasicBlock* destination, std::string_view letters) {
    for (char value : letters) letter->addCase(builder.getInt8(static_cast<uint8_t>(value)), destination);
  };
  add_cases(literal, "%");
  add_cases(widen, "lLjztq");
  for (const auto& [destination, letters] : {kind("star", "*", builder.getInt64(4), false, false),
                                             kind("string", "s", builder.getInt64(8), true, true),
                                             kind("floating", "fFeEgGaA", builder.getInt64(8), false, true),
                                             kind("pointer", "pn", builder.getInt64(8), false, true),
                                             kind("integer", "cdiouxX", nullptr, false, true)})
    add_cases(destination, letters);

  builder.SetInsertPoint(literal);
  builder.CreateStore(builder.getFalse(), state.in_conversion);
  builder.CreateBr(loop);
  builder.SetInsertPoint(widen);
  builder.CreateStore(builder.getTrue(), state.wide);
  builder.CreateBr(loop);

  // The argument at the next multiple of its size; the high word is read only for 8 bytes, so no
  // read passes the buffer's end.
  builder.SetInsertPoint(take);
  Value* offset = builder.CreateAnd(builder.CreateAdd(builder.CreateLoad(i64, state.offset), builder.CreateSub(size, builder.getInt64(1))),
                                    builder.CreateNeg(size));
  builder.CreateStore(builder.CreateAdd(offset, size), state.offset);
  Value* address = builder.CreateGEP(i8, arguments, offset);
  Value* eight = builder.CreateICmpEQ(size, builder.getInt64(8));
  Value* low = builder.CreateAlignedLoad(builder.getInt32Ty(), address, llvm::Align(4));
  Value* high = builder.CreateAlignedLoad(builder.getInt32Ty(), builder.CreateGEP(i8, address, builder.CreateSelect(eight, builder.getInt64(4), builder.getInt64(0))),
                                          llvm::Align(4));
  Value* value = builder.CreateOr(builder.CreateZExt(low, i64),
                                  builder.CreateSelect(eight, builder.CreateShl(builder.CreateZExt(high, i64), 32), builder.getInt64(0)));
  builder.CreateStore(builder.CreateNot(ends), state.in_conversion);
  Value* current = builder.CreateLoad(i64, state.message);
  llvm::BasicBlock* send_string = block("send_string");
  llvm::BasicBlock* send_value = block("send_value");
  builder.CreateCondBr(is_string, send_string, send_value);
  builder.SetInsertPoint(send_string);
  builder.CreateStore(messages.append_text(builder, current, builder.CreateIntToPtr(value, builder.getPtrTy()), false), state.message);
  builder.CreateBr(loop);
  builder.SetInsertPoint(send_value);
  builder.CreateStore(messages.append_value(builder, current, value, 1, false), state.message);
  builder.CreateBr(loop);

  // An empty last append flags the message complete.
  builder.SetInsertPoint(finish);
  Value* sent = messages.append_value(builder, builder.CreateLoad(i64, state.message), builder.getInt64(0), 0, true);
  builder.CreateStore(builder.CreateTrunc(sent, builder.getInt32Ty()), function.getArg(1));
  builder.CreateRetVoid();
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
}

// __assertfail(context, &message, &file, &line, &function, &char_size): HIP's message on stderr,
// then a trap, which ends the dispatch with an error.
void define_assert_fail(llvm::Function& function, const Messages& messages) {
  llvm::Module& module = *function.getParent();
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
  auto* pointer = builder.getPtrTy();
  // In the generic address space, as the lowering leaves variables, for finish_module to place.
  Value* message = builder.CreateCall(messages.stderr_begin, {});
  message = messages.append_text(builder, message, builder.CreateGlobalString(assert_format, "xcuda.amdgpu.assert_format", 0, &module), false);
  message = messages.append_text(builder, message, builder.CreateLoad(pointer, function.getArg(2)), false);
  message = messages.append_value(builder, message, builder.CreateZExt(builder.CreateLoad(builder.getInt32Ty(), function.getArg(3)), builder.getInt64Ty()), 1, false);
  message = messages.append_text(builder, message, builder.CreateLoad(pointer, function.getArg(4)), false);
  messages.append_text(builder, message, builder.CreateLoad(pointer, function.getArg(1)), true);
  builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  builder.CreateUnreachable();
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
}

}  // namespace

bool define_device_printf(llvm::Function& function) {
  std::string_view name = function.getName();
  if (name == "vprintf" && function.arg_size() == 4) {
    define_vprintf(function, Messages(*function.getParent()));
    return true;
  }
  if (name == "__assertfail" && function.arg_size() == 6) {
    define_assert_fail(function, Messages(*function.getParent()));
    return true;
  }
  return false;
}

}  // namespace xcuda::ptx::amdgpu
