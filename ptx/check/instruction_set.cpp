#include "check/instruction_set.h"

namespace xcuda::ptx {
namespace {

constexpr uint32_t float_math = type_group | float_rounding_group | flush_group | saturate_group;
constexpr uint32_t memory = type_group | space_group | vector_group | volatile_group | cache_group | ordering_group;

constexpr InstructionSignature instruction_set[] = {
    // arithmetic
    {"add", float_math | carry_group, "ttt", ""},
    {"sub", float_math | carry_group, "ttt", ""},
    {"addc", type_group | carry_group, "ttt", ""},
    {"subc", type_group | carry_group, "ttt", ""},
    {"mul", float_math | width_group, "wtt", ""},
    {"mad", float_math | width_group | carry_group, "wttw", ""},
    {"madc", type_group | width_group | carry_group, "wttw", ""},
    {"mul24", type_group | width_group, "ttt", ""},
    {"mad24", type_group | width_group | saturate_group, "tttt", ""},
    {"fma", float_math, "tttt", "relu oob"},
    {"div", float_math | precision_group, "ttt", ""},
    {"rem", type_group, "ttt", ""},
    {"abs", type_group | flush_group, "tt", ""},
    {"neg", type_group | flush_group, "tt", ""},
    // sm_100: min and max of three .f32 values
    {"min", type_group | flush_group, "ttt?t", "NaN xorsign abs relu"},
    {"max", type_group | flush_group, "ttt?t", "NaN xorsign abs relu"},
    {"sad", type_group, "tttt", ""},
    {"rcp", float_math | precision_group, "tt", ""},
    {"sqrt", float_math | precision_group, "tt", ""},
    {"rsqrt", type_group | flush_group | precision_group, "tt", ""},
    {"sin", type_group | flush_group | precision_group, "tt", ""},
    {"cos", type_group | flush_group | precision_group, "tt", ""},
    {"lg2", type_group | flush_group | precision_group, "tt", ""},
    {"ex2", type_group | flush_group | precision_group, "tt", ""},
    {"tanh", type_group | precision_group, "tt", ""},
    {"copysign", type_group, "ttt", ""},
    {"dp4a", type_group, "*ts*", ""},
    {"dp2a", type_group | width_group, "*ts*", ""},
    {"testp", type_group, "pt", "finite infinite number notanumber normal subnormal"},
    // bits
    {"and", type_group, "ttt", ""},
    {"or", type_group, "ttt", ""},
    {"xor", type_group, "ttt", ""},
    {"not", type_group, "tt", ""},
    {"cnot", type_group, "tt", ""},
    {"shl", type_group, "ttu", ""},
    {"shr", type_group, "ttu", ""},
    {"shf", type_group, "tttu", "l r wrap clamp"},
    {"popc", type_group, "ut", ""},
    {"clz", type_group, "ut", ""},
    {"brev", type_group, "tt", ""},
    {"bfind", type_group, "ut", "shiftamt"},
    {"bfe", type_group, "ttuu", ""},
    {"bfi", type_group, "tttuu", ""},
    {"prmt", type_group, "tttt", "f4e b4e rc8 ecl ecr rc16"},
    // lop3.BoolOp d|p, a, b, c, table, q also sets p = (d != 0) BoolOp q (lower/bitwise.cpp)
    {"lop3", type_group | combine_group, "*ttt*?c", ""},
    {"bmsk", type_group, "tuu", "clamp wrap"},
    {"szext", type_group, "ttu", "clamp wrap"},
    {"fns", type_group, "tttt", ""},
    // comparison and selection
    {"setp", type_group | comparison_group | combine_group | flush_group, "Ptt?c", ""},
    {"set", type_group | comparison_group | combine_group | flush_group, "*ss?c", ""},
    {"selp", type_group, "tttc", ""},
    {"slct", type_group | flush_group, "ttts", ""},
    // data movement and conversion
    {"mov", type_group | vector_group, "t*", ""},
    {"cvt", type_group | float_rounding_group | integer_rounding_group | flush_group | saturate_group, "ts?s*",
     "relu satfinite pack rs tf32 e4m3x2 e5m2x2 e3m2x2 e2m3x2 e2m1x2 e4m3x4 e5m2x4 e3m2x4 e2m3x4 e2m1x4 ue8m0x2 u4 "
     "s4 u2 s2"},
    {"cvta", type_group | space_group | to_group, "t*", ""},
    // A trailing operand is an L2::cache_hint cache policy, which the host has no use for.
    {"ld", memory, "ta?*", ""},
    {"ldu", memory, "ta?*", ""},
    // st.async's third operand is its mbarrier (lower/memory.cpp).
    {"st", memory, "at?*", "async mbarrier::complete_tx::bytes bulk"},
    {"prefetch", space_group | cache_group, "a", "L1 L2 tensormap"},
    {"prefetchu", 0, "a", "L1"},
    // cache policies and priorities: the host has no caches to steer
    {"createpolicy", type_group | cache_group, "t*?**", "fractional range cvt"},
    {"applypriority", space_group | cache_group, "a*", ""},
    {"discard", space_group | cache_group, "a*", ""},
    // clusters (of one block on xcuda)
    {"mapa", type_group | space_group, "tt*", ""},
    {"getctarank", type_group | space_group, "*t", ""},
    // try_cancel [addr], [mbar] and query_cancel d, response: forms are checked by the lowering
    // (lower/cluster_launch_control.cpp)
    {"clusterlaunchcontrol", type_group | space_group | vector_group, "**",
     "try_cancel async mbarrier::complete_tx::bytes multicast::cluster::all query_cancel is_canceled get_first_ctaid "
     "get_first_ctaid::x get_first_ctaid::y get_first_ctaid::z"},
    // isspacep.space p, a: a is a generic address in a .u32 or .u64 register, with no type modifier
    {"isspacep", space_group, "p*", ""},
    // dynamic stack: memory a thread allocates at run time (lower/dynamic_stack.cpp)
    {"alloca", type_group, "tt?*", ""},
    {"stacksave", type_group, "t", ""},
    {"stackrestore", type_group, "t", ""},
    // tensormap.replace [addr], {ord,} new_val and tensormap.cp_fenceproxy [dst], [src], size:
    // fields and operands are checked by the lowering (lower/tensor_copy.cpp)
    {"tensormap", type_group | space_group | ordering_group, "a*?*",
     "replace tile b1024 global_address rank box_dim global_dim global_stride element_stride elemtype "
     "interleave_layout swizzle_mode swizzle_atomicity fill_mode cp_fenceproxy tensormap::generic sync aligned"},
    // cp.async and cp.reduce.async.bulk: shapes are checked by the lowering (lower/async_copy.cpp)
    {"cp", cache_group | type_group | atomic_operation_group, "?*****",
     "async reduce noftz ca cg shared shared::cta shared::cluster global commit_group wait_group wait_all mbarrier arrive noinc "
     "bulk prefetch tensor mbarrier::complete_tx::bytes bulk_group multicast::cluster cp_mask read 1d 2d 3d 4d 5d tile "
     "im2col im2col::w im2col::w::128 tile::gather4 tile::scatter4 im2col_no_offs"},
    // control flow
    {"bra", uniform_group, "l", ""},
    {"brx", uniform_group, "ul", "idx"},
    {"call", uniform_group, "*?**", ""},
    {"ret", uniform_group, "", ""},
    {"exit", 0, "", ""},
    {"trap", 0, "", ""},
    {"brkpt", 0, "", ""},
    {"nanosleep", type_group, "*", ""},
    {"setmaxnreg", type_group | barrier_group, "*", "inc dec"},
    {"pmevent", 0, "*", "mask"},
    {"griddepcontrol", 0, "", "launch_dependents wait"},
    // video: selectors (a.b1, d.h0, a.h32) are checked by the lowering (lower/video.cpp)
    {"vadd", type_group | saturate_group, "ttt?t", "add min max"},
    {"vsub", type_group | saturate_group, "ttt?t", "add min max"},
    {"vabsdiff", type_group | saturate_group, "ttt?t", "add min max"},
    {"vmin", type_group | saturate_group, "ttt?t", "add min max"},
    {"vmax", type_group | saturate_group, "ttt?t", "add min max"},
    {"vshl", type_group | saturate_group, "ttt?t", "add min max clamp wrap"},
    {"vshr", type_group | saturate_group, "ttt?t", "add min max clamp wrap"},
    {"vmad", type_group | saturate_group, "tttt", "po shr7 shr15"},
    {"vset", type_group | comparison_group, "ttt?t", "add min max"},
    {"vadd2", type_group | saturate_group, "tttt", "add"},
    {"vsub2", type_group | saturate_group, "tttt", "add"},
    {"vavrg2", type_group | saturate_group, "tttt", "add"},
    {"vabsdiff2", type_group | saturate_group, "tttt", "add"},
    {"vmin2", type_group | saturate_group, "tttt", "add"},
    {"vmax2", type_group | saturate_group, "tttt", "add"},
    {"vset2", type_group | comparison_group, "tttt", "add"},
    {"vadd4", type_group | saturate_group, "tttt", "add"},
    {"vsub4", type_group | saturate_group, "tttt", "add"},
    {"vavrg4", type_group | saturate_group, "tttt", "add"},
    {"vabsdiff4", type_group | saturate_group, "tttt", "add"},
    {"vmin4", type_group | saturate_group, "tttt", "add"},
    {"vmax4", type_group | saturate_group, "tttt", "add"},
    {"vset4", type_group | comparison_group, "tttt", "add"},
    // synchronisation and atomics
    // bar.red d, a{, b}, {!}c takes four; the lowering checks each form's count.
    {"bar", type_group | barrier_group, "?****", ""},
    {"barrier", type_group | barrier_group, "?****", "cluster wait release acquire relaxed"},
    {"membar", ordering_group, "", "gl proxy alias"},
    {"fence", ordering_group | space_group, "?a*",
     "proxy alias async mbarrier_init tensormap::generic async::generic sync_restrict::shared::cta "
     "sync_restrict::shared::cluster"},
    // .L2::cache_hint adds a cache policy operand last; .v2/.v4/.v8 take vectors (lower/atomics.cpp).
    {"atom", type_group | space_group | atomic_operation_group | ordering_group | cache_group | vector_group, "ta*?**",
     "noftz"},
    // red.async takes its mbarrier as a third operand (lower/atomics.cpp).
    {"red", type_group | space_group | atomic_operation_group | ordering_group | cache_group | vector_group, "a*?*",
     "noftz async mbarrier::complete_tx::bytes"},
    // operands differ by operation: checked by the lowering (lower/synchronization.cpp)
    {"mbarrier", type_group | space_group | ordering_group, "*?***",
     "init inval arrive arrive_drop expect_tx complete_tx test_wait try_wait pending_count parity noComplete"},
    // the form (ld_reduce, st, red) and its operands are checked by the lowering (lower/multimem.cpp)
    {"multimem", memory | atomic_operation_group, "**", "ld_reduce st red acc::f32 acc::f16"},
    // warp collectives: parsed and checked, lowered in a later stage of the project
    {"shfl", type_group | barrier_group, "****?*", "up down bfly idx"},
    {"vote", type_group | barrier_group, "***?*", "uni"},
    {"activemask", type_group, "t", ""},
    {"elect", barrier_group, "**", ""},
    {"match", type_group | barrier_group, "***?*", ""},
    {"redux", type_group | barrier_group | atomic_operation_group, "***", "abs NaN"},
    // matrix instructions: shapes, types and register counts are checked by the lowering (lower/matrix.cpp)
    // mma d, a, b, c; mma.sp (sparse A) d, a, b, c, metadata, selector. The sub-byte integer
    // (.s4/.u4) and single-bit (.b1, with .and or .xor and .popc) shapes too.
    {"mma", type_group | barrier_group, "****?**",
     "m8n8k4 m8n8k16 m16n8k4 m16n8k8 m16n8k16 m16n8k32 m8n8k32 m16n8k64 m8n8k128 m16n8k128 m16n8k256 row col satfinite "
     "tf32 e4m3 e5m2 s4 u4 b1 and xor popc sp sp::ordered_metadata"},
    // wmma.load.{a,b,c} r, [p]{, stride}; wmma.store.d [p], r{, stride}; wmma.mma d, a, b, c
    {"wmma", type_group | space_group | barrier_group, "**?**",
     "load store mma a b c d row col m16n16k16 m32n8k16 m8n32k16 m16n16k8 m8n8k4 m8n8k32 m8n8k128 satfinite tf32 s4 u4 b1 "
     "and xor popc"},
    // sm_100: ldmatrix .m16n16 and .m8n16 of bytes, some unpacked from 6- or 4-bit data; stmatrix .m16n8
    {"ldmatrix", type_group | space_group | barrier_group, "*a", "m8n8 m16n16 m8n16 x1 x2 x4 trans b8x16 b6x16_p32 b4x16_p64"},
    {"stmatrix", type_group | space_group | barrier_group, "a*", "m8n8 m16n8 x1 x2 x4 trans"},
    {"movmatrix", type_group | barrier_group, "**", "m8n8 trans"},
    // wgmma.fence, .commit_group, .wait_group N and .mma_async d, a, b, scale-d{, imm-scale-a,
    // imm-scale-b{, imm-trans-a}, imm-trans-b}, with two more for .sp: shapes (m64nNkK), types
    // and operands are checked by the lowering (lower/warpgroup_matrix.cpp)
    {"wgmma", type_group | barrier_group, "?**********",
     "fence commit_group wait_group mma_async sp satfinite tf32 e4m3 e5m2 b1 m64n*"},
    // tcgen05.<operation>: every modifier is the form's, checked by check/tensor_memory.cpp
    {"tcgen05", 0, "?**********", "*"},
    // textures and surfaces: shapes are checked by the lowering (lower/texture.cpp)
    {"tex", type_group | vector_group, "**?**", "1d 2d 3d a1d a2d cube acube 2dms a2dms level grad base"},
    {"tld4", type_group | vector_group, "**?**", "r g b a 2d a2d cube acube"},
    {"txq", type_group, "**?*", "level width height depth channel_data_type channel_order normalized_coords "
                                "filter_mode addr_mode_0 addr_mode_1 addr_mode_2 array_size num_mipmap_levels "
                                "num_samples force_unnormalized_coords"},
    {"suld", type_group | vector_group | cache_group, "**", "b p 1d 2d 3d a1d a2d trap clamp zero"},
    {"sust", type_group | vector_group | cache_group, "**", "b p 1d 2d 3d a1d a2d trap clamp zero"},
    {"suq", type_group, "**", "width height depth channel_data_type channel_order array_size memory_layout"},
    {"sured", type_group | atomic_operation_group, "**", "b p 1d 2d 3d trap clamp zero"},
    {"istypep", 0, "p*", "texref samplerref surfref"},
};

constexpr std::string_view later_instructions[] = {
    "cctl",
};

}  // namespace

bool is_later_ptx_instruction(std::string_view opcode) {
  for (std::string_view name : later_instructions)
    if (name == opcode) return true;
  return false;
}

const InstructionSignature* find_instruction(std::string_view opcode) {
  for (const auto& signature : instruction_set)
    if (signature.opcode == opcode) return &signature;
  return nullptr;
}

}  // namespace xcuda::ptx
