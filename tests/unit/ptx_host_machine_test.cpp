// The host's TargetMachine is made from the host's features where they differ from its CPU
// model's (machine.cpp); its features must be those of the host's whole list.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include "target/host/host_target.h"

namespace xcuda::ptx {
namespace {

TEST(HostMachine, HasEveryFeatureOfTheHost) {
  DiagnosticSink diagnostics("host");
  std::shared_ptr<llvm::TargetMachine> machine = host::target_machine(3, diagnostics);
  ASSERT_NE(machine, nullptr);
  EXPECT_FALSE(diagnostics.has_errors());
  llvm::SubtargetFeatures host;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) host.AddFeature(feature.first(), feature.second);
  const std::string triple = llvm::sys::getProcessTriple();
  std::unique_ptr<llvm::MCSubtargetInfo> expected(
      machine->getTarget().createMCSubtargetInfo(triple, llvm::sys::getHostCPUName(), host.getString()));
  EXPECT_EQ(machine->getTargetCPU(), llvm::sys::getHostCPUName());
  EXPECT_TRUE(machine->getMCSubtargetInfo()->getFeatureBits() == expected->getFeatureBits())
      << "made with " << machine->getTargetFeatureString().str();
}

}  // namespace
}  // namespace xcuda::ptx
